/**
 * Windows ARM (ARMNT, Thumb-2) unwind data (Microsoft's "ARM exception handling"; docs/arm.md):
 * the `.pdata` entries, the `.xdata` records, every unwind code, and the packed `.pdata` words
 * expanded into the codes the same prolog and epilog would have, so that one algorithm unwinds
 * either. Lengths and offsets are in bytes here (the records count halfwords). The emulator's
 * encoder (emulator/programs/arm-unwind-encode.ts) writes the same data from the documentation.
 *
 * `.pdata` entry: Function Start RVA (bit 0 set for Thumb code), then a word whose low two bits
 * (Flag) say what the rest is: 0 the `.xdata` RVA, 1 packed unwind data, 2 packed data of a
 * fragment without a prolog, 3 reserved.
 *
 * Packed word: Flag (0-1), Function Length (2-12, halfwords), Ret (13-14), H (15), Reg (16-18),
 * R (19), L (20), C (21), Stack Adjust (22-31, words; 0x3F4 and above: bits 0-1 the words − 1,
 * bit 2 folded into the prolog's push, bit 3 into the epilog's pop).
 *
 * `.xdata` header, word 0: Function Length (0-17, halfwords), Vers (18-19, 0), X (20), E (21), F
 * (22, a fragment), Epilogue Count (23-27: scope count, or with E the code index of the one
 * epilog), Code Words (28-31). Both 0: an extension word, epilogue count (0-15) and code words
 * (16-23). Then, unless E, one word per scope: start (0-17, halfwords), reserved (18-19),
 * condition (20-23), start index (24-31). Then the code bytes.
 */
import { hex } from "../../hex.js";
import { isProblem, problemAt, type DataProblem } from "./problem.js";
import { MAX_XDATA_LENGTH, readXdataHeader } from "./xdata-header.js";

/** Bytes of one `.pdata` entry. */
export const ARM_RUNTIME_FUNCTION_BYTES = 8;

/** An epilog scope: its start in bytes from the function's start, the index of its first code, its condition (0xE always). */
export interface ArmEpilogScope {
  start: number;
  index: number;
  condition: number;
}

/** Where a function's unwind data came from. */
export type ArmUnwindSource = { form: "xdata"; rva: number } | { form: "packed"; word: number };

/** One function's unwind data, from `.xdata` or expanded from a packed word. */
export interface ArmUnwindData {
  source: ArmUnwindSource;
  /** The function's (or fragment's) length in bytes. */
  functionLength: number;
  /** F, or packed Flag 2: no prolog; every position outside an epilog unwinds in full. */
  fragment: boolean;
  /** E: one epilog at the function's end, whose codes start at {@link epilogIndex}. */
  epilogInHeader: boolean;
  epilogIndex: number;
  /** Without E, the epilog scopes in order of their start. */
  scopes: readonly ArmEpilogScope[];
  /** The code bytes, prolog codes first. */
  codes: Uint8Array;
  /** X: an exception handler's RVA follows the codes. */
  handler: boolean;
}

/** One unwind code, decoded: what undoing its instruction does. */
export type ArmCode =
  /** add sp, sp, #size (00-7F, E8-EB, F7-FA). */
  | { op: "alloc"; name: string; size: number }
  /** pop of integer registers (bit n = rn; bit 14 = lr) (80-BF, D0-DF, EC-ED). */
  | { op: "pop"; name: string; mask: number }
  /** mov sp, rX (C0-CF). */
  | { op: "mov-sp"; register: number }
  /** vpop {dFirst-dLast} (E0-E7, F5, F6). */
  | { op: "vpop"; name: string; first: number; last: number }
  /** ldr lr, [sp], #size (EF 00-0F). */
  | { op: "ldr-lr"; size: number }
  /** A 16- or 32-bit nop (FB, FC). */
  | { op: "nop" }
  /** end (FF), or end with one more 16-/32-bit instruction in an epilog (FD, FE). */
  | { op: "end"; extra: 0 | 2 | 4 }
  /** A Microsoft-specific code (EE 00-0F): not modelled. */
  | { op: "microsoft"; value: number }
  /** A code the documentation leaves "available" (reserved). */
  | { op: "invalid"; why: string };

