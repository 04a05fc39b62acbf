/**
 * The PDB streams the reader decodes (x86-fpo.md §4.3-4.6): the PDB info stream with its
 * named-stream map, the DBI stream's header, module list and optional debug header, the `/names`
 * buffer, section headers, OMAP and the CodeView symbol records. Each parses a stream's bytes;
 * offsets in its errors are stream-relative (msf.ts maps them to the file).
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import { ByteCursor } from "../../memory/cursor.js";
import { guidText } from "../guid.js";
import type { OmapEntry, PdbInfo, PdbSection } from "./types.js";

/** The PDB info stream's fixed index (LLVM "The PDB File Format"). */
export const STREAM_PDB_INFO = 1;
/** The DBI stream's fixed index. */
export const STREAM_DBI = 3;

/** A stream index meaning "no stream" in the DBI header, module records and debug header slots. */
export const NO_STREAM = 0xffff;
/** The DBI header is 64 bytes (§4.4). */
const DBI_HEADER_SIZE = 64;
/** The fixed part of a DBI module-info record (LLVM DbiStream.rst "Module Info Substream"). */
const MOD_INFO_FIXED_SIZE = 64;
/** IMAGE_SECTION_HEADER. */
const SECTION_HEADER_SIZE = 40;
/** One OMAP entry: source RVA, target RVA. */
const OMAP_ENTRY_SIZE = 8;
/** The `/names` buffer's signature (§4.5). */
const NAMES_MAGIC = 0xeffe_effe;

/** CodeView symbol kinds the reader extracts. */
const S_PUB32 = 0x110e;
const S_LPROC32 = 0x110f;
const S_GPROC32 = 0x1110;
const S_LPROC32_ID = 0x1146;
const S_GPROC32_ID = 0x1147;
const S_LPROC32_DPC = 0x1155;
const S_LPROC32_DPC_ID = 0x1156;
/** Whether a symbol record kind starts a procedure. */
function isProcedure(kind: number): boolean {
  return kind === S_GPROC32 || kind === S_LPROC32 || kind === S_GPROC32_ID || kind === S_LPROC32_ID || kind === S_LPROC32_DPC || kind === S_LPROC32_DPC_ID;
}

/** S_PUB32 flags: cvpsfCode and cvpsfFunction. */
export const PUBLIC_CODE_OR_FUNCTION = 0x1 | 0x2;
/** IMAGE_SCN_CNT_CODE | IMAGE_SCN_MEM_EXECUTE. */
export const SECTION_EXECUTABLE = 0x20 | 0x2000_0000;

/**
 * The function symbols of a PDB's symbol streams as rows of numbers, in record order: one pass
 * over the records fills them, and a symbol's name is read from its record (`nameAt` up to
 * `nameEnd` of stream `stream`) only when someone asks for it.
 */
export class SymbolRows {
  /** 0 for S_PUB32, 1 for a procedure. */
  readonly kind: number[] = [];
  readonly segment: number[] = [];
  readonly offset: number[] = [];
  /** A procedure's length; 0 for a public. */
  readonly size: number[] = [];
  /** S_PUB32 flags; 0 for procedures. */
  readonly flags: number[] = [];
  /** The stream holding the record, and its procedure's module (−1 for the symbol record stream). */
  readonly stream: number[] = [];
  readonly module: number[] = [];
  /** Where the name lies in the stream: from its first byte to the record's end (a NUL may end it sooner). */
  readonly nameAt: number[] = [];
  readonly nameEnd: number[] = [];

  get length(): number {
    return this.kind.length;
  }
}

export const PUBLIC_ROW = 0;
export const PROCEDURE_ROW = 1;

const utf8 = new TextDecoder("utf-8");

/** A NUL-terminated string at `pos` that must end before `end`; returns it and the offset after the NUL. */
function cString(bytes: Uint8Array, pos: number, end: number, what: string): { text: string; next: number } {
  const nul = bytes.subarray(pos, end).indexOf(0);
  if (nul < 0) throw new InputError("truncated", `${what}: the string is not NUL-terminated`, { offset: pos });
  return { text: utf8.decode(bytes.subarray(pos, pos + nul)), next: pos + nul + 1 };
}

