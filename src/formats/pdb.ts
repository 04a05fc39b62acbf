/**
 * A minimal PDB (MSF 7.00) reader: the parts an x86 stack walker and a symbolizer need
 * (x86-fpo.md §4). It reads the superblock and stream directory (§4.1-4.2), the PDB info stream
 * with its named-stream map (§4.3), the DBI header, module list and optional debug header (§4.4),
 * `/names` (§4.5), OMAP (§4.6), FPO_DATA (§1), FrameData (§2) and the function symbols
 * (S_PUB32 from the symbol record stream, S_GPROC32/S_LPROC32 from module streams).
 *
 * Bytes in, values out. Every malformed structure throws an InputError whose offset is a byte
 * offset in the PDB file: offsets inside a stream are mapped through the stream's block list, so
 * they point at the real bytes even though streams are scattered over the file. Every count and
 * size is bounded by the file size, and no block may belong to two streams, so hostile input can
 * neither hang the reader nor make it allocate more than about the file size again.
 */
import { hex } from "../hex.js";
import { guidText } from "./guid.js";
import { InputError } from "../errors.js";
import { countStartingAtOrBelow } from "./sorted-ranges.js";
import { ByteCursor } from "../memory/cursor.js";
import { decodeFpoTable } from "../model/fpo-data.js";
import type { FpoData } from "../model/fpo-data.js";
import { decodeFrameData, FRAME_DATA_SIZE } from "./frame-data.js";
import type { FrameData } from "./frame-data.js";

/** The 32-byte MSF 7.00 superblock magic (§4.1). */
export const MSF_MAGIC = "Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

/** The older "JG" container, which this reader rejects (§4.1). */
const JG_MAGIC = "Microsoft C/C++ program database 2.00";

/** Fixed stream indices (LLVM "The PDB File Format"). */
const STREAM_PDB_INFO = 1;
const STREAM_DBI = 3;

/** A stream index meaning "no stream" in the DBI header, module records and debug header slots. */
const NO_STREAM = 0xffff;
/** A stream size meaning "nil stream" in the directory (§4.2). */
const NIL_STREAM_SIZE = 0xffff_ffff;

/** Optional debug header slots (§4.4). */
const SLOT_FPO = 0;
const SLOT_OMAP_TO_SRC = 3;
const SLOT_OMAP_FROM_SRC = 4;
const SLOT_SECTION_HDR = 5;
const SLOT_NEW_FPO = 9;
const SLOT_SECTION_HDR_ORIG = 10;

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
const PROC_KINDS = new Set([S_LPROC32, S_GPROC32, S_LPROC32_ID, S_GPROC32_ID, S_LPROC32_DPC, S_LPROC32_DPC_ID]);

/** S_PUB32 flags: cvpsfCode and cvpsfFunction. */
const PUBLIC_CODE_OR_FUNCTION = 0x1 | 0x2;
/** IMAGE_SCN_CNT_CODE | IMAGE_SCN_MEM_EXECUTE. */
const SECTION_EXECUTABLE = 0x20 | 0x2000_0000;

/** The PDB info stream header (§4.3), with the identifiers a symbol store uses. */
export interface PdbInfo {
  /** Version, normally 20000404 (VC70). */
  version: number;
  /** The 32-bit signature (a timestamp for MSVC; lld writes the GUID's first dword). */
  signature: number;
  /** The info stream's age: how many times the PDB was written. */
  age: number;
  /** The GUID as 32 upper-case hex digits in Windows display order (Data1-3 little-endian, then Data4), no dashes, as pe.ts prints RSDS GUIDs. */
  guid: string;
  /** Symbol-store identifier: `guid` then the DBI age in lower-case hex without padding (minidump.md §8), equal to the image's. */
  debugId: string;
}

/** One function symbol with an RVA. */
export interface PdbSymbol {
  /** The symbol name: decorated for publics (`_entry`), plain for procedures (`entry`). */
  name: string;
  /** Relative virtual address of the first byte. */
  rva: number;
  /** Bytes of code; procedures only. */
  size?: number;
  /** `public` for S_PUB32, `procedure` for S_GPROC32/S_LPROC32 and their variants. */
  kind: "public" | "procedure";
}

