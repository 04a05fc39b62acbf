/**
 * A model of the Thumb-2 prolog and epilog instructions Microsoft's "ARM exception handling"
 * lists (push, vpush, sub sp, mov/add r11 or r7, str lr, add sp, vpop, pop, mov sp, ldr pc, bx
 * lr, b.w), run forward on registers and stack words, and the unwind data a compiler writes for
 * them: each instruction's unwind code from the documentation's table (prolog codes in reverse
 * order, epilog codes in order), and the canonical prolog and epilog a packed `.pdata` word
 * stands for (the documentation's instructions 1-5 and 6-10). Unicorn is not used: like the
 * IA-64 executor, this is modelled, which is all the unwinder's inputs need (a stack as the
 * instructions leave it, and unwind data written from the documented encodings).
 */
import { ARM_CODE, type ArmPackedUnwind } from "../programs/arm-unwind-encode.js";

/** A prolog or epilog instruction, with its size in bytes. */
export type Insn =
  | { op: "push"; regs: readonly string[]; size: 2 | 4 }
  | { op: "vpush"; first: number; last: number }
  | { op: "sub-sp"; n: number; size: 2 | 4 }
  /** mov rX, sp (n 0, 16-bit) or add rX, sp, #n (32-bit): the frame chain's r11, or r7. */
  | { op: "set-fp"; reg: "r11" | "r7"; n: number; size: 2 | 4 }
  | { op: "nop"; size: 2 | 4 }
  /** str lr, [sp, #-n]! (32-bit). */
  | { op: "str-lr"; n: number }
  | { op: "add-sp"; n: number; size: 2 | 4 }
  | { op: "vpop"; first: number; last: number }
  /** pop {regs}; "pc" among them returns. */
  | { op: "pop"; regs: readonly string[]; size: 2 | 4 }
  | { op: "mov-sp"; reg: string; size: 2 }
  /** ldr pc, [sp], #n: returns. */
  | { op: "ldr-pc"; n: number }
  /** bx lr (16-bit) or b.w to the return address (32-bit): returns. */
  | { op: "ret"; size: 2 | 4 };

export const insnSize = (i: Insn): number => ("size" in i ? i.size : 4);
export const bytesOf = (list: readonly Insn[]): number => list.reduce((n, i) => n + insnSize(i), 0);
/** True for an instruction that leaves the function. */
export const returns = (i: Insn): boolean => i.op === "ret" || i.op === "ldr-pc" || (i.op === "pop" && i.regs.includes("pc"));

const REG_ORDER = [...Array.from({ length: 13 }, (_, i) => `r${i}`), "sp", "lr", "pc"];
const byNumber = (a: string, b: string): number => REG_ORDER.indexOf(a) - REG_ORDER.indexOf(b);

/** Registers and stack words of a thread, run forward; `clobber` gives a register's value once a prolog has saved it. */
export class ThumbMachine {
  readonly regs: Record<string, bigint>;
  readonly words = new Map<bigint, bigint>();
  constructor(
    regs: Record<string, bigint>,
    private readonly clobber: (name: string) => bigint | undefined = () => undefined,
  ) {
    this.regs = { ...regs };
  }
  private store(at: bigint, v: bigint): void {
    this.words.set(at, v & 0xffff_ffffn);
  }
  private load(at: bigint): bigint {
    const v = this.words.get(at);
    if (v === undefined) throw new Error(`load from unwritten 0x${at.toString(16)}`);
    return v;
  }
  private clobbered(name: string): void {
    const v = this.clobber(name);
    if (v !== undefined) this.regs[name] = v;
  }
  /** Runs one instruction; a returning one sets pc to the return address. */
  run(i: Insn): void {
    const r = this.regs;
    switch (i.op) {
      case "push": {
        const regs = [...i.regs].sort(byNumber);
        r["sp"]! -= BigInt(4 * regs.length);
        regs.forEach((name, k) => this.store(r["sp"]! + BigInt(4 * k), r[name] ?? 0n));
        for (const name of regs) this.clobbered(name);
        break;
      }
      case "vpush":
        r["sp"]! -= BigInt(8 * (i.last - i.first + 1));
        for (let d = i.first; d <= i.last; d++) {
          const v = r[`d${d}`] ?? 0n;
          this.store(r["sp"]! + BigInt(8 * (d - i.first)), v & 0xffff_ffffn);
          this.store(r["sp"]! + BigInt(8 * (d - i.first) + 4), v >> 32n);
          this.clobbered(`d${d}`);
        }
        break;
      case "sub-sp":
        r["sp"]! -= BigInt(i.n);
        break;
      case "set-fp":
        r[i.reg] = r["sp"]! + BigInt(i.n);
        break;
      case "str-lr":
        r["sp"]! -= BigInt(i.n);
        this.store(r["sp"]!, r["lr"]!);
        this.clobbered("lr");
        break;
      case "add-sp":
        r["sp"]! += BigInt(i.n);
        break;
      case "vpop":
        for (let d = i.first; d <= i.last; d++) {
          const at = r["sp"]! + BigInt(8 * (d - i.first));
          const v = this.load(at) | (this.load(at + 4n) << 32n);
          if (d >= 8 && d <= 15) r[`d${d}`] = v;
        }
        r["sp"]! += BigInt(8 * (i.last - i.first + 1));
        break;
      case "pop": {
        const regs = [...i.regs].sort(byNumber);
        // A pop that folds a stack adjustment loads argument registers from words never stored.
        regs.forEach((name, k) => {
          const at = r["sp"]! + BigInt(4 * k);
          r[name] = /^r[0-3]$/.test(name) ? (this.words.get(at) ?? 0n) : this.load(at);
        });
        r["sp"]! += BigInt(4 * regs.length);
        break;
      }
      case "mov-sp":
        r["sp"] = r[i.reg]!;
        break;
      case "ldr-pc":
        r["pc"] = this.load(r["sp"]!);
        r["sp"]! += BigInt(i.n);
        break;
      case "ret":
        r["pc"] = r["lr"]!;
        break;
      case "nop":
        break;
    }
  }
}

