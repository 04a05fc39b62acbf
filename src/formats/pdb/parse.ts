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
import { countKeysAtOrBelow, countStartingAtOrBelow, orderOfKeys } from "../sorted-ranges.js";
import { inStream, readMsf, streamBytes, withStream, type Msf } from "./msf.js";
import { PdbInlineSites, readIpiNames, readModuleLines, readProcedureSites, type RawLine } from "./inline.js";
import { indexSymbols, NO_STREAM, PROCEDURE_ROW, PUBLIC_CODE_OR_FUNCTION, recordName, SECTION_EXECUTABLE, STREAM_DBI, STREAM_PDB_INFO, SymbolRows, readDbiStream, readInfoStream, readNamesBuffer, readOmap, readSections, type SectionContributions } from "./streams.js";
import type { OmapEntry, Pdb, PdbInfo, PdbSymbol, PdbSymbolIndex, SectionAddress } from "./types.js";

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

  // One pass over the symbol records: a row of numbers for each public and procedure, its name
  // read from the file when it is asked for.
  const rows = new SymbolRows();
  if (dbi.symRecordStream !== NO_STREAM) {
    const stream = dbi.symRecordStream;
    withStream(msf, stream, "symbol record stream", (b) => indexSymbols(b, 0, b.byteLength, stream, -1, rows));
  }
  const seen = new Set<number>();
  // The module streams read: each one's symbols, its C11 and C13 line data (the latter read when
  // a procedure's lines or inline sites are first asked for).
  const modules: PdbModule[] = [];
  for (const m of dbi.modules) {
    if (seen.has(m.stream)) continue;
    seen.add(m.stream);
    const streamSize = msf.streams[m.stream]!.size;
    // Only the symbols are read now: the line data after them is read when asked for.
    withStream(
      msf,
      m.stream,
      `module symbol stream`,
      (b) => {
        if (m.symByteSize > streamSize) {
          throw new InputError("truncated", `SymByteSize ${m.symByteSize} exceeds the ${streamSize}-byte module stream`, { offset: streamSize });
        }
        // The symbols start after the 4-byte CodeView signature (CV_SIGNATURE_C13 = 4).
        if (m.symByteSize < 4) return;
        indexSymbols(b, 4, m.symByteSize, m.stream, modules.length, rows);
        modules.push({ stream: m.stream, symByteSize: m.symByteSize, c11ByteSize: m.c11ByteSize, c13ByteSize: m.c13ByteSize });
      },
      m.symByteSize,
    );
  }
  let namesRead = false;
  let namesBuffer: Uint8Array | undefined;
  const fileNames = (): Uint8Array | undefined => {
    if (!namesRead && infoStream.names !== undefined) namesBuffer = optionalInline(() => withStream(msf, infoStream.names!, "/names", readNamesBuffer));
    namesRead = true;
    return namesBuffer;
  };
  // The module whose code is at a segment:offset: the first section contribution in the DBI's
  // order that holds it (of overlapping ones the earlier, which LLVM's PDB reader keeps); the
  // contributions are sorted when a procedure's lines are first asked for.
  const moduleOfStream = new Map(modules.map((m, i) => [m.stream, i]));
  let pieces: PiecesByStart | undefined;
  const codeModule = (segment: number, offset: number): number | undefined => {
    pieces ??= piecesByStart(dbi.contributions);
    const found = pieceHolding(dbi.contributions, pieces, segment, offset);
    return found === undefined ? undefined : moduleOfStream.get(dbi.contributions.stream[found]!);
  };
  // A module's line table (after its symbols and C11 lines), sorted by segment:offset, read when a
  // procedure of the module first asks for its lines: never every module's (a large PDB's line
  // tables are hundreds of megabytes).
  const ownLines = new Map<number, readonly PdbLine[]>();
  const moduleLines = (index: number): readonly PdbLine[] => {
    let found = ownLines.get(index);
    if (found === undefined) {
      const m = modules[index]!;
      const start = m.symByteSize + m.c11ByteSize;
      const end = start + m.c13ByteSize;
      // The module stream up to the end of its line table: the symbols before it, not what follows.
      found = m.c13ByteSize === 0 ? [] : readLineTable(start, end, (read) => withStream(msf, m.stream, "module symbol stream", read, end), fileNames());
      ownLines.set(index, found);
    }
    return found;
  };
  // The IPI stream (4) names the inlined functions: read when a module with inline sites is first looked at.
  let ipiNames: Map<number, string> | undefined;
  const inlineNames = (): Map<number, string> =>
    (ipiNames ??= (streamCount > 4 && msf.streams[4]!.size > 0 ? optionalInline(() => withStream(msf, 4, "IPI stream", readIpiNames)) : undefined) ?? new Map<number, string>());
  const reader: SymbolReader = { msf, rows, modules, codeModule, moduleLines, inlineNames, fileNames };

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
    symbolIndex: (given) => (given === undefined ? (ownIndex ??= symbolIndexOf(reader, pdb, undefined, dbiAt)) : symbolIndexOf(reader, pdb, given, dbiAt)),
    symbols: (given) => pdb.symbolIndex(given).all(),
  };
  let ownIndex: PdbSymbolIndex | undefined;
  if (omapFromSrc !== undefined) pdb.omapFromSrc = omapFromSrc;
  if (omapToSrc !== undefined) pdb.omapToSrc = omapToSrc;
  if (sections !== undefined) pdb.sections = sections;
  if (originalSections !== undefined) pdb.originalSections = originalSections;
  return pdb;
}

