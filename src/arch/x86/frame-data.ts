/**
 * The `frame-data` strategy: unwinding with a FrameData record's program string (x86-fpo.md §2,
 * §3, §8). `.raSearch` is a search start: computed from the record's sizes and the callee's
 * parameter bytes, moved to the first of the next 8 words that holds a return address, or taken
 * from EBP + 4 when the program realigns the stack. A result whose EIP is not a return address
 * is repaired by scanning (trust `scan`). At an epilogue the context frame runs the epilogue.
 */
import type { FrameData, Program, ProgramError } from "../../formats/frame-data.js";
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import { cacheSlot, type UnwindCache } from "../../unwind/cache.js";
import { walkStop, type FuncTableEntry } from "../../unwind/frame.js";
import type { FrameDataReturn, FrameDataRule } from "./rule.js";
import type { ExecContext, UnwindResult } from "../step.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { scanSlots } from "./code.js";
import { planOf, programReturnSlot, runAffine, runProgramRule, type ProgramInputs, type SlotPlan } from "./program-rule.js";
import { acceptOrScan, epilogRule, RA_SEARCH_WORDS, siteCheck, U32, x86Site, type RecordSteps, type X86EpilogPlan, type X86Site } from "./site.js";
import { outermostFrameData, parseRecordProgram, recordProgram, type ParsedProgram } from "./tables.js";

/** The program Breakpad runs for a type-4 record without a program string (x86-fpo.md §5.2 step 4). */
const NO_PROGRAM = parseRecordProgram("$T0 .raSearchStart = $eip $T0 ^ = $esp $T0 4 + =");

/** A FrameData record's rule for one frame. */
export interface FrameDataPlan {
  kind: "frame-data";
  found: X86Site;
  record: FrameData;
  parsed: ParsedProgram;
  /** How the program's slots are seeded and read, when it parses. */
  slots?: SlotPlan;
  /** The callee's parameter bytes, the program's `calleeParams` input. */
  calleeParams: number;
  /** The return-address slot from ESP: callee parameters + locals + saved registers. */
  offset: number;
  steps: RecordSteps;
  /** Where the rule finds the return address when nothing moved (the same for every frame). */
  plain: FrameDataRule;
}

/**
 * For a caller frame, the record at ra − 1 describes the call; a record of the same function
 * that starts exactly at the return address describes the state the call leaves (a stack
 * probe's call performs the allocation). The first is tried first; when its answer needs a scan
 * or ends the stack, the second is tried, and used when it finds a return address directly.
 */
export interface RecordAtReturnPlan {
  kind: "record-at-return";
  primary: FrameDataPlan;
  alternative: FrameDataPlan;
}

/** A record as a stop's detail names it. */
function labelOf(record: FrameData): string {
  return `frame-data rva=${hex(record.rvaStart)} locals=${record.localSize} saved=${record.savedRegsSize} params=${record.paramsSize}`;
}

function entryOf(record: FrameData, base: bigint): FuncTableEntry {
  return { kind: "frame-data", beginRva: BigInt(record.rvaStart), endRva: BigInt(record.rvaStart + record.codeSize), moduleBase: base };
}

function frameDataRule(site: FrameSite, found: X86Site, record: FrameData): FrameDataPlan {
  const parsed = recordProgram(record, site.cache) ?? NO_PROGRAM;
  const slots = parsed.ok ? planOf(parsed.program, site.cache) : undefined;
  const steps: RecordSteps = slots === undefined ? { paramsSize: record.paramsSize, entry: entryOf(record, found.module.base) } : { paramsSize: record.paramsSize, entry: entryOf(record, found.module.base), recovered: slots.recovered };
  if (parsed.ok && !parsed.usesRaSearch) {
    const program = parsed.program;
    // The plan is made below; its rerun runs only after.
    steps.rerun = (raSlot, callee, stack, cache) => rerunWithEbp(program, plan, cache, callee, stack, raSlot);
  }
  const offset = site.calleeParams + record.localSize + record.savedRegsSize;
  let ra: FrameDataReturn = { at: "esp", offset, moved: 0 };
  if (parsed.ok && !parsed.usesRaSearch) {
    // The program locates the return address itself (EBP-based): say where, when it is simple.
    const at = slots === undefined ? undefined : programReturnSlot(slots);
    ra = at === undefined ? { at: "program" } : { at: "program", base: at.base, offset: at.offset };
  }
  const plan: FrameDataPlan = {
    kind: "frame-data", found, record, parsed, calleeParams: site.calleeParams, offset, steps, plain: { kind: "frame-data", record, ra },
    ...(slots === undefined ? {} : { slots }),
  };
  return plan;
}