/** Stream 1 (§4.3): the header, and the stream index of `/names` from the named-stream map. */
export function readInfoStream(bytes: Uint8Array, streamCount: number): { header: Omit<PdbInfo, "debugId">; names?: number } {
  const c = new ByteCursor(bytes);
  c.need(28, "PDB info stream header");
  const version = c.u32("Version");
  const signature = c.u32("Signature");
  const age = c.u32("Age");
  const guid = guidText(c.take(16, "GUID"));
  const header = { version, signature, age, guid };

  const strBufLen = c.u32("named-stream map string buffer length");
  const strBufAt = c.pos;
  c.skip(strBufLen, "named-stream map string buffer");
  c.u32("hash table Size");
  c.u32("hash table Capacity");
  const presentWords = c.u32("present bit vector word count");
  c.need(presentWords * 4, "present bit vector");
  let present = 0;
  for (let i = 0; i < presentWords; i++) {
    let w = c.u32("present bit vector word");
    for (; w !== 0; w &= w - 1) present++;
  }
  const deletedWords = c.u32("deleted bit vector word count");
  c.skip(deletedWords * 4, "deleted bit vector");
  // One (key, value) pair per present bucket (§4.3, step 5).
  c.need(present * 8, "named-stream map entries");
  let names: number | undefined;
  for (let i = 0; i < present; i++) {
    const keyAt = c.pos;
    const key = c.u32("named-stream key");
    const valueAt = c.pos;
    const value = c.u32("named-stream index");
    if (key >= strBufLen) {
      throw new InputError("bad-value", `named-stream key ${key} is outside the ${strBufLen}-byte string buffer`, { offset: keyAt });
    }
    const name = cString(bytes, strBufAt + key, strBufAt + strBufLen, "stream name").text;
    if (name !== "/names") continue;
    if (value >= streamCount) {
      throw new InputError("bad-value", `"/names" is stream ${value}, but there are ${streamCount} streams`, { offset: valueAt });
    }
    names = value;
  }
  return names === undefined ? { header } : { header, names };
}

/** What the reader takes from the DBI stream (§4.4). */
export interface DbiInfo {
  age: number;
  machine: number;
  symRecordStream: number;
  /** Module symbol streams with their symbol, C11 line and C13 line byte sizes. */
  modules: { stream: number; symByteSize: number; c11ByteSize: number; c13ByteSize: number }[];
  /** Optional debug header slots; NO_STREAM when absent. */
  slots: number[];
  /** The section contributions: which module's code is where (see {@link SectionContributions}). */
  contributions: SectionContributions;
}

/**
 * The DBI stream's section contribution substream, after the module list: for each piece of a
 * section an object file contributed, its section (1-based), offset and size, and the module
 * symbol stream of the module it came from (NO_STREAM for a module without one), in the
 * substream's order. Where the linker folded identical functions, only the piece it kept has
 * one. Empty when the substream is of a version not known here (Ver60, 28-byte entries; V2, 32).
 */
export interface SectionContributions {
  count: number;
  section: Uint16Array;
  offset: Uint32Array;
  size: Uint32Array;
  stream: Uint16Array;
}

/** The section contribution substream's versions (0xeffe0000 + a date) and the size of an entry of each. */
const SECTION_CONTRIBUTION_ENTRY_SIZE = new Map([
  [0xeffe0000 + 19970605, 28],
  [0xeffe0000 + 20140516, 32],
]);

/** The section contributions in `bytes` [at, at + size), their modules' streams from `moduleStreams` (by module index). */
function readSectionContributions(bytes: Uint8Array, at: number, size: number, moduleStreams: readonly number[]): SectionContributions {
  const v = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const entry = size >= 4 ? SECTION_CONTRIBUTION_ENTRY_SIZE.get(v.getUint32(at, true)) : undefined;
  const count = entry === undefined ? 0 : Math.floor((size - 4) / entry);
  const out: SectionContributions = { count, section: new Uint16Array(count), offset: new Uint32Array(count), size: new Uint32Array(count), stream: new Uint16Array(count) };
  for (let i = 0; i < count; i++) {
    const e = at + 4 + i * entry!;
    out.section[i] = v.getUint16(e, true);
    out.offset[i] = v.getUint32(e + 4, true);
    out.size[i] = v.getUint32(e + 8, true);
    out.stream[i] = moduleStreams[v.getUint16(e + 16, true)] ?? NO_STREAM;
  }
  return out;
}

