/**
 * A Windows minidump reader (minidump.md §1–§3) over a {@link ByteSource}: it reads the header,
 * the stream directory and the streams the walker needs, and never the captured memory itself.
 * {@link minidumpSnapshot} turns the result into a {@link Snapshot} whose memory is read lazily,
 * page by page, through the memory descriptors, so a multi-gigabyte full-memory dump walks in
 * little memory. No Node APIs: it runs in a browser.
 *
 * Every malformed input throws an {@link InputError} naming the absolute file offset of the field
 * that is wrong: a count that the stream cannot hold names the count, an RVA outside the file
 * names the RVA field, data running past the end of the file names the DataSize field. Counts and
 * sizes are checked against the file before anything is allocated.
 */
import { InputError } from "../errors.js";
import { ByteCursor } from "../memory/cursor.js";
import type { MemoryReader } from "../memory/reader.js";
import type { AddressRange } from "../memory/window-memory.js";
import {
  AMD64_CONTEXT_LAYOUT,
  AMD64_CONTEXT_SIZE,
  CONTEXT_AMD64,
  CONTEXT_i386,
  CONTEXT_IA64,
  IA64_CONTEXT_SIZE,
  contextSize,
  decodeContext,
} from "../model/context.js";
import type { Machine } from "../model/machine.js";
import { fieldOf } from "../model/record.js";
import type { Module, OperatingSystem, Registers, Snapshot, ThreadSnapshot } from "../model/snapshot.js";
import { parseCodeView, type CodeViewInfo, type RuntimeFunction } from "./pe.js";

// ---------------------------------------------------------------------------------------------
// Byte sources

/**
 * Bytes read by position: a whole file in memory ({@link bytesSource}) or a file handle read on
 * demand (`fileSource` in src/node/file-source.ts). `read` returns exactly `length` bytes, or
 * `undefined` when any of them lies outside `[0, size)` or cannot be read. The returned bytes
 * may be a view into the source's own storage: callers must not modify them.
 */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Uint8Array | undefined;
}

/** A {@link ByteSource} over bytes already in memory (views, no copies). */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.byteLength,
    read(offset: number, length: number): Uint8Array | undefined {
      if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) return undefined;
      if (offset > bytes.byteLength || length > bytes.byteLength - offset) return undefined;
      return bytes.subarray(offset, offset + length);
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Constants (minidump.md §1, §2)

/** MINIDUMP_HEADER.Signature: "MDMP" read little-endian. */
export const MINIDUMP_SIGNATURE = 0x504d444d;
/** The low 16 bits of MINIDUMP_HEADER.Version; the high 16 bits are implementation-specific. */
export const MINIDUMP_VERSION = 0xa793;

/** Stream types (minidump.md §1.3). */
export const MINIDUMP_STREAM = {
  Unused: 0,
  ThreadList: 3,
  ModuleList: 4,
  MemoryList: 5,
  Exception: 6,
  SystemInfo: 7,
  ThreadExList: 8,
  Memory64List: 9,
  CommentA: 10,
  CommentW: 11,
  HandleData: 12,
  FunctionTable: 13,
  UnloadedModuleList: 14,
  MiscInfo: 15,
  MemoryInfoList: 16,
  ThreadInfoList: 17,
  ThreadNames: 24,
  BreakpadInfo: 0x47670001,
  BreakpadAssertionInfo: 0x47670002,
} as const;

/** SystemInfo.ProcessorArchitecture values (minidump.md §2.6). */
export const PROCESSOR_ARCHITECTURE = {
  INTEL: 0,
  ARM: 5,
  IA64: 6,
  AMD64: 9,
  IA32_ON_WIN64: 10,
  ARM64: 12,
  UNKNOWN: 0xffff,
} as const;

/** VS_FIXEDFILEINFO.dwSignature of a valid version resource (minidump.md §2.3). */
export const VS_FFI_SIGNATURE = 0xfeef04bd;

/** Limits applied before allocating or accepting a record. */
export const MINIDUMP_LIMITS = {
  /** CONTEXT bytes beyond the record (XSAVE data) Breakpad accepts: `kMaxXSaveAreaSize` (minidump.md §3.3). */
  maxXSaveArea: 16384,
  /** The longest MINIDUMP_STRING read, in bytes (a path is at most 32767 UTF-16 units). */
  maxStringBytes: 1 << 20,
  /** The largest CodeView record interpreted; a bigger one is passed over with a note. */
  maxCodeViewBytes: 1 << 16,
} as const;

const MINIDUMP_SIGNATURE_SWAPPED = 0x4d444d50;
const HEADER_SIZE = 32;
const DIRECTORY_ENTRY_SIZE = 12;
const THREAD_SIZE = 48;
const THREAD_EX_SIZE = 64;
const MODULE_SIZE = 108;
const MEMORY_DESCRIPTOR_SIZE = 16;
const MEMORY64_DESCRIPTOR_SIZE = 16;
const EXCEPTION_STREAM_SIZE = 168;
const EXCEPTION_MAXIMUM_PARAMETERS = 15;
const SYSTEM_INFO_SIZE = 56;
const MISC_INFO_MIN_SIZE = 24;
const BREAKPAD_INFO_SIZE = 12;
/** MDRawAssertionInfo: three 128-unit UTF-16 strings, the line and the type. */
const ASSERTION_STRING_BYTES = 256;
const ASSERTION_INFO_SIZE = 3 * ASSERTION_STRING_BYTES + 8;
const FUNCTION_TABLE_HEADER_SIZE = 24;
const FUNCTION_TABLE_DESCRIPTOR_SIZE = 32;
const RUNTIME_FUNCTION_SIZE = 12;
const CONTEXT_CPU_MASK = 0xffffff00;
const CV_RSDS = 0x53445352;
const CV_NB10 = 0x3031424e;
/** Breakpad's CodeView record for ELF modules (MD_CVINFOELF_SIGNATURE, 'BpEL': the bytes "LEpB" on disk), the signature followed by the build id. */
const CV_ELF = 0x4270454c;
/** IMAGE_DEBUG_MISC: DataType, Length, Unicode and 3 reserved bytes before the data. */
const MISC_RECORD_HEADER = 12;
const MISC_INFO_VERSIONS: Readonly<Record<number, number>> = { 24: 1, 44: 2, 232: 3, 832: 4, 1364: 5 };

const STREAM_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(MINIDUMP_STREAM).map(([name, type]) => [type, name]));

/** The name of a stream type ("ThreadList"), or its number in hex. */
export function streamTypeName(type: number): string {
  return STREAM_NAMES[type] ?? `0x${type.toString(16)}`;
}

// ---------------------------------------------------------------------------------------------
// The decoded dump

/** MINIDUMP_HEADER (32 bytes at offset 0). */
export interface MinidumpHeader {
  signature: number;
  /** The whole Version field: 0xA793 in the low 16 bits. */
  version: number;
  streamCount: number;
  directoryRva: number;
  checksum: number;
  /** time_t of the dump. */
  timeDateStamp: number;
  /** MINIDUMP_TYPE bits. */
  flags: bigint;
}

/** MINIDUMP_LOCATION_DESCRIPTOR. */
export interface MinidumpLocation {
  dataSize: number;
  rva: number;
}

/** One MINIDUMP_DIRECTORY entry. */
export interface MinidumpStreamEntry {
  index: number;
  streamType: number;
  location: MinidumpLocation;
  /** File offset of the directory entry itself. */
  offset: number;
}

/** Which stream declared a range of captured memory. */
export type MemoryOrigin = "MemoryList" | "Memory64List" | "thread stack" | "backing store";

/** A captured range of target memory and where its bytes are in the file. */
export interface MinidumpMemoryRange {
  /** StartOfMemoryRange. */
  start: bigint;
  /** Bytes captured. */
  size: bigint;
  /** File offset of the captured bytes. */
  rva: number;
  /** File offset of the descriptor that declared the range. */
  descriptor: number;
  from: MemoryOrigin;
  /** The size the descriptor declared, when the file holds fewer bytes (`size` is what is read). */
  declared?: bigint;
}

/** A decoded CONTEXT record. */
export interface MinidumpContext {
  machine: Machine;
  /** ContextFlags as stored (at offset 0, or 0x30 on AMD64). */
  contextFlags: number;
  /** Lower-case register names (eip/esp/ebp/… or rip/rsp/rbp/…) as the walker uses them. */
  registers: Registers;
  location: MinidumpLocation;
}

/** One MINIDUMP_THREAD or MINIDUMP_THREAD_EX. */
export interface MinidumpThread {
  id: number;
  suspendCount: number;
  priorityClass: number;
  priority: number;
  teb: bigint;
  stack: MinidumpMemoryRange;
  contextLocation: MinidumpLocation;
  /** The thread's own context; absent when the record was rejected (see `contextError`). */
  context?: MinidumpContext;
  /** Why the context was rejected (an unmodelled CPU, a bad size or flags). */
  contextError?: InputError;
  /** MINIDUMP_THREAD_EX.BackingStore: the IA-64 register backing store. */
  backingStore?: MinidumpMemoryRange;
  /** File offset of the thread's entry. */
  offset: number;
}

/** VS_FIXEDFILEINFO, the fields Breakpad prints. */
export interface MinidumpVersionInfo {
  signature: number;
  structVersion: number;
  fileVersionHi: number;
  fileVersionLo: number;
  productVersionHi: number;
  productVersionLo: number;
  fileFlagsMask: number;
  fileFlags: number;
  fileOs: number;
  fileType: number;
  fileSubtype: number;
  fileDateHi: number;
  fileDateLo: number;
}

