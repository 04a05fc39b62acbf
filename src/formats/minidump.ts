/**
 * A Windows minidump reader (minidump.md §1–§3) over a {@link ByteSource}: the container
 * (minidump/read.ts) reads the header, the stream directory and, through a registry of stream
 * readers (one module per stream in minidump/, each of the shape minidump/stream.ts declares),
 * the streams the walker needs; never the captured memory itself. {@link minidumpSnapshot}
 * turns the result into a {@link Snapshot} whose memory is read lazily, page by page
 * (minidump/memory.ts), so a multi-gigabyte full-memory dump walks in little memory.
 *
 * A damaged dump is read as far as it can be: what is passed over or repaired is noted in
 * `Minidump.notes`, each note naming the absolute file offset of the field at fault. Only a
 * header or directory that cannot be read, or a dump with no thread to walk, is an
 * {@link InputError} naming the offset.
 */
export { bytesSource, type ByteSource } from "../memory/byte-source.js";
export { MINIDUMP_LIMITS, MINIDUMP_SIGNATURE, MINIDUMP_STREAM, MINIDUMP_VERSION, PROCESSOR_ARCHITECTURE, VS_FFI_SIGNATURE, streamTypeName } from "./minidump/constants.js";
export type { Minidump, MinidumpContext, MinidumpHeader, MinidumpLocation, MinidumpMemoryRange, MinidumpStreamEntry, MemoryOrigin } from "./minidump/types.js";
export type { MinidumpStream } from "./minidump/stream.js";
export type { MinidumpSystemInfo, MinidumpCpuInfo } from "./minidump/system-info.js";
export type { MinidumpThread } from "./minidump/thread-list.js";
export { BREAKPAD_ARM_CONTEXT_SIZE } from "./minidump/arm-context.js";
export type { MinidumpModule, MinidumpVersionInfo } from "./minidump/module-list.js";
export type { MinidumpException } from "./minidump/exception.js";
export { MISC1_PROCESS_ID, miscProcessId, type MinidumpMiscInfo } from "./minidump/misc-info.js";
export type { MinidumpFunctionTable, MinidumpFunctionTableStream } from "./minidump/function-table.js";
export type { MinidumpAssertion, MinidumpBreakpadInfo } from "./minidump/breakpad-info.js";
export type { MinidumpThreadNames } from "./minidump/thread-names.js";
export type { MinidumpUnloadedModule } from "./minidump/unloaded-modules.js";
export type { MinidumpHandle } from "./minidump/handle-data.js";
export type { MinidumpMemoryInfo } from "./minidump/memory-info.js";
export type { MinidumpMacCrashInfoRecord, MinidumpProcLimit } from "./minidump/mozilla.js";
export { elfDebugId } from "./minidump/code-view.js";
export { MINIDUMP_STREAMS, readMinidump } from "./minidump/read.js";
export { MinidumpMemory, snapshotMemoryRanges } from "./minidump/memory.js";
export { minidumpSnapshot, operatingSystem } from "./minidump/snapshot.js";
