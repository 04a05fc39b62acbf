/**
 * Working out an ARM64 unwind without reading the stack (framehop's split): from a function's
 * unwind data (xdata.ts) and where its PC is, an {@link Arm64UnwindPlan} — a short straight-line
 * program over sp, fp, lr and the registers — that exec.ts runs. It follows the Windows unwinder,
 * `RtlpUnwindFunctionFull` (arm64.md §1.7):
 *
 * 1. `off` = (ControlPc − BeginAddress) / 4, in instructions;
 * 2. in the prolog (off < its instruction count S, counted from index 0 to the first end/end_c):
 *    the S − off codes of instructions not yet run are skipped;
 * 3. in an epilog (the header's single one, at the function's end, or a scope): its codes, with the
 *    `off − start` codes of instructions already run skipped; an epilog counts one more instruction
 *    than its codes (the `ret` or tail branch);
 * 4. otherwise the body: every code from index 0;
 * 5. codes run until `end` (an `end_c` runs on into the parent region's codes); save_next
 *    lengthens the next pair code; the custom stacks take the caller's pc from memory, else pc = lr.
 *
 * Skipping counts codes, not instructions: a custom-stack code inside a prolog is skipped like
 * any other (arm64.md §1.7 step 7).
 */
import { hex } from "../../hex.js";
import type { FuncTableEntry } from "../../unwind/frame.js";
import type { Arm64OpStep, Arm64Position, Arm64UnwindRule } from "./rule.js";
import { problemAt, type DataProblem } from "../../formats/unwind-data/problem.js";
import { bankRegister, bankWidth, decodeCode, isEnd, codeInstructions, codeLength } from "../../formats/unwind-data/arm64-codes.js";
import type { Arm64UnwindData } from "../../formats/unwind-data/arm64-xdata.js";

/**
 * Plan instructions, three numbers each (opcode, register, operand). Registers are numbered as
 * {@link planRegister} names them: 0-30 the X registers (29 fp, 30 lr), 32-63 d0-d31, 64-95 the
 * high halves of v0-v31.
 * - ADD _, n: sp += n;
 * - LOAD r, n: reg(r) = [sp + n];
 * - SET_SP _, n: sp = fp − n (set_fp, add_fp);
 * - PAC: lr = strip(lr) (pac_sign_lr);
 * - MACHFRAME: sp, pc = [sp], [sp + 8];
 * - CONTEXT: every register from the ARM64_NT_CONTEXT at sp;
 * - TRAP: the registers of the ARM64_KTRAP_FRAME at sp;
 * - CLEAR: pc = lr, the caller's pc an interrupted one (clear_unwound_to_call);
 * - RET: pc = lr;
 * - LEAF: pc = lr unless pc already is lr (no progress).
 */
export const OP_ADD = 0;
export const OP_LOAD = 1;
export const OP_SET_SP = 2;
export const OP_PAC = 3;
export const OP_MACHFRAME = 4;
export const OP_CONTEXT = 5;
export const OP_TRAP = 6;
export const OP_CLEAR = 7;
export const OP_RET = 8;
export const OP_LEAF = 9;

/** The name of plan register `r`. */
export function planRegister(r: number): string {
  return r < 32 ? bankRegister("x", r) : r < 64 ? `d${r - 32}` : `v${r - 64}.high`;
}

/** A frame's ARM64 unwind, worked out without the stack. */
export interface Arm64UnwindPlan {
  /** The instructions, three numbers each (see OP_*). */
  code: number[];
  /** The caller's pc comes from a custom stack (a machine frame, trap frame or CONTEXT): an interrupted pc, unless a CONTEXT says otherwise. */
  custom: boolean;
  /** The register names the plan recovers (pc and sp always). */
  recovered: readonly string[];
  /** The rule a frame found by it carries (a custom stack's pc slot is added when it runs). */
  rule: Arm64UnwindRule;
  /** The `.pdata` entry used; absent for a leaf. */
  entry?: FuncTableEntry;
  /**
   * The usual shape — loads of X and D registers at fixed offsets, allocations, an optional
   * set_fp/add_fp first (`fpOffset` ≥ 0), pac_sign_lr (`stripLr`), and pc = lr — as offsets from the
   * base (sp, or fp − `fpOffset`): register `registers[k]` at base + `slots[k]`, the caller's sp at
   * base + `callerSp`. Absent for any other plan.
   */
  simple?: { fpOffset: number; slots: number[]; registers: number[]; callerSp: number; stripLr: boolean };
}

/** What a plan's rule says about the function besides its codes. */
export type PlanFunction = Extract<Arm64UnwindRule["function"], { begin: number }>;

/** The plan of a function without a `.pdata` entry: a leaf, pc = lr, sp unchanged (arm64.md §1.10). */
export function leafPlan(rva: number): Arm64UnwindPlan {
  return finish([OP_LEAF, 0, 0], false, { kind: "arm64-unwind", function: { leafRva: rva }, position: { at: "body" }, ops: [], callerSp: "sp", pcFrom: "lr" }, undefined);
}

