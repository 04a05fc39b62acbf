/**
 * The decoded minidump (minidump.md §1–§3): the container's header and directory, the captured
 * memory ranges, contexts, and {@link Minidump}, which gathers what each stream reader
 * (stream.ts) stores. The streams' own records are declared beside their readers.
 */
import type { ByteSource } from "../../memory/byte-source.js";
import type { Machine } from "../../model/machine.js";
import type { Registers } from "../../model/snapshot.js";
import type { MinidumpAssertion, MinidumpBreakpadInfo } from "./breakpad-info.js";
import type { MinidumpException } from "./exception.js";
import type { MinidumpFunctionTableStream } from "./function-table.js";
import type { MinidumpMiscInfo } from "./misc-info.js";
import type { MinidumpModule } from "./module-list.js";
import type { MinidumpSystemInfo } from "./system-info.js";
import type { MinidumpThread } from "./thread-list.js";
import type { MinidumpThreadNames } from "./thread-names.js";
import type { MinidumpUnloadedModule } from "./unloaded-modules.js";
import type { MinidumpLinuxText } from "./linux-text.js";
import type { MinidumpHandle } from "./handle-data.js";
import type { MinidumpMemoryInfo } from "./memory-info.js";
import type { MinidumpMacCrashInfoRecord, MinidumpProcLimit } from "./mozilla.js";

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
  /** The ThreadNames stream: names by thread id. */
  threadNames?: MinidumpThreadNames;
  /** The UnloadedModuleList stream, in the dump's order. */
  unloadedModules?: MinidumpUnloadedModule[];
  /** Breakpad's Linux text streams (/proc/cpuinfo, /etc/lsb-release, /proc/self/maps). */
  linux?: MinidumpLinuxText;
  /** The HandleData stream: the process's open handles. */
  handles?: MinidumpHandle[];
  /** The MemoryInfoList stream: every region of the address space with its state and protection. */
  memoryInfo?: MinidumpMemoryInfo[];
  /** Mozilla's MozMacosCrashInfoStream: the macOS `__DATA,__crash_info` records, in the stream's order. */
  macCrashInfo?: MinidumpMacCrashInfoRecord[];
  /** Mozilla's MozLinuxLimits stream: the limits of /proc/self/limits, in the file's order. */
  procLimits?: MinidumpProcLimit[];
  /** Mozilla's MozMacosBootargs stream: the macOS kernel's boot arguments. */
  macBootArgs?: string;
  /** Mozilla's MozSoftErrors stream: the errors the dump writer went on from, as its JSON says them. */
  softErrors?: unknown[];
  /** Things passed over without failing (a rejected CodeView record, an exception context not used, ...). */
  notes: string[];
}
