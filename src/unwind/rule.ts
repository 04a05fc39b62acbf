/**
 * How a frame was found, as a value (framehop's rules, DESIGN.md "Core types"): every frame of a
 * walk carries one, tagged by `kind`, with the unwind data it followed and the values it read.
 * Here are the kinds every machine shares (the context, a frame chain, STACK CFI, a scan, a
 * leaf, a strategy of one's own); each machine's own kinds are beside it (arch/<machine>/rule.ts),
 * and arch/rule.ts puts them all in the one union, `Rule`. Renderers read a rule's fields; its
 * text is derived in one place (arch/rule-text.ts; the shared kinds' words: rule-text.ts).
 * Nothing here reads memory: the values are plain data, made by the rules in src/arch when they
 * run.
 */

/** The context frame: the registers the thread stopped with. */
export interface ContextRule {
  kind: "context";
}

/** The registers a frame-pointer chain uses, and the slot width. */
export interface ChainRegisters {
  pc: string;
  sp: string;
  fp: string;
  width: 4 | 8;
}

/**
 * The frame-pointer chain (stackwalk64.md §6.4): pc' = [fp + w], sp' = fp + 2w, fp' = [fp]. `fp`
 * is the frame pointer followed, `pc` and `savedFp` the words read above it.
 */
export interface FramePointerRule {
  kind: "frame-pointer";
  chain: ChainRegisters;
  fp: bigint;
  pc: bigint;
  savedFp: bigint;
}

/** Breakpad STACK CFI (minidump.md §7): the rules in effect at the address, `.cfa` and `.ra` first. */
export interface CfiRule {
  kind: "cfi";
  /** The RVA of the INIT range. */
  rva: number;
  /** Each rule's name and expression text. */
  rules: readonly (readonly [string, string])[];
}

/** Stack scanning (minidump.md §5.3): the first return address from `sp` up, at `slot`. */
export interface ScanRule {
  kind: "scan";
  registers: { sp: string; fp: string };
  /** The function has no record in a module whose other functions have (the RVA looked up). */
  noRecordRva?: number;
  sp: bigint;
  slot: bigint;
  value: bigint;
  /** The caller's frame pointer, when the scan recovered one (minidump.md §5.5, §5.6). */
  fp?: bigint;
}

/** Breakpad's simulated return from a leaf: the return address at the stack pointer or one word above. */
export interface LeafRule {
  kind: "leaf";
  slot: bigint;
  value: bigint;
}

/** A frame found by a rule of a strategy of one's own (WalkOptions.strategies), which names itself. */
export interface CustomRule {
  kind: "custom";
  text: string;
}

/** The rule kinds every machine shares. */
export type SharedRule = ContextRule | FramePointerRule | CfiRule | ScanRule | LeafRule | CustomRule;

/** The context frame's rule. */
export const CONTEXT_RULE: ContextRule = { kind: "context" };
