/**
 * What the x86 record-based rules share: finding the module, RVA and records for a frame, the
 * registers a caller frame inherits, the call-site checks that back up a computed return address
 * (x86-fpo.md §3.1, §5.2 step 7, §8), and the context frame's run to its function's return.
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { machineInfo } from "../../model/machine.js";
import { moduleAt, symbolAt, type Module, type Registers } from "../../model/snapshot.js";
import { registersFrom } from "../register-set.js";
import { cacheSlot, type UnwindCache } from "../../unwind/cache.js";
import { walkStop, type FuncTableEntry } from "../../unwind/frame.js";
import type { EpilogSource, FpoRule, FrameDataRule, SiteCheckRule, X86EpilogRule } from "./rule.js";
import { ruleText } from "../rule-text.js";
import { stepInto, unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { FrameSite } from "../../unwind/step.js";
import {
  decodeToReturn,
  directCallTarget,
  isReturnAddress,
  NOT_A_RETURN_ADDRESS,
  returnAddressInfo,
  returnAddressInfoN,
  runToReturn,
  scanForReturnAddress,
  type ScanScope,
  type SimInstruction,
} from "./code.js";
import { findFpo, outermostFrameData, x86Tables, type X86Tables } from "./tables.js";

export const U32 = 0xffff_ffffn;

/** Words after `.raSearch` scanned for the real return-address slot (x86-fpo.md §3.1: 8 words). */
export const RA_SEARCH_WORDS = 7;
/** Words scanned when a computed return address is not one (minidump.md §5.3). */
export const SCAN_WORDS = 40;
/** The same for the context frame. */
export const SCAN_WORDS_CONTEXT = 160;

/** A frame's module, its RVA there, and the module's records, kept by value (the walk reuses its site). */
export interface X86Site extends ScanScope {
  /** The frame being unwound is the context frame. */
  contextFrame: boolean;
  module: Module;
  rva: number;
  tables: X86Tables;
  /** The function's absolute address range, when its records or symbols give one. */
  callee?: { start: bigint; end: bigint };
}

/** Resolves a site's lookup address to its module and records; undefined when the module has none. */
export function x86Site(site: FrameSite): X86Site | undefined {
  const module = moduleAt(site.modules, site.lookupPc);
  if (module === undefined) return undefined;
  const tables = x86Tables(module, site.images, site.cache);
  if (tables === undefined) return undefined;
  const found: X86Site = {
    modules: site.modules, images: site.images, contextFrame: site.index === 0,
    module, rva: Number(site.lookupPc - module.base), tables, calleeStart: -1, calleeEnd: -1,
  };
  const range = functionRange(found);
  if (range !== undefined) {
    found.callee = { start: module.base + BigInt(range.start), end: module.base + BigInt(range.end) };
    found.calleeStart = Number(found.callee.start);
    found.calleeEnd = Number(found.callee.end);
  }
  return found;
}

/** Callee-saved registers (the machine table's): a caller frame has the callee's values unless a rule restores them. */
export const CALLEE_SAVED: readonly string[] = machineInfo("x86").calleeSaved;

/** A caller frame's registers in the usual case: EIP and ESP to be set, and the callee-saved ones (made by a constructor: see {@link Registers}). */
class X86CallerRegisters {
  [name: string]: bigint;
  constructor(ebp: bigint, ebx: bigint, esi: bigint, edi: bigint) {
    this.eip = 0n;
    this.esp = 0n;
    this.ebp = ebp;
    this.ebx = ebx;
    this.esi = esi;
    this.edi = edi;
  }
}

/** The caller's starting register set: the callee-saved registers of the callee frame. */
export function inherited(registers: Registers): Registers {
  const ebp = registers["ebp"];
  const ebx = registers["ebx"];
  const esi = registers["esi"];
  const edi = registers["edi"];
  // The usual case in one object shape: callers then set eip and esp.
  if (ebp !== undefined && ebx !== undefined && esi !== undefined && edi !== undefined) return new X86CallerRegisters(ebp, ebx, esi, edi);
  return registersFrom(registers, CALLEE_SAVED);
}

/** The registers every x86 unwind recovers. */
export const EIP_ESP: readonly string[] = ["eip", "esp"];
/** The same plus EBP. */
export const EIP_ESP_EBP: readonly string[] = ["eip", "esp", "ebp"];

/** What a record's step reports about the frame it unwound, besides the caller's registers. */
export interface RecordStep {
  paramsSize: number;
  entry: FuncTableEntry;
  /** The registers the rule recovers (see UnwindStep.recovered). */
  recovered?: readonly string[];
}

/**
 * A record's step fields, and for an EBP-based program the rerun its call-site check may need.
 * Never changed once made.
 */
export interface RecordSteps extends RecordStep {
  /** Runs the rule again on the callee's registers as if the return address were at a slot, for a repaired EIP. */
  rerun?: ((raSlot: bigint, callee: Registers, stack: MemoryReader, cache: UnwindCache) => Registers | undefined) | undefined;
}

