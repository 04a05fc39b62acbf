/**
 * The rules an ARM frame carries (unwind/rule.ts has the kinds every machine shares) and their
 * words: the unwind codes undone at the PC's position, the return address still in lr.
 * arch/rule.ts puts them in the one union, arch/rule-text.ts dispatches their text here.
 */
import { hex, hexPadded } from "../../hex.js";

/** One ARM unwind code undone, as an ARM rule lists it. */
export type ArmOpStep =
  /** add sp, sp, #size. */
  | { op: "alloc"; code: string; size: number }
  /** pop {registers} (lr among them: the return address). */
  | { op: "pop"; code: string; registers: readonly string[] }
  /** vpop {dFirst-dLast}. */
  | { op: "vpop"; code: string; first: number; last: number }
  /** mov sp, rN. */
  | { op: "mov-sp"; register: string }
  /** ldr lr, [sp], #size. */
  | { op: "ldr-lr"; size: number }
  /** A nop (the frame chain's mov r11, sp or add r11, sp, #n). */
  | { op: "nop"; size: 2 | 4 };

/** Where an ARM frame's PC is in its function, in bytes. */
export type ArmPosition =
  | { at: "body" }
  /** `offset` bytes of the prolog have run: the codes of the `skipped` instructions that have not are skipped. */
  | { at: "prolog"; offset: number; skipped: number }
  /** `offset` bytes into the epilog starting at byte `start`: the `skipped` codes of the instructions it ran are skipped. */
  | { at: "epilog"; start: number; offset: number; skipped: number };

/**
 * The Windows ARM unwinder over a function's `.pdata` entry and its packed word or `.xdata`, or
 * the leaf rule where no entry covers the PC (pc = lr, sp unchanged).
 */
export interface ArmUnwindRule {
  kind: "arm-unwind";
  /** The entry's start and the form of its unwind data, or the RVA of a leaf without one. */
  function: { begin: number; form: "packed" | "fragment" | "xdata" } | { leafRva: number };
  position: ArmPosition;
  /** The codes run, in the order they ran. */
  ops: readonly ArmOpStep[];
  /** The caller's sp as an expression of this frame's registers: `sp+0x18`, `r11+0x8`. */
  callerSp: string;
}

/**
 * The context frame's step while its return address is still in lr (a leaf, or a prolog before
 * lr is pushed): the caller's pc is lr, its sp and frame pointers are this frame's.
 */
export interface ArmLinkRegisterRule {
  kind: "arm-link-register";
  lr: bigint;
  sp: bigint;
}

/**
 * Breakpad's ARM frame-pointer step on iOS (`GetCallerByFramePointer`, r7): the caller's pc is
 * the callee's lr, its r7 and lr are read from the pair at the callee's r7 (`fp`), its sp is
 * fp + 8; with fp 0 the caller keeps the callee's sp and gets r7 = lr = 0.
 */
export interface ArmBreakpadFpRule {
  kind: "arm-breakpad-fp";
  fp: bigint;
  lr: bigint;
  savedFp: bigint;
  savedLr: bigint;
}

/** The rules of ARM frames. */
export type ArmRule = ArmUnwindRule | ArmLinkRegisterRule | ArmBreakpadFpRule;

/** An ARM rule in words (arch/rule-text.ts `ruleText` dispatches here). */
export function armRuleText(rule: ArmRule): string {
  if (rule.kind === "arm-breakpad-fp") {
    return rule.fp === 0n
      ? `pc=lr=${hexPadded(rule.lr, 8)}; r7=0: sp unchanged, r7=lr=0`
      : `pc=lr=${hexPadded(rule.lr, 8)}; [r7=${hexPadded(rule.fp, 8)}]=${hexPadded(rule.savedFp, 8)} [r7+4]=${hexPadded(rule.savedLr, 8)} sp=r7+0x8`;
  }
  if (rule.kind === "arm-link-register") return `lr=${hexPadded(rule.lr, 8)}: the return address is still in the link register; sp=${hexPadded(rule.sp, 8)} unchanged`;
  const f = rule.function;
  if ("leafRva" in f) return `leaf (no .pdata entry at rva ${hex(f.leafRva)}): pc=lr, sp unchanged`;
  const p = rule.position;
  const where = p.at === "body" ? "" : p.at === "prolog" ? ` prolog+${p.offset} (${p.skipped} skipped)` : ` epilog@+${hex(p.start)}+${p.offset} (${p.skipped} skipped)`;
  return `arm rva=${hex(f.begin)} ${f.form}${where} ops=[${rule.ops.map(armOpText).join("; ")}] sp=${rule.callerSp} pc=lr`;
}

/** An ARM unwind code as the rule lists it: `pop(r4,r5,r11,lr)`, `alloc_s(0x10)`. */
export function armOpText(o: ArmOpStep): string {
  switch (o.op) {
    case "alloc":
      return `${o.code}(${hex(o.size)})`;
    case "pop":
      return `${o.code}(${o.registers.join(",")})`;
    case "vpop":
      return `${o.code}(d${o.first}-d${o.last})`;
    case "mov-sp":
      return `mov_sp(${o.register})`;
    case "ldr-lr":
      return `ldr_lr(${hex(o.size)})`;
    case "nop":
      return o.size === 2 ? "nop" : "nop_w";
  }
}

/** The instruction an ARM unwind code's undoing amounts to, epilog-style. */
export function armOpInstruction(o: ArmOpStep): string {
  switch (o.op) {
    case "alloc":
      return `add sp,sp,#${hex(o.size)}`;
    case "pop":
      return `pop {${o.registers.join(",")}}`;
    case "vpop":
      return `vpop {d${o.first}-d${o.last}}`;
    case "mov-sp":
      return `mov sp,${o.register}`;
    case "ldr-lr":
      return `ldr lr,[sp],#${hex(o.size)}`;
    case "nop":
      return "nop";
  }
}