/** Stream 3 (§4.4): header, module list and optional debug header, with stream indices checked. */
export function readDbiStream(bytes: Uint8Array, streamCount: number): DbiInfo {
  const c = new ByteCursor(bytes);
  c.need(DBI_HEADER_SIZE, "DBI header");
  const versionSignature = c.i32("VersionSignature");
  if (versionSignature !== -1) {
    throw new InputError("unsupported", `DBI VersionSignature ${versionSignature}: only the -1 (VC70+) header is supported`, { offset: 0 });
  }
  c.u32("VersionHeader");
  const age = c.u32("Age");
  const checkStream = (at: number, what: string): number => {
    const index = c.seek(at).u16(what);
    if (index !== NO_STREAM && index >= streamCount) {
      throw new InputError("bad-value", `${what} ${index} is not one of the ${streamCount} streams`, { offset: at });
    }
    return index;
  };
  checkStream(12, "GlobalStreamIndex");
  checkStream(16, "PublicStreamIndex");
  const symRecordStream = checkStream(20, "SymRecordStream");
  const size = (at: number, what: string): number => {
    const n = c.seek(at).i32(what);
    if (n < 0) throw new InputError("bad-value", `${what} ${n} is negative`, { offset: at });
    return n;
  };
  const modInfoSize = size(24, "ModInfoSize");
  const secContrSize = size(28, "SectionContributionSize");
  const secMapSize = size(32, "SectionMapSize");
  const sourceInfoSize = size(36, "SourceInfoSize");
  const typeServerMapSize = size(40, "TypeServerMapSize");
  const optDbgHeaderSize = size(48, "OptionalDbgHeaderSize");
  const ecSize = size(52, "ECSubstreamSize");
  const machine = c.seek(58).u16("Machine");

  // Substreams follow in this order, which is not the order of the size fields (§4.4).
  const modInfoEnd = DBI_HEADER_SIZE + modInfoSize;
  c.need(modInfoSize, "module info substream", DBI_HEADER_SIZE);
  const modules: DbiInfo["modules"] = [];
  for (let at = DBI_HEADER_SIZE; at < modInfoEnd; ) {
    c.need(MOD_INFO_FIXED_SIZE, `module ${modules.length} info`, at);
    if (at + MOD_INFO_FIXED_SIZE > modInfoEnd) {
      throw new InputError("truncated", `module ${modules.length} info runs past ModInfoSize`, { offset: at });
    }
    const stream = checkStream(at + 34, `module ${modules.length} ModuleSymStream`);
    const symByteSize = c.seek(at + 36).u32("SymByteSize");
    const c11ByteSize = c.u32("C11ByteSize");
    const c13ByteSize = c.u32("C13ByteSize");
    // Two NUL-terminated names follow the fixed part, then padding to a multiple of 4.
    const moduleName = cString(bytes, at + MOD_INFO_FIXED_SIZE, modInfoEnd, `module ${modules.length} ModuleName`);
    const objName = cString(bytes, moduleName.next, modInfoEnd, `module ${modules.length} ObjFileName`);
    modules.push({ stream, symByteSize, c11ByteSize, c13ByteSize });
    at = (objName.next + 3) & ~3;
  }
  // Only lines are looked up through it: a substream cut short gives the entries it holds.
  const contributions = readSectionContributions(
    bytes,
    modInfoEnd,
    Math.max(0, Math.min(secContrSize, bytes.byteLength - modInfoEnd)),
    modules.map((m) => m.stream),
  );
  const optAt = modInfoEnd + secContrSize + secMapSize + sourceInfoSize + typeServerMapSize + ecSize;
  c.need(optDbgHeaderSize, "optional debug header", optAt);
  const slots: number[] = [];
  for (let i = 0; i + 2 <= optDbgHeaderSize; i += 2) slots.push(checkStream(optAt + i, `debug header slot ${i / 2}`));
  return { age, machine, symRecordStream, modules: modules.filter((m) => m.stream !== NO_STREAM), slots, contributions };
}

/** `/names` (§4.5): the string buffer that FrameData's FrameFunc offsets point into. */
export function readNamesBuffer(bytes: Uint8Array): Uint8Array {
  const c = new ByteCursor(bytes);
  const magic = c.u32("/names signature");
  if (magic !== NAMES_MAGIC) {
    throw new InputError("bad-magic", `/names signature ${hex(magic)} is not 0xeffeeffe`, { offset: 0 });
  }
  c.u32("/names hash version");
  const bufSize = c.u32("/names buffer size");
  return c.take(bufSize, "/names buffer");
}

