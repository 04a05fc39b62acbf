/**
 * The high-level walk: a fixed strategy order per frame, every frame stamped with its trust,
 * every walk ending in a recorded stop reason, and the progress rules in one place
 * ({@link checkProgress}). Unlike the StackWalk64 facade, which is faithful to dbghelp and has no
 * guard, this loop always terminates.
 */
import { execRule } from "../arch/exec.js";
import { breakpadPacStripper, pacStripper, stripPac, type PacStrip } from "../arch/arm64/index.js";
import type { ArchStrategy, UnwindRule } from "../arch/rule.js";
import { InputError } from "../errors.js";
import { hex } from "../hex.js";
import { machineInfo, maskAddress, type Machine } from "../model/machine.js";
import type { Module, Registers, Snapshot, ThreadSnapshot } from "../model/snapshot.js";
import { WindowMemory } from "../memory/window-memory.js";
import type { MemoryReader } from "../memory/reader.js";
import { cacheSlot, ImageKeyed, UnwindCache } from "../unwind/cache.js";
import type { FuncTableEntry, Trust, WalkStop } from "../unwind/frame.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import { CONTEXT_RULE } from "../unwind/rule.js";
import type { Rule, StepRule } from "../arch/rule.js";
import type { ExecContext, UnwindStep } from "../arch/step.js";
import type { FrameSite } from "../unwind/step.js";
import { work } from "../unwind/work.js";
import type { Frame, Walk } from "./frame.js";
import { archWalker, strategiesFor, type ArchWalker, type WalkerName } from "./registry.js";

/** Options of {@link walkThread}. */
export interface WalkOptions {
  /** Which strategies to use; `auto` = every strategy of the machine in trust order. */
  walker?: WalkerName;
  /** Strategies of one's own, tried in this order, instead of a named walker's. */
  strategies?: readonly ArchStrategy[];
  /** The most frames a walk returns (default {@link DEFAULT_MAX_FRAMES}). */
  maxFrames?: number;
  /**
   * Called just before the walk looks for the caller of frame `index`: what the walk reads from
   * then until the next call is what finding that caller took (`explain` records it).
   */
  onUnwind?: (index: number) => void;
  /**
   * What the walk keeps (unwind tables, parsed records, rules by return address): a new one per
   * walk when absent. Pass one to walks of the same snapshot (its threads, walks repeated) so
   * that each finds the others' work done.
   */
  cache?: UnwindCache;
  /**
   * ARM64: the virtual-address size pointer authentication codes are stripped at (N = 64 − TxSZ,
   * arm64.md §1.12): bits N-63 of a return address become copies of bit 55. Default 48; 16 to
   * 52.
   */
  pacVaBits?: number;
  /**
   * Breakpad's own checks, implied by the `breakpad` walker (arm64.md Part 5): ARM64 return
   * addresses stripped by its `PtrauthStrip` (the module-range mask) instead of at
   * {@link pacVaBits}, and an unchanged stack pointer accepted only on the first unwind
   * (`TerminateWalk`), not after a frame whose PC was interrupted.
   */
  breakpad?: boolean;
  /**
   * The frames the walks given these options may return together (`walkSnapshot`,
   * `walkThreads`, `breakpadReport`: every thread of a snapshot): a walk that would go past what
   * is left stops with `frame-budget`. Default {@link DEFAULT_FRAME_BUDGET}; `Infinity` for none.
   * A single {@link walkThread} call counts against it only when given a {@link FrameBudget}.
   */
  frameBudget?: number | FrameBudget;
  /**
   * The work the walks given these options may do together, in the units of unwind/work.ts
   * (postfix tokens evaluated, STACK CFI rows applied, stack words scanned, instructions
   * decoded): a walk that has spent what is left stops with `work-budget` before its next step.
   * Default {@link DEFAULT_WORK_BUDGET}; `Infinity` for none. Shared like {@link frameBudget}.
   */
  workBudget?: number | WorkBudget;
}

/** Work the walks sharing it may still do (see {@link WalkOptions.workBudget}). */
export interface WorkBudget {
  readonly total: number;
  used: number;
}

/**
 * The default work budget of a snapshot's walks together: 2^26 = 67,108,864 units. An ordinary
 * dump's walks take a few thousand; the deepest one the frame budget allows, 262,144 frames of
 * STACK CFI rules of ordinary length, about 10 million; a rule of thousands of tokens or a
 * hostile dump reaches it in seconds (`npm run bench`) and stops with `work-budget`.
 */
