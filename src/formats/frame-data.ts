/**
 * FrameData ("new FPO"), the 32-byte records of the PDB's NewFPO stream that describe x86 frames
 * with a program string (x86-fpo.md §2). This module decodes and encodes the record array and
 * implements the innermost-record lookup of §2.2; program strings live in the PDB's `/names`
 * buffer and are resolved by the PDB reader (`pdb.ts`), and are read here (§3): postfix
 * programs in the FrameData dialect of postfix.ts.
 */
import { InputError } from "../errors.js";
import { ByteCursor } from "../memory/cursor.js";
import { FRAME_DATA_HAS_EH, FRAME_DATA_HAS_SEH, FRAME_DATA_IS_FUNCTION_START, type FrameData, type FrameDataIndex } from "../model/frame-data.js";
import type { MemoryReader } from "../memory/reader.js";
import { compilePostfix, FRAME_DATA_PROGRAM, isPostfixError, runPostfix, type PostfixCode, type PostfixError, type PostfixToken } from "./postfix.js";
import { innermostContaining, outermostContaining } from "./sorted-ranges.js";

export { FRAME_DATA_HAS_EH, FRAME_DATA_HAS_SEH, FRAME_DATA_IS_FUNCTION_START, type FrameData, type FrameDataIndex };

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
const frameDataStart = (r: FrameData): number => r.rvaStart;
const frameDataSize = (r: FrameData): number => r.codeSize;

/** Records sorted by rvaStart (the larger range first for equal starts), looked up as a {@link FrameDataIndex}. */
export function frameDataIndexOf(sorted: readonly FrameData[]): FrameDataIndex {
  return {
    count: sorted.length,
    innermost: (rva) => innermostContaining(sorted, rva, frameDataStart, frameDataSize),
    outermost: (rva, maxBack) => outermostContaining(sorted, rva, frameDataStart, frameDataSize, maxBack),
  };
}

/** One token of a program. */
export type ProgramToken = PostfixToken;

/** A parsed program string. */
export interface Program extends PostfixCode<number> {
  /** True when the program realigns with `@` (its `.raSearch` comes from EBP, x86-fpo.md §3.1 rule 3). */
  realigns: boolean;
}

/** Why a program could not be parsed or evaluated. */
export type ProgramError = PostfixError;

/** Register variables a program may read and assign, by canonical name. */
export const PROGRAM_REGISTERS = ["eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx"] as const;

/** Parses a program string (x86-fpo.md §3); `=$ebp`-style glued tokens are split as Breakpad does. */
export function parseProgram(text: string): { ok: true; program: Program } | { ok: false; error: ProgramError } {
  const compiled = compilePostfix(text, FRAME_DATA_PROGRAM);
  if (!compiled.ok) return compiled;
  const code = compiled.code;
  return { ok: true, program: { ...code, realigns: code.tokens.some((t) => t.kind === "operator" && t.op === "@") } };
}

/** The values a program starts with: registers as `$name`, inputs as `.name`. */
export type ProgramInputs = Record<string, bigint>;

/** The result of evaluating a program: every variable's final value and which were assigned. */
export type ProgramResult = { ok: true; values: Map<string, bigint>; assigned: Set<string> } | { ok: false; error: ProgramError };

/**
 * Evaluates a program (x86-fpo.md §3): binary operators pop the right operand first, `^` reads
 * four bytes, `=` pops a value then a `$` name and assigns at once. Stack underflow, unknown
 * variables, unreadable memory, division by zero and values left over are errors. The values
 * returned are the inputs plus every variable the program assigned.
 */
export function evaluateProgram(program: Program, inputs: ProgramInputs, memory: MemoryReader): ProgramResult {
  const slots = program.variables.map((name) => {
    const v = inputs[name];
    return v === undefined ? undefined : Number(v & 0xffff_ffffn);
  });
  const assignedSlots = new Uint8Array(slots.length);
  const error = runPostfix(program, slots, memory, assignedSlots);
  if (isPostfixError(error)) return { ok: false, error };
  const values = new Map<string, bigint>(Object.entries(inputs));
  const assigned = new Set<string>();
  program.variables.forEach((name, slot) => {
    if (assignedSlots[slot] === 1) {
      values.set(name, BigInt(slots[slot]!));
      assigned.add(name);
    }
  });
  return { ok: true, values, assigned };
}
