/**
 * x86 unwind sources per module (x86-fpo.md §1.3, §2.2, §8 rule 1): FrameData and FPO_DATA
 * records attached to the module (from a vector, a PDB or a Breakpad `.sym`), and FPO_DATA from
 * the image's own debug directory when it is mapped in the snapshot. Looked up by module, found
 * once and kept for the module's lifetime; lookups return the innermost record that contains an
 * RVA. Program strings are parsed once per record.
 */
import { findFrameData, frameDataSize, frameDataStart, type FrameData } from "../../formats/frame-data.js";
import { innermostContaining, outermostContaining } from "../../formats/sorted-ranges.js";
import { readMappedImage } from "../../formats/pe-mapped.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { FpoData } from "../../model/fpo-data.js";
import type { Module } from "../../model/snapshot.js";
import { parseProgram, type Program, type ProgramError } from "./program.js";

/** The records an x86 walker can use for one module, each list sorted by start RVA. */
export interface X86Tables {
  frameData: readonly FrameData[];
  fpo: readonly FpoData[];
  /** Where the records came from, in words. */
  origin: string;
}

const tablesCache = new WeakMap<Module, X86Tables | null>();

/**
 * The unwind records of `module`: those attached to it, with FPO_DATA from its mapped image's
 * debug directory when none was attached. Undefined when the module has none of either kind.
 */
export function x86Tables(module: Module, images: MemoryReader): X86Tables | undefined {
  const cached = tablesCache.get(module);
  if (cached !== undefined) return cached ?? undefined;
  const given = module.unwind;
  let fpo: readonly FpoData[] = given?.fpo ?? [];
  let origin = given?.origin ?? "";
  if (fpo.length === 0) {
    const image = readMappedImage(images, module.base);
    if (image?.fpo !== undefined && image.fpo.length > 0) {
      fpo = image.fpo;
      origin = origin === "" ? "image debug directory" : `${origin} + image debug directory`;
    }
  }
  const frameData = given?.frameData ?? [];
  const tables = frameData.length === 0 && fpo.length === 0 ? null : { frameData, fpo, origin };
  tablesCache.set(module, tables);
  return tables ?? undefined;
}

/** The innermost FPO_DATA record containing `rva` in records sorted by ulOffStart. */
export function findFpo(sorted: readonly FpoData[], rva: number): FpoData | undefined {
  return innermostContaining(sorted, rva, fpoStart, fpoSize);
}

const fpoStart = (r: FpoData): number => r.ulOffStart;
const fpoSize = (r: FpoData): number => r.cbProcSize;

export { findFrameData };

/** How far back {@link outermostFrameData} looks: more nested records than this for one address do not occur. */
const MAX_NESTING = 64;

/** The outermost FrameData record containing `rva` (the one for the whole function). */
export function outermostFrameData(sorted: readonly FrameData[], rva: number): FrameData | undefined {
  return outermostContaining(sorted, rva, frameDataStart, frameDataSize, MAX_NESTING);
}

/** A record's program, parsed, or why it does not parse. */
export type ParsedProgram = { ok: true; program: Program; usesRaSearch: boolean } | { ok: false; error: ProgramError };

const programCache = new WeakMap<FrameData, ParsedProgram>();

/** The parsed program of a FrameData record (undefined when the record has none). */
export function recordProgram(record: FrameData): ParsedProgram | undefined {
  if (record.program === undefined) return undefined;
  let parsed = programCache.get(record);
  if (parsed === undefined) {
    const result = parseProgram(record.program);
    parsed = result.ok
      ? {
          ok: true,
          program: result.program,
          usesRaSearch: result.program.tokens.some((t) => t.kind === "variable" && (t.name === ".raSearch" || t.name === ".raSearchStart")),
        }
      : result;
    programCache.set(record, parsed);
  }
  return parsed;
}
