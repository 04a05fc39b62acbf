/**
 * Minidump constants (minidump.md §1, §2): the header's signature and version, stream types,
 * processor architectures and the limits the reader applies before allocating.
 */
import { hex } from "../../hex.js";

/** MINIDUMP_HEADER.Signature: "MDMP" read little-endian. */
export const MINIDUMP_SIGNATURE = 0x504d444d;
/** The low 16 bits of MINIDUMP_HEADER.Version; the high 16 bits are implementation-specific. */
export const MINIDUMP_VERSION = 0xa793;
/** sizeof(MINIDUMP_HEADER). */
export const HEADER_SIZE = 32;
/** sizeof(MINIDUMP_DIRECTORY). */
export const DIRECTORY_ENTRY_SIZE = 12;

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
  /** Breakpad's Linux streams: /proc/cpuinfo, /etc/lsb-release, /proc/self/maps, as text. */
  LinuxCpuInfo: 0x47670003,
  LinuxLsbRelease: 0x47670005,
  LinuxMaps: 0x47670009,
  /**
   * Mozilla's streams: macOS `__crash_info` records, the macOS kernel's boot arguments, Linux's
   * /proc/self/limits, and the errors the dump writer went on from (JSON).
   */
  MozMacosCrashInfo: 0x4d7a0001,
  MozMacosBootargs: 0x4d7a0002,
  MozLinuxLimits: 0x4d7a0003,
  MozSoftErrors: 0x4d7a0004,
} as const;

/** SystemInfo.ProcessorArchitecture values (minidump.md §2.6). */
export const PROCESSOR_ARCHITECTURE = {
  INTEL: 0,
  ARM: 5,
  IA64: 6,
  AMD64: 9,
  IA32_ON_WIN64: 10,
  ARM64: 12,
  /** Breakpad's MD_CPU_ARCHITECTURE_ARM64_OLD, written by non-Windows writers (arm64.md §2.3). */
  ARM64_OLD: 0x8003,
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
  /**
   * The notes kept for one dump; the rest are counted in a last note. A list of a damaged dump
   * can hold a hundred thousand entries, each with its own problem.
   */
  maxNotes: 256,
  /**
   * The thread entries read from one list; the rest are passed over with a note. A process
   * rarely has more than a few thousand threads; a damaged 28 MB list can claim half a million.
   */
  maxThreads: 65536,
  /**
   * The module entries read from one list; the rest are passed over with a note. A process loads
   * a few hundred modules, rarely thousands; a damaged 31 MB list can claim 220,000.
   */
  maxModules: 65536,
  /**
   * The handle descriptors read from the HandleData stream; the rest are passed over with a note.
   * A process holds a few thousand handles, a leaking one tens of thousands; each descriptor
   * names two strings, so a damaged list claiming millions would otherwise read millions of them.
   */
  maxHandles: 65536,
  /**
   * The ranges read from each memory list (MemoryList, Memory64List); the rest are passed over
   * with a note. A full-memory dump of a large process lists tens of thousands; a damaged 23 MB
   * list claimed 1.4 million, each an object to sort and make disjoint.
   */
  maxMemoryRanges: 262144,
  /**
   * The characters of the names one dump hands out together (module, unloaded-module, thread
   * and handle names, and the debug files and build ids of CodeView records), each use counted:
   * the entries of a damaged list may all name one long string, which every output then repeats
   * once per entry (21,180 modules naming strings of up to 512 Ki characters made 1.5 GB of JSON
   * from a 2.4 MB dump). A name past it is passed over with a note. A real dump's names come to
   * some tens of thousands of characters (a thousand modules of 100-character paths: 100,000);
   * the limit is 4 Mi.
   */
  maxNameChars: 1 << 22,
  /** The bytes of a text stream (Breakpad's Linux /proc files) decoded; the rest is passed over with a note. */
  maxTextStreamBytes: 16 << 20,
} as const;

const STREAM_NAMES: Readonly<Record<number, string>> = Object.fromEntries(Object.entries(MINIDUMP_STREAM).map(([name, type]) => [type, name]));

/** The name of a stream type ("ThreadList"), or its number in hex. */
export function streamTypeName(type: number): string {
  return STREAM_NAMES[type] ?? hex(type);
}
