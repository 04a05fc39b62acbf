/**
 * Stack scanning, one policy for every machine (minidump.md §5.3): the caller's PC is the first
 * word from the stack pointer up that is a return address, and the caller's stack pointer is the
 * slot just above it. What differs between machines is a table of parameters
 * ({@link ScanMachine}): the word size and register names, the window (Breakpad's
 * `kRASearchWords`, 40 words beyond the first, four times that when the frame being unwound is
 * the context frame), how a word is classified, which registers a caller inherits, and how
 * Breakpad guesses the caller's frame pointer after a scan (§5.5 for x86, §5.6 for amd64).
 *
 * A return address is a word whose `value − 1` lies in a module and whose bytes just before it
 * are a call instruction when the module's code is in the snapshot (Breakpad checks only the
 * module). On top of that, call sites rule out stale return addresses, left in a frame by calls
 * that have since returned, which a plain scan takes:
 * - when the function being unwound is known (its records or symbols give its range), a word
 *   after a direct call into that function beats one after a direct call elsewhere;
 * - otherwise a word after a direct call to an address above the frame's own PC, in the frame's
 *   module, is passed over: that call did not enter the function the frame is in, which starts
 *   at or below its PC.
 *
 * A scan rule is a value ({@link ScanRule}, `kind` "scan", or "leaf" for Breakpad's simulated
 * return from a leaf function: the return address at the stack pointer or one word above, every
 * register carried over) run by one function, {@link execScan}; working it out reads nothing.
 */
import { hex } from "../hex.js";
import { readU32n, type MemoryReader } from "../memory/reader.js";
import { hasSymbols, moduleAt, type Module, type Registers } from "../model/snapshot.js";
import { Words } from "../memory/words.js";
import { cacheSlot, keyed, keyedSlot, type UnwindCache } from "../unwind/cache.js";
import { walkStop } from "../unwind/frame.js";
import { hasSymbolAt } from "../unwind/symbolize.js";
import type { LeafRule, ScanRule } from "../unwind/rule.js";
import type { ExecContext, UnwindResult } from "./step.js";
import type { FrameSite, UnwindStrategy } from "../unwind/step.js";
import { work } from "../unwind/work.js";

const STACK_WORDS = cacheSlot("scan stack words", () => new Words());
const MAX_NUMBER = BigInt(Number.MAX_SAFE_INTEGER);

/** The 64-bit stack word at `address` as it is, or undefined: the `readWord` of the 64-bit machines' scans. */
export function readStackWord64(cache: UnwindCache, memory: MemoryReader, address: bigint): bigint | undefined {
  const words = cache.get(STACK_WORDS);
  const readable = address + 8n <= MAX_NUMBER ? words.read(memory, Number(address)) : words.readBig(memory, address);
  return readable ? words.big() : undefined;
}

/** A word that is not a return address ({@link ScanMachine.classify}). */
export const NOT_RETURN = -1;
/** A return address after an indirect call (its target is not known). */
export const UNKNOWN_TARGET = -2;
/** A word in a module whose code the snapshot lacks: lying in the module is all that was checked. */
export const UNCHECKED = -3;

/**
 * Breakpad's test of a scanned word (`ScanForReturnAddress`, `InstructionAddressSeemsValid`,
 * minidump.md §5.3): `value − 1` lies in a module and, when that module has symbols, inside one of
 * its functions (a FUNC, or a PUBLIC by the resolver's rules). {@link UNKNOWN_TARGET} when it
 * passes, {@link NOT_RETURN} when not. A module whose `.sym` file was loaded has symbols even when
 * the file holds no FUNC or PUBLIC record (STACK CFI alone): Breakpad's resolver then names no
 * function at any address, so no word in that module passes.
 */
export function breakpadClassify(modules: readonly Module[], value: bigint): number {
  if (value < 1n) return NOT_RETURN;
  const at = value - 1n;
  const module = moduleAt(modules, at);
  if (module === undefined) return NOT_RETURN;
  if (!hasSymbols(module)) return module.unwind?.origin.startsWith("Breakpad ") === true ? NOT_RETURN : UNKNOWN_TARGET;
  return hasSymbolAt(module, at - module.base) ? UNKNOWN_TARGET : NOT_RETURN;
}

/** Answers of {@link breakpadClassifyN} by module list: a scan's windows overlap, and the words in them recur. */
const BREAKPAD_ANSWERS = keyedSlot<readonly Module[], Map<number, number>>("Breakpad's test of scanned words");

