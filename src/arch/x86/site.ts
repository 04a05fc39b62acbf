/**
 * What the x86 record-based strategies share: finding the module, RVA and records for a frame,
 * the registers a caller frame inherits, and the scans that back up a computed return address
 * (x86-fpo.md §3.1, §5.2 step 7, §8).
 */
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, symbolAt, type Module, type Registers } from "../../model/snapshot.js";
import type { FuncTableEntry, WalkStop } from "../../walk/frame.js";
import { lazyText, type RuleText } from "../../walk/lazy-text.js";
import { unwindStep, type FrameSite, type UnwindResult, type UnwindRule, type UnwindStep } from "../../walk/strategy.js";
import { decodeToReturn, directCallTarget, isReturnAddress, NOT_A_RETURN_ADDRESS, returnAddressInfo, returnAddressInfoN, runToReturn, scanForReturnAddress } from "./code.js";
import { findFpo, outermostFrameData, x86Tables, type X86Tables } from "./tables.js";

export const U32 = 0xffff_ffffn;

/** Words after `.raSearch` scanned for the real return-address slot (x86-fpo.md §3.1: 8 words). */
export const RA_SEARCH_WORDS = 7;
/** Words scanned when a computed return address is not one (minidump.md §5.3). */
export const SCAN_WORDS = 40;
/** The same for the context frame. */
export const SCAN_WORDS_CONTEXT = 160;

/** A frame's module, its RVA there, and the module's records. */
export interface X86Site {
  /** The site's module list and images, kept by value: rules must not hold on to the site itself, which the walk reuses. */
  modules: readonly Module[];
  images: MemoryReader;
  /** The frame being unwound is the context frame. */
  contextFrame: boolean;
  module: Module;
  rva: number;
  tables: X86Tables;
  /** The function's absolute address range, when its records or symbols give one. */
  callee?: { start: bigint; end: bigint };
  /** The same as numbers, −1 when unknown (for the 32-bit fast paths). */
  calleeStart: number;
  calleeEnd: number;
}

