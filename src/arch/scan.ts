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
import type { MemoryReader } from "../memory/reader.js";
import { moduleAt, type Module, type Registers } from "../model/snapshot.js";
import type { FrameNumbers, FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../walk/strategy.js";

/** A word that is not a return address ({@link ScanMachine.classify}). */
export const NOT_RETURN = -1;
/** A return address after an indirect call (its target is not known). */
export const UNKNOWN_TARGET = -2;
/** A word in a module whose code the snapshot lacks: lying in the module is all that was checked. */
export const UNCHECKED = -3;

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
  /**
   * Whether a frame pointer of 0 in a frame the frame-pointer chain found (the chain's
   * conventional end) lets a scan take only return addresses verified by their call site.
   */
  verifyAfterChainEnd: boolean;
  /** The stack word at `address`, or undefined when it cannot be read. */
  readWord(memory: MemoryReader, address: bigint): bigint | undefined;
  /** {@link NOT_RETURN}, {@link UNKNOWN_TARGET}, {@link UNCHECKED}, or the target of the direct call before `value` (≥ 0). */
  classify(modules: readonly Module[], images: MemoryReader, value: bigint): number;
  /** The caller's starting registers: the callee-saved registers of the callee, carried over. */
  inherit(registers: Registers): Registers;
  /**
   * Breakpad's guess of the caller's frame pointer once the return address was found at `slot`:
   * the value and whether it counts as recovered, or undefined to leave the callee's value as it
   * is (carried over, not recovered). `recovered` is the callee frame's validity (undefined: all).
   */
  framePointer(callee: Registers, recovered: readonly string[] | undefined, slot: bigint, memory: MemoryReader): { value: bigint; recovered: boolean } | undefined;
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

/**
 * The return address the policy takes in the `words + 1` stack words from `start` up (stopping
 * at the first unreadable word): the first one whose call site is consistent with the frame,
 * else the first one; with `verifiedOnly`, only return addresses whose call site was checked.
 * When the window holds none, the machine's extended words are searched for a verified,
 * consistent one. Undefined when there is none.
 */
export function scanForReturn(machine: ScanMachine, memory: MemoryReader, check: CallSiteCheck, start: bigint, words: number, verifiedOnly = false): ScanFound | undefined {
  const w = BigInt(machine.width);
  const mask = machine.width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const ranged = check.calleeStart >= 0;
  const last = words + machine.extendedWords;
  let first: ScanFound | undefined;
  for (let i = 0; i <= last; i++) {
    if (i > words && first !== undefined) return first;
    const slot = (start + BigInt(i) * w) & mask;
    const value = machine.readWord(memory, slot);
    if (value === undefined) break;
    const info = machine.classify(check.modules, check.images, value);
    if (info === NOT_RETURN || ((verifiedOnly || i > words) && info === UNCHECKED)) continue;
    if (ranged) {
      // A call into the function being unwound wins; failing that, the first return address.
      const known = info >= 0;
      if ((!known || (info >= check.calleeStart && info < check.calleeEnd)) && (first === undefined || known)) return { slot, value };
    } else if (info < 0 || !enteredElsewhere(check, info)) return { slot, value };
    if (i <= words) first ??= { slot, value };
  }
  return first;
}

const hex = (v: bigint): string => "0x" + v.toString(16);

/** The registers a scan recovers besides the frame pointer. */
const RECOVERED = new Map<ScanMachine, { base: readonly string[]; withFp: readonly string[] }>();

function recoveredOf(machine: ScanMachine): { base: readonly string[]; withFp: readonly string[] } {
  let r = RECOVERED.get(machine);
  if (r === undefined) {
    r = { base: [machine.pc, machine.sp], withFp: [machine.pc, machine.sp, machine.fp] };
    RECOVERED.set(machine, r);
  }
  return r;
}

/** A scan rule: a value, run by {@link execScan}. */
export class ScanRule implements UnwindRule {
  constructor(
    readonly kind: "scan" | "leaf",
    readonly machine: ScanMachine,
    /** Words beyond the first in the window. */
    readonly words: number,
    readonly check: CallSiteCheck,
    /** How the rule names itself in its text ("scan", "scan (no record at rva 0x…)", "leaf"). */
    readonly label: string,
    /**
     * A failure is only this rule not applying (the leaf simulation, tried before other rules),
     * so the walk reports a later rule's failure instead.
     */
    readonly fallback = false,
    /** Whether to guess the caller's frame pointer ({@link ScanMachine.framePointer}); when false it carries over. */
    readonly guessFramePointer = true,
  ) {}

  describe(): string {
    return this.kind === "leaf"
      ? `${this.label}: a return address at ${this.machine.sp} or one word above, every register carried over`
      : `${this.label}: the first return address in ${this.words + 1} words from ${this.machine.sp}`;
  }

  exec(registers: Registers, memory: MemoryReader, numbers?: FrameNumbers): UnwindResult {
    return execScan(this, registers, memory, numbers);
  }
}

/** The scan rule for a site: Breakpad's window (larger for the context frame), with the site's call-site data. */
export function scanRuleFor(machine: ScanMachine, site: FrameSite, label = "scan", callee?: { start: bigint; end: bigint }, guessFramePointer = true): ScanRule {
  return new ScanRule("scan", machine, site.index === 0 ? machine.contextWords : machine.words, callSiteCheck(site, callee), label, false, guessFramePointer);
}

/** The strategy that scans with a machine's parameters (trust `scan`). */
export function scanStrategy(machine: ScanMachine): UnwindStrategy {
  return { name: "scan", trust: "scan", kind: "scan", ruleFor: (site: FrameSite) => scanRuleFor(machine, site) };
}

/** Runs a scan rule (the only place a scan reads the stack). */
export function execScan(rule: ScanRule, registers: Registers, memory: MemoryReader, numbers?: FrameNumbers): UnwindResult {
  const m = rule.machine;
  const sp = registers[m.sp];
  if (sp === undefined) return { ok: false, stop: { reason: "unsupported", detail: `${rule.label}: ${m.sp.toUpperCase()} is not known for this frame` }, fallback: rule.fallback };
  // After the frame chain's conventional end (a frame pointer of 0 that the chain itself
  // recovered), only a return address its call site confirms shows that the stack goes on.
  const chainEnded = m.verifyAfterChainEnd && numbers?.foundBy === "frame-pointer" && registers[m.fp] === 0n;
  const found = scanForReturn(m, memory, rule.check, sp, rule.words, chainEnded);
  if (found === undefined) {
    // Nothing plausible above the stack pointer: as far as a walk can tell, the stack ends here.
    return { ok: false, stop: { reason: "end-of-stack", detail: `${rule.label}: no return address in the ${rule.words + 1} words from ${m.sp}=${hex(sp)}` }, final: false, fallback: rule.fallback };
  }
  const callerSp = found.slot + BigInt(m.width);
  if (rule.kind === "leaf") {
    // Breakpad's leaf simulation: the caller is the callee with only PC and SP changed, and
    // keeps the callee's whole validity.
    const out: Registers = { ...registers, [m.pc]: found.value, [m.sp]: callerSp };
    return { ok: true, registers: out, recovered: numbers?.recovered, rule: `${rule.label}: ra@[${hex(found.slot)}]=${hex(found.value)}`, kind: "leaf" };
  }
  const out = m.inherit(registers);
  out[m.pc] = found.value;
  out[m.sp] = callerSp;
  const fp = rule.guessFramePointer ? m.framePointer(registers, numbers?.recovered, found.slot, memory) : undefined;
  let note = "";
  if (fp !== undefined) {
    out[m.fp] = fp.value;
    if (fp.recovered) note = ` ${m.fp}=${hex(fp.value)}`;
  }
  const r = recoveredOf(m);
  return {
    ok: true,
    registers: out,
    recovered: fp?.recovered === true ? r.withFp : r.base,
    rule: `${rule.label} from ${m.sp}=${hex(sp)}: ra@[${hex(found.slot)}]=${hex(found.value)}${note}`,
  };
}