/** Bytes a code occupies, from its first byte. */
export function armCodeLength(b: number): number {
  if (b < 0x80 || (b >= 0xc0 && b <= 0xe7) || b >= 0xfb || (b >= 0xf0 && b <= 0xf4)) return 1;
  if (b <= 0xbf || (b >= 0xe8 && b <= 0xef) || b === 0xf5 || b === 0xf6) return 2;
  if (b === 0xf7 || b === 0xf9) return 3;
  return 4;
}

/** Bytes of the instruction a code stands for (2 or 4; 0 for an end, whose epilog extra is separate). */
export function armCodeOpSize(b: number): number {
  if (b < 0x80) return 2;
  if (b <= 0xbf) return 4;
  if (b <= 0xd7) return 2;
  if (b <= 0xef) return b >= 0xec && b <= 0xee ? 2 : 4;
  if (b <= 0xf4) return 0;
  if (b === 0xf5 || b === 0xf6) return 4;
  if (b === 0xf7 || b === 0xf8 || b === 0xfb) return 2;
  if (b === 0xf9 || b === 0xfa || b === 0xfc) return 4;
  return 0;
}

/** True for an end code (FD, FE, FF). */
export function isArmEnd(b: number): boolean {
  return b >= 0xfd;
}

/** r4-rN plus lr when `lr`: the mask of D0-DF. */
function rangeMask(last: number, lr: boolean): number {
  let mask = 0;
  for (let r = 4; r <= last; r++) mask |= 1 << r;
  return lr ? mask | (1 << 14) : mask;
}

/** Decodes the code at `p`; bytes past the end read as 0. */
export function decodeArmCode(codes: Uint8Array, p: number): { code: ArmCode; length: number } {
  const b = codes[p]!;
  const length = armCodeLength(b);
  const at = (k: number): number => codes[p + k] ?? 0;
  let code: ArmCode;
  if (b < 0x80) code = { op: "alloc", name: "alloc_s", size: (b & 0x7f) * 4 };
  else if (b <= 0xbf) {
    const raw = ((b & 0x3f) << 8) | at(1);
    code = { op: "pop", name: "pop_w", mask: (raw & 0x1fff) | ((raw & 0x2000) !== 0 ? 1 << 14 : 0) };
  }
  else if (b <= 0xcf) code = { op: "mov-sp", register: b & 0x0f };
  else if (b <= 0xd7) code = { op: "pop", name: "pop_r4", mask: rangeMask((b & 3) + 4, (b & 4) !== 0) };
  else if (b <= 0xdf) code = { op: "pop", name: "pop_r4_w", mask: rangeMask((b & 3) + 8, (b & 4) !== 0) };
  else if (b <= 0xe7) code = { op: "vpop", name: "vpop_d8", first: 8, last: (b & 7) + 8 };
  else if (b <= 0xeb) code = { op: "alloc", name: "alloc_w", size: (((b & 3) << 8) | at(1)) * 4 };
  else if (b <= 0xed) code = { op: "pop", name: "pop_lo", mask: (at(1) & 0xff) | ((b & 1) !== 0 ? 1 << 14 : 0) };
  else if (b === 0xee) code = at(1) <= 0x0f ? { op: "microsoft", value: at(1) } : { op: "invalid", why: `unwind code ee ${hex(at(1))} is reserved` };
  else if (b === 0xef) code = at(1) <= 0x0f ? { op: "ldr-lr", size: (at(1) & 0x0f) * 4 } : { op: "invalid", why: `unwind code ef ${hex(at(1))} is reserved` };
  else if (b <= 0xf4) code = { op: "invalid", why: `unwind code ${hex(b)} is reserved` };
  else if (b === 0xf5) code = { op: "vpop", name: "vpop_lo", first: at(1) >>> 4, last: at(1) & 0x0f };
  else if (b === 0xf6) code = { op: "vpop", name: "vpop_hi", first: (at(1) >>> 4) + 16, last: (at(1) & 0x0f) + 16 };
  else if (b === 0xf7 || b === 0xf9) code = { op: "alloc", name: b === 0xf7 ? "alloc_m" : "alloc_m_w", size: ((at(1) << 8) | at(2)) * 4 };
  else if (b === 0xf8 || b === 0xfa) code = { op: "alloc", name: b === 0xf8 ? "alloc_l" : "alloc_l_w", size: ((at(1) << 16) | (at(2) << 8) | at(3)) * 4 };
  else if (b === 0xfb || b === 0xfc) code = { op: "nop" };
  else code = { op: "end", extra: b === 0xfd ? 2 : b === 0xfe ? 4 : 0 };
  return { code, length };
}

