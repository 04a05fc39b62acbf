/**
 * The split between working out an unwind rule and running it (framehop's design): a strategy
 * looks at a frame's site — its registers, the modules and their images — and returns a rule
 * value without reading the stack; running the rule (src/arch/exec.ts) is the only place stack
 * memory is read, and its result is a step (arch/step.ts): the caller's registers and how they
 * were found. Here are what a strategy looks at, the site, and the shape of a strategy.
 */
import type { MemoryReader } from "../memory/reader.js";
import type { Machine } from "../model/machine.js";
import type { Module, Registers } from "../model/snapshot.js";
import type { UnwindCache } from "./cache.js";
import type { Trust } from "./frame.js";

/**
 * What a strategy may look at when it works out a rule for one frame. A walk refills one site
 * object for every frame, so a rule must copy what it needs from the site when it is made
 * rather than keep the site.
 */
export interface FrameSite {
  machine: Machine;
  /** The frame's position in the walk; 0 is the context frame. */
  index: number;
  /**
   * The frame's PC is an interrupted instruction (a machine frame's, x64-unwind.md §1.8), not a
   * return address: it is unwound like the context frame's, and `lookupPc` is the PC itself.
   */
  interrupted: boolean;
  /** The frame's registers as recovered so far. */
  registers: Registers;
  /** The frame's PC: the interrupted instruction (the context frame's), or a return address. */
  pc: bigint;
  /**
   * The address to look unwind information up at: the PC for the context frame, and the
   * return address − 1 for frames whose PC is a return address (lookup-address.ts).
   */
  lookupPc: bigint;
  modules: readonly Module[];
  /**
   * The target's memory, for the images it maps (headers, unwind tables, code bytes around the
   * PC). Working out a rule may read images; only running it reads the stack.
   */
  images: MemoryReader;
  /**
   * Bytes of stack parameters of the frame unwound just before this one (this frame's callee),
   * as its unwind record gave them; 0 for the context frame or when no record said so.
   */
  calleeParams: number;
  /** What the walk keeps: tables and parsed records are found here before they are worked out. */
  cache: UnwindCache;
}

/** One way of finding a caller frame: the rules it makes are values of type `R`. */
export interface UnwindStrategy<R> {
  name: string;
  /** The trust stamped on frames this strategy finds. */
  trust: Trust;
  /** The strategy only scans: a walk that has scanned too many frames passes it over. */
  scans?: true;
  /** The one rule of a strategy that has the same rule for every frame (a frame chain): the walk takes it without asking. */
  fixed?: R;
  /**
   * The rule for unwinding `site` to its caller, or undefined when this strategy has none. Reads
   * no stack memory. For a caller frame (index > 0) the answer may depend only on `lookupPc`,
   * `calleeParams`, `modules` and `images` (whether the frame is the context frame, not which
   * caller it is): the walk caches rules on those, as framehop caches by PC.
   */
  ruleFor(site: FrameSite): R | undefined;
}