/** One MINIDUMP_MODULE. */
export interface MinidumpModule {
  base: bigint;
  size: number;
  checksum: number;
  timeDateStamp: number;
  /** The module name as stored: usually the full path of the image. */
  path: string;
  /** The file-name part of `path`. */
  name: string;
  versionInfo: MinidumpVersionInfo;
  /** `a.b.c.d` from the file version, when the version resource is valid (minidump.md §2.3). */
  version?: string;
  cvRecord: MinidumpLocation;
  miscRecord: MinidumpLocation;
  /** The CodeView record, when it is an acceptable RSDS or NB10 record. */
  codeView?: CodeViewInfo;
  /** The ELF build id, when the CodeView record is Breakpad's `BpEL` record. */
  buildId?: Uint8Array;
  /**
   * The debug file: the PDB as an RSDS or NB10 record names it, the code file (`path`) of an ELF
   * module, else what an IMAGE_DEBUG_MISC record names; undefined when nothing names one.
   */
  debugFile?: string;
  /** Symbol-store identifier (minidump.md §8); for an ELF module its build id as a GUID, age 0. */
  debugId?: string;
  /** `%08X` TimeDateStamp followed by `%x` SizeOfImage; for an ELF module the build id in lower-case hex. */
  codeId: string;
  /** File offset of the module's entry. */
  offset: number;
}

/** The Exception stream (type 6). */
export interface MinidumpException {
  threadId: number;
  code: number;
  flags: number;
  /** ExceptionRecord: the address of a nested record. */
  record: bigint;
  address: bigint;
  numberParameters: number;
  /** The first min(NumberParameters, 15) ExceptionInformation values. */
  parameters: bigint[];
  contextLocation: MinidumpLocation;
  /** The faulting context; absent when it was rejected, and then the thread's own is used (minidump.md §3.3). */
  context?: MinidumpContext;
  contextError?: InputError;
}

/** SystemInfo's CPU union. */
export type MinidumpCpuInfo =
  | { kind: "x86"; vendorId: string; versionInformation: number; featureInformation: number; amdExtendedCpuFeatures: number }
  | { kind: "other"; processorFeatures: [bigint, bigint] };

/** The SystemInfo stream (type 7). */
export interface MinidumpSystemInfo {
  processorArchitecture: number;
  processorLevel: number;
  processorRevision: number;
  numberOfProcessors: number;
  productType: number;
  majorVersion: number;
  minorVersion: number;
  buildNumber: number;
  platformId: number;
  csdVersionRva: number;
  /** The service-pack string ("Service Pack 2"), when CSDVersionRva is not 0. */
  csdVersion?: string;
  suiteMask: number;
  cpu: MinidumpCpuInfo;
  /** The machine ProcessorArchitecture names, when the walker models it. */
  machine?: Machine;
}

/** The MiscInfo stream (type 15): the fields common to every version. */
export interface MinidumpMiscInfo {
  sizeOfInfo: number;
  /** 1-5 from SizeOfInfo (minidump.md §2.7); undefined for a size no version has. */
  version?: number;
  flags1: number;
  processId: number;
  processCreateTime: number;
  processUserTime: number;
  processKernelTime: number;
}

/** One dynamic function table of the FunctionTable stream. */
export interface MinidumpFunctionTable {
  minimumAddress: bigint;
  maximumAddress: bigint;
  baseAddress: bigint;
  entryCount: number;
  sizeOfAlignPad: number;
  /** The OS's native descriptor (DYNAMIC_FUNCTION_TABLE on x64), raw. */
  nativeDescriptor: Uint8Array;
  /** EntryCount × SizeOfFunctionEntry bytes, raw. */
  entries: Uint8Array;
  /** The entries as RUNTIME_FUNCTIONs (RVAs relative to `baseAddress`) when the entry size is 12. */
  functions?: RuntimeFunction[];
  /** File offset of the table's descriptor. */
  offset: number;
}

/** The FunctionTable stream (type 13, minidump.md §2.8). */
export interface MinidumpFunctionTableStream {
  sizeOfHeader: number;
  sizeOfDescriptor: number;
  sizeOfNativeDescriptor: number;
  sizeOfFunctionEntry: number;
  sizeOfAlignPad: number;
  tables: MinidumpFunctionTable[];
}

/** Breakpad's own stream (0x47670001). */
export interface MinidumpBreakpadInfo {
  validity: number;
  /** The thread that wrote the dump (Breakpad skips it), when the validity bit says so. */
  dumpThreadId?: number;
  requestingThreadId?: number;
}

/** Breakpad's assertion stream (0x47670002): an invalid-parameter or pure-virtual-call report. */
export interface MinidumpAssertion {
  expression: string;
  function: string;
  file: string;
  line: number;
  /** 1 invalid parameter, 2 pure virtual call (MD_ASSERTION_INFO_TYPE_*). */
  type: number;
}

/** A parsed minidump. Captured memory stays in the source until it is read. */
export interface Minidump {
  source: ByteSource;
  file?: string;
  header: MinidumpHeader;
  /** The directory, every entry in order (unused ones too). */
  streams: MinidumpStreamEntry[];
  systemInfo?: MinidumpSystemInfo;
  /** The machine the contexts (or else SystemInfo) say; undefined when neither names a modelled one. */
  machine?: Machine;
  threads: MinidumpThread[];
  /** The stream the threads came from. */
  threadStream?: "ThreadList" | "ThreadExList";
  modules: MinidumpModule[];
  /** MemoryList and Memory64List ranges, sorted by start, checked not to overlap. */
  memory: MinidumpMemoryRange[];
  exception?: MinidumpException;
  miscInfo?: MinidumpMiscInfo;
  functionTable?: MinidumpFunctionTableStream;
  breakpadInfo?: MinidumpBreakpadInfo;
  assertion?: MinidumpAssertion;
  /** Things passed over without failing (a rejected CodeView record, an exception context not used, ...). */
  notes: string[];
}

// ---------------------------------------------------------------------------------------------
// Reading helpers

const hex = (n: number | bigint): string => `0x${n.toString(16)}`;
const hexUpper = (n: number, digits: number): string => n.toString(16).toUpperCase().padStart(digits, "0");

/**
 * Bounds-checked access to the source; every error names an absolute offset. What the reader
 * passes over or repairs to keep going (a damaged or cut-off dump) goes to `notes`, each naming
 * the offset of the field that was wrong.
 */
class Input {
  readonly size: number;
  readonly notes: string[] = [];
  constructor(readonly source: ByteSource) {
    this.size = source.size;
  }

  /** Records something passed over or repaired, at the offset of the field concerned. */
  note(offset: number | undefined, text: string): void {
    this.notes.push(offset === undefined ? text : `offset ${hex(offset)}: ${text}`);
  }

  /** The part of a location the file holds: all of it, its bytes up to the end of the file, or none when its RVA lies outside. */
  held(loc: MinidumpLocation): MinidumpLocation {
    if (loc.rva >= this.size) return { dataSize: 0, rva: loc.rva };
    return loc.dataSize <= this.size - loc.rva ? loc : { dataSize: this.size - loc.rva, rva: loc.rva };
  }

  /**
   * {@link held}, with a note when bytes are lost: `DataSize` is at `at` and `Rva` at `at + 4`.
   */
  clip(loc: MinidumpLocation, at: number, what: string): MinidumpLocation {
    const held = this.held(loc);
    if (held.dataSize === loc.dataSize) return held;
    if (held.dataSize === 0) {
      this.note(at + 4, `${what}: RVA ${hex(loc.rva)} lies outside the file (${hex(this.size)} bytes); none of its ${loc.dataSize} byte(s) are read`);
    } else {
      this.note(at, `${what}: ${loc.dataSize} byte(s) at RVA ${hex(loc.rva)} run past the end of the file (${hex(this.size)} bytes); the first ${held.dataSize} are read`);
    }
    return held;
  }

  /** Runs `read`; an InputError becomes a note (`what` passed over) and `undefined`. */
  lenient<T>(what: string, read: () => T): T | undefined {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      this.note(e.offset, `${what} passed over: ${e.reason}`);
      return undefined;
    }
  }

  /** A cursor over `length` bytes at `offset`; if they are not all in the file, "truncated" at `errorAt`. */
  cursor(offset: number, length: number, what: string, errorAt = offset): ByteCursor {
    if (offset > this.size || length > this.size - offset) {
      throw new InputError("truncated", `${what}: ${length} byte(s) at ${hex(offset)} run past the end of the file (${hex(this.size)} bytes)`, { offset: errorAt });
    }
    const bytes = this.source.read(offset, length);
    if (bytes === undefined || bytes.byteLength !== length) {
      throw new InputError("truncated", `${what}: cannot read ${length} byte(s) at ${hex(offset)}`, { offset: errorAt });
    }
    return new ByteCursor(bytes, offset);
  }

  /**
   * Checks a location (`DataSize` at `at`, `Rva` at `at + 4`) against the file: an RVA outside
   * it is "bad-value" at the Rva field, data running past its end is "truncated" at DataSize.
   */
  location(loc: MinidumpLocation, at: number, what: string, needed = loc.dataSize): void {
    if (loc.rva > this.size) {
      throw new InputError("bad-value", `${what}: RVA ${hex(loc.rva)} lies outside the file (${hex(this.size)} bytes)`, { offset: at + 4 });
    }
    if (needed > this.size - loc.rva) {
      throw new InputError("truncated", `${what}: ${needed} byte(s) at RVA ${hex(loc.rva)} run past the end of the file (${hex(this.size)} bytes)`, { offset: at });
    }
  }

  /** A MINIDUMP_STRING (u32 byte length, UTF-16LE) whose RVA is the u32 at `at`. */
  string(rva: number, at: number, what: string): string {
    if (rva > this.size - 4 || this.size < 4) {
      throw new InputError("bad-value", `${what}: RVA ${hex(rva)} leaves no room for a MINIDUMP_STRING in the file (${hex(this.size)} bytes)`, { offset: at });
    }
    const length = this.cursor(rva, 4, `${what} length`).u32();
    if (length % 2 !== 0) throw new InputError("bad-value", `${what}: MINIDUMP_STRING length ${length} is odd (it counts UTF-16 bytes)`, { offset: rva });
    if (length > MINIDUMP_LIMITS.maxStringBytes) {
      throw new InputError("bad-value", `${what}: MINIDUMP_STRING length ${length} exceeds the ${MINIDUMP_LIMITS.maxStringBytes}-byte limit`, { offset: rva });
    }
    const body = this.cursor(rva + 4, length, `${what} (${length} bytes of UTF-16)`, rva);
    return new TextDecoder("utf-16le").decode(body.bytes);
  }
}