/** {@link breakpadClassify} of a 32-bit word given as a number, answered once per module list and cache. */
export function breakpadClassifyN(cache: UnwindCache, modules: readonly Module[], value: number): number {
  const answers = keyed(cache, BREAKPAD_ANSWERS, modules, () => new Map<number, number>());
  let answer = answers.get(value);
  if (answer === undefined) {
    answer = breakpadClassify(modules, BigInt(value));
    answers.set(value, answer);
  }
  return answer;
}

/** What one machine gives the scanning policy. */
export interface ScanMachine {
  /** Bytes per stack word. */
  width: 4 | 8;
  pc: string;
  sp: string;
  fp: string;
  /** Words beyond the first that a scan looks at for a caller frame (the window includes its last word). */
  words: number;
  /** The same when the frame being unwound is the context frame. */
  contextWords: number;
  /**
   * Words beyond the window in which a return address verified by its call site (code in the
   * snapshot, a call before it, a consistent target) is still taken when the window holds none:
   * frames larger than the window. 0 for Breakpad's window alone.
   */
  extendedWords: number;
  /** The stack word at `address`, or undefined when it cannot be read. */
  readWord(cache: UnwindCache, memory: MemoryReader, address: bigint): bigint | undefined;
  /**
   * What a stack word is made before it is classified, in the walk `ctx` (ARM64: a saved lr may be
   * signed, so its pointer authentication code is stripped); absent: the word as it is.
   */
  cleanWord?: (ctx: ExecContext) => (value: bigint) => bigint;
  /** {@link NOT_RETURN}, {@link UNKNOWN_TARGET}, {@link UNCHECKED}, or the target of the direct call before `value` (≥ 0). */
  classify(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint): number;
  /**
   * {@link classify} of a 32-bit word given as a number: a 4-byte machine's scan then reads and
   * judges its words without making a bigint for each (it makes two for the word it takes).
   */
  classifyN?: (cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: number) => number;
  /** The caller's starting registers: the callee-saved registers of the callee, carried over. */
  inherit(registers: Registers): Registers;
  /**
   * Breakpad's guess of the caller's frame pointer once the return address was found at `slot`:
   * the value and whether it counts as recovered, or undefined to leave the callee's value as it
   * is (carried over, not recovered). `recovered` is the callee frame's validity (undefined: all).
   */
  framePointer(callee: Registers, recovered: readonly string[] | undefined, slot: bigint, memory: MemoryReader, cache: UnwindCache): { value: bigint; recovered: boolean } | undefined;
  /** The registers a scan recovers: PC and SP, and with them the frame pointer when it guessed one. */
  recovered: { base: readonly string[]; withFp: readonly string[] };
  /** The stack and frame pointers' names, as a scan rule names them. */
  names: { sp: string; fp: string };
}

/** A machine's register names as a scan uses them ({@link ScanMachine}'s `pc`, `sp`, `fp`, `recovered`, `names`). */
export function scanRegisters(pc: string, sp: string, fp: string): Pick<ScanMachine, "pc" | "sp" | "fp" | "recovered" | "names"> {
  return { pc, sp, fp, recovered: { base: [pc, sp], withFp: [pc, sp, fp] }, names: { sp, fp } };
}

/** What call-site checks know about the frame being unwound, kept by value (the walk reuses its site). */
export interface CallSiteCheck {
  modules: readonly Module[];
  images: MemoryReader;
  /** The frame's lookup address (its PC, or return address − 1). */
  pc: bigint;
  /** The function's absolute range when records or symbols give it; start −1 when unknown. */
  calleeStart: number;
  calleeEnd: number;
}

/** The call-site data of a site, with the function range when the caller knows it. */
export function callSiteCheck(site: FrameSite, callee?: { start: bigint; end: bigint }): CallSiteCheck {
  return {
    modules: site.modules,
    images: site.images,
    pc: site.lookupPc,
    calleeStart: callee === undefined ? -1 : Number(callee.start),
    calleeEnd: callee === undefined ? -1 : Number(callee.end),
  };
}

/** A return address found by scanning: its slot and value. */
export interface ScanFound {
  slot: bigint;
  value: bigint;
}

/** Whether the direct call to `target` cannot be the one that entered the frame at `check.pc` (see the file comment). */
export function enteredElsewhere(check: CallSiteCheck, target: number): boolean {
  if (target <= Number(check.pc)) return false;
  const module = moduleAt(check.modules, check.pc);
  return module !== undefined && BigInt(target) >= module.base && BigInt(target) - module.base < module.size;
}

