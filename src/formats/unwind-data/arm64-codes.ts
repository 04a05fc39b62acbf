/**
 * Windows ARM64 unwind codes (arm64.md §1.4; Microsoft's "ARM64 exception handling", "Unwind
 * codes"): the byte strings an `.xdata` record (or the expansion of a packed `.pdata` word) holds,
 * decoded one code at a time. Each code undoes one prolog instruction, or stands for one epilog
 * instruction, except the custom-stack codes (0xE8-0xF7), which describe no instruction. A code's
 * bytes are stored most significant first, so its first byte gives its length.
 *
 * Decoding reads no memory and keeps nothing: plan.ts turns a sequence of decoded codes into the
 * program exec.ts runs. Register ranges and offsets are as the Windows unwinder computes them
 * (dotnet/runtime's copy, `RtlpUnwindFunctionFull`); where it and the documentation differ the
 * Windows reading is taken (arm64.md §1.13).
 */

/** The register files the codes restore: X (x0-x30, x29 = fp, x30 = lr), D (the low 64 bits of v0-v31), Q (all 128 bits). */
export type Arm64Bank = "x" | "d" | "q";

/** The name of a code that restores registers. */
export type Arm64SaveName =
  | "save_r19r20_x"
  | "save_fplr"
  | "save_fplr_x"
  | "save_regp"
  | "save_regp_x"
  | "save_reg"
  | "save_reg_x"
  | "save_lrpair"
  | "save_fregp"
  | "save_fregp_x"
  | "save_freg"
  | "save_freg_x"
  | "save_any_reg";

/** The custom-stack codes: they describe no instruction, and the caller's PC comes from the frame they name (arm64.md §1.9). */
export type Arm64CustomName = "trap_frame" | "machine_frame" | "context" | "ec_context" | "clear_unwound_to_call";

/** One unwind code, decoded. */
export type Arm64Code =
  /** sp += size: alloc_s (< 512), alloc_m (< 32 KiB), alloc_l (< 256 MiB). */
  | { op: "alloc"; name: "alloc_s" | "alloc_m" | "alloc_l"; size: number }
  /**
   * Registers restored from the stack: `count` consecutive registers of `bank` from `first` (a
   * save_lrpair restores x(first) and lr), from sp + `offset`, or with `writeback` from sp, after
   * which sp += `offset` (the pre-indexed store of the prolog). `pairable`: a save_next before it
   * extends the range by two registers per save_next (§1.5).
   */
  | { op: "save"; name: Arm64SaveName; bank: Arm64Bank; first: number; count: number; lrPair: boolean; offset: number; writeback: boolean; pairable: boolean }
  /** sp = fp (undoes `mov x29, sp`). */
  | { op: "set_fp" }
  /** sp = fp − offset (undoes `add x29, sp, #offset`; the field is scaled by 8). */
  | { op: "add_fp"; offset: number }
  /** No effect: `nop` (a homing store, `mov x15`, `bl __chkstk`), or a reserved code the Windows unwinder skips. */
  | { op: "nop"; name: "nop" | "reserved" }
  /** The end of the sequence (in an epilog, the `ret` or tail branch). */
  | { op: "end" }
  /** The end of this region's own codes; execution goes on with the parent region's phantom prolog (§1.11). */
  | { op: "end_c" }
  /** The next pair code restores two more registers (§1.5). */
  | { op: "save_next" }
  /** Undoes `pacibsp`: the return address in lr is authenticated (here: its pointer authentication code is stripped, §1.12). */
  | { op: "pac_sign_lr" }
  /** A custom stack: a trap frame, a machine frame, a CONTEXT, an ARM64EC CONTEXT, or only "the caller's PC is Lr" (§1.9). */
  | { op: "custom"; name: Arm64CustomName }
  /** A code the Windows unwinder rejects (STATUS_UNWIND_INVALID_SEQUENCE). */
  | { op: "invalid"; why: string };

