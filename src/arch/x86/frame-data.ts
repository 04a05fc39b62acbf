/**
 * The `frame-data` strategy: unwinding with a FrameData record's program string (x86-fpo.md §2,
 * §3, §8). `.raSearch` is a search start: computed from the record's sizes and the callee's
 * parameter bytes, moved to the first of the next 8 words that holds a return address, or taken
 * from EBP + 4 when the program realigns the stack. A result whose EIP is not a return address
 * is repaired by scanning (trust `scan`). At an epilogue the context frame runs the epilogue.
 */
import type { FrameData } from "../../formats/frame-data.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { FuncTableEntry } from "../../walk/frame.js";
import { lazyText } from "../../walk/lazy-text.js";
import type { FrameNumbers, FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../../walk/strategy.js";
import { scanSlots } from "./code.js";
import { PROGRAM_REGISTERS, runProgram, type Program, type ProgramError } from "./program.js";
import { affineRule } from "./program-rule.js";
import { readU32n } from "../../memory/reader.js";
import { bigintOfU32 } from "../../memory/bigint-cache.js";
import { acceptOrScan, epilogRule, hex, inherited, RA_SEARCH_WORDS, U32, x86Site, type Reevaluator, type X86Site } from "./site.js";
import { findFrameData, outermostFrameData, recordProgram } from "./tables.js";

/** The program Breakpad runs for a type-4 record without a program string (x86-fpo.md §5.2 step 4). */
const NO_PROGRAM = "$T0 .raSearchStart = $eip $T0 ^ = $esp $T0 4 + =";
const NO_PROGRAM_PARSED = recordProgram({
  rvaStart: 0, codeSize: 0, localSize: 0, paramsSize: 0, maxStackSize: 0, frameFunc: 0, prologSize: 0, savedRegsSize: 0,
  flags: 0, hasSEH: false, hasEH: false, isFunctionStart: false, program: NO_PROGRAM,
});

function entryOf(record: FrameData, base: bigint): FuncTableEntry {
  return { kind: "frame-data", beginRva: BigInt(record.rvaStart), endRva: BigInt(record.rvaStart + record.codeSize), moduleBase: base };
}

/** Where a program variable's starting value comes from: a register of the frame, or an input. */
const INPUT_REGISTERS = PROGRAM_REGISTERS.map((r) => `$${r}`);
const INPUTS = [".raSearch", ".raSearchStart", ".cbLocals", ".cbSavedRegs", ".cbParams", ".cbCalleeParams"];

/** Registers a program's result sets in the caller frame. */
const CALLER_REGISTERS = ["eip", "esp", "ebp", "ebx", "esi", "edi"] as const;

/** One output of a reduced program, with its base resolved like a slot seed. */
interface AffineStep {
  register: (typeof CALLER_REGISTERS)[number];
  seed: number;
  offset: number;
  load: boolean;
  /** The last distance from ESP this output had, and the same as a bigint (see {@link runAffine}). */
  lastDelta: number;
  lastDeltaBig: bigint;
}

/** The caller's EIP and ESP as numbers after {@link runAffine} (−1 when it did not set them). */
const affineNumbers = { eip: -1, esp: -1 };

/**
 * Runs a reduced program (program-rule.ts): each caller register is an input plus a constant,
 * or the word there. Undefined when an input it needs has no value (the evaluator then reports
 * the program's own error). `esp` is the frame's ESP as a number, −1 when not known as one.
 */
function runAffine(steps: readonly AffineStep[], registers: Registers, esp: number, start: number, record: FrameData, calleeParams: number, stack: MemoryReader): Registers | ProgramError | undefined {
  const out = inherited(registers);
  const espBig = registers["esp"];
  affineNumbers.eip = -1;
  affineNumbers.esp = -1;
  for (let i = 0; i < steps.length; i++) {
    const o = steps[i]!;
    let base: number;
    if (o.seed < 0) base = inputValue(-1 - o.seed, start, record, calleeParams);
    else if (o.seed === 1 && esp >= 0) base = esp;
    else {
      const v = o.seed === 2 ? registers["ebp"] : o.seed === 1 ? registers["esp"] : registers[PROGRAM_REGISTERS[o.seed]!];
      if (v === undefined) return undefined;
      base = Number(v);
    }
    let value = (base + o.offset) >>> 0;
    if (o.load) {
      const word = readU32n(stack, value);
      if (word === undefined) return { token: -1, reason: `cannot read 4 bytes at 0x${value.toString(16)}`, address: BigInt(value) };
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
    if (o.register === "eip") affineNumbers.eip = value;
    else if (o.register === "esp") affineNumbers.esp = value;
  }
  return out;
}

/** Sets a caller register by name with fixed property names (this runs for every frame). */
function setCallerRegister(out: Registers, register: (typeof CALLER_REGISTERS)[number], value: bigint): void {
  switch (register) {
    case "eip": out["eip"] = value; break;
    case "esp": out["esp"] = value; break;
    case "ebp": out["ebp"] = value; break;
    case "ebx": out["ebx"] = value; break;
    case "esi": out["esi"] = value; break;
    case "edi": out["edi"] = value; break;
  }
}

/** The value of INPUTS[index] for a frame. */
function inputValue(index: number, start: number, record: FrameData, calleeParams: number): number {
  switch (index) {
    case 0:
    case 1: return start;
    case 2: return record.localSize;
    case 3: return record.savedRegsSize;
    case 4: return record.paramsSize;
    default: return calleeParams;
  }
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

/** How to seed and read a program's slots, worked out once per program. */
interface SlotPlan {
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

const plans = new WeakMap<Program, SlotPlan>();

function planOf(program: Program): SlotPlan {
  let plan = plans.get(program);
  if (plan === undefined) {
    plan = {
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
    plans.set(program, plan);
  }
  return plan;
}

/** Reused for every run: results are read out before the next run starts. */
const assignedScratch = new Uint8Array(64);

/** Runs a program for one frame; the caller's registers, or the program's error. */
function runFor(program: Program, plan: SlotPlan, registers: Registers, inputs: number[], stack: MemoryReader, ebpOverride?: number): Registers | ProgramError {
  const seed = plan.seed;
  const slots: number[] = new Array<number>(seed.length);
  for (let i = 0; i < seed.length; i++) {
    const k = seed[i]!;
    if (k === null) slots[i] = NaN;
    else if (k < 0) slots[i] = inputs[-1 - k]!;
    else {
      const v = registers[PROGRAM_REGISTERS[k]!];
      slots[i] = v === undefined ? NaN : Number(v);
    }
  }
  if (ebpOverride !== undefined && plan.ebpSlot >= 0) slots[plan.ebpSlot] = ebpOverride;
  const assigned = assignedScratch.length >= slots.length ? assignedScratch.fill(0, 0, slots.length) : new Uint8Array(slots.length);
  const error = runProgram(program, slots, assigned, stack);
  if (error !== undefined) return error;
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

function ruleText(label: string, realigned: boolean, offset: number, moved: number, raSearch: boolean, plan: SlotPlan): string {
  if (!raSearch) {
    // The program locates the return address itself (EBP-based): say where, when it is simple.
    const eip = plan.affine?.find((s) => s.register === "eip");
    const base = eip === undefined ? undefined : eip.seed >= 0 ? PROGRAM_REGISTERS[eip.seed] : INPUTS[-1 - eip.seed];
    return eip === undefined || base === undefined || !eip.load ? `${label} by its program` : `${label} ra@${base}${eip.offset === 0 ? "" : `${eip.offset > 0 ? "+" : "-"}${Math.abs(eip.offset | 0)}`}`;
  }
  return `${label} ${realigned ? "ra@ebp+4 (realigned)" : `ra@esp+${offset}${moved === 0 ? "" : `, found ${moved} bytes above`}`}`;
}

/** The program run again with EBP = the slot below a return address found from ESP. */
class EbpRerun implements Reevaluator {
  constructor(
    private readonly program: Program,
    private readonly plan: SlotPlan,
    private readonly registers: Registers,
    private readonly inputs: number[],
    private readonly stack: MemoryReader,
  ) {}

  run(raSlot: bigint): Registers | undefined {
    const again = runFor(this.program, this.plan, this.registers, this.inputs, this.stack, Number((raSlot - 4n) & U32));
    return "token" in again ? undefined : (again as Registers);
  }
}

function frameDataRule(site: FrameSite, found: X86Site, record: FrameData): UnwindRule {
  const base = found.module.base;
  const parsed = recordProgram(record) ?? NO_PROGRAM_PARSED;
  const rulePlan = parsed?.ok === true ? planOf(parsed.program) : undefined;
  const label = `frame-data rva=${hex(record.rvaStart)} locals=${record.localSize} saved=${record.savedRegsSize} params=${record.paramsSize}`;
  const calleeParams = site.calleeParams;
  const entry = entryOf(record, base);
  const extraBase = { paramsSize: record.paramsSize, entry };
  const stepExtra = rulePlan === undefined ? extraBase : { ...extraBase, recovered: rulePlan.recovered };
  let plainText: string | undefined;
  const offset = calleeParams + record.localSize + record.savedRegsSize;
  return {
    describe: () => `${label}: ${record.program ?? NO_PROGRAM}`,
    exec(registers: Registers, stack: MemoryReader, numbers?: FrameNumbers): UnwindResult {
      if (parsed === undefined || !parsed.ok) {
        const why = parsed === undefined ? "no program" : `token ${parsed.error.token}: ${parsed.error.reason}`;
        return { ok: false, stop: { reason: "unsupported", detail: `${label}: the program string does not parse (${why})` } };
      }
      const program = parsed.program;
      // 32-bit arithmetic on numbers: this runs once per frame.
      const known = numbers !== undefined && numbers.sp >= 0;
      const esp = known ? numbers.sp : Number(registers["esp"] ?? 0n);
      const ebp = registers["ebp"];
      const expected = (esp + offset) >>> 0;
      let start = expected;
      let moved = 0;
      let realigned = false;
      if (parsed.usesRaSearch) {
        if (program.realigns && ebp !== undefined) {
          start = (Number(ebp) + 4) >>> 0;
          realigned = true;
        } else {
          const hit = scanSlots(stack, found.modules, found.images, start, RA_SEARCH_WORDS, found.calleeStart, found.calleeEnd);
          if (hit >= 0 && hit !== start) {
            moved = hit - start;
            start = hit;
          }
        }
      }
      const plan = rulePlan!;
      const affine = plan.affine !== undefined ? runAffine(plan.affine, registers, known ? esp : -1, start, record, calleeParams, stack) : undefined;
      const eipNumber = affine !== undefined ? affineNumbers.eip : -1;
      const espNumber = affine !== undefined ? affineNumbers.esp : -1;
      const result =
        affine ??
        runFor(program, plan, registers, [start, start, record.localSize, record.savedRegsSize, record.paramsSize, calleeParams], stack);
      if (!("token" in result)) {
        // An EBP-based program run on a wrong EBP (one the function already reloaded) is run again
        // with the EBP that a standard frame has for a return-address slot found from ESP.
        const reevaluate = parsed.usesRaSearch ? undefined : new EbpRerun(program, plan, registers, [start, start, record.localSize, record.savedRegsSize, record.paramsSize, calleeParams], stack);
        // The usual text (nothing moved) is the same for every frame: made once.
        const text = moved === 0 && !realigned ? (plainText ??= ruleText(label, false, offset, 0, parsed.usesRaSearch, plan)) : lazyText(ruleText, label, realigned, offset, moved, parsed.usesRaSearch, plan);
        return acceptOrScan(found, stack, result as Registers, text, (start + 4) >>> 0, expected, stepExtra, reevaluate, eipNumber, espNumber);
      }
      const e = result as ProgramError;
      const stop = e.address !== undefined
        ? { reason: "read-fault" as const, address: e.address, detail: `${label}: ${e.reason}` }
        : { reason: "unsupported" as const, detail: e.token < 0 ? `${label}: ${e.reason}` : `${label}: the program fails at token ${e.token}: ${e.reason}` };
      return { ok: false, stop };
    },
  };
}

/** A step that found a return address without scanning. */
function exact(result: UnwindResult): boolean {
  return result.ok && result.trust === undefined && (result.registers["eip"] ?? 0n) !== 0n;
}

/**
 * For a caller frame, the record at ra − 1 describes the call; a record of the same function
 * that starts exactly at the return address describes the state the call leaves (a stack
 * probe's call performs the allocation). The first is tried first; when its answer needs a scan
 * or ends the stack, the second is tried, and used when it finds a return address directly.
 */
function withRecordAtReturn(primary: UnwindRule, alternative: UnwindRule): UnwindRule {
  return {
    describe: () => `${primary.describe()}; else ${alternative.describe()}`,
    exec(registers, stack, numbers) {
      const first = primary.exec(registers, stack, numbers);
      if (exact(first)) return first;
      const second = alternative.exec(registers, stack, numbers);
      if (!exact(second) || !second.ok) return first;
      return { ...second, rule: `${second.rule.toString()} (the record that starts at the return address)` };
    },
  };
}

/** The x86 FrameData strategy (trust `frame-data`). */
export const x86FrameData: UnwindStrategy = {
  name: "frame-data",
  trust: "frame-data",
  ruleFor(site: FrameSite): UnwindRule | undefined {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    const record = findFrameData(found.tables.frameData, found.rva);
    if (record === undefined) return undefined;
    let rule = frameDataRule(site, found, record);
    if (site.index > 0) {
      const atReturn = findFrameData(found.tables.frameData, found.rva + 1);
      if (atReturn !== undefined && atReturn !== record && atReturn.rvaStart === found.rva + 1 && outermostFrameData(found.tables.frameData, found.rva + 1) === outermostFrameData(found.tables.frameData, found.rva)) {
        rule = withRecordAtReturn(rule, frameDataRule(site, found, atReturn));
      }
    }
    return epilogRule(site, found, `frame-data rva=${hex(record.rvaStart)}`, { paramsSize: record.paramsSize, entry: entryOf(record, found.module.base) }, rule) ?? rule;
  },
};