/**
 * The `u32 count` of a list stream and where its entries start (minidump.md §2.1: optional 4
 * padding bytes). `stream` is the directory entry as declared and `held` the part of it the file
 * holds: a count the stream cannot hold is cut to the entries that fit, with a note.
 */
function listEntries(input: Input, stream: MinidumpStreamEntry, held: MinidumpLocation, entrySize: number): { count: number; first: number } {
  const { rva, dataSize } = stream.location;
  const name = streamTypeName(stream.streamType);
  if (held.dataSize < 4) {
    input.note(stream.offset + 4, `${name} stream holds ${held.dataSize} byte(s), too few for its u32 count: no entries are read`);
    return { count: 0, first: rva };
  }
  const count = input.cursor(rva, 4, `${name} count`).u32();
  // Breakpad also accepts 4 padding bytes after the count: DataSize == 8 + n·entrySize.
  const first = dataSize === 8 + count * entrySize ? rva + 8 : rva + 4;
  const fit = Math.floor((held.dataSize - (first - rva)) / entrySize);
  if (count <= fit) return { count, first };
  const why = held.dataSize < dataSize ? `the file holds ${held.dataSize} of its ${dataSize} bytes` : `the stream holds ${dataSize} bytes`;
  input.note(rva, `${name} count ${count} needs ${4 + count * entrySize} bytes of ${entrySize}-byte entries but ${why}: the first ${fit} entr${fit === 1 ? "y is" : "ies are"} read`);
  return { count: fit, first };
}

/**
 * Reads a MINIDUMP_MEMORY_DESCRIPTOR at the cursor (start u64, DataSize u32, Rva u32). A range
 * keeps only the bytes the file holds (`declared` then says what the descriptor claimed); one
 * that would run past the end of the 64-bit address space keeps none. The caller notes losses.
 */
function memoryDescriptor(input: Input, c: ByteCursor, from: MemoryOrigin): MinidumpMemoryRange {
  const at = c.offset;
  const start = c.u64();
  const dataSize = c.u32();
  const rva = c.u32();
  const held = start + BigInt(dataSize) > 1n << 64n ? 0 : input.held({ dataSize, rva }).dataSize;
  const range: MinidumpMemoryRange = { start, size: BigInt(held), rva, descriptor: at, from };
  if (held !== dataSize) range.declared = BigInt(dataSize);
  return range;
}

/** Notes the ranges of a list that lost bytes: the first in words, the rest counted. */
function noteLostRanges(input: Input, what: string, ranges: readonly MinidumpMemoryRange[]): void {
  const lost = ranges.filter((r) => r.declared !== undefined);
  const first = lost[0];
  if (first === undefined) return;
  const end = first.start + first.declared!;
  const more = lost.length > 1 ? `; ${lost.length - 1} more range(s) of the list lose bytes the same way` : "";
  const outOfSpace = first.start + first.declared! > 1n << 64n;
  const cause = outOfSpace ? "would run past the end of the 64-bit address space" : `runs past the end of the file (${hex(input.size)} bytes)`;
  // The field at fault: the start, the Rva (MemoryList and thread descriptors) or the DataSize.
  const field = outOfSpace ? first.descriptor : first.from !== "Memory64List" && first.rva >= input.size ? first.descriptor + 12 : first.descriptor + 8;
  input.note(field, `${what}: the range ${hex(first.start)}..${hex(end)} (${first.declared} bytes at file offset ${hex(first.rva)}) ${cause}; ${first.size} of its bytes are read${more}`);
}

/** The part of a path after its last `\` or `/`. */
function fileNamePart(path: string): string {
  return path.slice(Math.max(path.lastIndexOf("\\"), path.lastIndexOf("/")) + 1);
}

// ---------------------------------------------------------------------------------------------
// CONTEXT records (minidump.md §3.3)

const AMD64_FLAGS_OFFSET = fieldOf(AMD64_CONTEXT_LAYOUT, "ContextFlags").offset;

const MACHINE_OF_ARCH: Readonly<Record<number, Machine>> = {
  [PROCESSOR_ARCHITECTURE.INTEL]: "x86",
  [PROCESSOR_ARCHITECTURE.IA32_ON_WIN64]: "x86",
  [PROCESSOR_ARCHITECTURE.AMD64]: "x64",
  [PROCESSOR_ARCHITECTURE.IA64]: "ia64",
};

const CPU_BIT_OF_MACHINE: Readonly<Record<Machine, number>> = { x86: CONTEXT_i386, x64: CONTEXT_AMD64, ia64: CONTEXT_IA64 };

/**
 * Reads the CONTEXT at `loc` (its descriptor's DataSize at `at`). The layout is chosen from the
 * size and SystemInfo, never from the first u32 alone, as Breakpad does (minidump.md §3.3):
 * exactly 1232 bytes, or SystemInfo AMD64 and at least 1232, is AMD64 and needs CONTEXT_AMD64 in
 * the flags at 0x30; otherwise the CPU bits of the flags at offset 0 decide, with SystemInfo
 * standing in when they are 0. Up to 16384 trailing XSAVE bytes are skipped. An x86 record
 * shorter than 716 bytes is accepted and 716 bytes are read regardless. IA-64 (0xA70 bytes) is
 * this project's addition.
 */
function readContext(input: Input, loc: MinidumpLocation, at: number, systemArch: number | undefined, what: string): MinidumpContext {
  input.location(loc, at, what);
  const size = loc.dataSize;
  if (size === 0) throw new InputError("bad-value", `${what}: the CONTEXT's DataSize is 0`, { offset: at });
  const decode = (machine: Machine): MinidumpContext => {
    const n = contextSize(machine);
    if (size > n + MINIDUMP_LIMITS.maxXSaveArea) {
      throw new InputError("bad-value", `${what}: a ${size}-byte ${machine} CONTEXT carries more than ${MINIDUMP_LIMITS.maxXSaveArea} bytes of XSAVE data`, { offset: at });
    }
    const c = input.cursor(loc.rva, n, `${what} (${n}-byte ${machine} CONTEXT)`, at);
    const ctx = decodeContext(machine, c.bytes);
    return { machine, contextFlags: ctx.contextFlags, registers: ctx.registers, location: loc };
  };

  if (size === AMD64_CONTEXT_SIZE || (systemArch === PROCESSOR_ARCHITECTURE.AMD64 && size >= AMD64_CONTEXT_SIZE)) {
    const flags = input.cursor(loc.rva + AMD64_FLAGS_OFFSET, 4, `${what} ContextFlags`, at).u32();
    // Breakpad checks the stored CPU bits even when SystemInfo says AMD64 (minidump.md §3.3).
    if ((flags & CONTEXT_CPU_MASK) >>> 0 !== CONTEXT_AMD64) {
      throw new InputError("bad-value", `${what}: a ${size}-byte context whose ContextFlags ${hex(flags)} lack CONTEXT_AMD64 (${hex(CONTEXT_AMD64)}) is not an AMD64 context`, {
        offset: loc.rva + AMD64_FLAGS_OFFSET,
      });
    }
    return decode("x64");
  }
  const flags = input.cursor(loc.rva, 4, `${what} ContextFlags`, at).u32();
  let cpu = (flags & CONTEXT_CPU_MASK) >>> 0;
  if (cpu === 0) {
    const fromSystem = systemArch === undefined ? undefined : MACHINE_OF_ARCH[systemArch];
    if (fromSystem === undefined) {
      throw new InputError("unsupported", `${what}: ContextFlags ${hex(flags)} name no CPU and SystemInfo names no modelled one`, { offset: loc.rva });
    }
    cpu = CPU_BIT_OF_MACHINE[fromSystem];
  }
  if (cpu === CONTEXT_i386) return decode("x86");
  if (cpu === CONTEXT_IA64) {
    if (size < IA64_CONTEXT_SIZE) {
      throw new InputError("bad-value", `${what}: an IA-64 CONTEXT is ${IA64_CONTEXT_SIZE} bytes, not ${size}`, { offset: at });
    }
    return decode("ia64");
  }
  if (cpu === CONTEXT_AMD64) {
    throw new InputError("bad-value", `${what}: ContextFlags at offset 0 say AMD64, but an AMD64 CONTEXT is ${AMD64_CONTEXT_SIZE} bytes, not ${size}`, { offset: at });
  }
  throw new InputError("unsupported", `${what}: ContextFlags ${hex(flags)} name a CPU (${hex(cpu)}) the walker does not model`, { offset: loc.rva });
}

