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
 * The writer lives in minidump-write/: the streams (streams.ts), the memory list and the
 * captured memory (memory.ts), module identity (identity.ts) and the order of work (write.ts);
 * it shares the record sizes and constants of the reader (minidump/). This is the product
 * writer; the test-only writer in test/support/minidump-writer.ts shares no code with it or with
 * the reader.
 */
export { bytesSink, type ByteSink, type BytesSink } from "./minidump-write/sink.js";
export {
  EXCEPTION_BREAKPOINT,
  type ExtentMemory,
  type MemoryExtent,
  type MinidumpWriteException,
  type MinidumpWriteOptions,
  type MinidumpWriteResult,
  type MinidumpWriteSystem,
  type WrittenStreamInfo,
} from "./minidump-write/options.js";
export { encodeCodeView, moduleCodeId, moduleCodeView, moduleTimeDateStamp, type CodeViewIdentity } from "./minidump-write/identity.js";
export { minidumpBytes, writeMinidump } from "./minidump-write/write.js";