/** Section contributions sorted by where they start (segment, then offset), with the longest's size. */
interface PiecesByStart {
  /** Each one's index in the DBI's order, by start. */
  order: Uint32Array;
  /** Segment × 2^32 + offset, by start. */
  start: Float64Array;
  longest: number;
}

/** The section contributions sorted by where they start. */
function piecesByStart(pieces: SectionContributions): PiecesByStart {
  const keys = new Float64Array(pieces.count);
  let longest = 0;
  for (let i = 0; i < pieces.count; i++) {
    keys[i] = pieces.section[i]! * 2 ** 32 + pieces.offset[i]!;
    longest = Math.max(longest, pieces.size[i]!);
  }
  const order = orderOfKeys(keys);
  return { order, start: Float64Array.from(order, (i) => keys[i]!), longest };
}

/** The first section contribution in the DBI's order that holds `segment`:`offset` (its index), if one does. */
function pieceHolding(pieces: SectionContributions, sorted: PiecesByStart, segment: number, offset: number): number | undefined {
  const { order, start, longest } = sorted;
  const key = segment * 2 ** 32 + offset;
  let found: number | undefined;
  // Only a piece starting at or below the address, and less than the longest piece below it, can hold it.
  for (let k = countKeysAtOrBelow(start.length, key, (k) => start[k]!) - 1; k >= 0 && start[k]! + longest > key; k--) {
    const i = order[k]!;
    if (pieces.section[i] === segment && key < start[k]! + pieces.size[i]! && (found === undefined || i < found)) found = i;
  }
  return found;
}

/** A module whose symbols were read: its stream and the byte sizes of its parts. */
interface PdbModule {
  stream: number;
  symByteSize: number;
  c11ByteSize: number;
  c13ByteSize: number;
}