/** The stack window a scan searches and how it judges a candidate ({@link scanForReturn}). */
export interface ScanWindow {
  /** The frame's call-site check. */
  check: CallSiteCheck;
  /** The first slot (the frame's stack pointer). */
  start: bigint;
  /** The window is `words + 1` words from `start` up. */
  words: number;
  /** Makes each word clean before it is judged (ARM64: strips a pointer authentication code). */
  clean?: ((value: bigint) => bigint) | undefined;
}

/**
 * The return address the policy takes in the `words + 1` stack words from `start` up (stopping
 * at the first unreadable word): the first one whose call site is consistent with the frame,
 * else the first one. A word whose call site cannot be checked (the module's code is not in the
 * snapshot) is judged by Breakpad's test alone.
 * When the window holds none, the machine's extended words are searched for a verified,
 * consistent one. Each word is first made `clean(word)` when given. Undefined when there is none.
 */
export function scanForReturn(machine: ScanMachine, cache: UnwindCache, memory: MemoryReader, window: ScanWindow): ScanFound | undefined {
  const { check, start, words, clean } = window;
  if (machine.width === 4 && clean === undefined && machine.classifyN !== undefined && start <= 0xffff_ffffn) return scanWords32(machine, machine.classifyN, cache, memory, window);
  const w = BigInt(machine.width);
  const mask = machine.width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const last = words + machine.extendedWords;
  let first: ScanFound | undefined;
  let slot = start & mask;
  for (let i = 0; i <= last; i++, slot = (slot + w) & mask) {
    if (i > words && first !== undefined) return first;
    work.units++;
    const word = machine.readWord(cache, memory, slot);
    if (word === undefined) break;
    const value = clean === undefined ? word : clean(word);
    let info = machine.classify(cache, check.modules, check.images, value);
    // A word whose call site cannot be checked must pass Breakpad's test: in a function of its
    // module where the module has symbols (and within the window).
    if (info === UNCHECKED && (i > words || breakpadClassify(check.modules, value) === NOT_RETURN)) info = NOT_RETURN;
    const verdict = verdictOf(check, info, first !== undefined);
    if (verdict === TAKE) return { slot, value };
    if (verdict === KEEP && i <= words) first ??= { slot, value };
  }
  return first;
}

/** {@link scanForReturn} of a 4-byte machine, its slots and words numbers. */
function scanWords32(machine: ScanMachine, classify: NonNullable<ScanMachine["classifyN"]>, cache: UnwindCache, memory: MemoryReader, window: ScanWindow): ScanFound | undefined {
  const { check, words } = window;
  const start = Number(window.start);
  const last = words + machine.extendedWords;
  let firstSlot = -1;
  let firstValue = 0;
  for (let i = 0; i <= last; i++) {
    if (i > words && firstSlot >= 0) break;
    const slot = (start + 4 * i) % 0x1_0000_0000;
    work.units++;
    const value = readU32n(memory, slot);
    if (value === undefined) break;
    let info = classify(cache, check.modules, check.images, value);
    if (info === UNCHECKED && (i > words || breakpadClassifyN(cache, check.modules, value) === NOT_RETURN)) info = NOT_RETURN;
    const verdict = verdictOf(check, info, firstSlot >= 0);
    if (verdict === TAKE) return { slot: BigInt(slot), value: BigInt(value) };
    if (verdict === KEEP && i <= words && firstSlot < 0) {
      firstSlot = slot;
      firstValue = value;
    }
  }
  return firstSlot < 0 ? undefined : { slot: BigInt(firstSlot), value: BigInt(firstValue) };
}

/** A scanned word that is no return address, or not the one taken. */
const PASS = 0;
/** The word the scan takes. */
const TAKE = 1;
/** A return address the scan takes when the window holds no better one (the first such). */
const KEEP = 2;

/**
 * What a scan does with a word classified `info` ({@link UNCHECKED} already settled): with the
 * function being unwound known, a call into it wins, failing that the first return address; else
 * the first return address whose call did not enter another function above the frame's PC.
 */
function verdictOf(check: CallSiteCheck, info: number, haveFirst: boolean): number {
  if (info === NOT_RETURN) return PASS;
  if (check.calleeStart >= 0) {
    const known = info >= 0;
    return (!known || (info >= check.calleeStart && info < check.calleeEnd)) && (!haveFirst || known) ? TAKE : KEEP;
  }
  return info < 0 || !enteredElsewhere(check, info) ? TAKE : KEEP;
}