/** The instructions of the codes from byte `from` to the first end/end_c: a prolog's or (plus the return) an epilog's length. */
function scopeSize(codes: Uint8Array, from: number, epilog: boolean): number {
  let size = 0;
  for (let p = from; p < codes.length; ) {
    const b = codes[p]!;
    if (isEnd(b)) break;
    size += codeInstructions(b);
    p += codeLength(b);
  }
  return epilog ? size + 1 : size;
}

/** Where the codes to run start, how many to skip, and the position they mean (steps 2-4 of the file comment). */
export function locate(data: Arm64UnwindData, off: number): { index: number; skip: number; position: Arm64Position } {
  const codes = data.codes;
  const words4 = codes.length;
  if (off < words4) {
    const size = scopeSize(codes, 0, false);
    if (off < size) return { index: 0, skip: size - off, position: { at: "prolog", offset: off, skipped: size - off } };
  }
  if (data.epilogInHeader) {
    const index = data.epilogIndex;
    if (off + (words4 - index) >= data.functionLength) {
      const start = data.functionLength - scopeSize(codes, index, true);
      if (off >= start) return { index, skip: off - start, position: { at: "epilog", start, offset: off - start, skipped: off - start } };
    }
  } else {
    for (const scope of data.scopes) {
      if (off < scope.start) break;
      if (off < scope.start + (words4 - scope.index) && off < scope.start + scopeSize(codes, scope.index, true)) {
        return { index: scope.index, skip: off - scope.start, position: { at: "epilog", start: scope.start, offset: off - scope.start, skipped: off - scope.start } };
      }
    }
  }
  return { index: 0, skip: 0, position: { at: "body" } };
}

/**
 * The plan for a frame whose ControlPc is `off` instructions into the function described by
 * `data` (see the file comment), or a problem when its codes are not a valid sequence.
 */
export function buildPlan(data: Arm64UnwindData, off: number, fn: PlanFunction, entry: FuncTableEntry | undefined): Arm64UnwindPlan | DataProblem {
  const { index, skip, position } = locate(data, off);
  const codes = data.codes;
  let p = index;
  // Skip the codes of instructions not run (prolog) or already run (epilog), stopping at an end.
  for (let n = skip; n > 0 && p < codes.length && !isEnd(codes[p]!); n--) p += codeLength(codes[p]!);
  const code: number[] = [];
  const ops: Arm64OpStep[] = [];
  let saveNexts = 0;
  let custom = false;
  const where = (at: number): string => `${data.source.form === "xdata" ? `the .xdata at RVA ${hex(data.source.rva)}` : `packed word ${hex(data.source.word)}`}, code byte ${at}`;
  const bad = (at: number, why: string): DataProblem => (data.source.form === "xdata" ? problemAt(data.source.rva, `${where(at)}: ${why}`) : { problem: `${where(at)}: ${why}` });
  while (p < codes.length) {
    const d = decodeCode(codes, p);
    const c = d.code;
    const at = p;
    p += d.length;
    if (saveNexts > 0 && c.op !== "save_next" && c.op !== "end_c" && !(c.op === "save" && c.pairable)) {
      return bad(at, `save_next is followed by ${c.op === "save" ? c.name : c.op}, which is not a register-pair code`);
    }
    if (c.op === "end") break;
    switch (c.op) {
      case "alloc":
        code.push(OP_ADD, 0, c.size);
        ops.push({ op: "alloc", code: c.name, size: c.size });
        break;
      case "save": {
        const count = c.count + (c.pairable ? 2 * saveNexts : 0);
        saveNexts = 0;
        const limit = c.bank === "x" ? 31 : 32;
        if (c.first + count > limit) return bad(at, `${c.name} restores ${count} registers from ${bankRegister(c.bank, c.first)}, past the last ${c.bank === "x" ? "X" : "FP"} register`);
        const width = bankWidth(c.bank);
        const base = c.writeback ? 0 : c.offset;
        const registers: string[] = [];
        if (c.lrPair) {
          code.push(OP_LOAD, c.first, base, OP_LOAD, 30, base + 8);
          registers.push(bankRegister("x", c.first), "lr");
        } else {
          for (let i = 0; i < count; i++) {
            const r = c.first + i;
            if (c.bank === "x") code.push(OP_LOAD, r, base + i * width);
            else code.push(OP_LOAD, 32 + r, base + i * width);
            if (c.bank === "q") code.push(OP_LOAD, 64 + r, base + i * width + 8);
            registers.push(bankRegister(c.bank, r));
          }
        }
        if (c.writeback && c.offset !== 0) code.push(OP_ADD, 0, c.offset);
        ops.push({ op: "save", code: c.name, registers, offset: c.offset, writeback: c.writeback });
        break;
      }
      case "set_fp":
        code.push(OP_SET_SP, 0, 0);
        ops.push({ op: "set-fp", code: "set_fp", offset: 0 });
        break;
      case "add_fp":
        code.push(OP_SET_SP, 0, c.offset);
        ops.push({ op: "set-fp", code: "add_fp", offset: c.offset });
        break;
      case "nop":
        ops.push({ op: "nop", code: c.name });
        break;
      case "end_c":
        ops.push({ op: "end-c" });
        break;
      case "save_next":
        saveNexts++;
        break;
      case "pac_sign_lr":
        code.push(OP_PAC, 0, 0);
        ops.push({ op: "pac" });
        break;
      case "custom":
        if (c.name === "ec_context") return bad(at, "an ARM64EC CONTEXT (MSFT_OP_EC_CONTEXT) is not modelled");
        code.push(c.name === "machine_frame" ? OP_MACHFRAME : c.name === "context" ? OP_CONTEXT : c.name === "trap_frame" ? OP_TRAP : OP_CLEAR, 0, 0);
        ops.push({ op: "custom", code: c.name });
        custom = true;
        break;
      case "invalid":
        return bad(at, c.why);
    }
  }
  if (saveNexts > 0) return bad(p, "save_next at the end of the codes");
  // Unless a custom stack gave it, the caller's pc is what lr holds once every code has run.
  let pcFrom: Arm64UnwindRule["pcFrom"] = "lr";
  for (let i = 0; i < code.length; i += 3) {
    const op = code[i];
    if (op === OP_MACHFRAME) pcFrom = "machine-frame";
    else if (op === OP_CONTEXT) pcFrom = "context";
    else if (op === OP_TRAP) pcFrom = "trap-frame";
  }
  if (!custom) code.push(OP_RET, 0, 0);
  return finish(code, custom, { kind: "arm64-unwind", function: fn, position, ops, callerSp: "", pcFrom }, entry);
}

