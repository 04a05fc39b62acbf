/**
 * FrameData ("new FPO"), the 32-byte records of the PDB's NewFPO stream that describe x86 frames
 * with a program string (x86-fpo.md §2). This module decodes and encodes the record array and
 * implements the innermost-record lookup of §2.2; program strings live in the PDB's `/names`
 * buffer and are resolved by the PDB reader (`pdb.ts`).
 */
import { InputError } from "../errors.js";
import { ByteCursor } from "../memory/cursor.js";
import { FRAME_DATA_HAS_EH, FRAME_DATA_HAS_SEH, FRAME_DATA_IS_FUNCTION_START, type FrameData } from "../model/frame-data.js";
import { innermostContaining } from "./sorted-ranges.js";

export { FRAME_DATA_HAS_EH, FRAME_DATA_HAS_SEH, FRAME_DATA_IS_FUNCTION_START, type FrameData };

/** sizeof(FRAMEDATA) as stored in the PDB stream, without the object form's RelocPtr (§2.1). */
export const FRAME_DATA_SIZE = 32;

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
