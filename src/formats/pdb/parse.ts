/**
 * parsePdb (x86-fpo.md §4.7): the container, the info and DBI streams, then the unwind records
 * (FPO_DATA, FrameData with their program strings from `/names`), OMAP, section headers and the
 * function symbols, resolved to RVAs when they are asked for.
 */
import { InputError } from "../../errors.js";
import type { ByteSource } from "../../memory/byte-source.js";
import { decodeFpoTable } from "../../model/fpo-data.js";
import type { FrameData } from "../../model/frame-data.js";
import type { SourceLine } from "../../model/snapshot.js";
import { decodeFrameData, FRAME_DATA_SIZE } from "../frame-data.js";
import { lazyProperty } from "../lazy-property.js";
import { countStartingAtOrBelow } from "../sorted-ranges.js";
import { inStream, readMsf, withStream } from "./msf.js";
import { PdbInlineSites, readIpiNames, readModuleLines, readProcedureSites, type ModuleLines, type RawLine, type RawProcedureSites } from "./inline.js";
import { NO_STREAM, PUBLIC_CODE_OR_FUNCTION, SECTION_EXECUTABLE, STREAM_DBI, STREAM_PDB_INFO, readDbiStream, readInfoStream, readNamesBuffer, readOmap, readSections, readSymbols, type RawSymbol } from "./streams.js";
import type { OmapEntry, Pdb, PdbInfo, PdbSymbol, SectionAddress } from "./types.js";

/** Optional debug header slots (§4.4). */
const SLOT_FPO = 0;
const SLOT_OMAP_TO_SRC = 3;
const SLOT_OMAP_FROM_SRC = 4;
const SLOT_SECTION_HDR = 5;
const SLOT_NEW_FPO = 9;
const SLOT_SECTION_HDR_ORIG = 10;

const utf8 = new TextDecoder("utf-8");

const omapStart = (e: OmapEntry): number => e.rva;

/** Maps an RVA through an OMAP table: undefined before the first entry or for eliminated code (rvaTo 0). */
export function omapTranslate(table: readonly OmapEntry[], rva: number): number | undefined {
  const lo = countStartingAtOrBelow(table, rva, omapStart);
  if (lo === 0) return undefined;
  const e = table[lo - 1]!;
  return e.rvaTo === 0 ? undefined : (e.rvaTo + (rva - e.rva)) >>> 0;
}

/**
 * Parses a PDB (MSF 7.00) following §4.7: superblock and directory, the info stream and its
 * `/names` entry, the DBI header with the FPO (slot 0) and NewFPO (slot 9) streams, OMAP,
 * section headers and the symbol records. Throws InputError naming the file offset on bad input.
 *
 * From the file's bytes, or from a {@link ByteSource} it is read from by position: then only the
 * streams named above are read (never the type streams, which are most of a large PDB, nor the
 * IPI stream unless a module has inline sites), and a procedure's line records are read again
 * when they are first asked for, so the source must keep giving the same bytes while the PDB is
 * used. Either way the file is not kept in memory.
 */