/** A decoded code with where it was and what it covers. */
export interface DecodedCode {
  code: Arm64Code;
  /** Byte index of its first byte in the code array. */
  at: number;
  /** Its bytes. */
  length: number;
  /** Instructions it stands for in a prolog or epilog: 1, or 0 for the custom-stack codes (0xE8-0xF7). */
  instructions: 0 | 1;
}

/**
 * Bytes of each code whose first byte is 0xE0-0xFF (the Windows unwinder's
 * UnwindCodeSizeTable): alloc_l 4, add_fp 2, save_any_reg 3, the reserved 0xF8-0xFB forms 2-5.
 */
const SIZE_E0 = [4, 1, 2, 1, 1, 1, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 3, 4, 5, 1, 1, 1, 1];

/** The length in bytes of the code whose first byte is `b`. */
export function codeLength(b: number): number {
  return b < 0xc0 ? 1 : b < 0xe0 ? 2 : SIZE_E0[b - 0xe0]!;
}

/** The instructions a code whose first byte is `b` stands for: 0 for 0xE8-0xF7 (custom stacks and reserved ones), else 1. */
export function codeInstructions(b: number): 0 | 1 {
  return b >= 0xe8 && b <= 0xf7 ? 0 : 1;
}

/** Whether `b` is `end` or `end_c`: where a prolog's or epilog's own codes stop (the Windows `OPCODE_IS_END`). */
export function isEnd(b: number): boolean {
  return (b & 0xfe) === 0xe4;
}

const CUSTOM: readonly Arm64CustomName[] = ["trap_frame", "machine_frame", "context", "ec_context", "clear_unwound_to_call"];

function save(name: Arm64SaveName, bank: Arm64Bank, first: number, count: number, offset: number, writeback: boolean, pairable: boolean, lrPair = false): Arm64Code {
  return { op: "save", name, bank, first, count, lrPair, offset, writeback, pairable };
}

/**
 * Decodes the code at `bytes[at]`. A code whose bytes run past the array decodes as invalid
 * ("runs past the unwind codes"), as does anything the Windows unwinder rejects.
 */