/** One OMAP entry: addresses from `rva` up to the next entry map to `rvaTo` plus the distance. */
export interface OmapEntry {
  /** Start of the range in the source address space. */
  rva: number;
  /** Where the range starts in the target space; 0 means "eliminated". */
  rvaTo: number;
}

/** An IMAGE_SECTION_HEADER copied into the PDB (debug header slots 5 and 10). */
export interface PdbSection {
  /** The section name, up to 8 bytes. */
  name: string;
  /** VirtualSize. */
  virtualSize: number;
  /** VirtualAddress: the section's RVA. */
  virtualAddress: number;
  /** Characteristics (IMAGE_SCN_*). */
  characteristics: number;
}

/** A section table entry as symbols() needs it: a PE section header or a PdbSection. */
export interface SectionAddress {
  /** The section's RVA. */
  virtualAddress: number;
  /** IMAGE_SCN_* flags when known; used to drop publics that are data. */
  characteristics?: number;
}

/** What parsePdb extracts from a PDB. */
export interface Pdb {
  /** The PDB info stream header. */
  info: PdbInfo;
  /** The DBI header's age, which matches the age in the image's CodeView (RSDS) record. */
  dbiAge: number;
  /** IMAGE_FILE_MACHINE_* from the DBI header (0x14C x86, 0x8664 x64). */
  machine: number;
  /** MSF block size in bytes. */
  blockSize: number;
  /** Number of streams in the directory. */
  streamCount: number;
  /** Old FPO_DATA from debug header slot 0, sorted by ulOffStart; [] when absent. */
  fpo: FpoData[];
  /** FrameData from slot 9, sorted by rvaStart, programs resolved through `/names`; [] when absent. */
  frameData: FrameData[];
  /** OMAP from the original (source) layout to the image (slot 4), when the PDB has one. */
  omapFromSrc?: OmapEntry[];
  /** OMAP from the image back to the original layout (slot 3), when the PDB has one. */
  omapToSrc?: OmapEntry[];
  /** The image's section headers (slot 5), when the PDB has them. */
  sections?: PdbSection[];
  /** The pre-transform section headers (slot 10), present in OMAP'd PDBs. */
  originalSections?: PdbSection[];
  /**
   * Function symbols sorted by RVA: code publics and procedures. Segment:offset is converted
   * with the PDB's own section headers when present, else with `sections` (a PE section table);
   * OMAP'd addresses are mapped to the image. A public at the same RVA as a procedure is dropped
   * in favour of the procedure, which has a size.
   */
  symbols(sections?: readonly SectionAddress[]): PdbSymbol[];
}

/** A stream as the directory describes it. */
interface StreamRef {
  /** Bytes; 0 for a nil stream. */
  size: number;
  /** Block numbers, in stream order. */
  blocks: readonly number[];
  /** File offset of this stream's Sizes[] entry, named by errors about an empty stream. */
  sizeEntryOffset: number;
}

/** The MSF container: block size, blocks and the stream directory. */
interface Msf {
  bytes: Uint8Array;
  blockSize: number;
  streams: StreamRef[];
}

/** A symbol before its segment:offset is turned into an RVA. */
interface RawSymbol {
  name: string;
  segment: number;
  offset: number;
  size?: number;
  kind: "public" | "procedure";
  /** S_PUB32 flags; 0 for procedures. */
  flags: number;
}

const utf8 = new TextDecoder("utf-8");


/** Maps an offset inside a block-scattered byte run to the file offset of that byte. */
function mapToFile(blocks: readonly number[], blockSize: number, pos: number, fallback: number): number {
  if (blocks.length === 0) return fallback;
  const index = Math.floor(pos / blockSize);
  if (index < blocks.length) return blocks[index]! * blockSize + (pos % blockSize);
  return blocks[blocks.length - 1]! * blockSize + blockSize;
}

/**
 * Runs `fn`, which parses bytes gathered from `blocks`: the offsets of its InputErrors are
 * relative to those bytes and are turned into file offsets, and the message names the run.
 */
