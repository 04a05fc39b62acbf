/**
 * ARM64 unwind data as bytes (arm64.md §1.2–§1.4, from Microsoft's "ARM64 exception handling"):
 * each unwind code, the packed `.pdata` word, and the `.xdata` record with its epilog scopes.
 * The emulator's ARM64 programs describe their prologs and epilogs with these, so the walkers
 * read data written from the documented encodings, not from the walker's own decoder.
 */

const u8 = (value: number, what: string, max: number): number => {
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${what} ${value} is outside 0..${max}`);
  return value;
};

/** An offset in bytes that must be a multiple of `unit` and at most `max` units. */
const scaled = (bytes: number, unit: number, max: number, what: string): number => {
  if (bytes % unit !== 0) throw new RangeError(`${what}: ${bytes} is not a multiple of ${unit}`);
  return u8(bytes / unit, what, max);
};

/** The unwind codes, each as its bytes in stored order (most significant byte first). */
export const ARM64_CODE = {
  /** `sub sp, sp, #n` (n < 512, a multiple of 16). */
  alloc_s: (bytes: number): number[] => [scaled(bytes, 16, 31, "alloc_s")],
  /** `stp x19, x20, [sp, #-n]!` (n ≤ 248). */
  save_r19r20_x: (bytes: number): number[] => [0x20 | scaled(bytes, 8, 31, "save_r19r20_x")],
  /** `stp x29, lr, [sp, #n]`. */
  save_fplr: (bytes: number): number[] => [0x40 | scaled(bytes, 8, 63, "save_fplr")],
  /** `stp x29, lr, [sp, #-n]!`. */
  save_fplr_x: (bytes: number): number[] => [0x80 | (scaled(bytes, 8, 64, "save_fplr_x") - 1)],
  /** `sub sp, sp, #n` (n < 32 KiB). */
  alloc_m: (bytes: number): number[] => {
    const x = scaled(bytes, 16, 0x7ff, "alloc_m");
    return [0xc0 | (x >> 8), x & 0xff];
  },
  /** `stp x(19+i), x(20+i), [sp, #n]`. */
  save_regp: (first: number, bytes: number): number[] => pairCode(0xc8, first - 19, scaled(bytes, 8, 63, "save_regp")),
  /** `stp x(19+i), x(20+i), [sp, #-n]!`. */
  save_regp_x: (first: number, bytes: number): number[] => pairCode(0xcc, first - 19, scaled(bytes, 8, 64, "save_regp_x") - 1),
  /** `str x(19+i), [sp, #n]` (register 30 is lr). */
  save_reg: (register: number, bytes: number): number[] => pairCode(0xd0, register - 19, scaled(bytes, 8, 63, "save_reg")),
  /** `str x(19+i), [sp, #-n]!`. */
  save_reg_x: (register: number, bytes: number): number[] => {
    const x = u8(register - 19, "save_reg_x register", 15);
    const z = scaled(bytes, 8, 32, "save_reg_x") - 1;
    return [0xd4 | (x >> 3), ((x & 7) << 5) | z];
  },
  /** `stp x(19+2i), lr, [sp, #n]`. */
  save_lrpair: (register: number, bytes: number): number[] => {
    if ((register - 19) % 2 !== 0) throw new RangeError(`save_lrpair: x${register} is not x19 + 2i`);
    return pairCode(0xd6, (register - 19) / 2, scaled(bytes, 8, 63, "save_lrpair"));
  },
  /** `stp d(8+i), d(9+i), [sp, #n]`. */
  save_fregp: (first: number, bytes: number): number[] => pairCode(0xd8, first - 8, scaled(bytes, 8, 63, "save_fregp")),
  /** `stp d(8+i), d(9+i), [sp, #-n]!`. */
  save_fregp_x: (first: number, bytes: number): number[] => pairCode(0xda, first - 8, scaled(bytes, 8, 64, "save_fregp_x") - 1),
  /** `str d(8+i), [sp, #n]`. */
  save_freg: (register: number, bytes: number): number[] => pairCode(0xdc, register - 8, scaled(bytes, 8, 63, "save_freg")),
  /** `str d(8+i), [sp, #-n]!`. */
  save_freg_x: (register: number, bytes: number): number[] => {
    const x = u8(register - 8, "save_freg_x register", 7);
    return [0xde, (x << 5) | (scaled(bytes, 8, 32, "save_freg_x") - 1)];
  },
  /** `sub sp, sp, #n` (n < 256 MiB). */
  alloc_l: (bytes: number): number[] => {
    const x = scaled(bytes, 16, 0xff_ffff, "alloc_l");
    return [0xe0, (x >> 16) & 0xff, (x >> 8) & 0xff, x & 0xff];
  },
  /** `mov x29, sp`. */
  set_fp: (): number[] => [0xe1],
  /** `add x29, sp, #n`. */
  add_fp: (bytes: number): number[] => [0xe2, scaled(bytes, 8, 255, "add_fp")],
  /** An instruction that needs no unwinding. */
  nop: (): number[] => [0xe3],
  end: (): number[] => [0xe4],
  /** The end of a fragment's own codes; its parent's prolog codes follow. */
  end_c: (): number[] => [0xe5],
  /** The next pair code restores the next pair too. */
  save_next: (): number[] => [0xe6],
  /** `pacibsp`. */
  pac_sign_lr: (): number[] => [0xfc],
  /** MSFT_OP_MACHINE_FRAME (no instruction): the interrupted SP and PC at [sp], [sp+8]. */
  machine_frame: (): number[] => [0xe9],
  /** MSFT_OP_CLEAR_UNWOUND_TO_CALL (no instruction): the caller's pc is lr, an interrupted pc. */
  clear_unwound_to_call: (): number[] => [0xec],
} as const;