/** Resolves a site's lookup address to its module and records; undefined when the module has none. */
export function x86Site(site: FrameSite): X86Site | undefined {
  const module = moduleAt(site.modules, site.lookupPc);
  if (module === undefined) return undefined;
  const tables = x86Tables(module, site.images);
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

/** Callee-saved registers: a caller frame has the callee's values unless a rule restores them. */
export const CALLEE_SAVED = ["ebp", "ebx", "esi", "edi"] as const;

/** The caller's starting register set: the callee-saved registers of the callee frame. */
export function inherited(registers: Registers): Registers {
  const ebp = registers["ebp"];
  const ebx = registers["ebx"];
  const esi = registers["esi"];
  const edi = registers["edi"];
  // The usual case in one object shape: callers then set eip and esp.
  if (ebp !== undefined && ebx !== undefined && esi !== undefined && edi !== undefined) return { eip: 0n, esp: 0n, ebp, ebx, esi, edi };
  const out: Registers = {};
  for (const r of CALLEE_SAVED) {
    const v = registers[r];
    if (v !== undefined) out[r] = v;
  }
  return out;
}

/** What a step reports about the frame it unwound, besides the caller's registers. */
export interface StepExtra {
  paramsSize?: number;
  entry?: FuncTableEntry;
  /** The registers the rule recovers (see UnwindStep.recovered). */
  recovered?: readonly string[];
  /**
   * The step object the rule's plain successes are written into, made on the first one and
   * refilled on every later run: the walk reads a step before it runs the next rule, and one
   * step per frame is garbage a deep walk need not make. Never spread into another object.
   */
  scratch?: UnwindStep & { ok: true };
}

/** The fields of `extra` that go into a step made on the spot (not its scratch step). */
function stepFields(extra: StepExtra): { paramsSize?: number; entry?: FuncTableEntry; recovered?: readonly string[] } {
  const out: { paramsSize?: number; entry?: FuncTableEntry; recovered?: readonly string[] } = {};
  if (extra.paramsSize !== undefined) out.paramsSize = extra.paramsSize;
  if (extra.entry !== undefined) out.entry = extra.entry;
  if (extra.recovered !== undefined) out.recovered = extra.recovered;
  return out;
}

/** The registers every x86 unwind recovers. */
export const EIP_ESP: readonly string[] = ["eip", "esp"];
/** The same plus EBP. */
export const EIP_ESP_EBP: readonly string[] = ["eip", "esp", "ebp"];

export const hex = (v: bigint | number): string => "0x" + v.toString(16);

/** Runs a rule again as if the return address were at `raSlot` (see {@link acceptOrScan}). */
export interface Reevaluator {
  run(raSlot: bigint): Registers | undefined;
}

function notThisFunctionText(rule: RuleText, eip: bigint, target: bigint, slot: bigint, value: bigint): string {
  return `${rule.toString()}; eip ${hex(eip)} returns from a call to ${hex(target)}, not to this function: [${hex(slot)}]=${hex(value)} does`;
}

function scannedText(rule: RuleText, eip: bigint, slot: bigint, value: bigint): string {
  return `${rule.toString()}; eip ${hex(eip)} is not a return address: scanned to [${hex(slot)}]=${hex(value)}`;
}

/** A successful step (written out field by field: this runs once per frame). */
function accepted(registers: Registers, rule: RuleText, extra: StepExtra, eipNumber: number, espNumber: number): UnwindResult {
  const step = extra.scratch;
  if (step === undefined) {
    extra.scratch = unwindStep(registers, rule, extra.recovered, extra.paramsSize, extra.entry, undefined, undefined, eipNumber, espNumber);
    return extra.scratch;
  }
  step.registers = registers;
  step.rule = rule;
  step.pcNumber = eipNumber;
  step.spNumber = espNumber;
  return step;
}

/**
 * Accepts `registers` as the caller's when its EIP is a return address (or 0, the end of the
 * stack). A return address after a direct call to another function is checked against the
 * ESP-based slot `expected`: when a return address after a call into this function lies there
 * (or just above), that one is taken. When EIP is not a return address at all, the stack is
 * scanned from `scanFrom`; both repairs mark the frame as found by scanning. `eipNumber` and
 * `espNumber` are the EIP and ESP of `registers` as numbers when the rule has them (−1 if not).
 */
export function acceptOrScan(
  found: X86Site,
  stack: MemoryReader,
  registers: Registers,
  rule: RuleText,
  scanFrom: number,
  expected: number | undefined,
  extra: StepExtra = {},
  reevaluate?: Reevaluator,
  eipNumber = -1,
  espNumber = -1,
): UnwindResult {
  const eip = registers["eip"] ?? 0n;
  if (eipNumber === 0 || eip === 0n) return accepted(registers, rule, extra, eipNumber, espNumber);
  const info = eipNumber > 0 ? returnAddressInfoN(found.modules, found.images, eipNumber) : returnAddressInfo(found.modules, found.images, eip);
  if (info !== NOT_A_RETURN_ADDRESS) {
    const callee = found.callee;
    // A direct call to somewhere outside this function (numbers: this runs once per frame).
    if (callee !== undefined && info >= 0 && (info < found.calleeStart || info >= found.calleeEnd) && expected !== undefined) {
      const target = BigInt(info);
      const hit = scanForReturnAddress(stack, found.modules, found.images, BigInt(expected), RA_SEARCH_WORDS, callee);
      const hitTarget = hit === undefined ? undefined : directCallTarget(found.images, hit.value);
      if (hit !== undefined && hitTarget !== undefined && hitTarget >= callee.start && hitTarget < callee.end && hit.value !== eip) {
        const again = reevaluate?.run(hit.slot);
        const fixed = again !== undefined && again["eip"] === hit.value ? again : { ...registers, eip: hit.value, esp: (hit.slot + 4n) & U32 };
        return {
          ok: true,
          registers: fixed,
          rule: lazyText(notThisFunctionText, rule, eip, target, hit.slot, hit.value),
          trust: "scan",
          ...stepFields(extra),
        };
      }
    }
    return accepted(registers, rule, extra, eipNumber, espNumber);
  }
  const words = found.contextFrame ? SCAN_WORDS_CONTEXT : SCAN_WORDS;
  const hit = scanForReturnAddress(stack, found.modules, found.images, BigInt(scanFrom), words, found.callee);
  if (hit === undefined) {
    return {
      ok: false,
      stop: { reason: "bad-pc", address: eip, detail: `${rule.toString()}: eip ${hex(eip)} is not a return address, and none lies in the ${words + 1} words from ${hex(scanFrom)}` },
    };
  }
  return {
    ok: true,
    registers: { ...registers, eip: hit.value, esp: (hit.slot + 4n) & U32 },
    rule: lazyText(scannedText, rule, eip, hit.slot, hit.value),
    trust: "scan",
    ...stepFields(extra),
  };
}

/** The RVA range [start, end) of the function containing the site's RVA, from its records or symbols. */
export function functionRange(found: X86Site): { start: number; end: number } | undefined {
  const fd = outermostFrameData(found.tables.frameData, found.rva);
  if (fd !== undefined) return { start: fd.rvaStart, end: fd.rvaStart + fd.codeSize };
  const fpo = findFpo(found.tables.fpo, found.rva);
  if (fpo !== undefined) return { start: fpo.ulOffStart, end: fpo.ulOffStart + fpo.cbProcSize };
  const sym = symbolAt(found.module, BigInt(found.rva));
  if (sym?.size !== undefined) return { start: Number(sym.rva), end: Number(sym.rva + sym.size) };
  return undefined;
}

/**
 * The context frame's rule when the code from its PC runs straight to the function's exit
 * (x86-fpo.md §1.4 step 5, §8 rule 4): records describe the body, so an epilogue's pops and
 * `ret`, a stack probe's ESP switch, or a tail jump are run instead. Undefined when the frame is
 * not the context frame or the code is not straight-line to a return.
 */
export function epilogRule(site: FrameSite, found: X86Site, label: string, extra: StepExtra = {}, fallback?: UnwindRule): UnwindRule | undefined {
  if (site.index !== 0) return undefined;
  const { modules, images } = found;
  const callee = found.callee;
  const leavesFunction = (target: bigint): boolean => callee === undefined ? moduleAt(modules, target) !== found.module : target < callee.start || target >= callee.end;
  const ops = decodeToReturn(images, site.lookupPc, (target) => !leavesFunction(target));
  if (ops === undefined) return undefined;
  const text = `${label} to return: ${ops.map((o) => o.text).join("; ")}`;
  return {
    describe: () => text,
    exec(registers, stack) {
      const run = runToReturn(ops, registers, stack, leavesFunction);
      if (run.ok && run.tailCall !== undefined && !isReturnAddress(modules, images, run.registers["eip"]!)) {
        // A jump out of the function with no return address at ESP is a stack switch (longjmp),
        // not a tail call: the frames still live are those above ESP.
        const words = SCAN_WORDS_CONTEXT;
        const esp = registers["esp"] ?? 0n;
        const hit = scanForReturnAddress(stack, modules, images, esp, words);
        if (hit === undefined) return fallback?.exec(registers, stack) ?? { ok: false, stop: { reason: "unsupported", detail: `${text}: a jump to ${hex(run.tailCall)} with no return address at esp, and none in the ${words + 1} words above` } };
        const out = inherited(registers);
        out["eip"] = hit.value;
        out["esp"] = (hit.slot + 4n) & U32;
        return { ok: true, registers: out, recovered: EIP_ESP, rule: `${text}: the jump to ${hex(run.tailCall)} switches stacks; scanned from esp=${hex(esp)} to [${hex(hit.slot)}]=${hex(hit.value)}`, trust: "scan", kind: "scan", ...stepFields(extra) };
      }
      if (!run.ok && fallback !== undefined) return fallback.exec(registers, stack);
      if (!run.ok) {
        const stop: WalkStop = run.address !== undefined
          ? { reason: "read-fault", address: run.address, detail: `${text}: cannot read ${hex(run.address)} for ${run.what}` }
          : { reason: "unsupported", detail: `${text}: ${run.what}` };
        return { ok: false, stop };
      }
      const out = inherited(run.registers);
      out["eip"] = run.registers["eip"]!;
      out["esp"] = run.registers["esp"]!;
      const restored = ops.flatMap((o) => (o.op.op === "pop" && o.op.reg !== "esp" ? [o.op.reg] : o.op.op === "leave" ? ["ebp"] : []));
      const tail = run.tailCall === undefined ? "" : ` (tail call to ${hex(run.tailCall)})`;
      return { ok: true, registers: out, rule: `${text}${tail}, ra@[${hex(run.raSlot)}]`, ...stepFields(extra), recovered: [...EIP_ESP, ...restored] };
    },
  };
}