/** A table of IMAGE_SECTION_HEADERs (debug header slots 5 and 10). */
export function readSections(bytes: Uint8Array): PdbSection[] {
  if (bytes.byteLength % SECTION_HEADER_SIZE !== 0) {
    throw new InputError("truncated", `section header stream is ${bytes.byteLength} bytes, not a multiple of ${SECTION_HEADER_SIZE}`, {
      offset: bytes.byteLength - (bytes.byteLength % SECTION_HEADER_SIZE),
    });
  }
  const c = new ByteCursor(bytes);
  const out: PdbSection[] = [];
  while (c.remaining > 0) {
    const raw = c.take(8, "section Name");
    const end = raw.indexOf(0);
    const name = utf8.decode(end < 0 ? raw : raw.subarray(0, end));
    const virtualSize = c.u32("VirtualSize");
    const virtualAddress = c.u32("VirtualAddress");
    c.skip(20, "section header");
    const characteristics = c.u32("Characteristics");
    out.push({ name, virtualSize, virtualAddress, characteristics });
  }
  return out;
}

/** An OMAP table (debug header slots 3 and 4), sorted by source RVA. */
export function readOmap(bytes: Uint8Array): OmapEntry[] {
  if (bytes.byteLength % OMAP_ENTRY_SIZE !== 0) {
    throw new InputError("truncated", `OMAP stream is ${bytes.byteLength} bytes, not a multiple of ${OMAP_ENTRY_SIZE}`, {
      offset: bytes.byteLength - (bytes.byteLength % OMAP_ENTRY_SIZE),
    });
  }
  const c = new ByteCursor(bytes);
  const out: OmapEntry[] = [];
  while (c.remaining > 0) out.push({ rva: c.u32("OMAP rva"), rvaTo: c.u32("OMAP rvaTo") });
  return out.sort((a, b) => a.rva - b.rva);
}

/**
 * Walks CodeView symbol records (u16 length, u16 kind, body) from `start` to `end` of stream
 * `stream`, adding a row for each S_PUB32 and procedure start. A record whose length is below 2
 * or runs past `end` is an error.
 */
export function indexSymbols(bytes: Uint8Array, start: number, end: number, stream: number, module: number, rows: SymbolRows): void {
  const c = new ByteCursor(bytes);
  const readable = Math.min(end, bytes.byteLength);
  for (let at = start; at < end; ) {
    // Most records are skipped: their length and kind read from the bytes, the cursor kept for
    // the records indexed and for the checks that fail.
    const inBytes = at + 4 <= readable;
    const length = inBytes ? bytes[at]! | (bytes[at + 1]! << 8) : c.seek(at).u16("symbol record length");
    if (length < 2) throw new InputError("bad-value", `symbol record length ${length} is too short for a kind`, { offset: at });
    const next = at + 2 + length;
    if (next > end) throw new InputError("truncated", `symbol record of ${length} bytes runs past the end of the symbols at ${hex(end)}`, { offset: at });
    const kind = inBytes ? bytes[at + 2]! | (bytes[at + 3]! << 8) : c.seek(at + 2).u16("symbol record kind");
    if (kind !== S_PUB32 && !isProcedure(kind)) {
      at = next;
      continue;
    }
    c.seek(at + 4);
    if (kind === S_PUB32) {
      // flags u32, offset u32, segment u16, name.
      c.need(10, "S_PUB32", at + 4);
      rows.flags.push(c.u32("S_PUB32 flags"));
      rows.offset.push(c.u32("S_PUB32 offset"));
      rows.segment.push(c.u16("S_PUB32 segment"));
      rows.kind.push(PUBLIC_ROW);
      rows.size.push(0);
    } else {
      // parent, end, next, length, debug start, debug end, type (u32 each), offset u32, segment u16, flags u8, name.
      c.need(35, "procedure symbol", at + 4);
      c.skip(12);
      rows.size.push(c.u32("procedure length"));
      c.skip(12);
      rows.offset.push(c.u32("procedure offset"));
      rows.segment.push(c.u16("procedure segment"));
      c.u8("procedure flags");
      rows.kind.push(PROCEDURE_ROW);
      rows.flags.push(0);
    }
    rows.stream.push(stream);
    rows.module.push(module);
    rows.nameAt.push(c.pos);
    // A record too short for its fields has an empty name.
    rows.nameEnd.push(Math.max(c.pos, next));
    at = next;
  }
}

/** A record's trailing name (`body`, from its first byte to the record's end): NUL-terminated, or running to the record end. */
export function recordName(body: Uint8Array): string {
  const nul = body.indexOf(0);
  return utf8.decode(nul < 0 ? body : body.subarray(0, nul));
}