export function parsePdb(input: Uint8Array | ByteSource): Pdb {
  const msf = readMsf(input);
  const streamCount = msf.streams.length;
  if (streamCount <= STREAM_DBI) {
    throw new InputError("truncated", `the directory lists ${streamCount} streams; a PDB has at least 4`, {
      offset: msf.streams[0]?.sizeEntryOffset ?? 44,
    });
  }
  const infoStream = withStream(msf, STREAM_PDB_INFO, "PDB info stream", (b) => readInfoStream(b, streamCount));
  const dbi = withStream(msf, STREAM_DBI, "DBI stream", (b) => readDbiStream(b, streamCount));
  const slot = (i: number): number | undefined => {
    const s = dbi.slots[i];
    return s === undefined || s === NO_STREAM ? undefined : s;
  };

  const fpoStream = slot(SLOT_FPO);
  const fpo =
    fpoStream === undefined
      ? []
      : withStream(msf, fpoStream, "FPO stream", (b) => decodeFpoTable(b)).sort((a, b) => a.ulOffStart - b.ulOffStart);

  const newFpoStream = slot(SLOT_NEW_FPO);
  let frameData: FrameData[] = [];
  if (newFpoStream !== undefined) {
    frameData = withStream(msf, newFpoStream, "NewFPO stream", (b) => decodeFrameData(b));
    if (infoStream.names !== undefined) {
      const names = withStream(msf, infoStream.names, "/names", readNamesBuffer);
      const cache = new Map<number, string>();
      inStream(msf, newFpoStream, "NewFPO stream", () => {
        frameData.forEach((r, i) => {
          let program = cache.get(r.frameFunc);
          if (program === undefined) {
            if (r.frameFunc >= names.byteLength) {
              throw new InputError("bad-value", `FrameFunc ${r.frameFunc} is outside the ${names.byteLength}-byte /names buffer`, {
                offset: i * FRAME_DATA_SIZE + 20,
              });
            }
            const nul = names.subarray(r.frameFunc).indexOf(0);
            if (nul < 0) {
              throw new InputError("truncated", `the /names string at ${r.frameFunc} is not NUL-terminated`, { offset: i * FRAME_DATA_SIZE + 20 });
            }
            program = utf8.decode(names.subarray(r.frameFunc, r.frameFunc + nul));
            cache.set(r.frameFunc, program);
          }
          r.program = program;
        });
      });
    }
    // Stable: records sharing a start keep the linker's order (§2.2, §4.7 step 3).
    frameData.sort((a, b) => a.rvaStart - b.rvaStart);
  }

  const optional = <T>(i: number, label: string, fn: (b: Uint8Array) => T): T | undefined => {
    const s = slot(i);
    return s === undefined ? undefined : withStream(msf, s, label, fn);
  };
  const omapToSrc = optional(SLOT_OMAP_TO_SRC, "OmapToSrc stream", readOmap);
  const omapFromSrc = optional(SLOT_OMAP_FROM_SRC, "OmapFromSrc stream", readOmap);
  const sections = optional(SLOT_SECTION_HDR, "section header stream", readSections);
  const originalSections = optional(SLOT_SECTION_HDR_ORIG, "original section header stream", readSections);

  const raw: RawSymbol[] = [];
  if (dbi.symRecordStream !== NO_STREAM) {
    withStream(msf, dbi.symRecordStream, "symbol record stream", (b) =>
      readSymbols(b, 0, b.byteLength, raw),
    );
  }
  const seen = new Set<number>();
  // Each module's procedures with inline sites, and its C13 lines, for the procedures' inline frames.
  const inlineModules: { procedures: RawProcedureSites[]; lines: ModuleLines }[] = [];
  // Where each module's C13 line data lies, read when a procedure's lines are first asked for.
  const lineData: { stream: number; start: number; end: number }[] = [];
  for (const m of dbi.modules) {
    if (seen.has(m.stream)) continue;
    seen.add(m.stream);
    withStream(msf, m.stream, `module symbol stream`, (b) => {
      if (m.symByteSize > b.byteLength) {
        throw new InputError("truncated", `SymByteSize ${m.symByteSize} exceeds the ${b.byteLength}-byte module stream`, {
          offset: b.byteLength,
        });
      }
      // The symbols start after the 4-byte CodeView signature (CV_SIGNATURE_C13 = 4).
      if (m.symByteSize >= 4) readSymbols(b, 4, m.symByteSize, raw);
      if (m.symByteSize < 4) return;
      if (m.c13ByteSize > 0) lineData.push({ stream: m.stream, start: m.symByteSize + m.c11ByteSize, end: m.symByteSize + m.c11ByteSize + m.c13ByteSize });
      // Inline data is optional: a module whose inline records or line data cannot be read has no inline frames.
      optionalInline(() => {
        const procedures = readProcedureSites(b, 4, m.symByteSize).filter((p) => p.sites.length > 0);
        if (procedures.length === 0) return;
        const linesAt = m.symByteSize + m.c11ByteSize;
        if (linesAt + m.c13ByteSize > b.byteLength) {
          throw new InputError("truncated", `C13ByteSize ${m.c13ByteSize} runs past the ${b.byteLength}-byte module stream`, { offset: linesAt });
        }
        inlineModules.push({ procedures, lines: readModuleLines(b, linesAt, linesAt + m.c13ByteSize) });
      });
    });
  }
  // The IPI stream (4) names the inlined functions; `/names` names the files.
  const ipiNames =
    (inlineModules.length > 0 && streamCount > 4 && msf.streams[4]!.size > 0 ? optionalInline(() => withStream(msf, 4, "IPI stream", readIpiNames)) : undefined) ?? new Map<number, string>();
  let namesRead = false;
  let namesBuffer: Uint8Array | undefined;
  const fileNames = (): Uint8Array | undefined => {
    if (!namesRead && infoStream.names !== undefined) namesBuffer = optionalInline(() => withStream(msf, infoStream.names!, "/names", readNamesBuffer));
    namesRead = true;
    return namesBuffer;
  };
  // Every module's line table, merged and sorted by segment:offset, made on first use.
  let allLines: PdbLine[] | undefined;
  const lines = (): readonly PdbLine[] => (allLines ??= readAllLines(lineData, (stream, read) => withStream(msf, stream, "module symbol stream", read), fileNames()));

  // Where the DBI stream starts in the file: its debug header names the section header stream.
  const dbiRef = msf.streams[STREAM_DBI]!;
  const dbiAt = dbiRef.blocks.length > 0 ? dbiRef.blocks[0]! * msf.blockSize : dbiRef.sizeEntryOffset;
  const info: PdbInfo = {
    ...infoStream.header,
    // The DBI age, not the info stream's: the latter counts PDB writes, the former matches the image.
    debugId: `${infoStream.header.guid}${dbi.age.toString(16)}`,
  };
  const pdb: Pdb = {
    info,
    dbiAge: dbi.age,
    machine: dbi.machine,
    blockSize: msf.blockSize,
    streamCount,
    fpo,
    frameData,
    symbols: (given) => resolveSymbols(raw, pdb, given, dbiAt, { modules: inlineModules, names: ipiNames, files: inlineModules.length > 0 ? fileNames() : undefined }, lines),
  };
  if (omapFromSrc !== undefined) pdb.omapFromSrc = omapFromSrc;
  if (omapToSrc !== undefined) pdb.omapToSrc = omapToSrc;
  if (sections !== undefined) pdb.sections = sections;
  if (originalSections !== undefined) pdb.originalSections = originalSections;
  return pdb;
}