/** How {@link acceptOrScan} checks a computed return address: what the rule's run found, refilled by every run (one per cache, {@link siteCheck}). */
export interface SiteCheck {
  /** Where to scan from when EIP is not a return address. */
  scanFrom: number;
  /** The ESP-based slot the return address is expected at, when the rule has one: a call elsewhere is checked against it. */
  expected?: number | undefined;
  /** The registers the rule ran on, for a rerun. */
  callee?: Registers | undefined;
  /** EIP and ESP of the registers as numbers, −1 when the rule has them only as bigints. */
  eip: number;
  esp: number;
}

const SITE_CHECK = cacheSlot<SiteCheck>("x86 call-site check", () => ({ scanFrom: 0, expected: undefined, callee: undefined, eip: -1, esp: -1 }));

/** The call-site check a record rule's run fills in for {@link acceptOrScan}: the cache's one, every field to be set by the run. */
export function siteCheck(cache: UnwindCache): SiteCheck {
  const check = cache.get(SITE_CHECK);
  check.callee = undefined;
  return check;
}

/** A successful step (written out field by field: this runs once per frame). */
function accepted(ctx: ExecContext, registers: Registers, rule: FpoRule | FrameDataRule, steps: RecordSteps, eipNumber: number, espNumber: number): UnwindResult {
  return stepInto(ctx, registers, rule, steps.recovered, steps.entry, eipNumber, espNumber, steps.paramsSize);
}

/** A step repaired by scanning (trust `scan`). */
function repaired(registers: Registers, rule: SiteCheckRule, steps: RecordStep): UnwindResult {
  return unwindStep(registers, rule, { trust: "scan", paramsSize: steps.paramsSize, entry: steps.entry, recovered: steps.recovered });
}

/**
 * Accepts `registers` as the caller's when its EIP is a return address (or 0, the end of the
 * stack), for a record plan (`found`, and `steps` with the call-site check the rule filled in). A
 * return address after a direct call to another function is checked against the ESP-based slot
 * `check.expected`: when a return address after a call into this function lies there (or just
 * above), that one is taken. When EIP is not a return address at all, the stack is scanned from
 * `check.scanFrom`; both repairs mark the frame as found by scanning.
 */
export function acceptOrScan(plan: { found: X86Site; steps: RecordSteps }, registers: Registers, rule: FpoRule | FrameDataRule, ctx: ExecContext, stack: MemoryReader): UnwindResult {
  const { found, steps } = plan;
  const cache = ctx.cache;
  const check = cache.get(SITE_CHECK);
  const eip = registers["eip"] ?? 0n;
  if (check.eip === 0 || eip === 0n) return accepted(ctx, registers, rule, steps, check.eip, check.esp);
  const info = check.eip > 0 ? returnAddressInfoN(cache, found.modules, found.images, check.eip) : returnAddressInfo(cache, found.modules, found.images, eip);
  if (info !== NOT_A_RETURN_ADDRESS) {
    const callee = found.callee;
    // A direct call to somewhere outside this function (numbers: this runs once per frame).
    if (callee !== undefined && info >= 0 && (info < found.calleeStart || info >= found.calleeEnd) && check.expected !== undefined) {
      const hit = scanForReturnAddress(cache, stack, found, BigInt(check.expected), RA_SEARCH_WORDS);
      const hitTarget = hit === undefined ? undefined : directCallTarget(found.images, hit.value);
      if (hit !== undefined && hitTarget !== undefined && hitTarget >= callee.start && hitTarget < callee.end && hit.value !== eip) {
        const again = steps.rerun !== undefined && check.callee !== undefined ? steps.rerun(hit.slot, check.callee, stack, cache) : undefined;
        const fixed = again !== undefined && again["eip"] === hit.value ? again : { ...registers, eip: hit.value, esp: (hit.slot + 4n) & U32 };
        return repaired(fixed, { kind: "site-check", rule, found: "other-call", eip, target: BigInt(info), slot: hit.slot, value: hit.value }, steps);
      }
    }
    return accepted(ctx, registers, rule, steps, check.eip, check.esp);
  }
  const words = found.contextFrame ? SCAN_WORDS_CONTEXT : SCAN_WORDS;
  const hit = scanForReturnAddress(cache, stack, found, BigInt(check.scanFrom), words);
  if (hit === undefined) {
    return { ok: false, stop: walkStop("bad-pc", `${ruleText(rule)}: eip ${hex(eip)} is not a return address, and none lies in the ${words + 1} words from ${hex(check.scanFrom)}`, eip) };
  }
  return repaired({ ...registers, eip: hit.value, esp: (hit.slot + 4n) & U32 }, { kind: "site-check", rule, found: "scan", eip, slot: hit.slot, value: hit.value }, steps);
}