/** What a symbol index reads from: the rows of the symbols, and the PDB's streams for their names, lines and inline sites. */
interface SymbolReader {
  msf: Msf;
  rows: SymbolRows;
  modules: readonly PdbModule[];
  /** The module (its index in {@link modules}) whose code is at `segment`:`offset`, when the section contributions say. */
  codeModule: (segment: number, offset: number) => number | undefined;
  /** One module's line table (read on first use). */
  moduleLines: (index: number) => readonly PdbLine[];
  /** The IPI stream's function names (read on first use). */
  inlineNames: () => Map<number, string>;
  /** The `/names` buffer (read on first use). */
  fileNames: () => Uint8Array | undefined;
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

/** A line table entry with its file's name. */
interface PdbLine extends Omit<RawLine, "file"> {
  file: string | undefined;
}

/**
 * A module's C13 line table, bytes [start, end) of its stream (`read` gives the stream's bytes),
 * its files named from `/names`, sorted by segment:offset; no lines when it cannot be read.
 */
function readLineTable(start: number, end: number, read: <T>(fn: (b: Uint8Array) => T) => T, names: Uint8Array | undefined): PdbLine[] {
  const data = optionalInline(() => read((b) => (end > b.byteLength ? undefined : readModuleLines(b, start, end))));
  if (data === undefined) return [];
  const out: PdbLine[] = [];
  const interned = new Map<number, string | undefined>();
  for (const e of data.lines) {
    const name = data.checksums.get(e.file);
    let file: string | undefined;
    if (name !== undefined) {
      if (!interned.has(name)) interned.set(name, namesString(names, name));
      file = interned.get(name);
    }
    out.push({ segment: e.segment, offset: e.offset, line: e.line, file, contributionEnd: e.contributionEnd });
  }
  return out.sort(bySegmentOffset);
}

/** A line table's order: by segment, then offset. */
function bySegmentOffset(a: { segment: number; offset: number }, b: { segment: number; offset: number }): number {
  return a.segment - b.segment || a.offset - b.offset;
}

/** How many entries of a line table in {@link bySegmentOffset} order lie at or before `segment`:`offset`. */
function linesAtOrBefore(sorted: readonly { segment: number; offset: number }[], segment: number, offset: number): number {
  return countStartingAtOrBelow(sorted, offset, (e) => (e.segment < segment ? -Infinity : e.segment > segment ? Infinity : e.offset));
}

/**
 * A procedure's source lines from its module's line table: each entry inside the procedure, up
 * to the next entry, the end of its contribution or the procedure's end, whichever comes first.
 * Entries at the same offset are read as LLVM's PDB reader reads them (the ground truth of the
 * tests, llvm-symbolizer): the first is the line of that very address, the last the line of the
 * bytes after it.
 */
function procedureLines(lines: readonly PdbLine[], segment: number, offset: number, size: number, rva: number): SourceLine[] {
  const end = offset + size;
  const out: SourceLine[] = [];
  let i = linesAtOrBefore(lines, segment, offset - 1);
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

/**
 * The function symbols by RVA (see {@link Pdb.symbols}): every row turned into an RVA (data
 * publics dropped), sorted by RVA, procedures before publics, then by name, and a public at the
 * RVA of a procedure dropped; a symbol is made, its name read, when a lookup returns it.
 */
function symbolIndexOf(reader: SymbolReader, pdb: Pdb, given: readonly SectionAddress[] | undefined, dbiAt: number): PdbSymbolIndex {
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
  const { rows } = reader;
  const rvaOf = new Float64Array(rows.length);
  const ids: number[] = [];
  for (let i = 0; i < rows.length; i++) {
    const section = rows.segment[i]! >= 1 ? table[rows.segment[i]! - 1] : undefined;
    if (section === undefined) continue;
    if (rows.kind[i] !== PROCEDURE_ROW && (rows.flags[i]! & PUBLIC_CODE_OR_FUNCTION) === 0) {
      const ch = section.characteristics;
      if (ch !== undefined && (ch & SECTION_EXECUTABLE) === 0) continue;
    }
    const rva = toRva(rows.segment[i]!, rows.offset[i]!);
    if (rva === undefined) continue;
    rvaOf[i] = rva;
    ids.push(i);
  }
  const names = new Map<number, string>();
  const nameOf = (i: number): string => {
    let name = names.get(i);
    if (name === undefined) names.set(i, (name = recordName(streamBytes(reader.msf, rows.stream[i]!, rows.nameAt[i]!, rows.nameEnd[i]! - rows.nameAt[i]!))));
    return name;
  };
  // By RVA, procedures first, in record order; then each run of one RVA and kind by name.
  ids.sort((a, b) => rvaOf[a]! - rvaOf[b]! || rows.kind[b]! - rows.kind[a]! || a - b);
  for (let start = 0; start < ids.length; ) {
    let end = start + 1;
    while (end < ids.length && rvaOf[ids[end]!] === rvaOf[ids[start]!] && rows.kind[ids[end]!] === rows.kind[ids[start]!]) end++;
    if (end - start > 1) {
      const run = ids.slice(start, end).sort((a, b) => {
        const x = nameOf(a);
        const y = nameOf(b);
        return x < y ? -1 : x > y ? 1 : 0;
      });
      for (let k = 0; k < run.length; k++) ids[start + k] = run[k]!;
    }
    start = end;
  }
  // A public at the RVA of a procedure (sorted before it) is left out.
  const kept: number[] = [];
  let procedureRva = -1;
  for (const i of ids) {
    if (rows.kind[i] === PROCEDURE_ROW) procedureRva = rvaOf[i]!;
    else if (rvaOf[i] === procedureRva) continue;
    kept.push(i);
  }
  const starts = Float64Array.from(kept, (i) => rvaOf[i]!);
  const made = new Map<number, PdbSymbol>();
  const sites = new Map<number, Map<string, PdbInlineSites> | undefined>();
  const symbolOf = (i: number): PdbSymbol => {
    let sym = made.get(i);
    if (sym !== undefined) return sym;
    const rva = rvaOf[i]!;
    if (rows.kind[i] !== PROCEDURE_ROW) sym = { name: nameOf(i), rva, kind: "public" };
    else {
      const segment = rows.segment[i]!;
      const offset = rows.offset[i]!;
      const size = rows.size[i]!;
      const module = rows.module[i]!;
      sym = { name: nameOf(i), rva, kind: "procedure", size };
      // The procedure's inline sites, from its module's records, read when first asked for.
      lazyProperty(sym, "inlines", () => {
        if (module < 0) return undefined;
        if (!sites.has(module)) sites.set(module, moduleSites(reader, module, toRva));
        return sites.get(module)?.get(`${segment}:${offset}`);
      });
      // From the line table of the module whose code the procedure is, as llvm-symbolizer reads
      // them: where the linker folded identical functions of several modules into one body, each
      // module's table has lines there, and the body is the one module's whose piece it kept (the
      // procedure's own module when the section contributions do not say).
      lazyProperty(sym, "lines", () => {
        const owner = reader.codeModule(segment, offset) ?? module;
        return owner < 0 ? [] : procedureLines(reader.moduleLines(owner), segment, offset, size, rva);
      });
    }
    made.set(i, sym);
    return sym;
  };
  return {
    count: kept.length,
    at(rva) {
      const k = countKeysAtOrBelow(starts.length, rva, (k) => starts[k]!) - 1;
      if (k < 0) return undefined;
      const i = kept[k]!;
      if (rows.kind[i] === PROCEDURE_ROW && rva - rvaOf[i]! >= rows.size[i]!) return undefined;
      return symbolOf(i);
    },
    all() {
      // Every name at once: each stream's symbols read in one piece rather than a read per name.
      const byStream = new Map<number, number[]>();
      for (const i of kept) {
        if (names.has(i)) continue;
        const list = byStream.get(rows.stream[i]!);
        if (list === undefined) byStream.set(rows.stream[i]!, [i]);
        else list.push(i);
      }
      for (const [stream, list] of byStream) {
        let end = 0;
        for (const i of list) end = Math.max(end, rows.nameEnd[i]!);
        withStream(reader.msf, stream, "symbol names", (bytes) => {
          for (const i of list) names.set(i, recordName(bytes.subarray(rows.nameAt[i]!, rows.nameEnd[i]!)));
        }, end);
      }
      return kept.map(symbolOf);
    },
  };
}

/**
 * The inline sites of a module's procedures that have some, by the procedure's `segment:offset`:
 * each with the procedure's own lines (its module's line table entries inside it, each up to the
 * next or to the end of its contribution) for the outermost site's call site. A module whose
 * inline records or line data cannot be read has none.
 */
function moduleSites(reader: SymbolReader, index: number, toRva: (segment: number, offset: number) => number | undefined): Map<string, PdbInlineSites> | undefined {
  const m = reader.modules[index]!;
  const data = optionalInline(() =>
    withStream(reader.msf, m.stream, "module symbol stream", (b) => {
      const procedures = readProcedureSites(b, 4, m.symByteSize).filter((p) => p.sites.length > 0);
      if (procedures.length === 0) return undefined;
      const linesAt = m.symByteSize + m.c11ByteSize;
      if (linesAt + m.c13ByteSize > b.byteLength) {
        throw new InputError("truncated", `C13ByteSize ${m.c13ByteSize} runs past the ${b.byteLength}-byte module stream`, { offset: linesAt });
      }
      return { procedures, lines: readModuleLines(b, linesAt, linesAt + m.c13ByteSize) };
    }),
  );
  if (data === undefined) return undefined;
  const { procedures, lines } = data;
  const files = reader.fileNames();
  const names = reader.inlineNames();
  const out = new Map<string, PdbInlineSites>();
  const fileName = (offset: number): string | undefined => namesString(files, offset);
  const sorted = [...lines.lines].sort(bySegmentOffset);
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
    out.set(`${p.segment}:${p.offset}`, new PdbInlineSites(BigInt(procRva), p.sites, { names, lines, fileName, procedureLine }));
  }
  return out;
}

/** The line table entry covering `offset` of `segment`: the last one at or before it, if its contribution reaches that far. */
function lineEntryAt(sorted: readonly RawLine[], segment: number, offset: number): RawLine | undefined {
  const found = sorted[linesAtOrBefore(sorted, segment, offset) - 1];
  return found !== undefined && found.segment === segment && offset < found.contributionEnd ? found : undefined;
}