/** A two-byte code `prefix:6 | X:4 | Z:6`, X split over the two bytes. */
function pairCode(prefix: number, x: number, z: number): number[] {
  u8(x, "register index", 15);
  u8(z, "offset", 63);
  return [prefix | (x >> 2), ((x & 3) << 6) | z];
}

/** The fields of a packed unwind word (arm64.md §1.2); FunctionLength comes from the code. */
export interface PackedUnwind {
  /** 1: one prolog at the start and one epilog at the end; 2: a fragment with neither. */
  flag?: 1 | 2;
  regF?: number;
  regI?: number;
  h?: boolean;
  cr: 0 | 1 | 2 | 3;
  /** Bytes, a multiple of 16. */
  frameSize: number;
}

/** The packed `.pdata` UnwindData word of a function `length` instructions long. */
export function packedWord(length: number, p: PackedUnwind): number {
  u8(length, "FunctionLength", 0x7ff);
  const frame = scaled(p.frameSize, 16, 0x1ff, "FrameSize");
  return ((p.flag ?? 1) | (length << 2) | (u8(p.regF ?? 0, "RegF", 7) << 13) | (u8(p.regI ?? 0, "RegI", 15) << 16) | ((p.h === true ? 1 : 0) << 20) | (p.cr << 21) | (frame << 23)) >>> 0;
}

/** An `.xdata` record's parts (arm64.md §1.3). */
export interface XdataRecord {
  /** Instructions covered. */
  length: number;
  /** Every code byte: the prolog's (in stored order) and then any epilog's own. */
  codes: readonly number[];
  /** E = 1: the single epilog at the end of the function starts at this code index. */
  epilogIndex?: number;
  /** E = 0: the epilog scopes, each its first instruction (from the function's start) and first code index. */
  scopes?: readonly { start: number; index: number }[];
}

/** The bytes of an `.xdata` record: header, scopes, codes padded with `nop` to a word. */
export function xdataBytes(r: XdataRecord): Uint8Array {
  const codes = [...r.codes];
  while (codes.length % 4 !== 0) codes.push(0xe3);
  const words = codes.length / 4;
  const single = r.epilogIndex !== undefined;
  const scopes = r.scopes ?? [];
  if (single && scopes.length > 0) throw new RangeError("an .xdata record has either a single epilog (E = 1) or epilog scopes");
  const count = single ? r.epilogIndex! : scopes.length;
  if (count > 31 || words > 31) throw new RangeError("more epilogs or code words than the header holds (no extension word written)");
  if (count === 0 && words === 0) throw new RangeError("a record without codes needs the extension word");
  u8(r.length, "FunctionLength", 0x3_ffff);
  const header = (r.length | ((single ? 1 : 0) << 21) | (count << 22) | (words << 27)) >>> 0;
  const out = new Uint8Array(4 + 4 * scopes.length + codes.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, header, true);
  scopes.forEach((s, i) => view.setUint32(4 + 4 * i, (u8(s.start, "EpilogStartOffset", 0x3_ffff) | (u8(s.index, "EpilogStartIndex", 0x3ff) << 22)) >>> 0, true));
  out.set(codes, 4 + 4 * scopes.length);
  return out;
}