function mapErrors<T>(label: string, blocks: readonly number[], blockSize: number, fallback: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof InputError && e.offset !== undefined) {
      throw new InputError(e.code, `${label} +${hex(e.offset)}: ${e.reason}`, {
        offset: mapToFile(blocks, blockSize, e.offset, fallback),
      });
    }
    throw e;
  }
}

/** Copies `size` bytes scattered over `blocks` into one buffer (§4.2: fields straddle blocks). */
function gather(bytes: Uint8Array, blockSize: number, blocks: readonly number[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  blocks.forEach((block, i) => {
    const at = i * blockSize;
    const n = Math.min(blockSize, size - at);
    out.set(bytes.subarray(block * blockSize, block * blockSize + n), at);
  });
  return out;
}

/** Runs `fn`, reporting its stream-relative InputErrors at file offsets within stream `index`. */
function inStream<T>(msf: Msf, index: number, label: string, fn: () => T): T {
  const ref = msf.streams[index]!;
  return mapErrors(`${label} (stream ${index})`, ref.blocks, msf.blockSize, ref.sizeEntryOffset, fn);
}

/** Reads stream `index` into one buffer and parses it with `fn`, reporting errors at file offsets. */
function withStream<T>(msf: Msf, index: number, label: string, fn: (bytes: Uint8Array) => T): T {
  const ref = msf.streams[index]!;
  const data = gather(msf.bytes, msf.blockSize, ref.blocks, ref.size);
  return inStream(msf, index, label, () => fn(data));
}

/** A NUL-terminated string at `pos` that must end before `end`; returns it and the offset after the NUL. */
function cString(bytes: Uint8Array, pos: number, end: number, what: string): { text: string; next: number } {
  const nul = bytes.subarray(pos, end).indexOf(0);
  if (nul < 0) throw new InputError("truncated", `${what}: the string is not NUL-terminated`, { offset: pos });
  return { text: utf8.decode(bytes.subarray(pos, pos + nul)), next: pos + nul + 1 };
}

/** Whether the prefix of `bytes` matches the first bytes of `text`. */
function startsWith(bytes: Uint8Array, text: string): boolean {
  const n = Math.min(bytes.byteLength, text.length);
  for (let i = 0; i < n; i++) if (bytes[i] !== text.charCodeAt(i)) return false;
  return true;
}

/** Superblock (§4.1) and stream directory (§4.2), with every block index checked and claimed once. */
function readMsf(bytes: Uint8Array): Msf {
  if (bytes.byteLength >= JG_MAGIC.length && startsWith(bytes, JG_MAGIC)) {
    throw new InputError("unsupported", "a PDB 2.00 (JG) container; only MSF 7.00 is supported", { offset: 0 });
  }
  if (!startsWith(bytes, MSF_MAGIC)) {
    throw new InputError("bad-magic", 'not an MSF 7.00 file: the magic "Microsoft C/C++ MSF 7.00\\r\\n\\x1aDS\\0\\0\\0" is missing', {
      offset: 0,
    });
  }
  const c = new ByteCursor(bytes);
  c.need(56, "MSF superblock", 0);
  c.seek(32);
  const blockSize = c.u32("BlockSize");
  c.u32("FreeBlockMapBlock");
  const numBlocks = c.u32("NumBlocks");
  const numDirectoryBytes = c.u32("NumDirectoryBytes");
  c.u32("Unknown");
  const blockMapAddr = c.u32("BlockMapAddr");

  // §4.1: classically 512..4096; larger powers of two come from /PDBPAGESIZE.
  if (blockSize < 512 || blockSize > 65536 || (blockSize & (blockSize - 1)) !== 0) {
    throw new InputError("bad-value", `BlockSize ${blockSize} is not a power of two from 512 to 65536`, { offset: 32 });
  }
  const fileSpan = numBlocks * blockSize;
  if (numBlocks < 2 || fileSpan > bytes.byteLength) {
    throw new InputError(
      numBlocks < 2 ? "bad-value" : "truncated",
      `NumBlocks ${numBlocks} × BlockSize ${blockSize} = ${fileSpan} bytes, but the file has ${bytes.byteLength}`,
      { offset: 40 },
    );
  }
  if (numDirectoryBytes < 4 || numDirectoryBytes > fileSpan) {
    throw new InputError("bad-value", `NumDirectoryBytes ${numDirectoryBytes} is not within 4..${fileSpan}`, { offset: 44 });
  }
  const numDirectoryBlocks = Math.ceil(numDirectoryBytes / blockSize);
  if (numDirectoryBlocks * 4 > blockSize) {
    throw new InputError("unsupported", `the directory needs ${numDirectoryBlocks} blocks, more than one block map holds`, {
      offset: 44,
    });
  }

  // Each block belongs to at most one stream; block 0 is the superblock.
  const owner = new Uint8Array(numBlocks);
  owner[0] = 1;
  const claim = (block: number, at: number, what: string): number => {
    let problem: string | undefined;
    if (block >= numBlocks) problem = `is beyond the file's ${numBlocks} blocks`;
    else if (block === 0) problem = "is block 0, the superblock";
    else if (owner[block] !== 0) problem = "is referenced twice";
    if (problem !== undefined) throw new InputError("bad-value", `${what}: block ${block} ${problem}`, { offset: at });
    owner[block] = 1;
    return block;
  };
  claim(blockMapAddr, 52, "BlockMapAddr");

  const mapAt = blockMapAddr * blockSize;
  const dirBlocks: number[] = [];
  for (let i = 0; i < numDirectoryBlocks; i++) {
    const at = mapAt + 4 * i;
    dirBlocks.push(claim(c.seek(at).u32("directory block index"), at, `directory block ${i}`));
  }
  const directory = gather(bytes, blockSize, dirBlocks, numDirectoryBytes);

  const streams = mapErrors("stream directory", dirBlocks, blockSize, 44, () => {
    const d = new ByteCursor(directory);
    const numStreams = d.u32("NumStreams");
    if (numStreams > (numDirectoryBytes - 4) / 4) {
      throw new InputError("bad-value", `NumStreams ${numStreams} does not fit a ${numDirectoryBytes}-byte directory`, { offset: 0 });
    }
    const sizes: number[] = [];
    for (let i = 0; i < numStreams; i++) sizes.push(d.u32(`Sizes[${i}]`));
    return sizes.map((raw, i): StreamRef => {
      const size = raw === NIL_STREAM_SIZE ? 0 : raw;
      const count = Math.ceil(size / blockSize);
      d.need(count * 4, `block list of stream ${i} (${size} bytes)`);
      const blocks: number[] = [];
      for (let k = 0; k < count; k++) {
        // `at` is a directory offset here; mapErrors turns it into a file offset.
        const at = d.pos;
        blocks.push(claim(d.u32("block index"), at, `stream ${i} block ${k}`));
      }
      return { size, blocks, sizeEntryOffset: mapToFile(dirBlocks, blockSize, 4 + 4 * i, 44) };
    });
  });
  return { bytes, blockSize, streams };
}

/** Stream 1 (§4.3): the header, and the stream index of `/names` from the named-stream map. */
function readInfoStream(bytes: Uint8Array, streamCount: number): { header: Omit<PdbInfo, "debugId">; names?: number } {
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
interface DbiInfo {
  age: number;
  machine: number;
  symRecordStream: number;
  /** Module symbol streams with their symbol byte sizes. */
  modules: { stream: number; symByteSize: number }[];
  /** Optional debug header slots; NO_STREAM when absent. */
  slots: number[];
}

/** Stream 3 (§4.4): header, module list and optional debug header, with stream indices checked. */
function readDbiStream(bytes: Uint8Array, streamCount: number): DbiInfo {
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
    // Two NUL-terminated names follow the fixed part, then padding to a multiple of 4.
    const moduleName = cString(bytes, at + MOD_INFO_FIXED_SIZE, modInfoEnd, `module ${modules.length} ModuleName`);
    const objName = cString(bytes, moduleName.next, modInfoEnd, `module ${modules.length} ObjFileName`);
    modules.push({ stream, symByteSize });
    at = (objName.next + 3) & ~3;
  }
  const optAt = modInfoEnd + secContrSize + secMapSize + sourceInfoSize + typeServerMapSize + ecSize;
  c.need(optDbgHeaderSize, "optional debug header", optAt);
  const slots: number[] = [];
  for (let i = 0; i + 2 <= optDbgHeaderSize; i += 2) slots.push(checkStream(optAt + i, `debug header slot ${i / 2}`));
  return { age, machine, symRecordStream, modules: modules.filter((m) => m.stream !== NO_STREAM), slots };
}

/** `/names` (§4.5): the string buffer that FrameData's FrameFunc offsets point into. */
function readNamesBuffer(bytes: Uint8Array): Uint8Array {
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
function readSections(bytes: Uint8Array): PdbSection[] {
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
function readOmap(bytes: Uint8Array): OmapEntry[] {
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
 * Walks CodeView symbol records (u16 length, u16 kind, body) from `start` to `end`, collecting
 * S_PUB32 and procedure starts. A record whose length is below 2 or runs past `end` is an error.
 */
function readSymbols(bytes: Uint8Array, start: number, end: number, out: RawSymbol[]): void {
  const c = new ByteCursor(bytes);
  for (let at = start; at < end; ) {
    const length = c.seek(at).u16("symbol record length");
    if (length < 2) throw new InputError("bad-value", `symbol record length ${length} is too short for a kind`, { offset: at });
    const next = at + 2 + length;
    if (next > end) throw new InputError("truncated", `symbol record of ${length} bytes runs past the end of the symbols at ${hex(end)}`, { offset: at });
    const kind = c.u16("symbol record kind");
    if (kind === S_PUB32) {
      // flags u32, offset u32, segment u16, name.
      c.need(10, "S_PUB32", at + 4);
      const flags = c.u32("S_PUB32 flags");
      const offset = c.u32("S_PUB32 offset");
      const segment = c.u16("S_PUB32 segment");
      out.push({ name: recordName(bytes, c.pos, next), segment, offset, kind: "public", flags });
    } else if (PROC_KINDS.has(kind)) {
      // parent, end, next, length, debug start, debug end, type (u32 each), offset u32, segment u16, flags u8, name.
      c.need(35, "procedure symbol", at + 4);
      c.skip(12);
      const size = c.u32("procedure length");
      c.skip(12);
      const offset = c.u32("procedure offset");
      const segment = c.u16("procedure segment");
      c.u8("procedure flags");
      out.push({ name: recordName(bytes, c.pos, next), segment, offset, size, kind: "procedure", flags: 0 });
    }
    at = next;
  }
}

/** A record's trailing name: NUL-terminated, or running to the record end. */
function recordName(bytes: Uint8Array, pos: number, end: number): string {
  const body = bytes.subarray(pos, end);
  const nul = body.indexOf(0);
  return utf8.decode(nul < 0 ? body : body.subarray(0, nul));
}

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
 */
export function parsePdb(bytes: Uint8Array): Pdb {
  const msf = readMsf(bytes);
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
    });
  }

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
    symbols: (given) => resolveSymbols(raw, pdb, given),
  };
  if (omapFromSrc !== undefined) pdb.omapFromSrc = omapFromSrc;
  if (omapToSrc !== undefined) pdb.omapToSrc = omapToSrc;
  if (sections !== undefined) pdb.sections = sections;
  if (originalSections !== undefined) pdb.originalSections = originalSections;
  return pdb;
}

/** Converts raw symbols to RVAs, drops data publics, sorts, and merges public/procedure pairs. */
function resolveSymbols(raw: readonly RawSymbol[], pdb: Pdb, given: readonly SectionAddress[] | undefined): PdbSymbol[] {
  // Symbols use the pre-transform layout in an OMAP'd PDB: convert with the original headers, then map.
  const table: readonly SectionAddress[] | undefined =
    (pdb.omapFromSrc !== undefined ? pdb.originalSections : undefined) ?? pdb.sections ?? given;
  if (table === undefined) {
    throw new TypeError("the PDB has no section header stream: pass the image's section table to symbols()");
  }
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
    out.push(sym);
  }
  out.sort((a, b) => a.rva - b.rva || (a.kind === b.kind ? 0 : a.kind === "procedure" ? -1 : 1) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const procedureAt = new Set(out.filter((s) => s.kind === "procedure").map((s) => s.rva));
  return out.filter((s) => s.kind === "procedure" || !procedureAt.has(s.rva));
}
