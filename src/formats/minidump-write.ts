/**
 * A Windows minidump writer (minidump.md §1–§3, §3.4): a {@link Snapshot} of an x86 or x64
 * process becomes a dump that this project's reader, Breakpad's `minidump_stackwalk` and WinDbg
 * can open. It writes the header, the stream directory, SystemInfo, ThreadList (one CONTEXT per
 * thread), ModuleList (names, sizes, version, CodeView RSDS records), an Exception stream for the
 * crashed thread, MiscInfo, and the captured memory as a MemoryList, or as a Memory64List for
 * full-memory dumps larger than the 32-bit RVAs of a MemoryList can place.
 *
 * The layout is worked out before anything is written, so the dump goes out front to back
 * through a {@link ByteSink}: the structures (a few KiB per thread and module) are built in
 * memory, the captured memory is read from the snapshot in chunks and handed to the sink as it
 * is read. A multi-gigabyte dump never needs more memory than one chunk. No Node APIs: a sink
 * can write to a file (src/cli/emulate.ts), collect bytes ({@link bytesSink}) or feed a stream.
 *
 * Layout: header at 0, directory at 32, then SystemInfo, ThreadList, the CONTEXT records
 * (16-aligned), ModuleList with its strings and CodeView records, Exception, MiscInfo, the memory
 * list, and last the memory bytes (16-aligned; back to back for a Memory64List). Every structure
 * is 4-aligned and every RVA and DataSize is exact. Each thread's Stack descriptor points into the
 * memory bytes of the range holding its stack pointer, so stacks are not stored twice.
 *
 * This is the product writer; the test-only writer in test/support/minidump-writer.ts shares no
 * code with it or with the reader.
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";
import type { MemoryReader } from "../memory/reader.js";
import { CONTEXT_AMD64_CONTROL, CONTEXT_AMD64_INTEGER, CONTEXT_AMD64_SEGMENTS, CONTEXT_X86_FULL, contextRegisterNames, contextSize, encodeContext } from "../model/context.js";
import type { Machine } from "../model/machine.js";
import type { Module, Registers, Snapshot } from "../model/snapshot.js";
import { readMappedImage } from "./pe-mapped.js";
import { peCodeId } from "./pe.js";
import { MINIDUMP_SIGNATURE, MINIDUMP_STREAM, MINIDUMP_VERSION, PROCESSOR_ARCHITECTURE, VS_FFI_SIGNATURE } from "./minidump.js";

// ---------------------------------------------------------------------------------------------
// Sinks

/**
 * Where a dump is written, front to back. `write` must use or copy `chunk` before it returns:
 * the writer hands out views of the snapshot's memory and of its own buffers.
 */
export interface ByteSink {
  write(chunk: Uint8Array): void;
}

/** A {@link ByteSink} that keeps everything in memory (small dumps, tests). */
export interface BytesSink extends ByteSink {
  /** Bytes written so far. */
  readonly size: number;
  /** Everything written, as one array. */
  bytes(): Uint8Array;
}

