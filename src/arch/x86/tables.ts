/**
 * x86 unwind sources per module (x86-fpo.md §1.3, §2.2, §8 rule 1): FrameData and FPO_DATA
 * records attached to the module (from a vector, a PDB or a Breakpad `.sym`), and FPO_DATA from
 * the image's own debug directory when it is mapped in the snapshot. Found once per module and
 * image memory and kept in the walk's cache; lookups return the innermost record that contains an
 * RVA. Program strings are parsed once per record and cache.
 */
import { findFrameData, frameDataIndexOf, parseProgram, type FrameData, type FrameDataIndex, type Program, type ProgramError } from "../../formats/frame-data.js";
import { lazyProperty } from "../../formats/lazy-property.js";
import { innermostContaining } from "../../formats/sorted-ranges.js";
import { readMappedImage } from "../../formats/pe-mapped.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { FpoData } from "../../model/fpo-data.js";
import type { Module } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, keyed, keyedSlot, type UnwindCache } from "../../unwind/cache.js";

/** The records an x86 walker can use for one module, each list sorted by start RVA. */
export interface X86Tables {
  /** The FrameData records, made when read (a lookup asks {@link frameDataIndex}). */
  frameData: readonly FrameData[];
  /** The FrameData records looked up by RVA. */
  frameDataIndex: FrameDataIndex;
  fpo: readonly FpoData[];
  /** Where the records came from, in words. */
  origin: string;
}

const TABLES = cacheSlot("x86 tables", () => new ImageKeyed<Module, X86Tables | undefined>());

/**
 * The unwind records of `module` with its image in `images`: those attached to it, with
 * FPO_DATA from its mapped image's debug directory when none was attached. Undefined when the
 * module has none of either kind. Kept in `cache` when one is given.
 */
export function x86Tables(module: Module, images: MemoryReader, cache?: UnwindCache): X86Tables | undefined {
  return cache === undefined ? readTables(module, images) : cache.get(TABLES).get(images, module, () => readTables(module, images));
}

function readTables(module: Module, images: MemoryReader): X86Tables | undefined {
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
  const index = given?.frameDataIndex;
  if (index === undefined) {
    const frameData = given?.frameData ?? [];
    return frameData.length === 0 && fpo.length === 0 ? undefined : { frameData, frameDataIndex: frameDataIndexOf(frameData), fpo, origin };
  }
  if (index.count === 0 && fpo.length === 0) return undefined;
  // The list of a lazily read `.sym` file's records is made only when something reads it whole.
  const tables: X86Tables = { frameData: [], frameDataIndex: index, fpo, origin };
  lazyProperty(tables, "frameData", () => given!.frameData);
  return tables;
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

/** The outermost FrameData record of `tables` containing `rva` (the one for the whole function). */
export function outermostFrameData(tables: X86Tables, rva: number): FrameData | undefined {
  return tables.frameDataIndex.outermost(rva, MAX_NESTING);
}

/** A record's program, parsed, or why it does not parse. */
export type ParsedProgram = { ok: true; program: Program; usesRaSearch: boolean } | { ok: false; error: ProgramError };

const PROGRAMS = keyedSlot<FrameData, ParsedProgram>("parsed FrameData programs");

/** The parsed program of a FrameData record (undefined when the record has none), parsed once per cache. */
export function recordProgram(record: FrameData, cache: UnwindCache): ParsedProgram | undefined {
  const text = record.program;
  if (text === undefined) return undefined;
  return keyed(cache, PROGRAMS, record, () => parseRecordProgram(text));
}

/** Parses a program string for the frame-data rule. */
export function parseRecordProgram(text: string): ParsedProgram {
  const result = parseProgram(text);
  return result.ok
    ? {
        ok: true,
        program: result.program,
        usesRaSearch: result.program.tokens.some((t) => t.kind === "variable" && (t.name === ".raSearch" || t.name === ".raSearchStart")),
      }
    : result;
}