/** Bytes of the instructions the codes from `from` stand for, to the first end; an epilog adds its end's extra instruction. */
export function armScopeBytes(codes: Uint8Array, from: number, epilog: boolean): number {
  let size = 0;
  for (let p = from; p < codes.length; ) {
    const b = codes[p]!;
    if (isArmEnd(b)) return epilog ? size + (b === 0xfd ? 2 : b === 0xfe ? 4 : 0) : size;
    size += armCodeOpSize(b);
    p += armCodeLength(b);
  }
  return size;
}

/** ARM's header: F (fragment) at bit 22, Epilog Count from bit 23, Code Words from bit 28. */
const ARM_XDATA = { epilogCountShift: 23, codeWordsShift: 28, fragmentBit: 22 };

/** Decodes the `.xdata` record at `rva`, reading the image through `read`; a problem says what cannot be read or used. */
export function decodeArmXdata(read: (rva: number, size: number) => Uint8Array | undefined, rva: number): ArmUnwindData | DataProblem {
  const h = readXdataHeader(read, rva, ARM_XDATA);
  if (isProblem(h)) return h;
  const { codes, epilogInHeader, fragment, handler } = h;
  const scopes: ArmEpilogScope[] = h.scopeWords.map((s) => ({ start: 2 * (s & MAX_XDATA_LENGTH), condition: (s >>> 20) & 15, index: s >>> 24 }));
  const epilogIndex = epilogInHeader ? h.epilogCount : 0;
  for (const s of scopes) {
    if (s.index >= codes.length) return problemAt(rva, `an epilog scope of the .xdata record at RVA ${hex(rva)} starts at code byte ${s.index}, past its ${codes.length} code bytes`);
  }
  if (epilogInHeader && epilogIndex >= codes.length) return problemAt(rva, `the epilog of the .xdata record at RVA ${hex(rva)} starts at code byte ${epilogIndex}, past its ${codes.length} code bytes`);
  return { source: { form: "xdata", rva }, functionLength: 2 * h.functionLength, fragment, epilogInHeader, epilogIndex, scopes, codes, handler };
}

/** The fields of a packed `.pdata` word. */
export interface ArmPacked {
  flag: 1 | 2;
  /** Function Length in bytes (the field holds halfwords). */
  functionLength: number;
  ret: 0 | 1 | 2 | 3;
  h: boolean;
  reg: number;
  r: boolean;
  l: boolean;
  c: boolean;
  stackAdjust: number;
}

/** The fields of a packed word (Flag 1 or 2). */
export function packedFields(word: number): ArmPacked {
  return {
    flag: (word & 3) === 2 ? 2 : 1,
    functionLength: 2 * ((word >>> 2) & 0x7ff),
    ret: ((word >>> 13) & 3) as ArmPacked["ret"],
    h: (word & (1 << 15)) !== 0,
    reg: (word >>> 16) & 7,
    r: (word & (1 << 19)) !== 0,
    l: (word & (1 << 20)) !== 0,
    c: (word & (1 << 21)) !== 0,
    stackAdjust: word >>> 22,
  };
}

/**
 * The code of a push or pop of `mask` (bit 14 lr), the form of the instruction's size: 16-bit
 * (D0-D7, EC-ED) when the registers are r0-r7 and lr and `wide` is not asked for, else 32-bit
 * (D8-DF, 80-BF). A 16-bit pop can name pc but not lr: an epilog's pop of lr is 32-bit.
 */
export function popCode(mask: number, wide = false): number[] {
  const lr = (mask & (1 << 14)) !== 0;
  const regs = mask & 0x1fff;
  for (let last = 4; last <= 11; last++) {
    if (regs !== rangeMask(last, false)) continue;
    if (last <= 7 && !wide) return [0xd0 | (lr ? 4 : 0) | (last - 4)];
    if (last >= 8) return [0xd8 | (lr ? 4 : 0) | (last - 8)];
  }
  if ((regs & ~0xff) === 0 && !wide) return [lr ? 0xed : 0xec, regs];
  return [0x80 | (lr ? 0x20 : 0) | (regs >>> 8), regs & 0xff];
}

