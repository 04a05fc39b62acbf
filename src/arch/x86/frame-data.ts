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
import type { FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../../walk/strategy.js";
import { scanForReturnAddress } from "./code.js";
import { PROGRAM_REGISTERS, runProgram, type Program, type ProgramError } from "./program.js";
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

/** How to seed and read a program's slots, worked out once per program. */
interface SlotPlan {
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
    };
    plans.set(program, plan);
  }
  return plan;
}

/** Runs a program for one frame; the caller's registers, or the program's error. */
function runFor(program: Program, plan: SlotPlan, registers: Registers, inputs: number[], stack: MemoryReader, ebpOverride?: number): Registers | ProgramError {
  const slots = plan.seed.map((k) => {
    if (k === null) return NaN;
    if (k < 0) return inputs[-1 - k]!;
    const v = registers[PROGRAM_REGISTERS[k]!];
    return v === undefined ? NaN : Number(v);
  });
  if (ebpOverride !== undefined && plan.ebpSlot >= 0) slots[plan.ebpSlot] = ebpOverride;
  const assigned = new Uint8Array(slots.length);
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

function ruleText(label: string, realigned: boolean, offset: number, moved: number): string {
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
  const label = `frame-data rva=${hex(record.rvaStart)} locals=${record.localSize} saved=${record.savedRegsSize} params=${record.paramsSize}`;
  const calleeParams = site.calleeParams;
  const entry = entryOf(record, base);
  const extra = { paramsSize: record.paramsSize, entry };
  const offset = calleeParams + record.localSize + record.savedRegsSize;
  return {
    describe: () => `${label}: ${record.program ?? NO_PROGRAM}`,
    exec(registers: Registers, stack: MemoryReader): UnwindResult {
      if (parsed === undefined || !parsed.ok) {
        const why = parsed === undefined ? "no program" : `token ${parsed.error.token}: ${parsed.error.reason}`;
        return { ok: false, stop: { reason: "unsupported", detail: `${label}: the program string does not parse (${why})` } };
      }
      const program = parsed.program;
      const esp = registers["esp"] ?? 0n;
      const ebp = registers["ebp"];
      const expected = (esp + BigInt(offset)) & U32;
      let start = expected;
      let moved = 0;
      let realigned = false;
      if (parsed.usesRaSearch) {
        if (program.realigns && ebp !== undefined) {
          start = (ebp + 4n) & U32;
          realigned = true;
        } else {
          const hit = scanForReturnAddress(stack, site.modules, site.images, start, RA_SEARCH_WORDS, found.callee);
          if (hit !== undefined && hit.slot !== start) {
            moved = Number(hit.slot - start);
            start = hit.slot;
          }
        }
      }
      const plan = planOf(program);
      const s = Number(start);
      const inputs = [s, s, record.localSize, record.savedRegsSize, record.paramsSize, calleeParams];
      const result = runFor(program, plan, registers, inputs, stack);
      if (!("token" in result)) {
        // An EBP-based program run on a wrong EBP (one the function already reloaded) is run again
        // with the EBP that a standard frame has for a return-address slot found from ESP.
        const reevaluate = parsed.usesRaSearch ? undefined : new EbpRerun(program, plan, registers, inputs, stack);
        return acceptOrScan(site, found, stack, result as Registers, lazyText(ruleText, label, realigned, offset, moved), Number((start + 4n) & U32), Number(expected), extra, reevaluate);
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
  return result.ok && result.step.trust === undefined && (result.step.registers["eip"] ?? 0n) !== 0n;
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
    exec(registers, stack) {
      const first = primary.exec(registers, stack);
      if (exact(first)) return first;
      const second = alternative.exec(registers, stack);
      if (!exact(second) || !second.ok) return first;
      return { ok: true, step: { ...second.step, rule: `${second.step.rule} (the record that starts at the return address)` } };
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