/** A sink collecting the dump in memory. */
export function bytesSink(): BytesSink {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    get size() {
      return size;
    },
    write(chunk: Uint8Array): void {
      chunks.push(chunk.slice());
      size += chunk.byteLength;
    },
    bytes(): Uint8Array {
      const out = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        out.set(c, at);
        at += c.byteLength;
      }
      return out;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Options and results

/** A captured range of target memory: `size` bytes at `start`. */
export interface MemoryExtent {
  start: bigint;
  size: bigint;
}

/**
 * Memory that can say which ranges it holds: {@link RegionMemory} (`regions`) and
 * {@link MinidumpMemory} (`extents`) can; any other reader may offer `extents` too.
 */
export interface ExtentMemory extends MemoryReader {
  readonly extents: readonly { start: bigint; end: bigint }[];
}

/** The Exception stream to write (minidump.md §2.5). */
export interface MinidumpWriteException {
  /** The faulting thread; default the snapshot's crashed thread (the first one when none is marked). */
  threadId?: number;
  /** ExceptionCode, e.g. {@link EXCEPTION_BREAKPOINT} or 0xC0000005 (access violation). */
  code: number;
  flags?: number;
  /** ExceptionAddress; default the thread's instruction pointer. */
  address?: bigint;
  /** ExceptionInformation, at most 15 values. */
  parameters?: readonly bigint[];
}

/** SystemInfo fields (minidump.md §2.6); the defaults describe Windows 10 22H2 on a 1-CPU Intel machine. */
export interface MinidumpWriteSystem {
  majorVersion: number;
  minorVersion: number;
  buildNumber: number;
  /** The service-pack string; "" for none. */
  csdVersion: string;
  /** VER_NT_WORKSTATION = 1. */
  productType: number;
  numberOfProcessors: number;
  /** CPU family. */
  processorLevel: number;
  /** Model in the high byte, stepping in the low byte. */
  processorRevision: number;
  /** x86 CPUID vendor, 12 characters. */
  vendorId: string;
}

/** How to write a dump. */
export interface MinidumpWriteOptions {
  /**
   * The memory to write. Default: every range the snapshot's memory holds (a {@link RegionMemory}'s
   * regions, a dump's extents, or the `extents` of any {@link ExtentMemory}); a reader that
   * cannot list its ranges needs this option.
   */
  ranges?: readonly MemoryExtent[];
  /**
   * `MemoryList` (readable by Breakpad), `Memory64List` (a full-memory dump: 64-bit sizes and
   * file offsets; only this project and WinDbg read it), or `auto` (default): a MemoryList when
   * every range fits 32-bit RVAs, a Memory64List otherwise.
   */
  memoryList?: "MemoryList" | "Memory64List" | "auto";
  /**
   * The Exception stream. Default: when a thread is marked crashed, an EXCEPTION_BREAKPOINT at its
   * instruction pointer, so processors report that thread as the crashed one. `false`: none.
   */
  exception?: MinidumpWriteException | false;
  /** MINIDUMP_HEADER.TimeDateStamp (time_t); default 0, so that equal snapshots give equal dumps. */
  timeDateStamp?: number;
  /** MiscInfo ProcessId; default 0x1000. */
  processId?: number;
  system?: Partial<MinidumpWriteSystem>;
  /** Bytes of memory read from the snapshot and handed to the sink at once (default 1 MiB). */
  chunkSize?: number;
}

/** Where one stream went. */
export interface WrittenStreamInfo {
  type: number;
  rva: number;
  size: number;
}

/** What {@link writeMinidump} wrote. */
export interface MinidumpWriteResult {
  /** Bytes written to the sink: the file size. */
  size: number;
  memoryList: "MemoryList" | "Memory64List";
  /** Memory descriptors written (a range larger than 2 GiB takes several in a MemoryList). */
  ranges: number;
  /** Bytes of captured memory. */
  memoryBytes: bigint;
  streams: WrittenStreamInfo[];
  /** Modules written without a CodeView record (no debug file or id was known). */
  modulesWithoutCodeView: string[];
}

// ---------------------------------------------------------------------------------------------
// Constants (minidump.md §1–§3) the reader does not already name

/** ExceptionCode of a breakpoint (int3), used for snapshots taken at a break. */
export const EXCEPTION_BREAKPOINT = 0x8000_0003;

const HEADER_SIZE = 32;
const DIRECTORY_ENTRY_SIZE = 12;
const SYSTEM_INFO_SIZE = 56;
const THREAD_SIZE = 48;
const MODULE_SIZE = 108;
const MEMORY_DESCRIPTOR_SIZE = 16;
const MEMORY64_DESCRIPTOR_SIZE = 16;
const EXCEPTION_SIZE = 168;
const EXCEPTION_MAXIMUM_PARAMETERS = 15;
const MISC_INFO_SIZE = 24;
const MISC1_PROCESS_ID = 0x1;
const MISC1_PROCESS_TIMES = 0x2;
/** MINIDUMP_TYPE: MiniDumpNormal, and MiniDumpWithFullMemory for a Memory64List. */
const MINIDUMP_NORMAL = 0n;
const MINIDUMP_WITH_FULL_MEMORY = 0x2n;
const PLATFORM_WIN32_NT = 2;
const VER_SUITE_SINGLEUSERTS = 0x100;
const NORMAL_PRIORITY_CLASS = 0x20;
const VS_FFI_STRUCVERSION = 0x0001_0000;
const VS_FFI_FILEFLAGSMASK = 0x3f;
const VOS_NT_WINDOWS32 = 0x0004_0004;
const VFT_APP = 1;
const VFT_DLL = 2;
const CV_RSDS = 0x53445352;
const CV_NB10 = 0x3031424e;
const U32_MAX = 0xffff_ffff;
/** The largest piece of a range one MemoryList descriptor holds (DataSize is a u32); 2 GiB keeps pieces page-aligned. */
const MEMORY_LIST_PIECE = 0x8000_0000n;
const DEFAULT_CHUNK = 1 << 20;

const DEFAULT_SYSTEM: MinidumpWriteSystem = {
  majorVersion: 10,
  minorVersion: 0,
  buildNumber: 19045,
  csdVersion: "",
  productType: 1,
  numberOfProcessors: 1,
  processorLevel: 6,
  processorRevision: 0x9e0a, // model 158, stepping 10
  vendorId: "GenuineIntel",
};

/** CPUID leaf 1 EAX for family 6, model 158, stepping 10, and a typical EDX feature word. */
const X86_CPUID_VERSION = 0x000906ea;
const X86_CPUID_FEATURES = 0xbfebfbff;

/** Per machine: the CONTEXT's flags and the segment values of a Windows user-mode thread, used when the snapshot has none. */
const CONTEXT_DEFAULTS: Readonly<Record<"x86" | "x64", { flags: number; registers: Registers; sp: string; pc: string }>> = {
  x86: { flags: CONTEXT_X86_FULL, registers: { cs: 0x1bn, ss: 0x23n, ds: 0x23n, es: 0x23n, fs: 0x3bn, gs: 0n }, sp: "esp", pc: "eip" },
  x64: {
    flags: CONTEXT_AMD64_CONTROL | CONTEXT_AMD64_INTEGER | CONTEXT_AMD64_SEGMENTS,
    registers: { cs: 0x33n, ss: 0x2bn, ds: 0x2bn, es: 0x2bn, fs: 0x53n, gs: 0x2bn, mxcsr: 0x1f80n },
    sp: "rsp",
    pc: "rip",
  },
};

// ---------------------------------------------------------------------------------------------
// Module identity

/** A module's CodeView identity: what names its PDB and forms its symbol-store id (minidump.md §2.3, §8). */
export interface CodeViewIdentity {
  format: "RSDS" | "NB10";
  /** The PDB as the record names it (possibly a full path). */
  pdbName: string;
  /** RSDS: the GUID as 32 upper-case hex digits in display order; NB10: the signature as 8 hex digits. */
  guid: string;
  age: number;
  /** `guid` followed by the age in lower-case hex: the symbol-store identifier. */
  debugId: string;
}


/**
 * The CodeView identity of a module: from its `debugFile` and `debugId` when both are set (a
 * 32-digit GUID plus age is RSDS, an 8-digit signature plus age is NB10), otherwise from the RSDS
 * record of its image mapped in `memory` (pe-mapped.ts). Undefined when neither gives one.
 */
export function moduleCodeView(module: Module, memory: MemoryReader): CodeViewIdentity | undefined {
  if (module.debugFile !== undefined && module.debugId !== undefined) {
    // The id as readers form it from the record written (upper-case GUID, lower-case age without
    // leading zeros), so that the .sym path and the dump agree.
    const id = module.debugId;
    const identity = (format: "RSDS" | "NB10", m: RegExpExecArray): CodeViewIdentity => {
      const guid = m[1]!.toUpperCase();
      const age = parseInt(m[2]!, 16);
      return { format, pdbName: module.debugFile!, guid, age, debugId: guid + age.toString(16) };
    };
    const rsds = /^([0-9A-Fa-f]{32})([0-9A-Fa-f]{1,8})$/.exec(id);
    if (rsds !== null) return identity("RSDS", rsds);
    const nb10 = /^([0-9A-Fa-f]{8})([0-9A-Fa-f]{1,8})$/.exec(id);
    if (nb10 !== null) return identity("NB10", nb10);
  }
  const cv = readMappedImage(memory, module.base)?.codeView;
  if (cv === undefined) return undefined;
  return { format: "RSDS", pdbName: cv.pdbName, guid: cv.guid, age: cv.age, debugId: cv.debugId };
}

/** The CodeView record's bytes: RSDS (GUID, age, UTF-8 path, NUL) or NB10 (offset 0, signature, age, path, NUL). */
export function encodeCodeView(cv: CodeViewIdentity): Uint8Array {
  const name = new TextEncoder().encode(cv.pdbName);
  if (cv.format === "RSDS") {
    const out = new Uint8Array(24 + name.length + 1);
    const v = new DataView(out.buffer);
    v.setUint32(0, CV_RSDS, true);
    v.setUint32(4, parseInt(cv.guid.slice(0, 8), 16), true);
    v.setUint16(8, parseInt(cv.guid.slice(8, 12), 16), true);
    v.setUint16(10, parseInt(cv.guid.slice(12, 16), 16), true);
    for (let i = 0; i < 8; i++) out[12 + i] = parseInt(cv.guid.slice(16 + 2 * i, 18 + 2 * i), 16);
    v.setUint32(20, cv.age >>> 0, true);
    out.set(name, 24);
    return out;
  }
  const out = new Uint8Array(16 + name.length + 1);
  const v = new DataView(out.buffer);
  v.setUint32(0, CV_NB10, true);
  v.setUint32(8, parseInt(cv.guid, 16), true);
  v.setUint32(12, cv.age >>> 0, true);
  out.set(name, 16);
  return out;
}

/** TimeDateStamp of a module: the first 8 hex digits of its code id, else its mapped image's file header, else 0. */
export function moduleTimeDateStamp(module: Module, memory: MemoryReader): number {
  if (module.codeId !== undefined && /^[0-9A-Fa-f]{8}/.test(module.codeId)) return parseInt(module.codeId.slice(0, 8), 16);
  const dos = memory.read(module.base, 0x40);
  if (dos === undefined || dos[0] !== 0x4d || dos[1] !== 0x5a) return 0;
  const lfanew = (dos[0x3c]! | (dos[0x3d]! << 8) | (dos[0x3e]! << 16) | (dos[0x3f]! << 24)) >>> 0;
  if (lfanew > 0x10000) return 0;
  const nt = memory.read(module.base + BigInt(lfanew), 12);
  if (nt === undefined || nt[0] !== 0x50 || nt[1] !== 0x45 || nt[2] !== 0 || nt[3] !== 0) return 0;
  return (nt[8]! | (nt[9]! << 8) | (nt[10]! << 16) | (nt[11]! << 24)) >>> 0;
}

/** Breakpad's code id of a module (`%08X` TimeDateStamp, `%x` SizeOfImage): its own, or worked out as the dump writer does. */
export function moduleCodeId(module: Module, memory: MemoryReader): string {
  return module.codeId ?? peCodeId(moduleTimeDateStamp(module, memory), module.size);
}

// ---------------------------------------------------------------------------------------------
// Building the structures

/** A growable little-endian buffer addressed by absolute file offset. */
class Structures {
  private buf = new Uint8Array(4096);
  private view = new DataView(this.buf.buffer);
  length = 0;

  /** Reserves `size` zero bytes at the next offset aligned to `align`; returns the offset. */
  alloc(size: number, align = 4): number {
    const at = Math.ceil(this.length / align) * align;
    this.grow(at + size);
    this.length = at + size;
    return at;
  }

  private grow(n: number): void {
    if (n <= this.buf.length) return;
    let size = this.buf.length;
    while (size < n) size *= 2;
    const b = new Uint8Array(size);
    b.set(this.buf);
    this.buf = b;
    this.view = new DataView(b.buffer);
  }

  u8(at: number, v: number): void {
    this.buf[at] = v;
  }
  u16(at: number, v: number): void {
    this.view.setUint16(at, v, true);
  }
  u32(at: number, v: number): void {
    if (!Number.isInteger(v) || v < 0 || v > U32_MAX) throw new RangeError(`minidump writer: ${v} does not fit a u32 field at offset ${hex(at)}`);
    this.view.setUint32(at, v, true);
  }
  u64(at: number, v: bigint): void {
    this.view.setBigUint64(at, v, true);
  }
  bytes(at: number, b: Uint8Array): void {
    this.buf.set(b, at);
  }

  /** A MINIDUMP_STRING (u32 byte length, UTF-16LE, NUL); returns its RVA. */
  string(text: string): number {
    const at = this.alloc(4 + 2 * text.length + 2);
    this.u32(at, 2 * text.length);
    for (let i = 0; i < text.length; i++) this.u16(at + 4 + 2 * i, text.charCodeAt(i));
    return at;
  }

  /** The structures built so far. */
  used(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

/** One memory descriptor as laid out: `size` bytes at `start`, whose data go to file offset `file`. */
interface PlacedRange {
  start: bigint;
  size: bigint;
  file: number;
}

/** The ranges of a snapshot's memory, when the reader can list them. */
function extentsOf(memory: MemoryReader): MemoryExtent[] | undefined {
  const m = memory as { regions?: unknown; extents?: unknown };
  if (Array.isArray(m.regions)) {
    return (m.regions as { base: bigint; bytes: Uint8Array }[]).map((r) => ({ start: r.base, size: BigInt(r.bytes.byteLength) }));
  }
  if (Array.isArray(m.extents)) return (m.extents as { start: bigint; end: bigint }[]).map((e) => ({ start: e.start, size: e.end - e.start }));
  return undefined;
}

/** Sorted, non-empty, non-overlapping ranges; an overlap is a RangeError. */
function checkedRanges(ranges: readonly MemoryExtent[], machine: Machine): MemoryExtent[] {
  const limit = machine === "x86" ? 1n << 32n : 1n << 64n;
  const sorted = ranges.filter((r) => r.size > 0n).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  for (let i = 0; i < sorted.length; i++) {
    const r = sorted[i]!;
    if (r.start < 0n || r.start + r.size > limit) throw new RangeError(`minidump writer: memory range ${hex(r.start)} + ${hex(r.size)} is outside the ${machine} address space`);
    const prev = sorted[i - 1];
    if (prev !== undefined && r.start < prev.start + prev.size) {
      throw new RangeError(`minidump writer: memory ranges at ${hex(prev.start)} and ${hex(r.start)} overlap`);
    }
  }
  return sorted;
}

/** Four numbers of a version `a.b.c.d`, each at most 0xFFFF, or undefined. */
function parseVersion(version: string | undefined): [number, number, number, number] | undefined {
  const m = version === undefined ? null : /^(\d{1,5})\.(\d{1,5})\.(\d{1,5})\.(\d{1,5})$/.exec(version);
  if (m === null) return undefined;
  const parts = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  return parts.every((p) => p <= 0xffff) ? parts : undefined;
}

/** A thread's registers as the CONTEXT model names them: the defaults, then the snapshot's (names the CONTEXT has no field for are left out). */
function contextRegisters(machine: "x86" | "x64", registers: Registers): Registers {
  const known = new Set(contextRegisterNames(machine));
  const out: Registers = { ...CONTEXT_DEFAULTS[machine].registers };
  for (const [name, value] of Object.entries(registers)) if (known.has(name)) out[name] = value;
  return out;
}

// ---------------------------------------------------------------------------------------------
// The writer

/**
 * Writes `snapshot` as a minidump to `sink` and says what it wrote. Only x86 and x64 snapshots
 * can be written (an IA-64 one is an InputError "unsupported"). Memory that the snapshot's ranges
 * claim but its reader cannot read, overlapping ranges, and values too wide for their fields are
 * RangeErrors: they are mistakes of the caller, not of an input file.
 */
export function writeMinidump(snapshot: Snapshot, sink: ByteSink, options: MinidumpWriteOptions = {}): MinidumpWriteResult {
  const machine = snapshot.machine;
  if (machine !== "x86" && machine !== "x64") throw new InputError("unsupported", `the minidump writer writes x86 and x64 snapshots, not ${machine}`);
  const memory = snapshot.memory;
  const defaults = CONTEXT_DEFAULTS[machine];
  const system: MinidumpWriteSystem = { ...DEFAULT_SYSTEM, ...options.system };
  const timeDateStamp = options.timeDateStamp ?? 0;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) throw new RangeError(`minidump writer: chunkSize must be a whole number ≥ 1, not ${chunkSize}`);

  const given = options.ranges ?? extentsOf(memory);
  if (given === undefined) throw new RangeError("minidump writer: the snapshot's memory cannot list its ranges: pass options.ranges");
  const ranges = checkedRanges(given, machine);

  // The exception: explicit, or a breakpoint in the crashed thread.
  let exception: (MinidumpWriteException & { threadId: number }) | undefined;
  if (options.exception !== false && snapshot.threads.length > 0) {
    const crashed = snapshot.threads.find((t) => t.crashed);
    if (options.exception !== undefined) exception = { ...options.exception, threadId: options.exception.threadId ?? (crashed ?? snapshot.threads[0]!).id };
    else if (crashed !== undefined) exception = { threadId: crashed.id, code: EXCEPTION_BREAKPOINT };
    if (exception !== undefined && !snapshot.threads.some((t) => t.id === exception!.threadId)) {
      throw new RangeError(`minidump writer: the exception names thread ${exception.threadId}, which the snapshot does not have`);
    }
  }

  const s = new Structures();
  s.alloc(HEADER_SIZE);
  const streamTypes: number[] = [MINIDUMP_STREAM.SystemInfo, MINIDUMP_STREAM.ThreadList, MINIDUMP_STREAM.ModuleList];
  if (exception !== undefined) streamTypes.push(MINIDUMP_STREAM.Exception);
  streamTypes.push(MINIDUMP_STREAM.MiscInfo, -1 /* the memory list, decided below */);
  const directory = s.alloc(streamTypes.length * DIRECTORY_ENTRY_SIZE);
  const streams: WrittenStreamInfo[] = [];
  const placeStream = (type: number, rva: number, size: number): void => {
    streams.push({ type, rva, size });
  };

  // SystemInfo
  const sys = s.alloc(SYSTEM_INFO_SIZE);
  s.u16(sys, machine === "x86" ? PROCESSOR_ARCHITECTURE.INTEL : PROCESSOR_ARCHITECTURE.AMD64);
  s.u16(sys + 2, system.processorLevel);
  s.u16(sys + 4, system.processorRevision);
  s.u8(sys + 6, system.numberOfProcessors);
  s.u8(sys + 7, system.productType);
  s.u32(sys + 8, system.majorVersion);
  s.u32(sys + 12, system.minorVersion);
  s.u32(sys + 16, system.buildNumber);
  s.u32(sys + 20, PLATFORM_WIN32_NT);
  s.u16(sys + 28, VER_SUITE_SINGLEUSERTS);
  if (machine === "x86") {
    const vendor = new TextEncoder().encode(system.vendorId.padEnd(12, "\0").slice(0, 12));
    s.bytes(sys + 32, vendor.subarray(0, 12));
    s.u32(sys + 44, X86_CPUID_VERSION);
    s.u32(sys + 48, X86_CPUID_FEATURES);
  }
  s.u32(sys + 24, s.string(system.csdVersion));
  placeStream(MINIDUMP_STREAM.SystemInfo, sys, SYSTEM_INFO_SIZE);

  // ThreadList and the CONTEXT records
  const threads = snapshot.threads;
  const threadList = s.alloc(4 + threads.length * THREAD_SIZE);
  s.u32(threadList, threads.length);
  placeStream(MINIDUMP_STREAM.ThreadList, threadList, 4 + threads.length * THREAD_SIZE);
  const size = contextSize(machine);
  const contextRva = new Map<number, number>();
  /** Thread entries whose Stack descriptor is filled in once the memory is placed. */
  const stackFixups: { at: number; sp: bigint }[] = [];
  threads.forEach((t, i) => {
    const at = threadList + 4 + i * THREAD_SIZE;
    const ctx = encodeContext({ machine, contextFlags: defaults.flags, registers: contextRegisters(machine, t.registers) });
    const rva = s.alloc(size, 16);
    s.bytes(rva, ctx);
    contextRva.set(t.id, rva);
    s.u32(at, t.id >>> 0);
    s.u32(at + 8, NORMAL_PRIORITY_CLASS);
    s.u32(at + 40, size);
    s.u32(at + 44, rva);
    stackFixups.push({ at: at + 24, sp: t.registers[defaults.sp] ?? 0n });
  });

  // ModuleList, names and CodeView records
  const modules = snapshot.modules;
  const moduleList = s.alloc(4 + modules.length * MODULE_SIZE);
  s.u32(moduleList, modules.length);
  placeStream(MINIDUMP_STREAM.ModuleList, moduleList, 4 + modules.length * MODULE_SIZE);
  const withoutCodeView: string[] = [];
  modules.forEach((m, i) => {
    const at = moduleList + 4 + i * MODULE_SIZE;
    if (m.size > BigInt(U32_MAX)) throw new RangeError(`minidump writer: module ${m.name} is ${hex(m.size)} bytes; SizeOfImage is a u32`);
    s.u64(at, m.base);
    s.u32(at + 8, Number(m.size));
    s.u32(at + 16, moduleTimeDateStamp(m, memory));
    s.u32(at + 20, s.string(m.path ?? m.name));
    const version = parseVersion(m.version);
    if (version !== undefined) {
      const hi = ((version[0] << 16) | version[1]) >>> 0;
      const lo = ((version[2] << 16) | version[3]) >>> 0;
      const ffi = at + 24;
      s.u32(ffi, VS_FFI_SIGNATURE);
      s.u32(ffi + 4, VS_FFI_STRUCVERSION);
      s.u32(ffi + 8, hi);
      s.u32(ffi + 12, lo);
      s.u32(ffi + 16, hi);
      s.u32(ffi + 20, lo);
      s.u32(ffi + 24, VS_FFI_FILEFLAGSMASK);
      s.u32(ffi + 32, VOS_NT_WINDOWS32);
      s.u32(ffi + 36, /\.dll$/i.test(m.name) ? VFT_DLL : VFT_APP);
    }
    const cv = moduleCodeView(m, memory);
    if (cv === undefined) withoutCodeView.push(m.name);
    else {
      const record = encodeCodeView(cv);
      const rva = s.alloc(record.length);
      s.bytes(rva, record);
      s.u32(at + 76, record.length);
      s.u32(at + 80, rva);
    }
  });

  // Exception
  if (exception !== undefined) {
    const at = s.alloc(EXCEPTION_SIZE);
    const thread = threads.find((t) => t.id === exception!.threadId)!;
    const params = exception.parameters ?? [];
    if (params.length > EXCEPTION_MAXIMUM_PARAMETERS) throw new RangeError(`minidump writer: ${params.length} exception parameters; the stream holds ${EXCEPTION_MAXIMUM_PARAMETERS}`);
    s.u32(at, exception.threadId >>> 0);
    s.u32(at + 8, exception.code >>> 0);
    s.u32(at + 12, (exception.flags ?? 0) >>> 0);
    s.u64(at + 24, exception.address ?? thread.registers[defaults.pc] ?? 0n);
    s.u32(at + 32, params.length);
    params.forEach((p, i) => s.u64(at + 40 + 8 * i, p));
    // The faulting context is the thread's own: the snapshot was taken where it stopped.
    s.u32(at + 160, size);
    s.u32(at + 164, contextRva.get(exception.threadId)!);
    placeStream(MINIDUMP_STREAM.Exception, at, EXCEPTION_SIZE);
  }

  // MiscInfo (version 1)
  const misc = s.alloc(MISC_INFO_SIZE);
  s.u32(misc, MISC_INFO_SIZE);
  s.u32(misc + 4, MISC1_PROCESS_ID | (timeDateStamp !== 0 ? MISC1_PROCESS_TIMES : 0));
  s.u32(misc + 8, options.processId ?? 0x1000);
  s.u32(misc + 12, timeDateStamp);
  placeStream(MINIDUMP_STREAM.MiscInfo, misc, MISC_INFO_SIZE);

  // The memory list: descriptors now, data after all structures.
  const memoryBytes = ranges.reduce((n, r) => n + r.size, 0n);
  const wanted = options.memoryList ?? "auto";
  const pieces: MemoryExtent[] = [];
  for (const r of ranges) {
    for (let off = 0n; off < r.size; off += MEMORY_LIST_PIECE) {
      pieces.push({ start: r.start + off, size: r.size - off < MEMORY_LIST_PIECE ? r.size - off : MEMORY_LIST_PIECE });
    }
  }
  // A MemoryList is possible when every piece's data lies below 4 GiB; the structures come first.
  const listEnd = s.length + 4 + pieces.length * MEMORY_DESCRIPTOR_SIZE;
  const align16 = (n: number): number => Math.ceil(n / 16) * 16;
  let end = align16(listEnd);
  let fitsList = true;
  for (const p of pieces) {
    end = align16(end);
    if (end > U32_MAX) fitsList = false;
    end += Number(p.size);
  }
  const kind = wanted === "auto" ? (fitsList ? "MemoryList" : "Memory64List") : wanted;
  if (kind === "MemoryList" && !fitsList) {
    throw new RangeError(`minidump writer: ${memoryBytes} bytes of memory do not fit a MemoryList's 32-bit RVAs; use a Memory64List`);
  }
  const placed: PlacedRange[] = [];
  if (kind === "MemoryList") {
    const list = s.alloc(4 + pieces.length * MEMORY_DESCRIPTOR_SIZE);
    s.u32(list, pieces.length);
    placeStream(MINIDUMP_STREAM.MemoryList, list, 4 + pieces.length * MEMORY_DESCRIPTOR_SIZE);
    let file = align16(s.length);
    pieces.forEach((p, i) => {
      file = align16(file);
      const at = list + 4 + i * MEMORY_DESCRIPTOR_SIZE;
      s.u64(at, p.start);
      s.u32(at + 8, Number(p.size));
      s.u32(at + 12, file);
      placed.push({ start: p.start, size: p.size, file });
      file += Number(p.size);
    });
  } else {
    const list = s.alloc(16 + ranges.length * MEMORY64_DESCRIPTOR_SIZE, 8);
    placeStream(MINIDUMP_STREAM.Memory64List, list, 16 + ranges.length * MEMORY64_DESCRIPTOR_SIZE);
    const base = align16(s.length);
    s.u64(list, BigInt(ranges.length));
    s.u64(list + 8, BigInt(base));
    let file = base;
    ranges.forEach((r, i) => {
      const at = list + 16 + i * MEMORY64_DESCRIPTOR_SIZE;
      s.u64(at, r.start);
      s.u64(at + 8, r.size);
      placed.push({ start: r.start, size: r.size, file });
      file += Number(r.size);
    });
  }

  // Stack descriptors: from the stack pointer (16-aligned down) to the end of its range, and on
  // through the ranges that follow it both in memory and in the file (a stack recorded in pieces),
  // whose bytes they share.
  for (const { at, sp } of stackFixups) {
    const i = placed.findIndex((p) => sp >= p.start && sp < p.start + p.size);
    let r: PlacedRange | undefined = placed[i];
    if (r !== undefined) {
      let size = r.size;
      for (let j = i + 1; j < placed.length; j++) {
        const next = placed[j]!;
        if (next.start !== r.start + size || next.file !== r.file + Number(size)) break;
        size += next.size;
      }
      r = { ...r, size };
    }
    let start = sp;
    let dataSize = 0;
    let rva = 0;
    if (r !== undefined) {
      start = sp - (sp % 16n);
      if (start < r.start) start = r.start;
      const fileAt = r.file + Number(start - r.start);
      if (fileAt <= U32_MAX) {
        rva = fileAt;
        const n = r.start + r.size - start;
        dataSize = n > BigInt(U32_MAX) ? U32_MAX : Number(n);
      } else start = sp;
    }
    s.u64(at, start);
    s.u32(at + 8, dataSize);
    s.u32(at + 12, rva);
  }

  // Header and directory.
  s.u32(0, MINIDUMP_SIGNATURE);
  s.u32(4, MINIDUMP_VERSION);
  s.u32(8, streamTypes.length);
  s.u32(12, directory);
  s.u32(20, timeDateStamp);
  s.u64(24, kind === "Memory64List" ? MINIDUMP_WITH_FULL_MEMORY : MINIDUMP_NORMAL);
  const order = streamTypes.map((t) => (t === -1 ? (kind === "MemoryList" ? MINIDUMP_STREAM.MemoryList : MINIDUMP_STREAM.Memory64List) : t));
  order.forEach((type, i) => {
    const st = streams.find((x) => x.type === type)!;
    const at = directory + i * DIRECTORY_ENTRY_SIZE;
    s.u32(at, type);
    s.u32(at + 4, st.size);
    s.u32(at + 8, st.rva);
  });

  // Out it goes: the structures, then the memory, chunk by chunk.
  let written = 0;
  const put = (chunk: Uint8Array): void => {
    if (chunk.byteLength === 0) return;
    sink.write(chunk);
    written += chunk.byteLength;
  };
  put(s.used());
  const zeros = new Uint8Array(16);
  for (const p of placed) {
    if (p.file > written) put(zeros.subarray(0, p.file - written));
    if (p.file !== written) throw new Error(`minidump writer: internal layout error at file offset ${hex(written)}`);
    for (let off = 0n; off < p.size; ) {
      const n = p.size - off < BigInt(chunkSize) ? Number(p.size - off) : chunkSize;
      const address = p.start + off;
      const bytes = memory.read(address, n);
      if (bytes === undefined || bytes.byteLength !== n) {
        throw new RangeError(`minidump writer: the snapshot's memory cannot read ${n} byte(s) at ${hex(address)}, inside a range it holds`);
      }
      put(bytes);
      off += BigInt(n);
    }
  }
  return {
    size: written,
    memoryList: kind,
    ranges: placed.length,
    memoryBytes,
    streams: order.map((type) => streams.find((x) => x.type === type)!),
    modulesWithoutCodeView: withoutCodeView,
  };
}

/** The dump of `snapshot` as bytes in memory (small snapshots; large ones go through a sink). */
export function minidumpBytes(snapshot: Snapshot, options: MinidumpWriteOptions = {}): Uint8Array {
  const sink = bytesSink();
  writeMinidump(snapshot, sink, options);
  return sink.bytes();
}
