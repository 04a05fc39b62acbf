/**
 * What `explain`, `render` and `view` show about one walked thread: every frame with the rule
 * that found it, the memory that rule read (each word named by what it turned out to be), why a
 * weaker walker would go wrong there, and the stack words (and, on IA-64, the backing-store
 * words) a diagram draws. Built by explain.ts; drawn as text there, as SVG in svg.ts and as an
 * HTML page in html.ts.
 */
import type { Machine } from "../model/machine.js";
import type { Frame, WalkStop } from "../walk/frame.js";

/** Which of the two IA-64 stacks a word lives on; x86 and x64 have only the memory stack. */
export type StackArea = "stack" | "backing-store";

/** What a word an unwind read turned out to be. */
export type ReadRole =
  /** The caller's PC: a return address (or an interrupted PC in a machine frame). */
  | "return-address"
  /** The caller's frame pointer (saved EBP/RBP). */
  | "saved-frame-pointer"
  /** Another register of the caller, saved by the callee. */
  | "saved-register"
  /** A word looked at while searching for a return address, and passed over. */
  | "scanned"
  /** Anything else a rule read (a program's operand, a machine frame's RSP). */
  | "data";

/** One memory read an unwind made. */
export interface ExplainedRead {
  address: bigint;
  /** Bytes read (4 or 8). */
  size: number;
  value: bigint;
  role: ReadRole;
  /** The caller register the value became (`eip`, `ebp`, `rbx`, `brp`...), when it became one. */
  register?: string;
  /** The address relative to a register of the frame being unwound, e.g. `esp+24`, `ebp+4`. */
  relative?: string;
  area: StackArea;
}

/** One frame, explained. */
export interface ExplainedFrame {
  index: number;
  frame: Frame;
  /** `module!function+0x1f`, or the bare PC when no module covers it. */
  location: string;
  /** The function name alone, when symbols give one. */
  functionName?: string;
  /**
   * The source file and line of the PC (a .sym file's line record covering it; with inline
   * frames, the outermost inlined call's site), when symbols give one.
   */
  source?: { file: string; line: number };
  /**
   * The calls inlined at the PC, innermost first: virtual frames shown before this one. They have
   * no registers and no stack of their own; they live in this frame's stack area.
   */
  inlines?: ExplainedInline[];
  /**
   * How this frame was found from the frame below it, in plain words with addresses and values,
   * one sentence per line (frame 0: where the context came from).
   */
  how: string[];
  /** The memory the unwind that found this frame read, in the order it was read. */
  reads: ExplainedRead[];
  /** Why a weaker walker (the frame-pointer chain) goes wrong at this frame, when it does. */
  weaker?: string;
  /** Whether the frame equals the input's ground truth at this depth, when the input has one. */
  truth?: "exact" | "differs" | "extra";
}

/** An inline frame of an explained frame. */
export interface ExplainedInline {
  /** `module!function+0x1f`, the offset from the start of the inlined code that covers the PC. */
  location: string;
  functionName: string;
  /** The innermost one's line record, an outer one's call site of the call inside it. */
  source?: { file: string; line: number };
}

/** One word of a stack, as a diagram shows it. */
export interface StackWord {
  address: bigint;
  /** Undefined when the snapshot does not hold this word. */
  value: bigint | undefined;
  /** The frame whose stack area holds the word (from its SP up to its caller's), −1 below frame 0. */
  frame: number;
  /** What an unwind read this word as, when it read it. */
  role?: ReadRole;
  /** The register the word became, when it became one. */
  register?: string;
  /** IA-64 backing store: a NaT collection word (address bits 8..3 all set), not a register. */
  natCollection?: boolean;
}

/** A walked thread, explained. */
export interface ExplainedWalk {
  machine: Machine;
  /** The input's name (file name or a title) for headings. */
  title: string;
  threadId: number;
  /** The thread was the one executing (a dump's crashing thread). */
  crashed?: boolean;
  /** The walker that produced the frames (`auto`, `fpo`, `unwind`, `ia64`, `frame-pointer`). */
  walker: string;
  frames: ExplainedFrame[];
  stop: WalkStop;
  /** The stop reason in plain words, for readers who do not know the reason codes. */
  stopText: string;
  /** Pointer size in bytes (4 or 8). */
  wordSize: number;
  /** Memory-stack words from the context frame's SP up past the outermost frame's, innermost first. */
  stack: StackWord[];
  /** IA-64: backing-store words from the outermost frame's BSP up to the context frame's, lowest first. */
  backingStore?: StackWord[];
  /** Comparison with the input's ground truth, when it has one. */
  truth?: { exact: boolean; text: string };
  /** Notes a reader should see first (no truth in the input, a stack longer than the words listed); the stop is `stopText`'s. */
  notes: string[];
}