export const DEFAULT_WORK_BUDGET = 1 << 26;

/** The shared work budget of `options`, made once per set of walks. */
export function workBudgetOf(options: WalkOptions): WorkBudget {
  const b = options.workBudget ?? DEFAULT_WORK_BUDGET;
  if (typeof b !== "number") return b;
  if (b !== Infinity && (!Number.isSafeInteger(b) || b < 1)) throw new InputError("bad-value", `the work budget must be a whole number ≥ 1, not ${b}`);
  return { total: b, used: 0 };
}

/** Frames the walks sharing it may still return. */
export interface FrameBudget {
  readonly total: number;
  used: number;
}

/**
 * The default frame budget of a snapshot's walks together: 2^18 = 262,144 frames, twice a 1 MiB
 * x86 stack of the smallest frames (131,072), so every thread of an ordinary dump is walked
 * whole, while a dump of under 1 MB whose hundred threads all list one 120,000-deep stack is
 * walked and printed in seconds and under 300 MB (`npm run bench`). A deeper walk needs a larger
 * budget (and, past {@link DEFAULT_MAX_FRAMES}, a larger cap). A thread walked after the budget
 * is spent still has its context frame.
 */
export const DEFAULT_FRAME_BUDGET = 1 << 18;

/** The shared budget of `options`, made once per set of walks. */
export function frameBudgetOf(options: WalkOptions): FrameBudget {
  const b = options.frameBudget ?? DEFAULT_FRAME_BUDGET;
  if (typeof b !== "number") return b;
  if (b !== Infinity && (!Number.isSafeInteger(b) || b < 1)) throw new InputError("bad-value", `the frame budget must be a whole number ≥ 1, not ${b}`);
  return { total: b, used: 0 };
}

/**
 * The default frame cap: 2^20 frames. A 100,000-deep recursion with its context frame and
 * callers fits, as does a 1 MiB stack of the smallest x86 frames (8 bytes: 131,072); each frame
 * takes about 300-350 bytes of rows, so a walk stopped at the cap holds about 350 MB.
 */
export const DEFAULT_MAX_FRAMES = 1 << 20;

/** A PC below this is not code: the walk ends (no image is ever mapped at page 0). */
export const MIN_PC = 0x1000n;

/**
 * Frames found by scanning after which a walk scans no more (Breakpad's `max_frames_scanned`,
 * minidump.md §5.2): a runaway scan through a huge stack stops, the other rules go on.
 */
export const MAX_SCANNED_FRAMES = 1 << 14;

/** Whether a walk takes Breakpad's checks: asked for, or Breakpad's own walker. */
function breakpadChecks(options: WalkOptions): boolean {
  return options.breakpad === true || (options.strategies === undefined && options.walker === "breakpad");
}

/** Masks every register to the machine's width (a new object only when a value is too wide). */
function maskRegisters(machine: Machine, registers: Registers): Registers {
  const max = machineInfo(machine).mask;
  let out: Registers | undefined;
  for (const k in registers) {
    const v = registers[k]!;
    if (v < 0n || v > max) {
      out ??= { ...registers };
      out[k] = maskAddress(machine, v);
    }
  }
  return out ?? registers;
}

/** What every frame row of one walk shares. */
interface RowContext {
  arch: ArchWalker;
  memory: MemoryReader;
}

/**
 * A frame row. `params` (four memory reads) are read when first asked for, so a deep walk pays
 * for them only where they are looked at; the fields a walk does not read per frame are getters,
 * so that a row stays small.
 */
class FrameRow implements Frame {
  addrReturn = 0n;
  funcTableEntry?: FuncTableEntry;
  readonly addrPC: bigint;
  readonly addrStack: bigint;
  private paramValues: bigint[] | undefined;

  /**
   * `unwindRegisters` is what the next unwind starts from: the recovered registers plus
   * callee-saved ones carried over; `recovered` names the former (all of them when undefined).
   */
  constructor(
    private readonly context: RowContext,
    readonly index: number,
    readonly unwindRegisters: Registers,
    pc: bigint,
    sp: bigint,
    readonly trust: Trust,
    private stepRule: StepRule,
    private readonly recovered?: readonly string[],
  ) {
    this.addrPC = pc;
    this.addrStack = sp;
  }

