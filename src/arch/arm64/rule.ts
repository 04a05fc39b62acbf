/**
 * The rules an ARM64 frame carries (unwind/rule.ts has the kinds every machine shares) and their
 * words: the unwind codes undone at the PC's position, the return address still in lr, Breakpad's
 * frame-pointer step. arch/rule.ts puts them in the one union, arch/rule-text.ts dispatches their
 * text here.
 */
import { hex, hexPadded } from "../../hex.js";

/** One ARM64 unwind code undone (arm64.md §1.4), as an ARM64 rule lists it: its name and what it restores. */
export type Arm64OpStep =
  /** alloc_s, alloc_m, alloc_l: sp += size. */
  | { op: "alloc"; code: string; size: number }
  /** A save code: `registers` from sp + offset, or with `writeback` from sp and then sp += offset. */
  | { op: "save"; code: string; registers: readonly string[]; offset: number; writeback: boolean }
  /** set_fp (offset 0) or add_fp: sp = fp − offset. */
  | { op: "set-fp"; code: string; offset: number }
  /** nop, or a reserved code the unwinder skips. */
  | { op: "nop"; code: string }
  /** pac_sign_lr: lr authenticated (its pointer authentication code stripped). */
  | { op: "pac" }
  /** A custom stack: trap_frame, machine_frame, context, clear_unwound_to_call. */
  | { op: "custom"; code: string }
  /** end_c: the region's own codes end, the parent region's phantom prolog follows. */
  | { op: "end-c" };

/** Where an ARM64 frame's PC is in its function (arm64.md §1.7). */
export type Arm64Position =
  | { at: "body" }
  /** `offset` instructions of the prolog have run: the codes of the `skipped` ones that have not are skipped. */
  | { at: "prolog"; offset: number; skipped: number }
  /** `offset` instructions into the epilog starting at instruction `start`: the `skipped` codes they ran are skipped. */
  | { at: "epilog"; start: number; offset: number; skipped: number };

/**
 * RtlVirtualUnwind over an ARM64 function's `.pdata` entry and its packed word or `.xdata`
 * (arm64.md Part 1), or the leaf rule where no entry covers the PC (pc = lr, sp unchanged).
 */
export interface Arm64UnwindRule {
  kind: "arm64-unwind";
  /** The entry's BeginAddress and the form of its unwind data (`parent`: a Flag 3 entry's parent), or the RVA of a leaf without one. */
  function: { begin: number; form: "packed" | "fragment" | "xdata"; parent?: number } | { leafRva: number };
  position: Arm64Position;
  /** The codes run, in the order they ran (the nearest to the body first). */
  ops: readonly Arm64OpStep[];
  /** The caller's sp as an expression of this frame's registers: `sp+0x30`, `fp+0x10`, `[sp+0x8]`. */
  callerSp: string;
  /** Where the caller's pc came from: lr once the codes ran, or the custom stack a code names. */
  pcFrom: "lr" | "machine-frame" | "context" | "trap-frame";
  /** The address the caller's pc was read from, for a custom stack. */
  pcSlot?: bigint;
}

/**
 * The ARM64 frame-record walker's step from the context frame while its return address is still
 * in the link register (a leaf, or a prolog before the frame record is stored, arm64.md Part 4):
 * the caller's pc is lr, its sp and fp are this frame's.
 */
export interface LinkRegisterRule {
  kind: "link-register";
  lr: bigint;
  sp: bigint;
}

/**
 * Breakpad's ARM64 frame-pointer step (arm64.md Part 5, `GetCallerByFramePointer`): the caller's
 * pc is the callee's lr, its x29 and lr are read from the record at the callee's x29 (`fp`), its
 * sp is fp + 16; with fp 0, the caller keeps the callee's sp and gets fp = lr = 0.
 */
export interface Arm64BreakpadFpRule {
  kind: "arm64-breakpad-fp";
  fp: bigint;
  lr: bigint;
  savedFp: bigint;
  savedLr: bigint;
}

/** The rules of ARM64 frames. */
export type Arm64Rule = Arm64UnwindRule | LinkRegisterRule | Arm64BreakpadFpRule;

