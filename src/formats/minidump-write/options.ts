/**
 * What the minidump writer is asked to write and what it reports: the options (memory ranges,
 * the kind of memory list, the exception, SystemInfo fields) and the result.
 */
import type { MemoryReader } from "../../memory/reader.js";

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

/** ExceptionCode of a breakpoint (int3), used for snapshots taken at a break. */
export const EXCEPTION_BREAKPOINT = 0x8000_0003;

/** The SystemInfo fields written when the options give none: Windows 10 22H2 on a 1-CPU Intel machine. */
export const DEFAULT_SYSTEM: MinidumpWriteSystem = {
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