  /** The rule that found the frame; one its step left to the frame to work out is worked out on first read. */
  get rule(): Rule {
    const r = this.stepRule;
    if (r.kind !== "derived") return r;
    const rule = r.derive(this.unwindRegisters);
    this.stepRule = rule;
    return rule;
  }

  get addrFrame(): bigint {
    return this.context.arch.fpOf(this.unwindRegisters) ?? 0n;
  }

  get addrBStore(): bigint {
    return this.context.arch.bstoreOf(this.unwindRegisters) ?? 0n;
  }

  /** Walks are flat 32- or 64-bit: no frame is a far (segmented) or virtual (inlined) one. */
  get far(): boolean {
    return false;
  }

  get virtual(): boolean {
    return false;
  }

  /**
   * The registers the rule recovered (see {@link Frame.registers}): the unwind registers when the
   * rule recovered all of them, else a view made on each read and not kept, so that the rows of
   * a deep walk stay small once rendered.
   */
  get registers(): Registers {
    const recovered = this.recovered;
    const all = this.unwindRegisters;
    if (recovered === undefined) return all;
    let covered = true;
    for (const name in all) {
      if (!recovered.includes(name)) {
        covered = false;
        break;
      }
    }
    if (covered) return all;
    const view: Registers = {};
    for (let i = 0; i < recovered.length; i++) {
      const v = all[recovered[i]!];
      if (v !== undefined) view[recovered[i]!] = v;
    }
    return view;
  }

  get params(): bigint[] {
    this.paramValues ??= this.context.arch.params(this.registers, this.context.memory);
    return this.paramValues;
  }

  /** A plain object with every field, for serialisation and comparison. */
  toJSON(): Frame {
    const f: Frame = {
      index: this.index, addrPC: this.addrPC, addrReturn: this.addrReturn, addrFrame: this.addrFrame, addrStack: this.addrStack,
      addrBStore: this.addrBStore, params: this.params, far: this.far, virtual: this.virtual, trust: this.trust, rule: this.rule, registers: this.registers,
    };
    if (this.funcTableEntry !== undefined) f.funcTableEntry = this.funcTableEntry;
    return f;
  }
}

/** A register value as a number, −1 when absent or not exact as one. */
function exactNumber(v: bigint | undefined): number {
  return v !== undefined && v <= MAX_EXACT ? Number(v) : -1;
}

/** Rules of every strategy for one lookup PC and callee parameter size; `undefined` = not asked yet, null = none. */
interface CachedRules {
  calleeParams: number;
  rules: (UnwindRule | null | undefined)[];
  /** Rules for other callee parameter sizes at the same PC. */
  others?: Map<number, CachedRules>;
}

/**
 * Slots of a rule cache's direct-mapped front (a power of two): a few at first, since most walks
 * (a dump of a batch) meet a few dozen return addresses, and the full number once the cache
 * holds more than twice as many entries as its front has slots.
 */
const FRONT_SLOTS = 4096;
const FIRST_FRONT_SLOTS = 64;

/**
 * Rules for caller frames by their PC, a return address (a number when it is exact as one), for
 * one strategy list: a caller frame's rules depend on its lookup address, which its PC decides.
 * A direct-mapped front, keyed by the low bits of the PC like framehop's rule cache, answers
 * repeated return addresses (recursion, loops, the next walk of the same stack) without hashing;
 * the maps behind it keep every entry, so a collision only costs a map lookup.
 */
interface RuleCache {
  frontKeys: Float64Array;
  front: (CachedRules | undefined)[];
  /** The front's slots − 1. */
  mask: number;
  byNumber: Map<number, CachedRules>;
  byBigint: Map<bigint, CachedRules>;
}

/** One rule cache per image memory, module list and strategy list: rules read images, which do not change between walks. */
const RULE_CACHES = cacheSlot("rules by return address", () => new ImageKeyed<readonly Module[], WeakMap<readonly ArchStrategy[], RuleCache>>());

function ruleCacheFor(cache: UnwindCache, snapshot: Snapshot, strategies: readonly ArchStrategy[]): RuleCache {
  const byStrategies = cache.get(RULE_CACHES).get(snapshot.memory, snapshot.modules, () => new WeakMap());
  let rules = byStrategies.get(strategies);
  if (rules === undefined) {
    rules = { frontKeys: new Float64Array(FIRST_FRONT_SLOTS).fill(-1), front: new Array<CachedRules | undefined>(FIRST_FRONT_SLOTS).fill(undefined), mask: FIRST_FRONT_SLOTS - 1, byNumber: new Map(), byBigint: new Map() };
    byStrategies.set(strategies, rules);
  }
  return rules;
}