export function decodeCode(bytes: Uint8Array, at: number): DecodedCode {
  const b = bytes[at]!;
  const length = codeLength(b);
  const instructions = codeInstructions(b);
  const done = (code: Arm64Code): DecodedCode => ({ code, at, length, instructions });
  if (at + length > bytes.length) return done({ op: "invalid", why: `code 0x${b.toString(16)} at byte ${at} runs past the unwind codes` });
  const b1 = length > 1 ? bytes[at + 1]! : 0;
  if (b <= 0x1f) return done({ op: "alloc", name: "alloc_s", size: 16 * b });
  if (b <= 0x3f) return done(save("save_r19r20_x", "x", 19, 2, 8 * (b & 0x1f), true, true));
  if (b <= 0x7f) return done(save("save_fplr", "x", 29, 2, 8 * (b & 0x3f), false, false));
  if (b <= 0xbf) return done(save("save_fplr_x", "x", 29, 2, 8 * ((b & 0x3f) + 1), true, false));
  if (b <= 0xc7) return done({ op: "alloc", name: "alloc_m", size: 16 * (((b & 7) << 8) | b1) });
  if (b <= 0xcb) return done(save("save_regp", "x", 19 + (((b & 3) << 2) | (b1 >> 6)), 2, 8 * (b1 & 0x3f), false, true));
  if (b <= 0xcf) return done(save("save_regp_x", "x", 19 + (((b & 3) << 2) | (b1 >> 6)), 2, 8 * ((b1 & 0x3f) + 1), true, true));
  if (b <= 0xd3) return done(save("save_reg", "x", 19 + (((b & 3) << 2) | (b1 >> 6)), 1, 8 * (b1 & 0x3f), false, false));
  if (b <= 0xd5) return done(save("save_reg_x", "x", 19 + (((b & 1) << 3) | (b1 >> 5)), 1, 8 * ((b1 & 0x1f) + 1), true, false));
  if (b <= 0xd7) return done(save("save_lrpair", "x", 19 + 2 * (((b & 1) << 2) | (b1 >> 6)), 1, 8 * (b1 & 0x3f), false, false, true));
  if (b <= 0xd9) return done(save("save_fregp", "d", 8 + (((b & 1) << 2) | (b1 >> 6)), 2, 8 * (b1 & 0x3f), false, true));
  if (b <= 0xdb) return done(save("save_fregp_x", "d", 8 + (((b & 1) << 2) | (b1 >> 6)), 2, 8 * ((b1 & 0x3f) + 1), true, true));
  if (b <= 0xdd) return done(save("save_freg", "d", 8 + (((b & 1) << 2) | (b1 >> 6)), 1, 8 * (b1 & 0x3f), false, false));
  if (b === 0xde) return done(save("save_freg_x", "d", 8 + (b1 >> 5), 1, 8 * ((b1 & 0x1f) + 1), true, false));
  if (b === 0xdf) return done({ op: "invalid", why: "alloc_z (an SVE allocation) is not supported by the Windows unwinder" });
  if (b === 0xe0) return done({ op: "alloc", name: "alloc_l", size: 16 * ((b1 << 16) | (bytes[at + 2]! << 8) | bytes[at + 3]!) });
  if (b === 0xe1) return done({ op: "set_fp" });
  if (b === 0xe2) return done({ op: "add_fp", offset: 8 * b1 });
  if (b === 0xe3) return done({ op: "nop", name: "nop" });
  if (b === 0xe4) return done({ op: "end" });
  if (b === 0xe5) return done({ op: "end_c" });
  if (b === 0xe6) return done({ op: "save_next" });
  if (b === 0xe7) return done(saveAnyReg(b1, bytes[at + 2]!));
  if (b <= 0xec) return done({ op: "custom", name: CUSTOM[b - 0xe8]! });
  if (b <= 0xf7) return done({ op: "invalid", why: `code 0x${b.toString(16)} is reserved` });
  if (b === 0xfc) return done({ op: "pac_sign_lr" });
  // 0xF8-0xFB (with 1-4 more bytes) and 0xFD-0xFF: reserved for future use, skipped as nops.
  return done({ op: "nop", name: "reserved" });
}

/**
 * save_any_reg, `11100111 0pxrrrrr ffoooooo`: register r (an absolute number) of bank f (X, D, Q;
 * 3 is SVE), a pair when p, pre-indexed when x; the offset is (o + x) units of 16 bytes when x,
 * p or Q, else of 8 (arm64.md §1.4).
 */
function saveAnyReg(b1: number, b2: number): Arm64Code {
  if ((b1 & 0x80) !== 0) return { op: "invalid", why: "save_any_reg with bit 7 of its second byte set" };
  const pair = (b1 & 0x40) !== 0;
  const writeback = (b1 & 0x20) !== 0;
  const r = b1 & 0x1f;
  const f = b2 >> 6;
  const o = b2 & 0x3f;
  if (f === 3) return { op: "invalid", why: "save_any_reg of an SVE register (save_zreg, save_preg) is not supported by the Windows unwinder" };
  const bank: Arm64Bank = f === 0 ? "x" : f === 1 ? "d" : "q";
  const unit = writeback || pair || bank === "q" ? 16 : 8;
  return save("save_any_reg", bank, r, pair ? 2 : 1, (o + (writeback ? 1 : 0)) * unit, writeback, pair);
}

/** The width of one register of a bank, in bytes. */
export function bankWidth(bank: Arm64Bank): 8 | 16 {
  return bank === "q" ? 16 : 8;
}

/** The name of register `n` of a bank as the project writes registers: x0-x28, fp, lr; d0-d31; q0-q31. */
export function bankRegister(bank: Arm64Bank, n: number): string {
  if (bank === "x") return n === 29 ? "fp" : n === 30 ? "lr" : `x${n}`;
  return `${bank}${n}`;
}