/** What a procedure's inline sites are made from: its module's sites and lines, the inlinees' names, `/names`. */
interface InlineSources {
  modules: readonly { procedures: RawProcedureSites[]; lines: ModuleLines }[];
  names: Map<number, string>;
  files: Uint8Array | undefined;
}

/** The NUL-terminated string at `offset` of the `/names` buffer. */
function namesString(buffer: Uint8Array | undefined, offset: number): string | undefined {
  if (buffer === undefined || offset >= buffer.byteLength) return undefined;
  const nul = buffer.subarray(offset).indexOf(0);
  return utf8.decode(buffer.subarray(offset, nul < 0 ? buffer.byteLength : offset + nul));
}

/** What `read` returns, or undefined when it throws InputError: for the optional inline data, whose damage leaves the rest of the PDB usable. */
function optionalInline<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (e) {
    if (e instanceof InputError) return undefined;
    throw e;
  }
}

/** A line table entry with its file's name: the merged line tables of every module. */
interface PdbLine extends Omit<RawLine, "file"> {
  file: string | undefined;
}

/**
 * Every module's C13 line table (`read` gives a module stream's bytes), its files named from
 * `/names`, sorted by segment:offset. A module whose line data cannot be read adds no lines.
 */
function readAllLines(modules: readonly { stream: number; start: number; end: number }[], read: <T>(stream: number, fn: (b: Uint8Array) => T) => T, names: Uint8Array | undefined): PdbLine[] {
  const out: PdbLine[] = [];
  const interned = new Map<number, string | undefined>();
  for (const m of modules) {
    const data = optionalInline(() => read(m.stream, (b) => (m.end > b.byteLength ? undefined : readModuleLines(b, m.start, m.end))));
    if (data === undefined) continue;
    for (const e of data.lines) {
      const name = data.checksums.get(e.file);
      let file: string | undefined;
      if (name !== undefined) {
        if (!interned.has(name)) interned.set(name, namesString(names, name));
        file = interned.get(name);
      }
      out.push({ segment: e.segment, offset: e.offset, line: e.line, file, contributionEnd: e.contributionEnd });
    }
  }
  return out.sort((a, b) => a.segment - b.segment || a.offset - b.offset);
}

/**
 * A procedure's source lines from the merged line tables: each entry inside the procedure, up
 * to the next entry, the end of its contribution or the procedure's end, whichever comes first.
 * Entries at the same offset are read as LLVM's PDB reader reads them (the ground truth of the
 * tests, llvm-symbolizer): the first is the line of that very address, the last the line of the
 * bytes after it.
 */
function procedureLines(lines: readonly PdbLine[], segment: number, offset: number, size: number, rva: number): SourceLine[] {
  const end = offset + size;
  const out: SourceLine[] = [];
  let i = countStartingAtOrBelow(lines, offset - 1, (e) => (e.segment < segment ? -Infinity : e.segment > segment ? Infinity : e.offset));
  const push = (e: PdbLine, from: number, to: number): void => {
    if (to <= from || from < offset) return;
    const line: SourceLine = { rva: BigInt(rva + (from - offset)), size: BigInt(to - from), line: e.line };
    if (e.file !== undefined) line.file = e.file;
    out.push(line);
  };
  while (i < lines.length) {
    const first = lines[i]!;
    if (first.segment !== segment || first.offset >= end) break;
    let last = first;
    while (++i < lines.length && lines[i]!.segment === segment && lines[i]!.offset === first.offset) last = lines[i]!;
    const next = lines[i];
    const stop = Math.min(end, first.contributionEnd, next !== undefined && next.segment === segment ? next.offset : end);
    if (last === first) push(first, first.offset, stop);
    else {
      push(first, first.offset, Math.min(stop, first.offset + 1));
      push(last, first.offset + 1, stop);
    }
  }
  return out;
}