/** An ARM64 rule in words (arch/rule-text.ts `ruleText` dispatches here). */
export function arm64RuleText(rule: Arm64Rule): string {
  switch (rule.kind) {
    case "arm64-unwind":
      return arm64Text(rule);
    case "link-register":
      return `lr=${hexPadded(rule.lr, 16)}: the return address is still in the link register; sp=${hexPadded(rule.sp, 16)} unchanged`;
    case "arm64-breakpad-fp":
      return rule.fp === 0n
        ? `pc=lr=${hexPadded(rule.lr, 16)}; fp=0: sp unchanged, fp=lr=0`
        : `pc=lr=${hexPadded(rule.lr, 16)}; [fp=${hexPadded(rule.fp, 16)}]=${hexPadded(rule.savedFp, 16)} [fp+8]=${hexPadded(rule.savedLr, 16)} sp=fp+0x10`;
  }
}

/** An ARM64 unwind code as the rule lists it: `save_fplr_x(fp,lr,16)`, `alloc_s(0x20)`, `set_fp`. */
export function arm64OpText(o: Arm64OpStep): string {
  switch (o.op) {
    case "alloc":
      return `${o.code}(${hex(o.size)})`;
    case "save":
      return `${o.code}(${o.registers.join(",")},${hex(o.offset)}${o.writeback ? "!" : ""})`;
    case "set-fp":
      return o.offset === 0 ? o.code : `${o.code}(${hex(o.offset)})`;
    case "nop":
    case "custom":
      return o.code;
    case "pac":
      return "pac_sign_lr";
    case "end-c":
      return "end_c";
  }
}

/** The instruction an ARM64 unwind code's undoing amounts to, epilog-style: `ldp fp,lr,[sp],#0x10`, `add sp,sp,#0x20`. */
export function arm64OpInstruction(o: Arm64OpStep): string {
  switch (o.op) {
    case "alloc":
      return `add sp,sp,#${hex(o.size)}`;
    case "save": {
      const load = o.registers.length === 1 ? "ldr" : "ldp";
      // save_lrpair and long save_next ranges restore more than a pair: listed as one load.
      const regs = o.registers.length <= 2 ? o.registers.join(",") : `{${o.registers.join(",")}}`;
      return o.writeback ? `${load} ${regs},[sp],#${hex(o.offset)}` : `${load} ${regs},[sp,#${hex(o.offset)}]`;
    }
    case "set-fp":
      return o.offset === 0 ? "mov sp,fp" : `sub sp,fp,#${hex(o.offset)}`;
    case "nop":
      return "nop";
    case "pac":
      return "autibsp";
    case "custom":
      return o.code === "machine_frame" ? "sp,pc = [sp],[sp+8]" : o.code === "context" ? "restore the CONTEXT at sp" : o.code === "trap_frame" ? "restore the trap frame at sp" : "pc = lr";
    case "end-c":
      return "(the parent region's codes)";
  }
}

function arm64Text(r: Arm64UnwindRule): string {
  const f = r.function;
  if ("leafRva" in f) return `leaf (no .pdata entry at rva ${hex(f.leafRva)}): pc=lr, ${r.callerSp === "sp" ? "sp unchanged" : `sp=${r.callerSp}`}`;
  const parent = f.parent === undefined ? "" : ` (Flag 3: as its parent at rva ${hex(f.parent)})`;
  const p = r.position;
  const where = p.at === "body" ? "" : p.at === "prolog" ? ` prolog+${p.offset} (${p.skipped} skipped)` : ` epilog@+${hex(4 * p.start)}+${p.offset} (${p.skipped} skipped)`;
  const pc = r.pcFrom === "lr" ? "pc=lr" : `pc from the ${r.pcFrom}${r.pcSlot === undefined ? "" : `@[${hex(r.pcSlot)}]`}`;
  return `arm64 rva=${hex(f.begin)}${parent} ${f.form}${where} ops=[${r.ops.map(arm64OpText).join("; ")}] sp=${r.callerSp} ${pc}`;
}

