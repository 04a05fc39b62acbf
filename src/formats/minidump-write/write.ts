/**
 * The dump writer's order of work: the structures are laid out in memory first (header,
 * directory, the streams of streams.ts, the memory list of memory.ts), then the whole dump goes
 * out front to back, the structures followed by the captured memory read chunk by chunk.
 */
import { InputError } from "../../errors.js";
import type { Snapshot } from "../../model/snapshot.js";
import { DIRECTORY_ENTRY_SIZE, HEADER_SIZE, MINIDUMP_SIGNATURE, MINIDUMP_VERSION } from "../minidump/constants.js";
import { checkedRanges, emitMemory, extentsOf, placeMemory, writeStackDescriptors } from "./memory.js";
import { DEFAULT_SYSTEM, EXCEPTION_BREAKPOINT, type MinidumpWriteException, type MinidumpWriteOptions, type MinidumpWriteResult, type MinidumpWriteSystem, type WrittenStreamInfo } from "./options.js";
import { bytesSink, type ByteSink } from "./sink.js";
import { isWrittenMachine, writeException, writeMiscInfo, writeModules, writeSystemInfo, writeThreads, writtenMachinesText } from "./streams.js";
import { Structures } from "./structures.js";

/** MINIDUMP_TYPE: MiniDumpNormal, and MiniDumpWithFullMemory for a Memory64List. */
const MINIDUMP_NORMAL = 0n;
const MINIDUMP_WITH_FULL_MEMORY = 0x2n;
const DEFAULT_CHUNK = 1 << 20;

/**
 * Writes `snapshot` as a minidump to `sink` and says what it wrote. Only x86, x64, ARM64 and ARM
 * snapshots can be written (an IA-64 one is an InputError "unsupported"). Memory that the snapshot's ranges
 * claim but its reader cannot read, overlapping ranges, and values too wide for their fields are
 * RangeErrors: they are mistakes of the caller, not of an input file.
 */
export function writeMinidump(snapshot: Snapshot, sink: ByteSink, options: MinidumpWriteOptions = {}): MinidumpWriteResult {
  const machine = snapshot.machine;
  if (!isWrittenMachine(machine)) throw new InputError("unsupported", `the minidump writer writes ${writtenMachinesText()} snapshots, not ${machine}`);
  const memory = snapshot.memory;
  const system: MinidumpWriteSystem = { ...DEFAULT_SYSTEM, ...options.system };
  const timeDateStamp = options.timeDateStamp ?? 0;
  const chunkSize = options.chunkSize ?? DEFAULT_CHUNK;
  if (!Number.isSafeInteger(chunkSize) || chunkSize < 1) throw new RangeError(`minidump writer: chunkSize must be a whole number ≥ 1, not ${chunkSize}`);

  const given = options.ranges ?? extentsOf(memory);
  if (given === undefined) throw new RangeError("minidump writer: the snapshot's memory cannot list its ranges: pass options.ranges");
  const ranges = checkedRanges(given, machine);
  const exception = exceptionToWrite(snapshot, options.exception);

  const s = new Structures();
  s.alloc(HEADER_SIZE);
  const directoryEntries = 5 + (exception !== undefined ? 1 : 0);
  const directory = s.alloc(directoryEntries * DIRECTORY_ENTRY_SIZE);
  const streams: WrittenStreamInfo[] = [writeSystemInfo(s, machine, system)];
  const threads = writeThreads(s, machine, snapshot.threads);
  streams.push(threads.stream);
  const modules = writeModules(s, snapshot.modules, memory);
  streams.push(modules.stream);
  if (exception !== undefined) {
    const thread = snapshot.threads.find((t) => t.id === exception.threadId)!;
    streams.push(writeException(s, machine, exception, thread, threads.contextRva.get(exception.threadId)!));
  }
  streams.push(writeMiscInfo(s, timeDateStamp, options.processId ?? 0x1000));
  const memoryList = placeMemory(s, ranges, options.memoryList ?? "auto");
  streams.push(memoryList.stream);
  writeStackDescriptors(s, threads.stackFixups, memoryList.placed);

  // Header and directory.
  s.u32(0, MINIDUMP_SIGNATURE);
  s.u32(4, MINIDUMP_VERSION);
  s.u32(8, streams.length);
  s.u32(12, directory);
  s.u32(20, timeDateStamp);
  s.u64(24, memoryList.kind === "Memory64List" ? MINIDUMP_WITH_FULL_MEMORY : MINIDUMP_NORMAL);
  streams.forEach((st, i) => {
    const at = directory + i * DIRECTORY_ENTRY_SIZE;
    s.u32(at, st.type);
    s.u32(at + 4, st.size);
    s.u32(at + 8, st.rva);
  });

  // Out it goes: the structures, then the memory, chunk by chunk.
  const put = (chunk: Uint8Array): void => {
    if (chunk.byteLength > 0) sink.write(chunk);
  };
  const structures = s.used();
  put(structures);
  const size = emitMemory(put, structures.byteLength, memoryList.placed, memory, chunkSize);
  return {
    size,
    memoryList: memoryList.kind,
    ranges: memoryList.placed.length,
    memoryBytes: memoryList.memoryBytes,
    streams,
    modulesWithoutCodeView: modules.withoutCodeView,
  };
}

/** The exception to write: the one asked for, or a breakpoint in the crashed thread; none when `false` or no thread is marked crashed. */
function exceptionToWrite(snapshot: Snapshot, asked: MinidumpWriteException | false | undefined): (MinidumpWriteException & { threadId: number }) | undefined {
  if (asked === false || snapshot.threads.length === 0) return undefined;
  const crashed = snapshot.threads.find((t) => t.crashed);
  let exception: (MinidumpWriteException & { threadId: number }) | undefined;
  if (asked !== undefined) exception = { ...asked, threadId: asked.threadId ?? (crashed ?? snapshot.threads[0]!).id };
  else if (crashed !== undefined) exception = { threadId: crashed.id, code: EXCEPTION_BREAKPOINT };
  if (exception !== undefined && !snapshot.threads.some((t) => t.id === exception.threadId)) {
    throw new RangeError(`minidump writer: the exception names thread ${exception.threadId}, which the snapshot does not have`);
  }
  return exception;
}

/** The dump of `snapshot` as bytes in memory (small snapshots; large ones go through a sink). */
export function minidumpBytes(snapshot: Snapshot, options: MinidumpWriteOptions = {}): Uint8Array {
  const sink = bytesSink();
  writeMinidump(snapshot, sink, options);
  return sink.bytes();
}
