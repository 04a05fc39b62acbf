/**
 * ARM (ARMNT, Thumb-2) unwind data as bytes, from Microsoft's "ARM exception handling": each
 * unwind code by the instruction it describes, the packed `.pdata` word, and the `.xdata` record
 * with its epilog scopes. Tests and programs describe prologs and epilogs with these, so the
 * walkers read data written from the documented encodings, not from the walker's own decoder.
 */
import type { ArmPacked } from "../../src/entry/arch.js";

const check = (value: number, what: string, max: number): number => {
  if (!Number.isInteger(value) || value < 0 || value > max) throw new RangeError(`${what} ${value} is outside 0..${max}`);
  return value;
};

const words = (bytes: number, what: string, max: number): number => {
  if (bytes % 4 !== 0) throw new RangeError(`${what}: ${bytes} is not a multiple of 4`);
  return check(bytes / 4, what, max);
};

/** Register bits of a list: r0-r12 at their numbers, lr as `lrBit`. */
const bits = (regs: readonly string[], lrBit: number): number =>
  regs.reduce((m, r) => m | (r === "lr" ? lrBit : 1 << check(Number(r.slice(1)), `register ${r}`, 12)), 0);

/** The unwind codes, each as its bytes in stored order (most significant byte first). */
export const ARM_CODE = {
  /** 00-7F: 16-bit `add sp, sp, #n` (n ≤ 508). */
  add_sp: (bytes: number): number[] => [words(bytes, "add_sp", 0x7f)],
  /** 80-BF: 32-bit `pop {r0-r12, lr}` by mask. */
  pop_w: (regs: readonly string[]): number[] => {
    const m = bits(regs, 0x2000);
    return [0x80 | (m >> 8), m & 0xff];
  },
  /** C0-CF: 16-bit `mov sp, rX`. */
  mov_sp: (register: number): number[] => [0xc0 | check(register, "mov_sp", 15)],
  /** D0-D7: 16-bit `pop {r4-rX}` (X 4-7), with lr. */
  pop_r4: (last: number, lr: boolean): number[] => [0xd0 | (lr ? 4 : 0) | (check(last, "pop_r4", 7) - 4)],
  /** D8-DF: 32-bit `pop {r4-rX}` (X 8-11), with lr. */
  pop_r4_w: (last: number, lr: boolean): number[] => [0xd8 | (lr ? 4 : 0) | (check(last, "pop_r4_w", 11) - 8)],
  /** E0-E7: 32-bit `vpop {d8-dX}` (X 8-15). */
  vpop_d8: (last: number): number[] => [0xe0 | (check(last, "vpop_d8", 15) - 8)],
  /** E8-EB: 32-bit `addw sp, sp, #n` (n ≤ 4092). */
  addw_sp: (bytes: number): number[] => {
    const x = words(bytes, "addw_sp", 0x3ff);
    return [0xe8 | (x >> 8), x & 0xff];
  },
  /** EC-ED: 16-bit `pop {r0-r7, lr}` by mask. */
  pop_lo: (regs: readonly string[]): number[] => {
    const m = bits(regs, 0x100);
    if ((m & 0xff00 & ~0x100) !== 0) throw new RangeError("pop_lo names only r0-r7 and lr");
    return [0xec | (m >> 8), m & 0xff];
  },
  /** EE 00-0F: Microsoft-specific. */
  microsoft: (value: number): number[] => [0xee, check(value, "microsoft", 15)],
  /** EF 00-0F: 32-bit `ldr lr, [sp], #n` (n ≤ 60). */
  ldr_lr: (bytes: number): number[] => [0xef, words(bytes, "ldr_lr", 15)],
  /** F5: 32-bit `vpop {dS-dE}` (0-15). */
  vpop_lo: (first: number, last: number): number[] => [0xf5, (check(first, "vpop_lo", 15) << 4) | check(last, "vpop_lo", 15)],
  /** F6: 32-bit `vpop {dS-dE}` (16-31). */
  vpop_hi: (first: number, last: number): number[] => [0xf6, ((check(first - 16, "vpop_hi", 15)) << 4) | check(last - 16, "vpop_hi", 15)],
  /** F7: 16-bit `add sp, sp, #n`, a 16-bit count of words. */
  add_sp_m: (bytes: number): number[] => {
    const x = words(bytes, "add_sp_m", 0xffff);
    return [0xf7, x >> 8, x & 0xff];
  },
  /** F8: 16-bit `add sp, sp, #n`, a 24-bit count of words. */
  add_sp_l: (bytes: number): number[] => {
    const x = words(bytes, "add_sp_l", 0xff_ffff);
    return [0xf8, x >> 16, (x >> 8) & 0xff, x & 0xff];
  },
  /** F9: 32-bit `add sp, sp, #n`, a 16-bit count of words. */
  add_sp_m_w: (bytes: number): number[] => {
    const x = words(bytes, "add_sp_m_w", 0xffff);
    return [0xf9, x >> 8, x & 0xff];
  },
  /** FA: 32-bit `add sp, sp, #n`, a 24-bit count of words. */
  add_sp_l_w: (bytes: number): number[] => {
    const x = words(bytes, "add_sp_l_w", 0xff_ffff);
    return [0xfa, x >> 16, (x >> 8) & 0xff, x & 0xff];
  },
  /** FB: a 16-bit nop. */
  nop: (): number[] => [0xfb],
  /** FC: a 32-bit nop. */
  nop_w: (): number[] => [0xfc],
  /** FD: end, one more 16-bit instruction in an epilog. */
  end_nop: (): number[] => [0xfd],
  /** FE: end, one more 32-bit instruction in an epilog. */
  end_nop_w: (): number[] => [0xfe],
  /** FF: end. */
  end: (): number[] => [0xff],
} as const;