/** Runs a FrameData rule. */
export function execFrameData(plan: FrameDataPlan, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult {
  const { parsed, record, found } = plan;
  if (!parsed.ok) {
    return { ok: false, stop: walkStop("unsupported", `${labelOf(record)}: the program string does not parse (token ${parsed.error.token}: ${parsed.error.reason})`) };
  }
  const program = parsed.program;
  const cache = ctx.cache;
  // 32-bit arithmetic on numbers: this runs once per frame.
  const known = ctx.sp >= 0;
  const esp = known ? ctx.sp : Number(registers["esp"] ?? 0n);
  const ebp = registers["ebp"];
  const expected = (esp + plan.offset) >>> 0;
  let start = expected;
  let moved = 0;
  let realigned = false;
  if (parsed.usesRaSearch) {
    if (program.realigns && ebp !== undefined) {
      start = (Number(ebp) + 4) >>> 0;
      realigned = true;
    } else {
      const hit = scanSlots(cache, stack, found, start, RA_SEARCH_WORDS);
      if (hit >= 0 && hit !== start) {
        moved = hit - start;
        start = hit;
      }
    }
  }
  const slots = plan.slots!;
  const inputs = programInputs(cache, plan, start);
  // The reduced program leaves the caller's EIP and ESP as numbers in the call-site check.
  const check = siteCheck(cache);
  const affine = slots.affine !== undefined ? runAffine(slots.affine, check, registers, known ? esp : -1, inputs, stack) : undefined;
  if (affine === undefined) {
    check.eip = -1;
    check.esp = -1;
  }
  const result = affine ?? runProgramRule(program, slots, cache, registers, inputs, stack);
  if (!("token" in result)) {
    // The usual rule (nothing moved) is the same for every frame: made once.
    const rule: FrameDataRule = moved === 0 && !realigned ? plan.plain : { kind: "frame-data", record, ra: realigned ? { at: "ebp+4" } : { at: "esp", offset: plan.offset, moved } };
    // An EBP-based program run on a wrong EBP (one the function already reloaded) is run again
    // (check.rerun, set with the plan) with the EBP that a standard frame has for a
    // return-address slot found from ESP.
    check.callee = registers;
    check.scanFrom = (start + 4) >>> 0;
    check.expected = expected;
    return acceptOrScan(plan, result as Registers, rule, ctx, stack);
  }
  const e = result as ProgramError;
  const label = labelOf(record);
  const stop = e.address !== undefined
    ? walkStop("read-fault", `${label}: ${e.reason}`, e.address)
    : walkStop("unsupported", e.token < 0 ? `${label}: ${e.reason}` : `${label}: the program fails at token ${e.token}: ${e.reason}`);
  return { ok: false, stop };
}

/** The program run again with EBP = the slot below a return address found from ESP. */
function rerunWithEbp(program: Program, plan: FrameDataPlan, cache: UnwindCache, registers: Registers, stack: MemoryReader, raSlot: bigint): Registers | undefined {
  const again = runProgramRule(program, plan.slots!, cache, registers, cache.get(INPUTS), stack, Number((raSlot - 4n) & U32));
  return "token" in again ? undefined : (again as Registers);
}

/** A run's program inputs: one per cache, refilled by every run (a rerun in the same run reads them). */
const INPUTS = cacheSlot<ProgramInputs>("x86 FrameData program inputs", () => ({ start: 0, record: undefined as unknown as FrameData, calleeParams: 0 }));

function programInputs(cache: UnwindCache, plan: FrameDataPlan, start: number): ProgramInputs {
  const inputs = cache.get(INPUTS);
  inputs.start = start;
  inputs.record = plan.record;
  inputs.calleeParams = plan.calleeParams;
  return inputs;
}

/** A step that found a return address without scanning. */
function exact(result: UnwindResult): boolean {
  return result.ok && result.trust === undefined && (result.registers["eip"] ?? 0n) !== 0n;
}

/** Runs the record at ra − 1, then, when it needs a scan or ends the stack, the record that starts at the return address. */
export function execRecordAtReturn(plan: RecordAtReturnPlan, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult {
  const found = execFrameData(plan.primary, registers, stack, ctx);
  if (exact(found)) return found;
  // The next run refills the walk's step: the first one is kept as a copy.
  const first = found.ok ? { ...found } : found;
  const second = execFrameData(plan.alternative, registers, stack, ctx);
  if (!exact(second) || !second.ok) return first;
  return { ...second, rule: { ...(second.rule as FrameDataRule), atReturn: true } };
}

/** The x86 FrameData strategy (trust `frame-data`). */
export const x86FrameData: UnwindStrategy<FrameDataPlan | RecordAtReturnPlan | X86EpilogPlan<FrameDataPlan | RecordAtReturnPlan>> = {
  name: "frame-data",
  trust: "frame-data",
  ruleFor(site: FrameSite) {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    const record = found.tables.frameDataIndex.innermost(found.rva);
    if (record === undefined) return undefined;
    let rule: FrameDataPlan | RecordAtReturnPlan = frameDataRule(site, found, record);
    if (site.index > 0) {
      // The return address's own RVA (the frame is looked up just before it).
      const returnRva = Number(site.pc - found.module.base);
      const atReturn = found.tables.frameDataIndex.innermost(returnRva);
      if (atReturn !== undefined && atReturn !== record && atReturn.rvaStart === returnRva && outermostFrameData(found.tables, returnRva) === outermostFrameData(found.tables, found.rva)) {
        rule = { kind: "record-at-return", primary: rule, alternative: frameDataRule(site, found, atReturn) };
      }
    }
    return epilogRule(site, found, { frameData: record }, { paramsSize: record.paramsSize, entry: entryOf(record, found.module.base) }, rule) ?? rule;
  },
};
