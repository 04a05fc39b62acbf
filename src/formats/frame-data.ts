/**
 * FrameData ("new FPO"), the 32-byte records of the PDB's NewFPO stream that describe x86 frames
 * with a program string (x86-fpo.md §2). This module decodes and encodes the record array and
 * implements the innermost-record lookup of §2.2; program strings live in the PDB's `/names`
 * buffer and are resolved by the PDB reader (`pdb.ts`).
 */
import { InputError } from "../errors.js";
import { ByteCursor } from "../memory/cursor.js";
import { innermostContaining } from "./sorted-ranges.js";

/** sizeof(FRAMEDATA) as stored in the PDB stream, without the object form's RelocPtr (§2.1). */
export const FRAME_DATA_SIZE = 32;

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
 * Decodes a packed array of 32-byte FrameData records in stream order. A length that is not a
 * multiple of 32 throws InputError("truncated") at `baseOffset` plus the offset of the incomplete
 * last record.
 */
export function decodeFrameData(bytes: Uint8Array, baseOffset = 0): FrameData[] {
  const whole = bytes.byteLength - (bytes.byteLength % FRAME_DATA_SIZE);
  if (whole !== bytes.byteLength) {
    throw new InputError(
      "truncated",
      `FrameData stream is ${bytes.byteLength} bytes, not a multiple of ${FRAME_DATA_SIZE}: the last record has only ${bytes.byteLength - whole} byte(s)`,
      { offset: baseOffset + whole },
    );
  }
  const c = new ByteCursor(bytes, baseOffset);
  const out: FrameData[] = [];
  while (c.remaining > 0) {
    const rvaStart = c.u32("FrameData.RvaStart");
    const codeSize = c.u32("FrameData.CodeSize");
    const localSize = c.u32("FrameData.LocalSize");
    const paramsSize = c.u32("FrameData.ParamsSize");
    const maxStackSize = c.u32("FrameData.MaxStackSize");
    const frameFunc = c.u32("FrameData.FrameFunc");
    const prologSize = c.u16("FrameData.PrologSize");
    const savedRegsSize = c.u16("FrameData.SavedRegsSize");
    const flags = c.u32("FrameData.Flags");
    out.push({
      rvaStart,
      codeSize,
      localSize,
      paramsSize,
      maxStackSize,
      frameFunc,
      prologSize,
      savedRegsSize,
      flags,
      hasSEH: (flags & FRAME_DATA_HAS_SEH) !== 0,
      hasEH: (flags & FRAME_DATA_HAS_EH) !== 0,
      isFunctionStart: (flags & FRAME_DATA_IS_FUNCTION_START) !== 0,
    });
  }
  return out;
}

/** Encodes records as the PDB stream stores them; the flag booleans are merged into `flags`. */
export function encodeFrameData(records: readonly FrameData[]): Uint8Array {
  const out = new Uint8Array(records.length * FRAME_DATA_SIZE);
  const view = new DataView(out.buffer);
  records.forEach((r, i) => {
    const at = i * FRAME_DATA_SIZE;
    const flags =
      (r.flags & ~(FRAME_DATA_HAS_SEH | FRAME_DATA_HAS_EH | FRAME_DATA_IS_FUNCTION_START)) |
      (r.hasSEH ? FRAME_DATA_HAS_SEH : 0) |
      (r.hasEH ? FRAME_DATA_HAS_EH : 0) |
      (r.isFunctionStart ? FRAME_DATA_IS_FUNCTION_START : 0);
    view.setUint32(at, r.rvaStart, true);
    view.setUint32(at + 4, r.codeSize, true);
    view.setUint32(at + 8, r.localSize, true);
    view.setUint32(at + 12, r.paramsSize, true);
    view.setUint32(at + 16, r.maxStackSize, true);
    view.setUint32(at + 20, r.frameFunc, true);
    view.setUint16(at + 24, r.prologSize, true);
    view.setUint16(at + 26, r.savedRegsSize, true);
    view.setUint32(at + 28, flags >>> 0, true);
  });
  return out;
}

/**
 * The innermost record containing `rva` in records sorted by rvaStart (§2.2): binary-search the
 * greatest rvaStart ≤ rva, then walk back to the first record whose range contains rva. LLVM's
 * records are nested suffixes of their function, and MSVC's inner records may end early, so the
 * nearest start is not always a container. Callers pass `ra − 1` for caller frames.
 */
export function findFrameData(sorted: readonly FrameData[], rva: number): FrameData | undefined {
  return innermostContaining(sorted, rva, frameDataStart, frameDataSize);
}

/** A FrameData record's start and length, for the sorted-range searches. */
export const frameDataStart = (r: FrameData): number => r.rvaStart;
export const frameDataSize = (r: FrameData): number => r.codeSize;
