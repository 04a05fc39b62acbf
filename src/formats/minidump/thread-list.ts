/**
 * The ThreadList and ThreadExList streams (types 3 and 8, minidump.md §2.2): every thread's id,
 * stack range and CONTEXT, and on IA-64 (MINIDUMP_THREAD_EX) its register backing store. A dump
 * with both lists is read from ThreadExList.
 */
import { withoutStackTraces, type InputError } from "../../errors.js";
import { MINIDUMP_LIMITS, MINIDUMP_STREAM, streamTypeName } from "./constants.js";
import { attempt, readContext } from "./context.js";
import { listEntries, memoryDescriptor, noteLostRanges, type MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpContext, MinidumpLocation, MinidumpMemoryRange, MinidumpStreamEntry } from "./types.js";


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

/** sizeof(MINIDUMP_THREAD). */
export const THREAD_SIZE = 48;
const THREAD_EX_SIZE = 64;

function readThreads(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation, ex: boolean, systemArch: number | undefined): MinidumpThread[] {
  const entrySize = ex ? THREAD_EX_SIZE : THREAD_SIZE;
  const listed = listEntries(input, s, held, entrySize);
  const { first } = listed;
  if (listed.count === 0) return [];
  const count = Math.min(listed.count, MINIDUMP_LIMITS.maxThreads);
  if (count < listed.count) {
    input.note(s.location.rva, `${streamTypeName(s.streamType)}: ${listed.count} entries; the first ${count} are read (the limit of threads read from one dump), the rest passed over`);
  }
  const c = input.cursor(first, count * entrySize, `${streamTypeName(s.streamType)} entries`);
  // A refused context's error is kept as data (a note, or the error of a dump with no usable
  // thread), made without a stack trace: a damaged list of half a million entries would pay for
  // one per entry.
  return withoutStackTraces(() => {
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
  });
}

/** The ThreadList stream's reader; it gives way to ThreadExList. */
export const threadListStream: MinidumpStream<MinidumpThread[]> = {
  type: MINIDUMP_STREAM.ThreadList,
  givesWayTo: { type: MINIDUMP_STREAM.ThreadExList, note: "both ThreadList and ThreadExList are present: threads come from ThreadExList" },
  read: (input, entry, held, dump) => readThreads(input, entry, held, false, dump.systemInfo?.processorArchitecture),
  store(dump, threads) {
    dump.threads = threads;
    dump.threadStream = "ThreadList";
  },
};

/** The ThreadExList stream's reader. */
export const threadExListStream: MinidumpStream<MinidumpThread[]> = {
  type: MINIDUMP_STREAM.ThreadExList,
  read: (input, entry, held, dump) => readThreads(input, entry, held, true, dump.systemInfo?.processorArchitecture),
  store(dump, threads) {
    dump.threads = threads;
    dump.threadStream = "ThreadExList";
  },
};
