/**
 * A FrameData program as a rule for one frame: which of its variables start from the frame's
 * registers or the record's inputs, which caller registers it assigns, and running it through the
 * one postfix evaluator (formats/postfix.ts `runPostfix`). Worked out once per program and cache.
 *
 * The fast path (framehop's approach to unwind data, kept because the FrameData walk's benchmark
 * needs it): most programs only add constants to one input and read memory there, e.g.
 * `$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =` says "eip = [raSearch], esp = raSearch + 4".
 * Evaluating such a program symbolically once gives, for each register it sets, `input + offset`
 * or `[input + offset]`; a frame then needs only those reads ({@link runAffine}). Programs that do
 * anything else (realignment, multiplication, arithmetic on loaded values, a loaded value kept in
 * a temporary) are left to the evaluator.
 */
import { hex } from "../../hex.js";
import { PROGRAM_REGISTERS, type FrameData, type Program, type ProgramError } from "../../formats/frame-data.js";
import { isPostfixError, runPostfix } from "../../formats/postfix.js";
import { bigintOfU32 } from "../../memory/bigint-cache.js";
import { readU32n, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import { cacheSlot, keyed, keyedSlot, type UnwindCache } from "../../unwind/cache.js";
import { work } from "../../unwind/work.js";
import { inherited } from "./site.js";

/** Where a program variable's starting value comes from: a register of the frame, or an input. */
const INPUT_REGISTERS = PROGRAM_REGISTERS.map((r) => `$${r}`);
export const INPUTS = [".raSearch", ".raSearchStart", ".cbLocals", ".cbSavedRegs", ".cbParams", ".cbCalleeParams"];

/** Registers a program's result sets in the caller frame. */
const CALLER_REGISTERS = ["eip", "esp", "ebp", "ebx", "esi", "edi"] as const;
type CallerRegister = (typeof CALLER_REGISTERS)[number];

/** What a register of the caller is: an input plus a constant, or the word there. */
export interface AffineOutput {
  /** Index into CALLER_REGISTERS order: eip, esp, ebp, ebx, esi, edi. */
  register: number;
  /** The input the value is based on (`.raSearch`, `$ebp`, ...). */
  base: string;
  offset: number;
  load: boolean;
}

/** A program reduced to its outputs; eip and esp are always among them. */
export interface AffineRule {
  outputs: AffineOutput[];
}

/** One output of a reduced program, with its base resolved like a slot seed. */
interface AffineStep {
  register: CallerRegister;
  seed: number;
  offset: number;
  load: boolean;
  /** The last distance from ESP this output had, and the same as a bigint (see {@link runAffine}). */
  lastDelta: number;
  lastDeltaBig: bigint;
}

/** How to seed and read a program's slots, worked out once per program. */
export interface SlotPlan {
  /** The reduced form, when the program has one. */
  affine?: AffineStep[];
  /** The caller registers the program assigns (programs are straight-line: every `=` runs). */
  recovered: readonly string[];
  /** Per slot: index into INPUT_REGISTERS (≥ 0), −1 − index into INPUTS, or null for neither. */
  seed: (number | null)[];
  /** Slot of each CALLER_REGISTERS entry, −1 when the program does not name it. */
  out: number[];
  ebpSlot: number;
}

/** The values of a frame's inputs, in INPUTS order. */
export interface ProgramInputs {
  start: number;
  record: FrameData;
  calleeParams: number;
}

/** Where {@link runAffine} leaves the caller's EIP and ESP as numbers (−1 when it did not set them). */
export interface AffineNumbers {
  eip: number;
  esp: number;
}

/** Flags of the slots the evaluator assigned, reused for every run of a cache. */
const ASSIGNED = cacheSlot("x86 program assignments", () => new Uint8Array(64));
const PLANS = keyedSlot<Program, SlotPlan>("x86 program slot plans");

/** The slot plan of a program, worked out once per cache. */
export function planOf(program: Program, cache: UnwindCache): SlotPlan {
  return keyed(cache, PLANS, program, () => makePlan(program));
}

function makePlan(program: Program): SlotPlan {
  const plan: SlotPlan = {
    seed: program.variables.map((name) => {
      const r = INPUT_REGISTERS.indexOf(name);
      if (r >= 0) return r;
      const i = INPUTS.indexOf(name);
      return i >= 0 ? -1 - i : null;
    }),
    out: CALLER_REGISTERS.map((r) => program.variables.indexOf(`$${r}`)),
    ebpSlot: program.variables.indexOf("$ebp"),
    recovered: assignedRegisters(program),
  };
  const affine = affineRule(program);
  const steps = affine?.outputs.map((o): AffineStep | undefined => {
    const r = INPUT_REGISTERS.indexOf(o.base);
    const i = INPUTS.indexOf(o.base);
    if (r < 0 && i < 0) return undefined;
    return { register: CALLER_REGISTERS[o.register]!, seed: r >= 0 ? r : -1 - i, offset: o.offset, load: o.load, lastDelta: -1, lastDeltaBig: 0n };
  });
  if (steps !== undefined && steps.every((x) => x !== undefined)) plan.affine = steps as AffineStep[];
  return plan;
}

/** Where the reduced program reads EIP from, `base + offset`, when it loads it from one input. */
export function programReturnSlot(plan: SlotPlan): { base: string; offset: number } | undefined {
  const eip = plan.affine?.find((s) => s.register === "eip");
  if (eip === undefined || !eip.load) return undefined;
  const base = eip.seed >= 0 ? PROGRAM_REGISTERS[eip.seed] : INPUTS[-1 - eip.seed];
  return base === undefined ? undefined : { base, offset: eip.offset };
}

/** The value of INPUTS[index] for a frame. */
function inputValue(index: number, inputs: ProgramInputs): number {
  switch (index) {
    case 0:
    case 1: return inputs.start;
    case 2: return inputs.record.localSize;
    case 3: return inputs.record.savedRegsSize;
    case 4: return inputs.record.paramsSize;
    default: return inputs.calleeParams;
  }
}

/**
 * Runs a reduced program (the fast path): each caller register is an input plus a constant, or
 * the word there. Undefined when an input it needs has no value (the evaluator then reports the
 * program's own error). `esp` is the frame's ESP as a number, −1 when not known as one. The
 * caller's EIP and ESP as numbers are left in `numbers`.
 */
export function runAffine(steps: readonly AffineStep[], numbers: AffineNumbers, registers: Registers, esp: number, inputs: ProgramInputs, stack: MemoryReader): Registers | ProgramError | undefined {
  const out = inherited(registers);
  const espBig = registers["esp"];
  numbers.eip = -1;
  numbers.esp = -1;
  for (let i = 0; i < steps.length; i++) {
    const o = steps[i]!;
    let base: number;
    if (o.seed < 0) base = inputValue(-1 - o.seed, inputs);
    else if (o.seed === 1 && esp >= 0) base = esp;
    else {
      const v = o.seed === 2 ? registers["ebp"] : o.seed === 1 ? registers["esp"] : registers[PROGRAM_REGISTERS[o.seed]!];
      if (v === undefined) return undefined;
      base = Number(v);
    }
    let value = (base + o.offset) >>> 0;
    if (o.load) {
      const word = readU32n(stack, value);
      if (word === undefined) return { token: -1, reason: `cannot read 4 bytes at ${hex(value)}`, address: BigInt(value) };
      value = word;
    }
    // Loaded words (return addresses, saved registers) recur from frame to frame and walk to walk;
    // a computed value a fixed distance above ESP (the caller's ESP) is ESP plus that distance, and
    // adding bigints costs less than making one from a number.
    let big: bigint;
    if (o.load) big = bigintOfU32(value);
    else if (esp >= 0 && value >= esp && espBig !== undefined) {
      const delta = value - esp;
      if (delta !== o.lastDelta) {
        o.lastDelta = delta;
        o.lastDeltaBig = BigInt(delta);
      }
      big = espBig + o.lastDeltaBig;
    } else big = BigInt(value);
    setCallerRegister(out, o.register, big);
    if (o.register === "eip") numbers.eip = value;
    else if (o.register === "esp") numbers.esp = value;
  }
  return out;
}

/** Sets a caller register by name with fixed property names (this runs for every frame). */
function setCallerRegister(out: Registers, register: CallerRegister, value: bigint): void {
  switch (register) {
    case "eip": out["eip"] = value; break;
    case "esp": out["esp"] = value; break;
    case "ebp": out["ebp"] = value; break;
    case "ebx": out["ebx"] = value; break;
    case "esi": out["esi"] = value; break;
    case "edi": out["edi"] = value; break;
  }
}

/**
 * Runs a program for one frame through the evaluator: the caller's registers (the callee-saved
 * ones carried over), or the program's error. `ebpOverride` replaces the frame's EBP.
 */
export function runProgramRule(program: Program, plan: SlotPlan, cache: UnwindCache, registers: Registers, inputs: ProgramInputs, stack: MemoryReader, ebpOverride?: number): Registers | ProgramError {
  const seed = plan.seed;
  const slots: (number | undefined)[] = new Array<number | undefined>(seed.length);
  for (let i = 0; i < seed.length; i++) {
    const k = seed[i]!;
    if (k === null) slots[i] = undefined;
    else if (k < 0) slots[i] = inputValue(-1 - k, inputs);
    else {
      const v = registers[PROGRAM_REGISTERS[k]!];
      slots[i] = v === undefined ? undefined : Number(v);
    }
  }
  if (ebpOverride !== undefined && plan.ebpSlot >= 0) slots[plan.ebpSlot] = ebpOverride;
  const scratch = cache.get(ASSIGNED);
  const assigned = scratch.length >= slots.length ? scratch.fill(0, 0, slots.length) : new Uint8Array(slots.length);
  work.units += program.ops.length;
  const error = runPostfix(program, slots, stack, assigned);
  if (isPostfixError(error)) return error;
  const eip = plan.out[0]!;
  const esp = plan.out[1]!;
  if (eip < 0 || assigned[eip] !== 1 || esp < 0 || assigned[esp] !== 1) {
    return { token: -1, reason: `the program does not assign ${eip < 0 || assigned[eip] !== 1 ? "$eip" : "$esp"}` };
  }
  const out = inherited(registers);
  for (let i = 0; i < CALLER_REGISTERS.length; i++) {
    const slot = plan.out[i]!;
    if (slot >= 0 && assigned[slot] === 1) out[CALLER_REGISTERS[i]!] = BigInt(slots[slot]!);
  }
  return out;
}

/** The caller registers a program assigns, found by following its stack of names and values. */
function assignedRegisters(program: Program): string[] {
  const stack: (string | null)[] = [];
  const out = new Set<string>();
  for (const t of program.tokens) {
    if (t.kind === "number") stack.push(null);
    else if (t.kind === "variable") stack.push(t.name);
    else if (t.op === "^") {
      stack.pop();
      stack.push(null);
    } else if (t.op === "=") {
      stack.pop();
      const name = stack.pop();
      if (typeof name === "string" && (CALLER_REGISTERS as readonly string[]).includes(name.slice(1))) out.add(name.slice(1));
    } else {
      stack.pop();
      stack.pop();
      stack.push(null);
    }
  }
  return CALLER_REGISTERS.filter((r) => out.has(r));
}

const CALLER = CALLER_REGISTERS.map((r) => `$${r}`);

type Sym = { kind: "base"; base: string; offset: number } | { kind: "const"; value: number } | { kind: "load"; base: string; offset: number } | { kind: "opaque" };

/** The program as an {@link AffineRule}, or undefined when it is not of that shape. */
export function affineRule(program: Program): AffineRule | undefined {
  const vars = new Map<string, Sym>();
  const stack: (Sym | { kind: "name"; name: string })[] = [];
  for (const t of program.tokens) {
    if (t.kind === "number") {
      stack.push({ kind: "const", value: Number(t.value & 0xffff_ffffn) });
      continue;
    }
    if (t.kind === "variable") {
      stack.push({ kind: "name", name: t.name });
      continue;
    }
    if (t.op === "^") {
      const a = stack.pop();
      if (a === undefined) return undefined;
      const v = symOf(vars, a);
      stack.push(v.kind === "base" ? { kind: "load", base: v.base, offset: v.offset } : OPAQUE);
      continue;
    }
    const right = stack.pop();
    const left = stack.pop();
    if (right === undefined || left === undefined) return undefined;
    const r = symOf(vars, right);
    if (t.op === "=") {
      if (left.kind !== "name" || !left.name.startsWith("$")) return undefined;
      vars.set(left.name, r);
      continue;
    }
    const l = symOf(vars, left);
    // Anything but adding a constant to an input makes a value the reduced rule cannot use; it
    // only matters if it reaches a caller register (then the evaluator runs the program).
    if ((t.op === "+" || t.op === "-") && r.kind === "const" && l.kind === "base") {
      stack.push({ kind: "base", base: l.base, offset: t.op === "+" ? l.offset + r.value : l.offset - r.value });
    } else if ((t.op === "+" || t.op === "-") && r.kind === "const" && l.kind === "const") {
      stack.push({ kind: "const", value: t.op === "+" ? l.value + r.value : l.value - r.value });
    } else stack.push(OPAQUE);
  }
  if (stack.length > 0) return undefined;
  const outputs: AffineOutput[] = [];
  for (let i = 0; i < CALLER.length; i++) {
    const v = vars.get(CALLER[i]!);
    if (v === undefined) {
      if (i < 2) return undefined;
      continue;
    }
    if (v.kind !== "base" && v.kind !== "load") return undefined;
    outputs.push({ register: i, base: v.base, offset: v.offset, load: v.kind === "load" });
  }
  return { outputs };
}

const OPAQUE: Sym = { kind: "opaque" };

/** The symbolic value of a stack entry: a name stands for its latest assignment, or for itself as an input. */
function symOf(vars: Map<string, Sym>, e: Sym | { kind: "name"; name: string }): Sym {
  return e.kind === "name" ? (vars.get(e.name) ?? { kind: "base", base: e.name, offset: 0 }) : e;
}