/** Converts raw symbols to RVAs, drops data publics, sorts, and merges public/procedure pairs. */
function resolveSymbols(raw: readonly RawSymbol[], pdb: Pdb, given: readonly SectionAddress[] | undefined, dbiAt: number, inline?: InlineSources, lines?: () => readonly PdbLine[]): PdbSymbol[] {
  // Symbols use the pre-transform layout in an OMAP'd PDB: convert with the original headers, then map.
  const table: readonly SectionAddress[] | undefined =
    (pdb.omapFromSrc !== undefined ? pdb.originalSections : undefined) ?? pdb.sections ?? given;
  if (table === undefined) {
    throw new InputError("missing-field", "the PDB has no section header stream (DBI debug header slot 5), so its symbols' section:offset addresses cannot be turned into RVAs without the image's section table", { offset: dbiAt });
  }
  const toRva = (segment: number, offset: number): number | undefined => {
    const section = segment >= 1 ? table[segment - 1] : undefined;
    if (section === undefined) return undefined;
    const rva = (section.virtualAddress + offset) >>> 0;
    return pdb.omapFromSrc !== undefined ? omapTranslate(pdb.omapFromSrc, rva) : rva;
  };
  const sitesAt = inlineSitesByProcedure(inline, toRva);
  const out: PdbSymbol[] = [];
  for (const s of raw) {
    const section = s.segment >= 1 ? table[s.segment - 1] : undefined;
    if (section === undefined) continue;
    if (s.kind === "public" && (s.flags & PUBLIC_CODE_OR_FUNCTION) === 0) {
      const ch = section.characteristics;
      if (ch !== undefined && (ch & SECTION_EXECUTABLE) === 0) continue;
    }
    let rva: number | undefined = (section.virtualAddress + s.offset) >>> 0;
    if (pdb.omapFromSrc !== undefined) rva = omapTranslate(pdb.omapFromSrc, rva);
    if (rva === undefined) continue;
    const sym: PdbSymbol = { name: s.name, rva, kind: s.kind };
    if (s.size !== undefined) sym.size = s.size;
    const sites = s.kind === "procedure" ? sitesAt.get(`${s.segment}:${s.offset}`) : undefined;
    if (sites !== undefined) sym.inlines = sites;
    if (s.kind === "procedure" && s.size !== undefined && lines !== undefined) {
      const { segment, offset, size } = s;
      const at = rva;
      lazyProperty(sym, "lines", () => procedureLines(lines(), segment, offset, size, at));
    }
    out.push(sym);
  }
  out.sort((a, b) => a.rva - b.rva || (a.kind === b.kind ? 0 : a.kind === "procedure" ? -1 : 1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const procedureAt = new Set(out.filter((s) => s.kind === "procedure").map((s) => s.rva));
  return out.filter((s) => s.kind === "procedure" || !procedureAt.has(s.rva));
}

/**
 * The inline sites of every procedure that has some, by its `segment:offset`: each with the
 * procedure's own lines (its module's line table entries inside it, each up to the next or to
 * the end of its contribution) for the outermost site's call site.
 */
function inlineSitesByProcedure(inline: InlineSources | undefined, toRva: (segment: number, offset: number) => number | undefined): Map<string, PdbInlineSites> {
  const out = new Map<string, PdbInlineSites>();
  if (inline === undefined) return out;
  for (const { procedures, lines } of inline.modules) {
    const fileName = (offset: number): string | undefined => namesString(inline.files, offset);
    const sorted = [...lines.lines].sort((a, b) => a.segment - b.segment || a.offset - b.offset);
    for (const p of procedures) {
      const procRva = toRva(p.segment, p.offset);
      if (procRva === undefined) continue;
      const procedureLine = (rva: bigint): { line: number; file?: string } | undefined => {
        const entry = lineEntryAt(sorted, p.segment, Number(rva) - procRva + p.offset);
        if (entry === undefined) return undefined;
        const name = lines.checksums.get(entry.file);
        const file = name === undefined ? undefined : fileName(name);
        return file === undefined ? { line: entry.line } : { line: entry.line, file };
      };
      out.set(`${p.segment}:${p.offset}`, new PdbInlineSites(BigInt(procRva), p.sites, { names: inline.names, lines, fileName, procedureLine }));
    }
  }
  return out;
}

/** The line table entry covering `offset` of `segment`: the last one at or before it, if its contribution reaches that far. */
function lineEntryAt(sorted: readonly RawLine[], segment: number, offset: number): RawLine | undefined {
  let lo = 0;
  let hi = sorted.length - 1;
  let found: RawLine | undefined;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const e = sorted[mid]!;
    if (e.segment < segment || (e.segment === segment && e.offset <= offset)) {
      found = e;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found !== undefined && found.segment === segment && offset < found.contributionEnd ? found : undefined;
}