const low = (regs: readonly string[], extra: string): boolean => regs.every((r) => /^r[0-7]$/.test(r) || r === extra);
const contiguousFrom4 = (regs: readonly string[]): number | undefined => {
  const n = regs.map((r) => Number(r.slice(1))).sort((a, b) => a - b);
  return n.length > 0 && n[0] === 4 && n.every((v, k) => v === 4 + k) ? n.at(-1)! : undefined;
};

/** The code of a push or pop of `regs` (lr or pc as the link bit) in an instruction of `size` bytes. */
function popCodeOf(regs: readonly string[], size: 2 | 4): number[] {
  const link = regs.includes("lr") || regs.includes("pc");
  const ints = regs.filter((r) => r !== "lr" && r !== "pc");
  const last = contiguousFrom4(ints);
  if (size === 2) {
    if (last !== undefined && last <= 7) return ARM_CODE.pop_r4(last, link);
    return ARM_CODE.pop_lo([...ints, ...(link ? ["lr"] : [])]);
  }
  if (last !== undefined && last >= 8) return ARM_CODE.pop_r4_w(last, link);
  return ARM_CODE.pop_w([...ints, ...(link ? ["lr"] : [])]);
}

/** The code of `add sp, sp, #n` for an instruction of `size` bytes: the shortest form. */
function addSpCode(n: number, size: 2 | 4): number[] {
  if (size === 2) return n <= 508 ? ARM_CODE.add_sp(n) : n <= 0x3fffc ? ARM_CODE.add_sp_m(n) : ARM_CODE.add_sp_l(n);
  return n <= 4092 ? ARM_CODE.addw_sp(n) : n <= 0x3fffc ? ARM_CODE.add_sp_m_w(n) : ARM_CODE.add_sp_l_w(n);
}

/** The code of a vpop of dFirst-dLast. */
function vpopCode(first: number, last: number): number[] {
  if (first === 8) return ARM_CODE.vpop_d8(last);
  return first >= 16 ? ARM_CODE.vpop_hi(first, last) : ARM_CODE.vpop_lo(first, last);
}

/**
 * The unwind code of one instruction, from the documentation's table: what undoing a prolog
 * instruction, or running an epilog one, does to sp and the registers. `movSp`: a frame
 * pointer set by the prolog is also how sp comes back (the function moves sp in its body).
 */