/** The RVA range [start, end) of the function containing the site's RVA, from its records or symbols. */
export function functionRange(found: X86Site): { start: number; end: number } | undefined {
  const fd = outermostFrameData(found.tables, found.rva);
  if (fd !== undefined) return { start: fd.rvaStart, end: fd.rvaStart + fd.codeSize };
  const fpo = findFpo(found.tables.fpo, found.rva);
  if (fpo !== undefined) return { start: fpo.ulOffStart, end: fpo.ulOffStart + fpo.cbProcSize };
  const sym = symbolAt(found.module, BigInt(found.rva));
  if (sym?.size !== undefined) return { start: Number(sym.rva), end: Number(sym.rva + sym.size) };
  return undefined;
}

/** The context frame's run to its function's return: the instructions from its PC, run by {@link execX86Epilog}. */
export interface X86EpilogPlan<F> {
  kind: "x86-epilog";
  found: X86Site;
  source: EpilogSource;
  ops: readonly SimInstruction[];
  /** The record's step fields, when a record describes the function. */
  record?: RecordStep;
  /** The record's own rule, run when the code does not reach a return. */
  fallback?: F;
}

/**
 * The context frame's rule when the code from its PC runs straight to the function's exit
 * (x86-fpo.md §1.4 step 5, §8 rule 4): records describe the body, so an epilogue's pops and
 * `ret`, a stack probe's ESP switch, or a tail jump are run instead. Undefined when the frame is
 * not the context frame or the code is not straight-line to a return.
 */
export function epilogRule<F>(site: FrameSite, found: X86Site, source: EpilogSource, record?: RecordStep, fallback?: F): X86EpilogPlan<F> | undefined {
  if (site.index !== 0) return undefined;
  const ops = decodeToReturn(site.images, site.lookupPc, (target) => !leavesFunction(found, target));
  if (ops === undefined) return undefined;
  const plan: X86EpilogPlan<F> = { kind: "x86-epilog", found, source, ops };
  if (record !== undefined) plan.record = record;
  if (fallback !== undefined) plan.fallback = fallback;
  return plan;
}

/** Whether a jump to `target` leaves the site's function (its range when known, else its module). */
function leavesFunction(found: X86Site, target: bigint): boolean {
  const callee = found.callee;
  return callee === undefined ? moduleAt(found.modules, target) !== found.module : target < callee.start || target >= callee.end;
}

/**
 * Runs an epilogue to the function's return. Undefined when the code does not reach one and the
 * plan has a fallback, which the caller then runs.
 */
export function execX86Epilog<F>(plan: X86EpilogPlan<F>, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult | undefined {
  const { found, ops } = plan;
  const instructions = ops.map((o) => o.text);
  const rule: X86EpilogRule = { kind: "x86-epilog", source: plan.source, instructions };
  const fields = { paramsSize: plan.record?.paramsSize, entry: plan.record?.entry };
  const run = runToReturn(ops, registers, stack, (target) => leavesFunction(found, target));
  if (run.ok && run.tailCall !== undefined && !isReturnAddress(ctx.cache, found.modules, found.images, run.registers["eip"]!)) {
    // A jump out of the function with no return address at ESP is a stack switch (longjmp),
    // not a tail call: the frames still live are those above ESP.
    const words = SCAN_WORDS_CONTEXT;
    const esp = registers["esp"] ?? 0n;
    const hit = scanForReturnAddress(ctx.cache, stack, { modules: found.modules, images: found.images, calleeStart: -1, calleeEnd: -1 }, esp, words);
    if (hit === undefined) {
      if (plan.fallback !== undefined) return undefined;
      return { ok: false, stop: walkStop("unsupported", `${ruleText(rule)}: a jump to ${hex(run.tailCall)} with no return address at esp, and none in the ${words + 1} words above`) };
    }
    const out = inherited(registers);
    out["eip"] = hit.value;
    out["esp"] = (hit.slot + 4n) & U32;
    rule.tailCall = run.tailCall;
    rule.switched = { esp, slot: hit.slot, value: hit.value };
    return unwindStep(out, rule, { ...fields, recovered: EIP_ESP, trust: "scan" });
  }
  if (!run.ok) {
    if (plan.fallback !== undefined) return undefined;
    const stop = run.address !== undefined
      ? walkStop("read-fault", `${ruleText(rule)}: cannot read ${hex(run.address)} for ${run.what}`, run.address)
      : walkStop("unsupported", `${ruleText(rule)}: ${run.what}`);
    return { ok: false, stop };
  }
  const out = inherited(run.registers);
  out["eip"] = run.registers["eip"]!;
  out["esp"] = run.registers["esp"]!;
  const restored = ops.flatMap((o) => (o.op.op === "pop" && o.op.reg !== "esp" ? [o.op.reg] : o.op.op === "leave" ? ["ebp"] : []));
  if (run.tailCall !== undefined) rule.tailCall = run.tailCall;
  rule.raSlot = run.raSlot;
  return unwindStep(out, rule, { ...fields, recovered: [...EIP_ESP, ...restored] });
}