/** A scan rule: the window and the call-site data of one frame, run by {@link execScan}. */
export interface ScanPlan {
  kind: "scan" | "leaf";
  machine: ScanMachine;
  /** Words beyond the first in the window. */
  words: number;
  check: CallSiteCheck;
  /** The frame's function has no record in a module whose other functions have (its RVA). */
  noRecordRva?: number;
  /**
   * A failure is only this rule not applying (the leaf simulation, tried before other rules),
   * so the walk reports a later rule's failure instead.
   */
  fallback: boolean;
  /** Whether to guess the caller's frame pointer ({@link ScanMachine.framePointer}); when false it carries over. */
  guessFramePointer: boolean;
}

/** How a scan rule names itself in a stop's detail. */
function labelOf(plan: ScanPlan): string {
  return plan.kind === "leaf" ? "leaf" : plan.noRecordRva === undefined ? "scan" : `scan (no record at rva ${hex(plan.noRecordRva)})`;
}

/** The scan rule for a site: Breakpad's window (larger for the context frame), with the site's call-site data. */
export function scanRuleFor(machine: ScanMachine, site: FrameSite, options: { noRecordRva?: number; callee?: { start: bigint; end: bigint }; guessFramePointer?: boolean } = {}): ScanPlan {
  const plan: ScanPlan = {
    kind: "scan",
    machine,
    words: site.index === 0 ? machine.contextWords : machine.words,
    check: callSiteCheck(site, options.callee),
    fallback: false,
    guessFramePointer: options.guessFramePointer ?? true,
  };
  if (options.noRecordRva !== undefined) plan.noRecordRva = options.noRecordRva;
  return plan;
}

/** Breakpad's leaf simulation for the context frame: a one-word window, every register carried over. */
export function leafRuleFor(machine: ScanMachine, site: FrameSite): ScanPlan {
  return { kind: "leaf", machine, words: 1, check: callSiteCheck(site), fallback: true, guessFramePointer: false };
}

/** The strategy that scans with a machine's parameters (trust `scan`). */
export function scanStrategy(machine: ScanMachine): UnwindStrategy<ScanPlan> {
  return { name: "scan", trust: "scan", scans: true, ruleFor: (site: FrameSite) => scanRuleFor(machine, site) };
}

/** Runs a scan rule (the only place a scan reads the stack). */
export function execScan(plan: ScanPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const m = plan.machine;
  const sp = registers[m.sp];
  if (sp === undefined) return { ok: false, stop: walkStop("unsupported", `${labelOf(plan)}: ${m.sp.toUpperCase()} is not known for this frame`), fallback: plan.fallback };
  const found = scanForReturn(m, ctx.cache, memory, { check: plan.check, start: sp, words: plan.words, clean: m.cleanWord?.(ctx) });
  if (found === undefined) {
    // Nothing plausible above the stack pointer: as far as a walk can tell, the stack ends here.
    return { ok: false, stop: walkStop("end-of-stack", `${labelOf(plan)}: no return address in the ${plan.words + 1} words from ${m.sp}=${hex(sp)}`), final: false, fallback: plan.fallback };
  }
  const callerSp = found.slot + BigInt(m.width);
  if (plan.kind === "leaf") {
    // Breakpad's leaf simulation: the caller is the callee with only PC and SP changed, and
    // keeps the callee's whole validity.
    const out: Registers = { ...registers, [m.pc]: found.value, [m.sp]: callerSp };
    const rule: LeafRule = { kind: "leaf", slot: found.slot, value: found.value };
    return { ok: true, registers: out, recovered: ctx.recovered, rule };
  }
  const out = m.inherit(registers);
  out[m.pc] = found.value;
  out[m.sp] = callerSp;
  const fp = plan.guessFramePointer ? m.framePointer(registers, ctx.recovered, found.slot, memory, ctx.cache) : undefined;
  const rule: ScanRule = { kind: "scan", registers: m.names, sp, slot: found.slot, value: found.value };
  if (plan.noRecordRva !== undefined) rule.noRecordRva = plan.noRecordRva;
  if (fp !== undefined) {
    out[m.fp] = fp.value;
    if (fp.recovered) rule.fp = fp.value;
  }
  return { ok: true, registers: out, recovered: fp?.recovered === true ? m.recovered.withFp : m.recovered.base, rule };
}