export function codeOf(i: Insn, movSp = false): number[] {
  switch (i.op) {
    case "push":
    case "pop":
      return popCodeOf(i.regs, i.size);
    case "vpush":
    case "vpop":
      return vpopCode(i.first, i.last);
    case "sub-sp":
    case "add-sp":
      return addSpCode(i.n, i.size);
    case "set-fp":
      if (movSp && i.n === 0 && i.size === 2) return ARM_CODE.mov_sp(Number(i.reg.slice(1)));
      return i.size === 2 ? ARM_CODE.nop() : ARM_CODE.nop_w();
    case "mov-sp":
      return ARM_CODE.mov_sp(Number(i.reg.slice(1)));
    case "nop":
      return i.size === 2 ? ARM_CODE.nop() : ARM_CODE.nop_w();
    case "str-lr":
      return ARM_CODE.ldr_lr(i.n);
    case "ldr-pc":
      return ARM_CODE.ldr_lr(i.n);
    case "ret":
      return [];
  }
}

/** The prolog's codes: its instructions' codes in reverse order, then `end`. */
export function prologCodes(prolog: readonly Insn[], movSp = false): number[] {
  return [...[...prolog].reverse().flatMap((i) => codeOf(i, movSp)), ...ARM_CODE.end()];
}

/** An epilog's codes: its instructions' codes in order, ended by FD or FE for a `bx lr` or `b.w` return, FF otherwise. */
export function epilogCodes(epilog: readonly Insn[]): number[] {
  const last = epilog.at(-1);
  const end = last?.op === "ret" ? (last.size === 2 ? ARM_CODE.end_nop() : ARM_CODE.end_nop_w()) : ARM_CODE.end();
  return [...epilog.filter((i) => i.op !== "ret").flatMap((i) => codeOf(i)), ...end];
}

/** Integer registers a packed word pushes for `fold` (PF or EF), per the documentation's C/L/R/PF table. */
function intRegs(p: ArmPackedUnwind, fold: boolean, link: string | undefined): string[] {
  const regs: string[] = [];
  if (fold) for (let r = ~p.stackAdjust & 3; r <= 3; r++) regs.push(`r${r}`);
  if (!p.r) for (let r = 4; r <= p.reg + 4; r++) regs.push(`r${r}`);
  if (p.c) regs.push("r11");
  if (link !== undefined) regs.push(link);
  return regs;
}

/** The canonical prolog (instructions 1-5) and epilog (6-10) of a packed word; no epilog for Ret 3. */
export function canonicalPacked(p: ArmPackedUnwind): { prolog: Insn[]; epilog: Insn[] | undefined } {
  const sa = p.stackAdjust;
  const special = sa >= 0x3f4;
  const pf = special && (sa & 4) !== 0;
  const ef = special && (sa & 8) !== 0;
  const adjust = special ? 4 * ((sa & 3) + 1) : 4 * sa;
  const prolog: Insn[] = [];
  if (p.h) prolog.push({ op: "push", regs: ["r0", "r1", "r2", "r3"], size: 2 });
  const pushed = intRegs(p, pf, p.l ? "lr" : undefined);
  if (p.c || p.l || !p.r || pf) prolog.push({ op: "push", regs: pushed, size: low(pushed, "lr") ? 2 : 4 });
  if (p.c && !p.l && p.r && !pf) prolog.push({ op: "set-fp", reg: "r11", n: 0, size: 2 });
  if (p.c && (p.l || !p.r || pf)) prolog.push({ op: "set-fp", reg: "r11", n: 4 * pushed.indexOf("r11"), size: 4 });
  if (p.r && p.reg !== 7) prolog.push({ op: "vpush", first: 8, last: 8 + p.reg });
  if (adjust !== 0 && !pf) prolog.push({ op: "sub-sp", n: adjust, size: adjust <= 508 ? 2 : 4 });
  if (p.ret === 3) return { prolog, epilog: undefined };
  const epilog: Insn[] = [];
  if (adjust !== 0 && !ef) epilog.push({ op: "add-sp", n: adjust, size: adjust <= 508 ? 2 : 4 });
  if (p.r && p.reg !== 7) epilog.push({ op: "vpop", first: 8, last: 8 + p.reg });
  if (p.c || (p.l && !p.h) || !p.r || ef) {
    const link = p.l && !p.h ? (p.ret === 0 ? "pc" : "lr") : undefined;
    const regs = intRegs(p, ef, link);
    epilog.push({ op: "pop", regs, size: low(regs, "pc") ? 2 : 4 });
    if (link === "pc") return { prolog, epilog };
  }
  if (p.h && !p.l) epilog.push({ op: "add-sp", n: 16, size: 2 });
  if (p.h && p.l) {
    epilog.push({ op: "ldr-pc", n: 0x14 });
    return { prolog, epilog };
  }
  epilog.push({ op: "ret", size: p.ret === 1 ? 2 : 4 });
  return { prolog, epilog };
}