/** The cached rules for a caller frame's site (created empty on first use). */
function cachedRules(cache: RuleCache, site: FrameSite, pc: bigint, pcNumber: number): CachedRules {
  let entry: CachedRules | undefined;
  if (pcNumber >= 0 || pc <= MAX_EXACT) {
    const key = pcNumber >= 0 ? pcNumber : Number(pc);
    const slot = (key ^ (key >>> 12)) & cache.mask;
    if (cache.frontKeys[slot] === key) entry = cache.front[slot]!;
    else {
      entry = cache.byNumber.get(key);
      if (entry === undefined) {
        entry = { calleeParams: site.calleeParams, rules: [] };
        cache.byNumber.set(key, entry);
        if (cache.mask < FRONT_SLOTS - 1 && cache.byNumber.size > 2 * (cache.mask + 1)) {
          // Grown past its front: a full one, filled again as addresses come back.
          cache.frontKeys = new Float64Array(FRONT_SLOTS).fill(-1);
          cache.front = new Array<CachedRules | undefined>(FRONT_SLOTS).fill(undefined);
          cache.mask = FRONT_SLOTS - 1;
        }
      }
      const at = (key ^ (key >>> 12)) & cache.mask;
      cache.frontKeys[at] = key;
      cache.front[at] = entry;
    }
  } else {
    entry = cache.byBigint.get(pc);
    if (entry === undefined) {
      entry = { calleeParams: site.calleeParams, rules: [] };
      cache.byBigint.set(pc, entry);
    }
  }
  if (entry.calleeParams === site.calleeParams) return entry;
  entry.others ??= new Map();
  let other = entry.others.get(site.calleeParams);
  if (other === undefined) {
    other = { calleeParams: site.calleeParams, rules: [] };
    entry.others.set(site.calleeParams, other);
  }
  return other;
}

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * The progress rules, all of them: a caller PC of 0 is the end of the stack; a PC below
 * {@link MIN_PC} is not code; the stack pointer may stay put on the first unwind (a frameless
 * function interrupted before it pushed anything) but must strictly increase after that, which
 * also ends cycles. On a machine with a backing store (IA-64) a frame is the pair (SP, BSP): a
 * function with no memory frame leaves SP as it found it while BSP moves down, so an unchanged SP
 * is progress when BSP strictly decreases. On a machine whose leaf functions return through a link
 * register (ARM64), an unchanged SP is progress after any frame whose PC was interrupted, when
 * the PC changed (not in Breakpad's order: {@link WalkOptions.breakpad}). Returns the stop, or undefined when the caller frame is acceptable.
 */
export function checkProgress(arch: ArchWalker, callee: Frame, caller: Registers, calleeInterrupted = false): WalkStop | undefined {
  return progressStop(arch, callee, caller, arch.pcOf(caller), arch.spOf(caller), calleeInterrupted);
}

/** {@link checkProgress} for a caller whose PC and SP are already read. */
function progressStop(arch: ArchWalker, callee: Frame, caller: Registers, pc: bigint | undefined, sp: bigint | undefined, calleeInterrupted: boolean): WalkStop | undefined {
  if (pc === undefined || sp === undefined) {
    return { reason: "unsupported", detail: `the unwind rule did not recover ${pc === undefined ? arch.pc : arch.sp}` };
  }
  if (pc === 0n) return { reason: "end-of-stack", detail: "the return address is 0: this is the outermost frame" };
  if (pc < MIN_PC) return { reason: "bad-pc", address: pc, detail: `the return address ${hex(pc)} is below ${hex(MIN_PC)}, which is never code` };
  let grew = callee.index === 0 || (calleeInterrupted && arch.leafKeepsSp === true && pc !== callee.addrPC) ? sp >= callee.addrStack : sp > callee.addrStack;
  if (!grew && sp === callee.addrStack && arch.bstore !== null) {
    const bsp = arch.bstoreOf(caller);
    grew = bsp !== undefined && bsp < callee.addrBStore;
  }
  if (!grew) {
    return {
      reason: "no-progress",
      address: sp,
      detail: `the caller's stack pointer ${hex(sp)} is not above frame ${callee.index}'s ${hex(callee.addrStack)} (a loop or a corrupt chain)`,
    };
  }
  return undefined;
}

/** Where {@link unwindOnce} leaves its answer: one object per walk, refilled for every frame. */
interface Outcome {
  step: UnwindStep | undefined;
  trust: Trust;
  stop: WalkStop | undefined;
}

/**
 * Tries each strategy in order; the first that runs successfully wins (its step and trust go
 * into `outcome`), else the first failure is reported there. A failure that ends the walk (the
 * end of the stack, a kernel frame) stops the search at once.
 */
function unwindOnce(strategies: readonly ArchStrategy[], site: FrameSite, ctx: ExecContext, memory: MemoryReader, cache: RuleCache, outcome: Outcome, scanAllowed: boolean): void {
  outcome.step = undefined;
  outcome.stop = undefined;
  let firstFailure: WalkStop | undefined;
  let fallbackFailure: WalkStop | undefined;
  // A caller frame's rules usually come from the cache, keyed by the PC as a number; the site's
  // lookup address (a bigint) is worked out only when a strategy is asked. Context-like frames
  // (the context frame, an interrupted PC) are not cached.
  const pc = site.pc;
  const contextLike = site.index === 0 || site.interrupted;
  let lookupSet = contextLike || pc > MAX_EXACT;
  if (lookupSet) site.lookupPc = lookupAddress(pc, !contextLike, site.machine);
  let cached: CachedRules | undefined;
  for (let i = 0; i < strategies.length; i++) {
    const strategy = strategies[i]!;
    if (!scanAllowed && strategy.scans === true) continue;
    let rule: UnwindRule | undefined = strategy.fixed;
    // A strategy with one rule for every frame needs neither its site nor the cache.
    if (rule !== undefined) {
      // (taken as it is)
    } else if (contextLike) rule = strategy.ruleFor(site);
    else {
      cached ??= cachedRules(cache, site, pc, ctx.pc);
      let r = cached.rules[i];
      if (r === undefined) {
        if (!lookupSet) {
          site.lookupPc = lookupAddress(pc, true, site.machine);
          lookupSet = true;
        }
        r = strategy.ruleFor(site) ?? null;
        cached.rules[i] = r;
      }
      rule = r ?? undefined;
    }
    if (rule === undefined) continue;
    const result = execRule(rule, site.registers, memory, ctx);
    if (result.ok) {
      outcome.step = result;
      outcome.trust = result.trust ?? strategy.trust;
      return;
    }
    // A strategy that recognises the outermost frame (EBP 0, a return address of 0) has the last
    // word: less trusted strategies must not scan past the end of the stack.
    if (result.final === true || (result.stop.reason === "end-of-stack" && result.final !== false)) {
      outcome.stop = result.stop;
      return;
    }
    if (result.fallback === true) fallbackFailure ??= result.stop;
    else firstFailure ??= result.stop;
  }
  outcome.stop = firstFailure ?? fallbackFailure ?? { reason: "unsupported", detail: "no strategy has a rule for this frame" };
}

/**
 * Walks one thread of a snapshot. Given a {@link FrameBudget} (`options.frameBudget`), the walk
 * stops where the budget runs out and counts its frames against it.
 */
export function walkThread(snapshot: Snapshot, thread: ThreadSnapshot, options: WalkOptions = {}): Walk {
  const budget = typeof options.frameBudget === "object" ? options.frameBudget : undefined;
  const workBudget = typeof options.workBudget === "object" ? options.workBudget : undefined;
  const start = work.units;
  const walk = walkWithin(snapshot, thread, options, budget, workBudget === undefined ? Infinity : start + workBudget.total - workBudget.used);
  if (budget !== undefined) budget.used += walk.frames.length;
  if (workBudget !== undefined) workBudget.used += work.units - start;
  return walk;
}

/** `workEnd`: the value of the work counter at which the walk stops (Infinity for none). */
function walkWithin(snapshot: Snapshot, thread: ThreadSnapshot, options: WalkOptions, budget: FrameBudget | undefined, workEnd: number): Walk {
  const arch = archWalker(snapshot.machine);
  const strategies = options.strategies ?? strategiesFor(snapshot.machine, options.walker ?? "auto", snapshot.os);
  const maxFrames = options.maxFrames ?? DEFAULT_MAX_FRAMES;
  if (!Number.isSafeInteger(maxFrames) || maxFrames < 1) {
    throw new InputError("bad-value", `max-frames must be a whole number ≥ 1, not ${maxFrames}`);
  }
  const context = maskRegisters(snapshot.machine, thread.registers);
  // The stack is read through the thread's own stack region when the snapshot names it (a dump's
  // thread list, minidump.md §4); code and unwind tables through the whole snapshot (site.images).
  const memory = thread.stackRanges === undefined ? snapshot.memory : new WindowMemory(snapshot.memory, thread.stackRanges);
  const rows: RowContext = { arch, memory };
  const frames: FrameRow[] = [new FrameRow(rows, 0, context, arch.pcOf(context) ?? 0n, arch.spOf(context) ?? 0n, "context", CONTEXT_RULE)];
  if (strategies.length === 0) {
    return { frames, stop: { reason: "unsupported", detail: arch.unsupportedDetail ?? "no strategy applies to this machine" } };
  }
  const cache = options.cache ?? new UnwindCache();
  let calleeParams = 0;
  const rules = ruleCacheFor(cache, snapshot, strategies);
  const outcome: Outcome = { step: undefined, trust: "context", stop: undefined };
  // One site object for the whole walk (see FrameSite): refilled for every frame.
  const site: FrameSite = { machine: snapshot.machine, index: 0, interrupted: false, registers: {}, pc: 0n, lookupPc: 0n, modules: snapshot.modules, images: snapshot.memory, calleeParams: 0, cache };
  // What the walk knows of the frame being unwound besides its registers: its PC, SP and BSP as
  // numbers (from the step that found it), and the rule that found it. Kept here, not in the
  // frame rows, which stay small.
  const ctx: ExecContext = { pc: exactNumber(arch.pcOf(context)), sp: exactNumber(arch.spOf(context)), bstore: exactNumber(arch.bstoreOf(context)), recovered: undefined, foundBy: undefined, stripPac: pacStripFor(snapshot, options, cache), scanAllowed: true, cache, step: undefined };
  // Breakpad's TerminateWalk lets the stack pointer stay put on the first unwind only.
  const keepSpAfterInterrupt = !breakpadChecks(options);
  let interrupted = false;
  let scanned = 0;
  // Breakpad's walker: the parameter size it passes on, once a frame has one (ArchWalker.breakpadParams).
  const breakpadParams = breakpadChecks(options) ? arch.breakpadParams : undefined;
  let windowsParams: number | undefined;
  for (;;) {
    const callee = frames[frames.length - 1]!;
    site.index = callee.index;
    site.interrupted = interrupted;
    site.registers = callee.unwindRegisters;
    site.pc = callee.addrPC;
    site.calleeParams = calleeParams;
    if (work.units >= workEnd) {
      return { frames, stop: { reason: "work-budget", detail: `the walks of this snapshot reached their shared work budget of ${(options.workBudget as WorkBudget).total} units (rules evaluated, stack words scanned, instructions decoded)` } };
    }
    options.onUnwind?.(callee.index);
    ctx.scanAllowed = scanned < MAX_SCANNED_FRAMES;
    unwindOnce(strategies, site, ctx, memory, rules, outcome, ctx.scanAllowed);
    const step = outcome.step;
    if (step === undefined) return { frames, stop: outcome.stop! };
    if (step.entry !== undefined) callee.funcTableEntry = step.entry;
    if (breakpadParams !== undefined) {
      if (windowsParams === undefined) {
        site.lookupPc = lookupAddress(site.pc, !(site.index === 0 || site.interrupted), site.machine);
        windowsParams = breakpadParams(site);
      }
      calleeParams = windowsParams ?? 0;
    } else calleeParams = step.paramsSize ?? 0;
    const callerRegisters = step.registers;
    const callerPc = arch.pcOf(callerRegisters);
    const callerSp = arch.spOf(callerRegisters);
    callee.addrReturn = callerPc ?? 0n;
    const bad = progressStop(arch, callee, callerRegisters, callerPc, callerSp, interrupted && keepSpAfterInterrupt);
    if (bad !== undefined) return { frames, stop: bad };
    if (frames.length >= maxFrames) {
      return { frames, stop: { reason: "max-frames", detail: `the walk reached the frame cap of ${maxFrames}` } };
    }
    if (budget !== undefined && budget.used + frames.length >= budget.total) {
      return { frames, stop: { reason: "frame-budget", detail: `the walks of this snapshot reached their shared budget of ${budget.total} frames` } };
    }
    if (outcome.trust === "scan") scanned++;
    const rule = step.rule;
    frames.push(new FrameRow(rows, frames.length, callerRegisters, callerPc!, callerSp!, outcome.trust, rule, step.recovered));
    interrupted = step.interrupted === true;
    ctx.pc = step.pcNumber ?? -1;
    ctx.sp = step.spNumber ?? -1;
    ctx.bstore = step.bstoreNumber ?? -1;
    ctx.recovered = step.recovered;
    ctx.foundBy = rule.kind === "derived" ? rule.of : rule.kind;
    ctx.calleeFp = arch.fpOf(callee.unwindRegisters);
  }
}

/** How the walk strips ARM64 pointer authentication codes ({@link WalkOptions.pacVaBits}, {@link WalkOptions.breakpad}); undefined on other machines. */
function pacStripFor(snapshot: Snapshot, options: WalkOptions, cache: UnwindCache): PacStrip | undefined {
  let strip = stripPac;
  if (options.pacVaBits !== undefined) {
    try {
      strip = pacStripper(options.pacVaBits);
    } catch (e) {
      throw new InputError("bad-value", (e as Error).message);
    }
  }
  if (!machineInfo(snapshot.machine).pointerAuthentication) return undefined;
  return breakpadChecks(options) ? breakpadPacStripper(cache, snapshot.modules) : strip;
}

/** A walked thread together with the thread it came from. */
export interface ThreadWalk {
  thread: ThreadSnapshot;
  walk: Walk;
}

/**
 * The chosen threads (default: all) of a snapshot, the crashed thread first; with `listed`, in the
 * snapshot's order (a dump's thread list, the order a debugger numbers them).
 */
export function chosenThreads(snapshot: Snapshot, choice: number | "all" = "all", listed = false): ThreadSnapshot[] {
  let threads = snapshot.threads;
  if (choice !== "all") {
    threads = threads.filter((t) => t.id === choice);
    if (threads.length === 0) {
      throw new InputError("bad-value", `no thread with id ${choice} (threads: ${snapshot.threads.map((t) => t.id).join(", ")})`);
    }
  }
  return listed ? [...threads] : [...threads.filter((t) => t.crashed), ...threads.filter((t) => !t.crashed)];
}

/**
 * Walks the chosen threads (default: all), the crashed thread first, sharing one cache and one
 * frame budget ({@link WalkOptions.frameBudget}).
 */
export function walkSnapshot(snapshot: Snapshot, options: WalkOptions & { thread?: number | "all" } = {}): ThreadWalk[] {
  return [...walkThreads(snapshot, options)];
}

/**
 * The walks of a snapshot's chosen threads, made one at a time as they are read and not kept:
 * what a renderer that writes as it goes takes, so that only the thread being written is held.
 * `threads` lists them (the crashed one first) before any is walked. The walks share one cache
 * and one frame budget: read it once, for a second reading walks the threads again against what
 * the first one spent.
 */
export interface ThreadWalks extends Iterable<ThreadWalk> {
  readonly threads: readonly ThreadSnapshot[];
}

/**
 * {@link ThreadWalks} of a snapshot (see {@link walkSnapshot} for the options); `listed` walks the
 * threads in the snapshot's order instead of the crashed one first.
 */
export function walkThreads(snapshot: Snapshot, options: WalkOptions & { thread?: number | "all"; listed?: boolean } = {}): ThreadWalks {
  const threads = chosenThreads(snapshot, options.thread ?? "all", options.listed === true);
  const shared: WalkOptions = { ...options, cache: options.cache ?? new UnwindCache(), frameBudget: frameBudgetOf(options), workBudget: workBudgetOf(options) };
  return {
    threads,
    *[Symbol.iterator]() {
      for (const thread of threads) yield { thread, walk: walkThread(snapshot, thread, shared) };
    },
  };
}

/** The threads of walks given as a list or as {@link ThreadWalks}. */
export function threadsOf(walks: readonly ThreadWalk[] | ThreadWalks): readonly ThreadSnapshot[] {
  return Array.isArray(walks) ? (walks as readonly ThreadWalk[]).map((w) => w.thread) : (walks as ThreadWalks).threads;
}