/** A packed `.pdata` word's fields but its length (given apart, in bytes); Flag 1 unless said. */
export type ArmPackedUnwind = Omit<ArmPacked, "flag" | "functionLength"> & { flag?: 1 | 2 };

/** The packed word of a function `length` bytes long. */
export function armPackedWord(length: number, p: ArmPackedUnwind): number {
  if (length % 2 !== 0) throw new RangeError("a Thumb function's length is even");
  return (
    ((p.flag ?? 1) |
      (check(length / 2, "Function Length", 0x7ff) << 2) |
      (p.ret << 13) |
      ((p.h ? 1 : 0) << 15) |
      (check(p.reg, "Reg", 7) << 16) |
      ((p.r ? 1 : 0) << 19) |
      ((p.l ? 1 : 0) << 20) |
      ((p.c ? 1 : 0) << 21) |
      (check(p.stackAdjust, "Stack Adjust", 0x3ff) << 22)) >>>
    0
  );
}

/** An `.xdata` record: lengths and epilog starts in bytes. */
export interface ArmXdataRecord {
  length: number;
  fragment?: boolean;
  /** E: the one epilog's first code index. */
  epilogIndex?: number;
  scopes?: readonly { start: number; index: number; condition?: number }[];
  codes: readonly number[];
  /** X: an exception handler's RVA after the codes. */
  handler?: number;
  /** Write the extension word even when the counts fit. */
  extended?: boolean;
  version?: number;
}

/** The bytes of an `.xdata` record (codes padded with `end` to a whole word). */
export function armXdataBytes(r: ArmXdataRecord): Uint8Array {
  const codes = [...r.codes];
  while (codes.length % 4 !== 0) codes.push(0xff);
  const codeWords = codes.length / 4;
  const e = r.epilogIndex !== undefined;
  const scopes = r.scopes ?? [];
  const count = e ? r.epilogIndex! : scopes.length;
  const extended = r.extended === true || count > 31 || codeWords > 15;
  const out: number[] = [];
  const word = (w: number): void => void out.push(w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff);
  word(
    (check(r.length / 2, "Function Length", 0x3ffff) |
      ((r.version ?? 0) << 18) |
      ((r.handler !== undefined ? 1 : 0) << 20) |
      ((e ? 1 : 0) << 21) |
      ((r.fragment === true ? 1 : 0) << 22) |
      ((extended ? 0 : count) << 23) |
      ((extended ? 0 : codeWords) << 28)) >>>
      0,
  );
  if (extended) word(check(count, "epilog count", 0xffff) | (check(codeWords, "code words", 0xff) << 16));
  if (!e) for (const s of scopes) word(check(s.start / 2, "epilog start", 0x3ffff) | ((s.condition ?? 0xe) << 20) | (check(s.index, "epilog index", 0xff) << 24));
  out.push(...codes);
  if (r.handler !== undefined) word(r.handler);
  return Uint8Array.from(out);
}