/** The code of `add sp, sp, #bytes` for a 16-bit (`wide` false) or 32-bit instruction. */
export function allocCode(bytes: number, wide: boolean): number[] {
  const w = bytes >>> 2;
  if (!wide && w <= 0x7f) return [w];
  if (wide && w <= 0x3ff) return [0xe8 | (w >>> 8), w & 0xff];
  if (w <= 0xffff) return [wide ? 0xf9 : 0xf7, w >>> 8, w & 0xff];
  return [wide ? 0xfa : 0xf8, (w >>> 16) & 0xff, (w >>> 8) & 0xff, w & 0xff];
}

/**
 * A packed word expanded into unwind data (the canonical prolog and epilog of the packed-data
 * tables): prolog codes in undo order, then, where the epilog differs (H with L, folding that
 * differs, a return through a branch), the epilog's own codes; a problem for the combinations
 * the documentation calls an unsupported sequence.
 */
export function expandArmPacked(word: number): ArmUnwindData | DataProblem {
  const p = packedFields(word);
  const bad = (why: string): DataProblem => ({ problem: `packed word ${hex(word)}: ${why}` });
  if (p.c && !p.l) return bad("C is set without L (a frame chain needs r11 and lr)");
  if (p.c && !p.r && p.reg === 7) return bad("C is set with Reg 7 (r11 is implied by C, not named by Reg)");
  if (p.ret === 0 && !p.l) return bad("Ret 0 (pop {pc}) needs L");
  const sa = p.stackAdjust;
  const special = sa >= 0x3f4;
  const pf = special && (sa & 4) !== 0;
  const ef = special && (sa & 8) !== 0;
  const adjust = special ? 4 * ((sa & 3) + 1) : 4 * sa;
  const s = ~sa & 3;
  const pushMask = (fold: boolean, withLr: boolean): number => {
    let m = 0;
    if (!p.r) m |= rangeMask(p.reg + 4, false);
    if (fold) for (let r = s; r <= 3; r++) m |= 1 << r;
    if (p.c) m |= 1 << 11;
    if (withLr) m |= 1 << 14;
    return m;
  };
  const vfp = p.r && p.reg !== 7;
  // The prolog, in undo order: 5 sub sp, 4 vpush, 3 frame chain, 2 push, 1 push {r0-r3}.
  const prolog: number[] = [];
  if (adjust !== 0 && !pf) prolog.push(...allocCode(adjust, adjust > 508));
  if (vfp) prolog.push(0xe0 | p.reg);
  if (p.c) prolog.push(!p.l && p.r && !pf ? 0xfb : 0xfc);
  const push = p.c || p.l || !p.r || pf;
  if (push) prolog.push(...popCode(pushMask(pf, p.l)));
  if (p.h) prolog.push(0x04);
  prolog.push(0xff);
  if (p.ret === 3) return packedData(word, p, prolog, undefined);
  // The epilog: 6 add sp, 7 vpop, 8 pop, 9a/9b, 10 the branch.
  const epilog: number[] = [];
  if (adjust !== 0 && !ef) epilog.push(...allocCode(adjust, adjust > 508));
  if (vfp) epilog.push(0xe0 | p.reg);
  if (p.c || (p.l && !p.h) || !p.r || ef) {
    const popsLr = p.l && !p.h;
    // pop {…, pc} (Ret 0) may be 16-bit; a pop of lr is not.
    epilog.push(...popCode(pushMask(ef, popsLr), popsLr && p.ret !== 0));
  }
  if (p.h) epilog.push(...(p.l ? [0xef, 0x05] : [0x04]));
  // ldr pc (H with L) and pop {pc} (Ret 0) return; otherwise a 16- or 32-bit branch follows.
  epilog.push(p.h && p.l ? 0xff : p.ret === 1 ? 0xfd : p.ret === 2 ? 0xfe : 0xff);
  return packedData(word, p, prolog, epilog);
}

function packedData(word: number, p: ArmPacked, prolog: number[], epilog: number[] | undefined): ArmUnwindData {
  const same = epilog !== undefined && epilog.length === prolog.length && epilog.every((b, i) => b === prolog[i]);
  const codes = epilog === undefined || same ? prolog : [...prolog, ...epilog];
  return {
    source: { form: "packed", word },
    functionLength: p.functionLength,
    fragment: p.flag === 2,
    epilogInHeader: epilog !== undefined,
    epilogIndex: epilog === undefined || same ? 0 : prolog.length,
    scopes: [],
    codes: Uint8Array.from(codes),
    handler: false,
  };
}