/** Completes a plan: what it recovers, its caller's sp as an expression, its simple form. */
function finish(code: number[], custom: boolean, rule: Arm64UnwindRule, entry: FuncTableEntry | undefined): Arm64UnwindPlan {
  const recovered = new Set<string>(["pc", "sp"]);
  let base = "sp";
  let offset = 0;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_ADD:
        offset += n;
        break;
      case OP_LOAD:
        recovered.add(planRegister(r));
        break;
      case OP_SET_SP:
        base = "fp";
        offset = -n;
        break;
      case OP_MACHFRAME:
        base = `[${expression(base, offset)}]`;
        offset = 0;
        break;
      case OP_CONTEXT:
      case OP_TRAP:
        for (const name of ["fp", "lr", "cpsr", ...Array.from({ length: code[i] === OP_CONTEXT ? 29 : 19 }, (_, k) => `x${k}`)]) recovered.add(name);
        // A CONTEXT always holds the floating-point registers; a trap frame when its VfpState is valid (exec.ts adds them then).
        if (code[i] === OP_CONTEXT) for (const name of ["fpcr", "fpsr", ...Array.from({ length: 32 }, (_, k) => `d${k}`), ...Array.from({ length: 32 }, (_, k) => `v${k}.high`)]) recovered.add(name);
        base = `[${expression(base, offset + (code[i] === OP_CONTEXT ? 0x100 : 0x98))}]`;
        offset = 0;
        break;
    }
  }
  const plan: Arm64UnwindPlan = { code, custom, recovered: [...recovered], rule: { ...rule, callerSp: expression(base, offset) } };
  if (entry !== undefined) plan.entry = entry;
  const simple = simpleForm(code);
  if (simple !== undefined) plan.simple = simple;
  return plan;
}

/** The {@link Arm64UnwindPlan.simple} form of a plan, when it has one. */
function simpleForm(code: readonly number[]): Arm64UnwindPlan["simple"] {
  const slots: number[] = [];
  const registers: number[] = [];
  let fpOffset = -1;
  let delta = 0;
  let stripLr = false;
  for (let i = 0; i < code.length; i += 3) {
    const op = code[i];
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    if (op === OP_SET_SP && i === 0) fpOffset = n;
    else if (op === OP_ADD) delta += n;
    else if (op === OP_LOAD && r < 64 && !(stripLr && r === 30)) {
      slots.push(delta + n);
      registers.push(r);
    } else if (op === OP_PAC) stripLr = true;
    else if (op === OP_RET && i === code.length - 3) return { fpOffset, slots, registers, callerSp: delta, stripLr };
    else return undefined;
  }
  return undefined;
}

/** `base+0x10`, `base-0x8` or `base`. */
function expression(base: string, offset: number): string {
  return offset === 0 ? base : `${base}${offset < 0 ? "-" : "+"}${hex(Math.abs(offset))}`;
}
