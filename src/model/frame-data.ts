/**
 * FrameData ("new FPO"), the record that describes an x86 frame with a program string
 * (x86-fpo.md §2.1): the values every source of it gives (a PDB's NewFPO stream, a Breakpad
 * `STACK WIN 4` record, a vector), all sizes in bytes. formats/frame-data.ts reads and writes
 * the PDB's 32-byte form.
 */

/** Flags bit 0: the function has an SEH frame (clang-14 never sets it, §2.3). */
export const FRAME_DATA_HAS_SEH = 0x1;
/** Flags bit 1: the function has C++ EH state. */
export const FRAME_DATA_HAS_EH = 0x2;
/** Flags bit 2: the record starts at the first byte of its function. */
export const FRAME_DATA_IS_FUNCTION_START = 0x4;

/** One FrameData record (cvinfo.h `tagFRAMEDATA`); all sizes are in bytes (§2.1). */
export interface FrameData {
  /** RVA of the first byte the record covers. */
  rvaStart: number;
  /** Bytes covered from rvaStart. */
  codeSize: number;
  /** Bytes of locals. */
  localSize: number;
  /** Bytes of stack parameters. */
  paramsSize: number;
  /** Maximum stack use; lld always writes 0. */
  maxStackSize: number;
  /** Byte offset of the program string in the PDB `/names` buffer. */
  frameFunc: number;
  /** Bytes of prolog left from rvaStart. */
  prologSize: number;
  /** Bytes of saved registers. */
  savedRegsSize: number;
  /** The raw Flags word. */
  flags: number;
  /** Flags bit 0. */
  hasSEH: boolean;
  /** Flags bit 1. */
  hasEH: boolean;
  /** Flags bit 2. */
  isFunctionStart: boolean;
  /** The program string, once resolved from `/names`. */
  program?: string;
}

/**
 * A module's FrameData records looked up by RVA without making them all: a `.sym` file's STACK WIN
 * records, read from its tables when a lookup returns one, or a list made ready for lookups. A
 * record is made once: every lookup that finds it returns the same object, which is also the
 * one the module's `frameData` list holds when that list is made.
 */
export interface FrameDataIndex {
  /** The number of records. */
  readonly count: number;
  /** The innermost record containing `rva`: what {@link findFrameData} finds in the records sorted by start, the larger range first. */
  innermost(rva: number): FrameData | undefined;
  /** The outermost record containing `rva` among the `maxBack` records that start nearest at or below it. */
  outermost(rva: number, maxBack: number): FrameData | undefined;
}