/** Runs `read`, turning an InputError into a recorded rejection. */
function attempt<T>(read: () => T): { value: T } | { error: InputError } {
  try {
    return { value: read() };
  } catch (e) {
    if (e instanceof InputError) return { error: e };
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Streams

function readHeader(input: Input): MinidumpHeader {
  const c = input.cursor(0, Math.min(HEADER_SIZE, input.size), "MINIDUMP_HEADER");
  const signature = c.u32("MINIDUMP_HEADER.Signature");
  if (signature === MINIDUMP_SIGNATURE_SWAPPED) {
    throw new InputError("unsupported", `big-endian minidump (signature "PMDM"): only little-endian dumps are read`, { offset: 0 });
  }
  if (signature !== MINIDUMP_SIGNATURE) {
    throw new InputError("bad-magic", `not a minidump: signature is ${hex(signature)}, expected "MDMP" (${hex(MINIDUMP_SIGNATURE)})`, { offset: 0 });
  }
  const version = c.u32("MINIDUMP_HEADER.Version");
  if ((version & 0xffff) !== MINIDUMP_VERSION) {
    throw new InputError("bad-magic", `minidump version ${hex(version)}: the low 16 bits must be ${hex(MINIDUMP_VERSION)}`, { offset: 4 });
  }
  const streamCount = c.u32("MINIDUMP_HEADER.NumberOfStreams");
  const directoryRva = c.u32("MINIDUMP_HEADER.StreamDirectoryRva");
  const checksum = c.u32("MINIDUMP_HEADER.CheckSum");
  const timeDateStamp = c.u32("MINIDUMP_HEADER.TimeDateStamp");
  const flags = c.u64("MINIDUMP_HEADER.Flags");
  return { signature, version, streamCount, directoryRva, checksum, timeDateStamp, flags };
}

function readDirectory(input: Input, header: MinidumpHeader): MinidumpStreamEntry[] {
  const { directoryRva, streamCount } = header;
  if (directoryRva > input.size) {
    throw new InputError("bad-value", `StreamDirectoryRva ${hex(directoryRva)} lies outside the file (${hex(input.size)} bytes)`, { offset: 12 });
  }
  let count = streamCount;
  if (streamCount * DIRECTORY_ENTRY_SIZE > input.size - directoryRva) {
    count = Math.floor((input.size - directoryRva) / DIRECTORY_ENTRY_SIZE);
    const why = `NumberOfStreams ${streamCount} needs ${streamCount * DIRECTORY_ENTRY_SIZE} bytes of directory at ${hex(directoryRva)}, but the file ends at ${hex(input.size)}`;
    if (count === 0) throw new InputError("bad-value", why, { offset: 8 });
    input.note(8, `${why}: the first ${count} entr${count === 1 ? "y is" : "ies are"} read`);
  }
  const c = input.cursor(directoryRva, count * DIRECTORY_ENTRY_SIZE, "stream directory");
  const out: MinidumpStreamEntry[] = [];
  for (let index = 0; index < count; index++) {
    const offset = c.offset;
    const streamType = c.u32();
    const dataSize = c.u32();
    const rva = c.u32();
    out.push({ index, streamType, location: { dataSize, rva }, offset });
  }
  return out;
}

function readSystemInfo(input: Input, s: MinidumpStreamEntry): MinidumpSystemInfo {
  if (s.location.dataSize < SYSTEM_INFO_SIZE) {
    throw new InputError("truncated", `SystemInfo stream is ${s.location.dataSize} bytes, not ${SYSTEM_INFO_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, SYSTEM_INFO_SIZE, "SystemInfo");
  const processorArchitecture = c.u16();
  const processorLevel = c.u16();
  const processorRevision = c.u16();
  const numberOfProcessors = c.u8();
  const productType = c.u8();
  const majorVersion = c.u32();
  const minorVersion = c.u32();
  const buildNumber = c.u32();
  const platformId = c.u32();
  const csdAt = c.offset;
  const csdVersionRva = c.u32();
  const suiteMask = c.u16();
  c.skip(2);
  let cpu: MinidumpCpuInfo;
  if (processorArchitecture === PROCESSOR_ARCHITECTURE.INTEL || processorArchitecture === PROCESSOR_ARCHITECTURE.IA32_ON_WIN64) {
    const vendor = c.take(12);
    // Breakpad prints the 12 bytes as a C string: up to the first NUL.
    const vendorId = Array.from(vendor, (b) => String.fromCharCode(b)).join("").split("\0", 1)[0]!;
    cpu = { kind: "x86", vendorId, versionInformation: c.u32(), featureInformation: c.u32(), amdExtendedCpuFeatures: c.u32() };
  } else {
    cpu = { kind: "other", processorFeatures: [c.u64(), c.u64()] };
  }
  const info: MinidumpSystemInfo = {
    processorArchitecture,
    processorLevel,
    processorRevision,
    numberOfProcessors,
    productType,
    majorVersion,
    minorVersion,
    buildNumber,
    platformId,
    csdVersionRva,
    suiteMask,
    cpu,
  };
  if (csdVersionRva !== 0) {
    // Breakpad leaves the service-pack string out when it cannot be read.
    const csd = input.lenient("SystemInfo CSDVersion", () => input.string(csdVersionRva, csdAt, "SystemInfo CSDVersion"));
    if (csd !== undefined) info.csdVersion = csd;
  }
  const machine = MACHINE_OF_ARCH[processorArchitecture];
  if (machine !== undefined) info.machine = machine;
  return info;
}

function readThreads(input: Input, s: MinidumpStreamEntry, held: MinidumpLocation, ex: boolean, systemArch: number | undefined): MinidumpThread[] {
  const entrySize = ex ? THREAD_EX_SIZE : THREAD_SIZE;
  const { count, first } = listEntries(input, s, held, entrySize);
  if (count === 0) return [];
  const c = input.cursor(first, count * entrySize, `${streamTypeName(s.streamType)} entries`);
  const threads: MinidumpThread[] = [];
  for (let i = 0; i < count; i++) {
    const offset = c.offset;
    const what = `thread ${i}`;
    const id = c.u32();
    const suspendCount = c.u32();
    const priorityClass = c.u32();
    const priority = c.u32();
    const teb = c.u64();
    const stack = memoryDescriptor(input, c, "thread stack");
    noteLostRanges(input, `${what} (id ${id}) Stack`, [stack]);
    const contextAt = c.offset;
    const contextLocation: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
    const thread: MinidumpThread = { id, suspendCount, priorityClass, priority, teb, stack, contextLocation, offset };
    if (ex) {
      thread.backingStore = memoryDescriptor(input, c, "backing store");
      noteLostRanges(input, `${what} (id ${id}) BackingStore`, [thread.backingStore]);
    }
    const ctx = attempt(() => readContext(input, contextLocation, contextAt, systemArch, `${what} (id ${id}) ThreadContext`));
    if ("value" in ctx) thread.context = ctx.value;
    else thread.contextError = ctx.error;
    threads.push(thread);
  }
  return threads;
}

function readVersionInfo(c: ByteCursor): MinidumpVersionInfo {
  return {
    signature: c.u32(),
    structVersion: c.u32(),
    fileVersionHi: c.u32(),
    fileVersionLo: c.u32(),
    productVersionHi: c.u32(),
    productVersionLo: c.u32(),
    fileFlagsMask: c.u32(),
    fileFlags: c.u32(),
    fileOs: c.u32(),
    fileType: c.u32(),
    fileSubtype: c.u32(),
    fileDateHi: c.u32(),
    fileDateLo: c.u32(),
  };
}

/** What a module's debug records say about its symbols (minidump.md §2.3, §8). */
interface ModuleIdentity {
  codeView?: CodeViewInfo;
  /** The ELF build id of a `BpEL` CodeView record. */
  buildId?: Uint8Array;
  debugFile?: string;
}

/**
 * A module's CodeView record as Breakpad reads it (minidump.md §2.3): RSDS needs DataSize ≥ 25,
 * NB10 ≥ 17, and the record's last byte must be NUL, or the record is rejected, and with it all
 * of the module's debug information; `BpEL` (Breakpad's ELF record) is the signature followed by
 * the build id; a record with another signature (or none) is kept but names nothing. Returns
 * the identity, or why the record was rejected.
 */
function readCodeView(input: Input, loc: MinidumpLocation, what: string): ModuleIdentity | string {
  if (loc.dataSize > MINIDUMP_LIMITS.maxCodeViewBytes) return `${what}: ${loc.dataSize}-byte CodeView record is larger than ${MINIDUMP_LIMITS.maxCodeViewBytes} bytes`;
  const c = input.cursor(loc.rva, loc.dataSize, `${what} CodeView record`);
  const bytes = c.bytes;
  // Breakpad reads a signature only from a record longer than one.
  const signature = bytes.length > 4 ? c.u32() : undefined;
  const lastNul = bytes[bytes.length - 1] === 0;
  if (signature === CV_RSDS && (bytes.length < 25 || !lastNul)) return `${what}: RSDS record of ${bytes.length} bytes is shorter than 25 or does not end in NUL`;
  if (signature === CV_NB10 && (bytes.length < 17 || !lastNul)) return `${what}: NB10 record of ${bytes.length} bytes is shorter than 17 or does not end in NUL`;
  if (signature === CV_RSDS || signature === CV_NB10) {
    const cv = parseCodeView(input.cursor(loc.rva, loc.dataSize, `${what} CodeView record`));
    return { codeView: cv, debugFile: cv.pdbName };
  }
  if (signature === CV_ELF) return { buildId: bytes.slice(4) };
  const sig = signature === undefined ? `a ${bytes.length}-byte CodeView record has no signature` : `CodeView signature ${hex(signature)} is not RSDS, NB10 or BpEL`;
  input.note(loc.rva, `${what}: ${sig}; the module has no debug identifier`);
  return {};
}

/**
 * The debug file an IMAGE_DEBUG_MISC record names (Breakpad's fallback when the CodeView record
 * names none), or why the record was rejected: it must be 12 bytes or more, no larger than the
 * CodeView limit, and its Length field must equal its DataSize.
 */
function readMiscRecord(input: Input, loc: MinidumpLocation, what: string): { debugFile: string } | string {
  if (loc.dataSize < MISC_RECORD_HEADER || loc.dataSize > MINIDUMP_LIMITS.maxCodeViewBytes) return `${what}: a ${loc.dataSize}-byte IMAGE_DEBUG_MISC record`;
  const c = input.cursor(loc.rva, loc.dataSize, `${what} IMAGE_DEBUG_MISC record`);
  c.skip(4); // DataType
  const length = c.u32();
  if (length !== loc.dataSize) return `${what}: IMAGE_DEBUG_MISC Length ${length} is not its DataSize ${loc.dataSize}`;
  const unicode = c.u8() !== 0;
  const data = c.bytes.subarray(MISC_RECORD_HEADER);
  if (unicode && data.length % 2 !== 0) return { debugFile: "" };
  const text = new TextDecoder(unicode ? "utf-16le" : "latin1").decode(data);
  return { debugFile: text.split("\0", 1)[0]! };
}

/** The Breakpad debug identifier of an ELF build id: its first 16 bytes (zero-filled) as a GUID with little-endian fields, age 0 (minidump.md §8). */
export function elfDebugId(buildId: Uint8Array): string {
  const g = new Uint8Array(16);
  g.set(buildId.subarray(0, 16));
  const dv = new DataView(g.buffer);
  const data4 = Array.from(g.subarray(8), (b) => hexUpper(b, 2)).join("");
  return hexUpper(dv.getUint32(0, true), 8) + hexUpper(dv.getUint16(4, true), 4) + hexUpper(dv.getUint16(6, true), 4) + data4 + "0";
}

/**
 * The module list (minidump.md §2.3). Modules whose entries the file holds are read; one with no
 * bytes or a range past the end of the address space is passed over, an unreadable name is
 * left empty, and a rejected debug record leaves the module without debug information (as
 * Breakpad leaves it); each with a note.
 */
function readModules(input: Input, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpModule[] {
  const { count, first } = listEntries(input, s, held, MODULE_SIZE);
  if (count === 0) return [];
  const c = input.cursor(first, count * MODULE_SIZE, "ModuleList entries");
  const modules: MinidumpModule[] = [];
  for (let i = 0; i < count; i++) {
    const offset = c.offset;
    const what = `module ${i}`;
    const base = c.u64();
    const size = c.u32();
    const checksum = c.u32();
    const timeDateStamp = c.u32();
    const nameRva = c.u32();
    const versionInfo = readVersionInfo(c);
    const cvAt = c.offset;
    const cvRecord: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
    const miscRecord: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
    c.skip(16); // Reserved0, Reserved1
    if (size === 0 || base + BigInt(size) > 1n << 64n) {
      input.note(offset + 8, `${what}: ${hex(size)} bytes at ${hex(base)} ${size === 0 ? "cover nothing" : "run past the end of the 64-bit address space"}; the module is passed over`);
      continue;
    }
    const path = input.lenient(`${what} name`, () => input.string(nameRva, offset + 20, `${what} ModuleNameRva`)) ?? "";
    const module: MinidumpModule = {
      base,
      size,
      checksum,
      timeDateStamp,
      path,
      name: fileNamePart(path),
      versionInfo,
      cvRecord,
      miscRecord,
      codeId: hexUpper(timeDateStamp, 8) + size.toString(16),
      offset,
    };
    if (versionInfo.signature === VS_FFI_SIGNATURE && (versionInfo.structVersion & 0x10000) !== 0) {
      const { fileVersionHi: hi, fileVersionLo: lo } = versionInfo;
      module.version = `${hi >>> 16}.${hi & 0xffff}.${lo >>> 16}.${lo & 0xffff}`;
    }
    const label = `${what} (${module.name === "" ? "no name" : module.name})`;
    const identity = moduleIdentity(input, cvRecord, miscRecord, cvAt, label);
    if (typeof identity === "string") input.note(undefined, `${identity}; the module has no debug file or identifier`);
    else {
      if (identity.codeView !== undefined) {
        module.codeView = identity.codeView;
        module.debugId = identity.codeView.debugId;
      }
      if (identity.buildId !== undefined) {
        // An ELF module: the debug file is the code file, the code id the whole build id.
        module.buildId = identity.buildId;
        module.debugFile = path;
        module.debugId = elfDebugId(identity.buildId);
        module.codeId = Array.from(identity.buildId, (b) => b.toString(16).padStart(2, "0")).join("");
      }
      if (identity.debugFile !== undefined && module.debugFile === undefined) module.debugFile = identity.debugFile;
    }
    modules.push(module);
  }
  return modules;
}

/**
 * A module's debug identity from its CodeView and IMAGE_DEBUG_MISC records, each read only when
 * its DataSize is not 0 (Breakpad's MinidumpModule::ReadAuxiliaryData): a record that is
 * declared but cannot be read or is rejected leaves the module with no debug information.
 */
function moduleIdentity(input: Input, cvRecord: MinidumpLocation, miscRecord: MinidumpLocation, cvAt: number, what: string): ModuleIdentity | string {
  const whole = (loc: MinidumpLocation, at: number, name: string): string | undefined =>
    loc.rva > input.size
      ? `offset ${hex(at + 4)}: ${what}: its ${name} at RVA ${hex(loc.rva)} lies outside the file (${hex(input.size)} bytes)`
      : loc.dataSize > input.size - loc.rva
        ? `offset ${hex(at)}: ${what}: its ${loc.dataSize}-byte ${name} at RVA ${hex(loc.rva)} runs past the end of the file (${hex(input.size)} bytes)`
        : undefined;
  let identity: ModuleIdentity = {};
  if (cvRecord.dataSize !== 0) {
    const cut = whole(cvRecord, cvAt, "CodeView record");
    if (cut !== undefined) return cut;
    const cv = readCodeView(input, cvRecord, what);
    if (typeof cv === "string") return `offset ${hex(cvRecord.rva)}: ${cv}`;
    identity = cv;
  }
  if (miscRecord.dataSize !== 0) {
    const cut = whole(miscRecord, cvAt + 8, "IMAGE_DEBUG_MISC record");
    if (cut !== undefined) return cut;
    const misc = readMiscRecord(input, miscRecord, what);
    if (typeof misc === "string") return `offset ${hex(miscRecord.rva)}: ${misc}`;
    if (identity.debugFile === undefined && identity.buildId === undefined) identity.debugFile = misc.debugFile;
  }
  return identity;
}

function readMemoryList(input: Input, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpMemoryRange[] {
  const { count, first } = listEntries(input, s, held, MEMORY_DESCRIPTOR_SIZE);
  if (count === 0) return [];
  const c = input.cursor(first, count * MEMORY_DESCRIPTOR_SIZE, "MemoryList entries");
  const out: MinidumpMemoryRange[] = [];
  for (let i = 0; i < count; i++) out.push(memoryDescriptor(input, c, "MemoryList"));
  noteLostRanges(input, "MemoryList", out);
  return out;
}

/**
 * Memory64List (minidump.md §2.4): u64 count, u64 BaseRva, then {start, size} pairs whose data
 * lie back to back. As with the other lists, what the file holds is read and the rest noted.
 */
function readMemory64List(input: Input, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpMemoryRange[] {
  const { rva, dataSize } = s.location;
  if (held.dataSize < 16) {
    input.note(s.offset + 4, `Memory64List stream holds ${held.dataSize} byte(s), too few for its 16-byte header: no ranges are read`);
    return [];
  }
  const h = input.cursor(rva, 16, "Memory64List header");
  let count = h.u64();
  const baseRva = h.u64();
  const fit = BigInt(Math.floor((held.dataSize - 16) / MEMORY64_DESCRIPTOR_SIZE));
  if (count > fit) {
    const why = held.dataSize < dataSize ? `the file holds ${held.dataSize} of its ${dataSize} bytes` : `the stream holds ${dataSize} bytes`;
    input.note(rva, `Memory64List count ${count} needs ${16n + count * 16n} bytes but ${why}: the first ${fit} ranges are read`);
    count = fit;
  }
  if (baseRva > BigInt(input.size)) {
    input.note(rva + 8, `Memory64List BaseRva ${hex(baseRva)} lies outside the file (${hex(input.size)} bytes): no ranges are read`);
    return [];
  }
  const n = Number(count);
  const c = input.cursor(rva + 16, n * MEMORY64_DESCRIPTOR_SIZE, "Memory64List entries");
  const out: MinidumpMemoryRange[] = [];
  let dataAt = Number(baseRva);
  for (let i = 0; i < n; i++) {
    const at = c.offset;
    const start = c.u64();
    const size = c.u64();
    const room = BigInt(input.size - Math.min(dataAt, input.size));
    const inSpace = start + size <= 1n << 64n;
    const kept = !inSpace ? 0n : size < room ? size : room;
    const range: MinidumpMemoryRange = { start, size: kept, rva: Math.min(dataAt, input.size), descriptor: at, from: "Memory64List" };
    if (kept !== size) range.declared = size;
    out.push(range);
    dataAt = Math.min(dataAt + Number(size), Number.MAX_SAFE_INTEGER);
  }
  noteLostRanges(input, "Memory64List", out);
  return out;
}

function readException(input: Input, s: MinidumpStreamEntry, systemArch: number | undefined): MinidumpException {
  if (s.location.dataSize < EXCEPTION_STREAM_SIZE) {
    throw new InputError("truncated", `Exception stream is ${s.location.dataSize} bytes, not ${EXCEPTION_STREAM_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, EXCEPTION_STREAM_SIZE, "Exception stream");
  const threadId = c.u32();
  c.skip(4);
  const code = c.u32();
  const flags = c.u32();
  const record = c.u64();
  const address = c.u64();
  const numberParameters = c.u32();
  c.skip(4);
  const parameters: bigint[] = [];
  for (let i = 0; i < EXCEPTION_MAXIMUM_PARAMETERS; i++) {
    const v = c.u64();
    if (i < numberParameters) parameters.push(v);
  }
  const contextAt = c.offset;
  const contextLocation: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
  const exception: MinidumpException = { threadId, code, flags, record, address, numberParameters, parameters, contextLocation };
  const ctx = attempt(() => readContext(input, contextLocation, contextAt, systemArch, "Exception ThreadContext"));
  if ("value" in ctx) exception.context = ctx.value;
  else exception.contextError = ctx.error;
  return exception;
}

function readMiscInfo(input: Input, s: MinidumpStreamEntry): MinidumpMiscInfo {
  if (s.location.dataSize < MISC_INFO_MIN_SIZE) {
    throw new InputError("truncated", `MiscInfo stream is ${s.location.dataSize} bytes, less than the ${MISC_INFO_MIN_SIZE} of version 1`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, MISC_INFO_MIN_SIZE, "MiscInfo");
  const sizeOfInfo = c.u32();
  if (sizeOfInfo < MISC_INFO_MIN_SIZE || sizeOfInfo > s.location.dataSize) {
    throw new InputError("bad-value", `MiscInfo SizeOfInfo ${sizeOfInfo} is not between ${MISC_INFO_MIN_SIZE} and the stream's ${s.location.dataSize} bytes`, {
      offset: s.location.rva,
    });
  }
  const info: MinidumpMiscInfo = {
    sizeOfInfo,
    flags1: c.u32(),
    processId: c.u32(),
    processCreateTime: c.u32(),
    processUserTime: c.u32(),
    processKernelTime: c.u32(),
  };
  const version = MISC_INFO_VERSIONS[sizeOfInfo];
  if (version !== undefined) info.version = version;
  return info;
}

function readBreakpadInfo(input: Input, s: MinidumpStreamEntry): MinidumpBreakpadInfo {
  if (s.location.dataSize < BREAKPAD_INFO_SIZE) {
    throw new InputError("truncated", `Breakpad info stream is ${s.location.dataSize} bytes, not ${BREAKPAD_INFO_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, BREAKPAD_INFO_SIZE, "Breakpad info");
  const validity = c.u32();
  const dumpThreadId = c.u32();
  const requestingThreadId = c.u32();
  const info: MinidumpBreakpadInfo = { validity };
  if (validity & 1) info.dumpThreadId = dumpThreadId;
  if (validity & 2) info.requestingThreadId = requestingThreadId;
  return info;
}

/**
 * Breakpad's assertion stream (MDRawAssertionInfo, 776 bytes): expression, function and file as
 * 128 UTF-16 units each (up to the first NUL), then the line and the assertion type. Breakpad
 * reads it only when the stream is exactly that size.
 */
function readAssertion(input: Input, s: MinidumpStreamEntry): MinidumpAssertion {
  if (s.location.dataSize !== ASSERTION_INFO_SIZE) {
    throw new InputError("bad-value", `Breakpad assertion stream is ${s.location.dataSize} bytes, not ${ASSERTION_INFO_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, ASSERTION_INFO_SIZE, "Breakpad assertion stream");
  const text = (): string => {
    const units = c.take(ASSERTION_STRING_BYTES);
    let n = 0;
    while (n < ASSERTION_STRING_BYTES && (units[n] !== 0 || units[n + 1] !== 0)) n += 2;
    return new TextDecoder("utf-16le").decode(units.subarray(0, n));
  };
  const expression = text();
  const fn = text();
  const sourceFile = text();
  return { expression, function: fn, file: sourceFile, line: c.u32(), type: c.u32() };
}

/** FunctionTable (minidump.md §2.8): sizes come from the header, never hard-coded. */
function readFunctionTable(input: Input, s: MinidumpStreamEntry): MinidumpFunctionTableStream {
  const { rva, dataSize } = s.location;
  if (dataSize < FUNCTION_TABLE_HEADER_SIZE) {
    throw new InputError("truncated", `FunctionTable stream is ${dataSize} bytes, too small for its ${FUNCTION_TABLE_HEADER_SIZE}-byte header`, { offset: s.offset + 4 });
  }
  const all = input.cursor(rva, dataSize, "FunctionTable stream");
  const sizeOfHeader = all.u32();
  const sizeOfDescriptor = all.u32();
  const sizeOfNativeDescriptor = all.u32();
  const sizeOfFunctionEntry = all.u32();
  const numberOfDescriptors = all.u32();
  const sizeOfAlignPad = all.u32();
  if (sizeOfHeader < FUNCTION_TABLE_HEADER_SIZE || sizeOfHeader > dataSize) {
    throw new InputError("bad-value", `FunctionTable SizeOfHeader ${sizeOfHeader} is not between ${FUNCTION_TABLE_HEADER_SIZE} and the stream's ${dataSize} bytes`, { offset: rva });
  }
  if (sizeOfDescriptor < FUNCTION_TABLE_DESCRIPTOR_SIZE) {
    throw new InputError("bad-value", `FunctionTable SizeOfDescriptor ${sizeOfDescriptor} is smaller than ${FUNCTION_TABLE_DESCRIPTOR_SIZE}`, { offset: rva + 4 });
  }
  if (numberOfDescriptors * sizeOfDescriptor > dataSize) {
    throw new InputError("bad-value", `FunctionTable NumberOfDescriptors ${numberOfDescriptors} × ${sizeOfDescriptor} bytes do not fit in the stream's ${dataSize} bytes`, {
      offset: rva + 16,
    });
  }
  const tables: MinidumpFunctionTable[] = [];
  let pos = sizeOfHeader + sizeOfAlignPad;
  /** The field that placed the next descriptor: a SizeOfAlignPad when it is not 0, else NumberOfDescriptors. */
  let placedBy = sizeOfAlignPad !== 0 ? rva + 20 : rva + 16;
  for (let i = 0; i < numberOfDescriptors; i++) {
    if (pos > dataSize || sizeOfDescriptor > dataSize - pos) {
      throw new InputError("bad-value", `function table ${i}: its ${sizeOfDescriptor}-byte descriptor at stream offset ${hex(pos)} runs past the stream's ${dataSize} bytes`, {
        offset: placedBy,
      });
    }
    const d = new ByteCursor(all.bytes.subarray(pos, pos + sizeOfDescriptor), rva + pos);
    const offset = d.offset;
    const minimumAddress = d.u64();
    const maximumAddress = d.u64();
    const baseAddress = d.u64();
    const entryCount = d.u32();
    const pad = d.u32();
    pos += sizeOfDescriptor;
    if (sizeOfNativeDescriptor > dataSize - pos || entryCount * sizeOfFunctionEntry > dataSize - pos - sizeOfNativeDescriptor) {
      throw new InputError(
        "bad-value",
        `function table ${i}: a ${sizeOfNativeDescriptor}-byte native descriptor and ${entryCount} × ${sizeOfFunctionEntry}-byte entries run past the end of the stream`,
        { offset: offset + 24 },
      );
    }
    const nativeDescriptor = all.bytes.slice(pos, pos + sizeOfNativeDescriptor);
    pos += sizeOfNativeDescriptor;
    const entries = all.bytes.slice(pos, pos + entryCount * sizeOfFunctionEntry);
    pos += entryCount * sizeOfFunctionEntry + pad;
    placedBy = pad !== 0 ? offset + 28 : rva + 16;
    const table: MinidumpFunctionTable = { minimumAddress, maximumAddress, baseAddress, entryCount, sizeOfAlignPad: pad, nativeDescriptor, entries, offset };
    if (sizeOfFunctionEntry === RUNTIME_FUNCTION_SIZE) {
      const e = new ByteCursor(entries);
      table.functions = Array.from({ length: entryCount }, () => ({ beginRva: e.u32(), endRva: e.u32(), unwindData: e.u32() }));
    }
    tables.push(table);
  }
  return { sizeOfHeader, sizeOfDescriptor, sizeOfNativeDescriptor, sizeOfFunctionEntry, sizeOfAlignPad, tables };
}

/**
 * Sorts ranges by start and makes them disjoint, as a reader over them needs. Exact duplicates
 * (same start, size and data) are dropped. Where ranges overlap otherwise (a real Windows x86
 * dump's MemoryList does), the one that starts lower, then the one declared first, supplies the
 * shared bytes and the other keeps the rest: a note names the first such descriptor and counts
 * the others.
 */
function sortRanges(ranges: readonly MinidumpMemoryRange[], note?: (offset: number, text: string) => void): MinidumpMemoryRange[] {
  const sorted = ranges.filter((r) => r.size > 0n).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.descriptor - b.descriptor));
  const out: MinidumpMemoryRange[] = [];
  let covered = 0n;
  let first: { range: MinidumpMemoryRange; over: MinidumpMemoryRange } | undefined;
  let overlaps = 0;
  for (const r of sorted) {
    const prev = out[out.length - 1];
    const end = r.start + r.size;
    if (prev === undefined || r.start >= covered) {
      out.push(r);
      covered = end;
      continue;
    }
    if (r.start === prev.start && r.size === prev.size && r.rva === prev.rva) continue;
    overlaps++;
    first ??= { range: r, over: prev };
    if (end <= covered) continue;
    out.push({ ...r, start: covered, size: end - covered, rva: r.rva + Number(covered - r.start) });
    covered = end;
  }
  if (first !== undefined && note !== undefined) {
    const { range: r, over } = first;
    const more = overlaps > 1 ? `; ${overlaps - 1} more overlap(s) are resolved the same way` : "";
    note(
      r.descriptor,
      `${r.from} range ${hex(r.start)}..${hex(r.start + r.size)} overlaps the ${over.from} range ${hex(over.start)}..${hex(over.start + over.size)} (descriptor at ${hex(over.descriptor)}): the shared bytes are read from the range that starts lower${more}`,
    );
  }
  return out;
}

/**
 * Parses a minidump: header, directory and the streams the walker uses (minidump.md §1–§3).
 * Unknown streams are skipped; a known stream type that appears twice is an error. Captured
 * memory is not read. Errors are {@link InputError}s naming `file` when it is given.
 */
export function readMinidump(source: ByteSource, file?: string): Minidump {
  try {
    return parse(source, file);
  } catch (e) {
    if (e instanceof InputError && file !== undefined && e.file === undefined) throw e.inFile(file);
    throw e;
  }
}

/** The streams the reader decodes. */
const READ = new Set<number>([
  MINIDUMP_STREAM.ThreadList,
  MINIDUMP_STREAM.ModuleList,
  MINIDUMP_STREAM.MemoryList,
  MINIDUMP_STREAM.Exception,
  MINIDUMP_STREAM.SystemInfo,
  MINIDUMP_STREAM.ThreadExList,
  MINIDUMP_STREAM.Memory64List,
  MINIDUMP_STREAM.FunctionTable,
  MINIDUMP_STREAM.MiscInfo,
  MINIDUMP_STREAM.BreakpadInfo,
  MINIDUMP_STREAM.BreakpadAssertionInfo,
]);

function parse(source: ByteSource, file: string | undefined): Minidump {
  const input = new Input(source);
  const header = readHeader(input);
  const streams = readDirectory(input, header);
  const notes = input.notes;

  // Every stream the directory declares is checked against the file, read or not: a dump cut
  // short says so. The streams read keep what the file holds of them.
  const byType = new Map<number, { entry: MinidumpStreamEntry; held: MinidumpLocation }>();
  for (const s of streams) {
    if (s.streamType === MINIDUMP_STREAM.Unused) continue;
    const held = input.clip(s.location, s.offset + 4, `${streamTypeName(s.streamType)} stream`);
    if (!READ.has(s.streamType)) continue;
    const earlier = byType.get(s.streamType);
    if (earlier !== undefined) {
      input.note(s.offset, `a second ${streamTypeName(s.streamType)} stream (directory entry ${s.index}) is passed over; the first (entry ${earlier.entry.index}) is read`);
      continue;
    }
    byType.set(s.streamType, { entry: s, held });
  }
  /** Reads one stream with what the file holds of it; a stream that cannot be read is noted and passed over. */
  const read = <T>(type: number, reader: (s: MinidumpStreamEntry, held: MinidumpLocation) => T): T | undefined => {
    const found = byType.get(type);
    if (found === undefined) return undefined;
    const { entry, held } = found;
    return input.lenient(`${streamTypeName(type)} stream`, () => reader(entry, held));
  };

  const dump: Minidump = { source, header, streams, threads: [], modules: [], memory: [], notes };
  if (file !== undefined) dump.file = file;

  // SystemInfo first: the CONTEXT layout depends on it (minidump.md §3.3), and stream order varies.
  const sys = read(MINIDUMP_STREAM.SystemInfo, (s, held) => readSystemInfo(input, { ...s, location: held }));
  if (sys !== undefined) dump.systemInfo = sys;
  const arch = dump.systemInfo?.processorArchitecture;

  const ex = byType.has(MINIDUMP_STREAM.ThreadExList);
  const threads = read(ex ? MINIDUMP_STREAM.ThreadExList : MINIDUMP_STREAM.ThreadList, (s, held) => readThreads(input, s, held, ex, arch));
  if (threads !== undefined) {
    dump.threads = threads;
    dump.threadStream = ex ? "ThreadExList" : "ThreadList";
    if (ex && byType.has(MINIDUMP_STREAM.ThreadList)) notes.push("both ThreadList and ThreadExList are present: threads come from ThreadExList");
  }

  dump.modules = read(MINIDUMP_STREAM.ModuleList, (s, held) => readModules(input, s, held)) ?? [];

  const ranges: MinidumpMemoryRange[] = [];
  ranges.push(...(read(MINIDUMP_STREAM.MemoryList, (s, held) => readMemoryList(input, s, held)) ?? []));
  ranges.push(...(read(MINIDUMP_STREAM.Memory64List, (s, held) => readMemory64List(input, s, held)) ?? []));
  dump.memory = sortRanges(ranges, (offset, text) => input.note(offset, text));

  const exception = read(MINIDUMP_STREAM.Exception, (s, held) => readException(input, { ...s, location: held }, arch));
  if (exception !== undefined) {
    dump.exception = exception;
    if (exception.contextError !== undefined) {
      notes.push(`the exception context is not used (${exception.contextError.message}); the crashed thread's own context is`);
    }
  }
  const misc = read(MINIDUMP_STREAM.MiscInfo, (s, held) => readMiscInfo(input, { ...s, location: held }));
  if (misc !== undefined) dump.miscInfo = misc;
  const table = read(MINIDUMP_STREAM.FunctionTable, (s, held) => readFunctionTable(input, { ...s, location: held }));
  if (table !== undefined) dump.functionTable = table;
  const breakpad = read(MINIDUMP_STREAM.BreakpadInfo, (s, held) => readBreakpadInfo(input, { ...s, location: held }));
  if (breakpad !== undefined) dump.breakpadInfo = breakpad;
  const assertion = read(MINIDUMP_STREAM.BreakpadAssertionInfo, (s, held) => readAssertion(input, { ...s, location: held }));
  if (assertion !== undefined) dump.assertion = assertion;

  // The contexts say what ran (a 32-bit process on a 64-bit system has x86 contexts); SystemInfo otherwise.
  const machine = dump.exception?.context?.machine ?? dump.threads.find((t) => t.context !== undefined)?.context?.machine ?? dump.systemInfo?.machine;
  if (machine !== undefined) dump.machine = machine;
  return dump;
}

// ---------------------------------------------------------------------------------------------
// Lazy memory

interface Span {
  start: bigint;
  end: bigint;
  /** `start` and `end` as numbers: exact below 2^53, which is all the number fast path asks about. */
  nstart: number;
  nend: number;
  /** File offset of the byte at `start`. */
  file: number;
}

interface Page {
  /** The span the page belongs to (two spans can share an address page). */
  span: number;
  start: bigint;
  end: bigint;
  nstart: number;
  nend: number;
  bytes: Uint8Array;
  view: DataView;
}

/**
 * Target memory read lazily from a dump: binary search over the captured ranges (sorted by
 * start; ranges adjacent both in memory and in the file are joined), then a read of at most one
 * page from the source, kept in a small cache of recently used pages. A read spanning ranges
 * that touch in memory is stitched together; any unmapped byte makes the read `undefined`.
 */
export class MinidumpMemory implements MemoryReader {
  /** Bytes per cached page (address-aligned, clipped to the range). */
  static readonly PAGE_SIZE = 4096;
  private readonly spans: Span[];
  /** Pages by address page number (address / PAGE_SIZE, exact: a 64-bit address has a 52-bit page number). */
  private readonly cache = new Map<number, Page>();
  private current: Page | undefined;
  private lastSpan = 0;

  /** `ranges` are sorted, made disjoint as a parsed dump's are (the lower start wins), and joined here. */
  constructor(
    private readonly source: ByteSource,
    ranges: readonly MinidumpMemoryRange[],
    private readonly maxPages = 64,
  ) {
    const sorted = sortRanges(ranges);
    const spans: Span[] = [];
    for (const r of sorted) {
      const prev = spans[spans.length - 1];
      const end = r.start + r.size;
      if (prev !== undefined && prev.end === r.start && prev.file + Number(prev.end - prev.start) === r.rva) {
        prev.end = end;
        prev.nend = Number(end);
        continue;
      }
      spans.push({ start: r.start, end, nstart: Number(r.start), nend: Number(end), file: r.rva });
    }
    this.spans = spans;
  }

  /** The captured ranges after joining, as [start, end) pairs. */
  get extents(): readonly { start: bigint; end: bigint }[] {
    return this.spans.map((s) => ({ start: s.start, end: s.end }));
  }

  private spanIndex(address: bigint): number {
    const hint = this.spans[this.lastSpan];
    if (hint !== undefined && address >= hint.start && address < hint.end) return this.lastSpan;
    let lo = 0;
    let hi = this.spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.spans[mid]!;
      if (address < s.start) hi = mid - 1;
      else if (address >= s.end) lo = mid + 1;
      else {
        this.lastSpan = mid;
        return mid;
      }
    }
    return -1;
  }

  /** The cached page of span `i` holding `address`, read from the source on a miss. */
  private pageOf(i: number, address: bigint): Page | undefined {
    const size = BigInt(MinidumpMemory.PAGE_SIZE);
    const key = Number(address / size);
    const page = this.cache.get(key);
    if (page !== undefined && page.span === i) {
      this.cache.delete(key);
      this.cache.set(key, page);
      this.current = page;
      return page;
    }
    const span = this.spans[i]!;
    const aligned = BigInt(key) * size;
    const start = aligned > span.start ? aligned : span.start;
    const end = aligned + size < span.end ? aligned + size : span.end;
    return this.load(key, i, start, end);
  }

  /** The number fast path's page lookup: addresses below 2^53 compare exactly as numbers. */
  private pageOfNumber(address: number): Page | undefined {
    const key = Math.floor(address / MinidumpMemory.PAGE_SIZE);
    const page = this.cache.get(key);
    if (page !== undefined && address >= page.nstart && address < page.nend) {
      this.cache.delete(key);
      this.cache.set(key, page);
      this.current = page;
      return page;
    }
    let lo = 0;
    let hi = this.spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.spans[mid]!;
      if (address < s.nstart) hi = mid - 1;
      else if (address >= s.nend) lo = mid + 1;
      else {
        const aligned = key * MinidumpMemory.PAGE_SIZE;
        const start = Math.max(aligned, s.nstart);
        const end = Math.min(aligned + MinidumpMemory.PAGE_SIZE, s.nend);
        this.lastSpan = mid;
        return this.load(key, mid, BigInt(start), BigInt(end));
      }
    }
    return undefined;
  }

  private load(key: number, i: number, start: bigint, end: bigint): Page | undefined {
    const span = this.spans[i]!;
    const bytes = this.source.read(span.file + Number(start - span.start), Number(end - start));
    if (bytes === undefined) return undefined;
    const page: Page = { span: i, start, end, nstart: Number(start), nend: Number(end), bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    this.cache.delete(key);
    this.cache.set(key, page);
    if (this.cache.size > this.maxPages) this.cache.delete(this.cache.keys().next().value!);
    this.current = page;
    return page;
  }

  read(address: bigint, size: number): Uint8Array | undefined {
    if (!Number.isSafeInteger(size) || size < 0 || address < 0n) return undefined;
    const cur = this.current;
    if (cur !== undefined && address >= cur.start && address + BigInt(size) <= cur.end && (size > 0 || address < cur.end)) {
      const off = Number(address - cur.start);
      return cur.bytes.subarray(off, off + size);
    }
    const i = this.spanIndex(address);
    if (i < 0) return undefined;
    const end = address + BigInt(size);
    const span = this.spans[i]!;
    if (end <= span.end) {
      const page = this.pageOf(i, address);
      if (page === undefined) return undefined;
      if (end <= page.end) {
        const off = Number(address - page.start);
        return page.bytes.subarray(off, off + size);
      }
      // Larger than what is left of the page: read it straight from the source, uncached.
      return this.source.read(span.file + Number(address - span.start), size);
    }
    // The read runs into the following ranges: check they are adjacent before allocating.
    let j = i;
    while (this.spans[j]!.end < end) {
      const next = this.spans[j + 1];
      if (next === undefined || next.start !== this.spans[j]!.end) return undefined;
      j++;
    }
    const out = new Uint8Array(size);
    let at = address;
    for (let k = i; k <= j; k++) {
      const s = this.spans[k]!;
      const stop = end < s.end ? end : s.end;
      const n = Number(stop - at);
      const part = n <= MinidumpMemory.PAGE_SIZE ? this.read(at, n) : this.source.read(s.file + Number(at - s.start), n);
      if (part === undefined) return undefined;
      out.set(part, Number(at - address));
      at = stop;
    }
    return out;
  }

  u32(address: bigint): number | undefined {
    const cur = this.current;
    if (cur !== undefined && address >= cur.start && address + 4n <= cur.end) return cur.view.getUint32(Number(address - cur.start), true);
    const b = this.read(address, 4);
    if (b === undefined) return undefined;
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  u32n(address: number): number | undefined {
    if (!(address >= 0 && address <= Number.MAX_SAFE_INTEGER) || !Number.isInteger(address)) return undefined;
    let page = this.current;
    if (page === undefined || address < page.nstart || address >= page.nend) page = this.pageOfNumber(address);
    if (page === undefined) return undefined;
    if (address + 4 <= page.nend) return page.view.getUint32(address - page.nstart, true);
    return this.u32(BigInt(address));
  }
}

/**
 * The ranges a snapshot reads: the MemoryList and Memory64List ranges, plus the parts of thread
 * stacks (and IA-64 backing stores) that no list covers. Where a list covers a stack, the list's
 * bytes are used.
 */
export function snapshotMemoryRanges(dump: Minidump): MinidumpMemoryRange[] {
  const listed = dump.memory; // sorted by start, non-overlapping
  const pieces: MinidumpMemoryRange[] = [];
  const piece = (extra: MinidumpMemoryRange, from: bigint, to: bigint): void => {
    pieces.push({ ...extra, start: from, size: to - from, rva: extra.rva + Number(from - extra.start) });
  };
  const extras = dump.threads.flatMap((t) => (t.backingStore === undefined ? [t.stack] : [t.stack, t.backingStore]));
  for (const extra of extras) {
    if (extra.size === 0n) continue;
    const end = extra.start + extra.size;
    // The first listed range that ends after the extra starts.
    let lo = 0;
    let hi = listed.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (listed[mid]!.start + listed[mid]!.size <= extra.start) lo = mid + 1;
      else hi = mid;
    }
    let at = extra.start;
    for (let i = lo; i < listed.length && at < end; i++) {
      const r = listed[i]!;
      if (r.start >= end) break;
      if (r.start > at) piece(extra, at, r.start);
      const rEnd = r.start + r.size;
      if (rEnd > at) at = rEnd;
    }
    if (at < end) piece(extra, at, end);
  }
  // Stacks of different threads may repeat or overlap each other: where they do, the range that
  // starts lower (then the one declared first) supplies the bytes.
  pieces.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.descriptor - b.descriptor));
  const kept: MinidumpMemoryRange[] = [];
  let covered = -1n;
  for (const p of pieces) {
    const end = p.start + p.size;
    if (end <= covered) continue;
    if (p.start < covered) kept.push({ ...p, start: covered, size: end - covered, rva: p.rva + Number(covered - p.start) });
    else kept.push(p);
    covered = end;
  }
  return [...listed, ...kept];
}

// ---------------------------------------------------------------------------------------------
// Snapshot

/**
 * Why a dump has no thread to walk, naming the field to blame: the directory that lacks a thread
 * list, or the list's Rva outside the file, its DataSize too small or cut, or its count of 0.
 * Undefined when the dump has threads.
 */
function noThreadError(dump: Minidump): InputError | undefined {
  if (dump.threads.length > 0) return undefined;
  const list = dump.streams.find((s) => s.streamType === MINIDUMP_STREAM.ThreadList || s.streamType === MINIDUMP_STREAM.ThreadExList);
  if (list === undefined) return new InputError("missing-field", "the dump has no ThreadList stream: there is no thread to walk", { offset: dump.header.directoryRva });
  const { rva, dataSize } = list.location;
  const size = dump.source.size;
  const offset = rva >= size ? list.offset + 8 : dataSize < 4 || rva + 4 > size ? list.offset + 4 : rva;
  return new InputError("truncated", `the ${streamTypeName(list.streamType)} stream holds no thread to walk`, { offset });
}

/**
 * A {@link Snapshot} of a parsed dump: every thread, the crashed one (the Exception stream's
 * thread) first with `crashed: true` and the exception's context when it was accepted
 * (minidump.md §2.5, §3.3); modules with their path, debug file and ids, version; memory read
 * lazily from the dump's source. A thread whose context was rejected, or whose machine differs
 * from the dump's, is left out with a note in `dump.notes`; when no thread is left, that is an
 * {@link InputError} naming the offset of the first thread's problem.
 */
export function minidumpSnapshot(dump: Minidump): Snapshot {
  const wrap = (e: InputError): InputError => (dump.file !== undefined && e.file === undefined ? e.inFile(dump.file) : e);
  const machine = dump.machine;
  if (machine === undefined) {
    const arch = dump.systemInfo?.processorArchitecture;
    const sys = dump.streams.find((s) => s.streamType === MINIDUMP_STREAM.SystemInfo);
    if (arch !== undefined && sys !== undefined) {
      throw wrap(new InputError("unsupported", `ProcessorArchitecture ${arch} is not a machine the walker models (x86, AMD64, IA-64)`, { offset: sys.location.rva }));
    }
    // Nothing names the machine: say why no thread context could.
    throw wrap(dump.threads.find((t) => t.contextError !== undefined)?.contextError ?? noThreadError(dump) ?? new InputError("unsupported", "no SystemInfo stream and no thread context name the machine"));
  }
  const crashedId = dump.exception?.threadId;
  const crashedIndex = crashedId === undefined ? -1 : dump.threads.findIndex((t) => t.id === crashedId);
  const order = crashedIndex < 0 ? dump.threads : [dump.threads[crashedIndex]!, ...dump.threads.filter((_, i) => i !== crashedIndex)];
  // A thread whose context cannot be used is left out, with a note; a dump none of whose threads
  // can be walked is an error naming the first one's problem.
  const threads: ThreadSnapshot[] = [];
  let firstProblem: InputError | undefined;
  order.forEach((t, i) => {
    const crashed = i === 0 && crashedIndex >= 0;
    const context = (crashed ? dump.exception?.context : undefined) ?? t.context;
    let problem: InputError | undefined;
    if (context === undefined) problem = t.contextError ?? new InputError("bad-value", `thread ${t.id} has no usable context`, { offset: t.offset + 40 });
    else if (context.machine !== machine) problem = new InputError("unsupported", `thread ${t.id} has an ${context.machine} context in an ${machine} dump`, { offset: t.offset + 40 });
    if (problem === undefined) {
      threads.push({ id: t.id, crashed, registers: { ...context!.registers }, stackRanges: threadStackRanges(dump, t) });
      return;
    }
    firstProblem ??= problem;
    const where = problem.offset === undefined ? "" : `offset 0x${problem.offset.toString(16)}: `;
    const note = `${where}thread ${t.id} is not walked: ${problem.reason}`;
    if (!dump.notes.includes(note)) dump.notes.push(note);
  });
  if (threads.length === 0) throw wrap(firstProblem ?? noThreadError(dump)!);
  const modules: Module[] = dump.modules.map((m) => {
    const module: Module = { name: m.name, base: m.base, size: BigInt(m.size), symbols: [], path: m.path, codeId: m.codeId };
    if (m.debugFile !== undefined) module.debugFile = m.debugFile;
    if (m.debugId !== undefined) module.debugId = m.debugId;
    if (m.version !== undefined) module.version = m.version;
    return module;
  });
  let memory: MinidumpMemory;
  try {
    memory = new MinidumpMemory(dump.source, snapshotMemoryRanges(dump));
  } catch (e) {
    throw e instanceof InputError ? wrap(e) : e;
  }
  const snapshot: Snapshot = { machine, threads, memory, modules, description: dump.file ?? "minidump" };
  const os = dump.systemInfo === undefined ? undefined : operatingSystem(dump.systemInfo.platformId);
  if (os !== undefined) snapshot.os = os;
  return snapshot;
}

/** Breakpad's MD_OS_* platform ids (minidump.md §2.6) by the operating system they name. */
const PLATFORM_OS: Readonly<Record<number, OperatingSystem>> = {
  0: "windows", 1: "windows", 2: "windows", 3: "windows",
  0x8000: "unix", 0x8101: "macos", 0x8102: "ios", 0x8201: "linux", 0x8202: "solaris", 0x8203: "android",
  0x8204: "ps3", 0x8205: "nacl", 0x8206: "fuchsia",
};

/** The operating system a SystemInfo PlatformId names ("unknown" for any other id). */
export function operatingSystem(platformId: number): OperatingSystem {
  return PLATFORM_OS[platformId] ?? "unknown";
}

/**
 * The memory a walk of thread `t` may read (minidump.md §4): its Stack range (and IA-64
 * BackingStore), or, when the thread lists no stack bytes, the MemoryList range holding the
 * stack's start, as Breakpad falls back to it.
 */
function threadStackRanges(dump: Minidump, t: MinidumpThread): AddressRange[] {
  const out: AddressRange[] = [];
  const own = [t.stack, ...(t.backingStore === undefined ? [] : [t.backingStore])];
  for (const r of own) {
    if (r.size > 0n) {
      out.push({ start: r.start, end: r.start + r.size });
      continue;
    }
    const listed = dump.memory.find((m) => r.start >= m.start && r.start - m.start < m.size);
    if (listed !== undefined) out.push({ start: listed.start, end: listed.start + listed.size });
  }
  return out;
}
