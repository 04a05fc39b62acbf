/**
 * What a Breakpad `.sym` file holds (minidump.md §7; STACK WIN records x86-fpo.md §5.1), as the
 * parser gives it: the records and the counts of what was skipped.
 */
import type { InputError } from "../../errors.js";
import type { BreakpadStackCfi } from "../../model/stack-cfi.js";

/** The MODULE record: `MODULE <os> <arch> <debug id> <debug file>`. */
export interface BreakpadModule {
  /** `windows`, `Linux`, `mac`, … */
  os: string;
  /** `x86`, `x86_64`, `arm64`, … */
  arch: string;
  /** Symbol-store identifier, e.g. `5A9832E5287241C1838ED98914E9B7FF1` (minidump.md §8). */
  debugId: string;
  /** The debug file's name as written, e.g. `test_app.pdb`. */
  debugFile: string;
}

/** `INFO CODE_ID <id> [<code file>]`: the executable's identifier (for PE: timestamp and image size). */
export interface BreakpadCodeId {
  id: string;
  file?: string;
}

/** A line record `<address> <size> <line> <file number>` of a FUNC. */
export interface BreakpadLine {
  address: number;
  size: number;
  /** Source line (decimal in the file). */
  line: number;
  /** FILE number (decimal in the file). */
  file: number;
}

/** `FUNC [m] <address> <size> <param size> <name>` with the line records that follow it. */
export interface BreakpadFunc {
  /** Module-relative address. */
  address: number;
  size: number;
  /** Bytes of stack parameters. */
  paramSize: number;
  name: string;
  /** `m`: several symbols share this code (identical-code folding). */
  multiple: boolean;
  /** Line records in file order (made from a packed table when read). */
  readonly lines: BreakpadLine[];
  /** INLINE records that follow the FUNC, in file order (none when absent). */
  readonly inlines?: BreakpadInline[];
}

/**
 * `INLINE <depth> <call line> [<call file>] <origin> (<address> <size>)+`: code of the FUNC that
 * is an inlined call (minidump.md §7); the older form has no call file.
 */
export interface BreakpadInline {
  /** Nesting depth: 0 for a call inlined into the FUNC itself. */
  depth: number;
  callLine: number;
  /** FILE number of the call site (−1: none); absent in the older form. */
  callFile?: number;
  /** INLINE_ORIGIN id of the inlined function. */
  origin: number;
  /** Module-relative (address, size) ranges. */
  ranges: [address: number, size: number][];
}

/** `INLINE_ORIGIN <id> [<file>] <name>`: an inlined function; the older form has its FILE number. */
export interface BreakpadInlineOrigin {
  id: number;
  /** FILE number (−1: none), in the older form only. */
  file?: number;
  name: string;
}

/** `PUBLIC [m] <address> <param size> <name>`. */
export interface BreakpadPublic {
  /** Module-relative address. */
  address: number;
  /** Bytes of stack parameters. */
  paramSize: number;
  name: string;
  /** `m`: several symbols share this address. */
  multiple: boolean;
}

/** STACK WIN record types (Breakpad's `StackInfoTypes`); only FPO and FRAME_DATA are looked up (x86-fpo.md §5.1). */
export const STACK_WIN_TYPE = {
  /** FPO_DATA ("old FPO"). */
  FPO: 0,
  TRAP: 1,
  TSS: 2,
  STANDARD: 3,
  /** FrameData with a program string ("new FPO"). */
  FRAME_DATA: 4,
} as const;

/**
 * `STACK WIN <type> <rva> <code_size> <prolog> <epilog> <params> <saved_regs> <locals> <max_stack>
 * <has_program> <program | allocates_base_pointer>`; all sizes in bytes (x86-fpo.md §5.1).
 */
export interface BreakpadStackWin {
  /** 0..4, see {@link STACK_WIN_TYPE}. */
  type: number;
  rva: number;
  codeSize: number;
  prologSize: number;
  epilogSize: number;
  paramsSize: number;
  savedRegsSize: number;
  localsSize: number;
  maxStackSize: number;
  /** has_program ≠ 0: the last field is a program string. */
  hasProgram: boolean;
  /** The program string, when hasProgram. */
  program?: string;
  /** The allocates_base_pointer flag (FPO_DATA's fUseBP), when not hasProgram. */
  allocatesBasePointer?: boolean;
  /** 1-based line number of the record, for messages. */
  line: number;
  /** Byte offset of the record's line, for messages. */
  offset: number;
}

/** Everything a `.sym` file holds that the walker and the symbolizer use. */
export interface BreakpadSymbols {
  module: BreakpadModule;
  /** The text after `INFO ` of every INFO record, in file order. */
  info: string[];
  /** The first `INFO CODE_ID` record, when there is one. */
  codeId?: BreakpadCodeId;
  /** FILE number → name; a repeated number keeps its first name (as Breakpad does). */
  files: Map<number, string>;
  /** FUNC records sorted by address (file order among equal addresses). */
  functions: BreakpadFunc[];
  /** PUBLIC records sorted by address (file order among equal addresses). */
  publics: BreakpadPublic[];
  /** STACK WIN records that Breakpad's per-type contained range map stores, in file order. */
  stackWin: BreakpadStackWin[];
  /** STACK WIN records dropped by the contained-range rule: zero size, partial overlap or a repeated range. */
  droppedStackWin: number;
  /** STACK CFI INIT ranges in file order. */
  stackCfi: BreakpadStackCfi[];
  /** INLINE_ORIGIN records, the first of each id, in file order. */
  inlineOrigins: BreakpadInlineOrigin[];
  /** INLINE records read (including those left out below). */
  inlineCount: number;
  /** INLINE_ORIGIN records read (including those left out below). */
  inlineOriginCount: number;
  /**
   * INLINE and INLINE_ORIGIN records left out: malformed, or an INLINE with no FUNC before it
   * (Breakpad logs these and does not count them against the file).
   */
  droppedInlineCount: number;
  /** Records of an unknown kind, including STACK records other than WIN and CFI (skipped). */
  unknownCount: number;
  /** With `skipMalformed`: lines that could not be parsed and were left out. */
  malformedCount: number;
  /** With `skipMalformed`: the first of those, with its line and byte offset. */
  firstMalformed?: InputError;
  /** With `skipMalformed`: reading stopped after {@link MAX_MALFORMED_LINES} malformed lines. */
  truncated: boolean;
}

/** Options of {@link BreakpadSymParser}. */
export interface BreakpadSymOptions {
  /**
   * Leave malformed lines out and count them instead of throwing, as Breakpad's loader does
   * (minidump.md §7 "Errors"): the module's symbols are then "corrupt" but usable. A file whose
   * first record is not MODULE still throws.
   */
  skipMalformed?: boolean;
}

/** Breakpad stops reading a symbol file after more than this many malformed lines. */
export const MAX_MALFORMED_LINES = 100;
