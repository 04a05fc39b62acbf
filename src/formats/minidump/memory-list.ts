/**
 * The MemoryList and Memory64List streams (types 5 and 9, minidump.md §2.4): the captured
 * ranges of target memory and where their bytes are in the file. Both add to the dump's memory,
 * which the container sorts and makes disjoint once every stream is read (memory.ts).
 */
import { hex } from "../../hex.js";
import { MINIDUMP_LIMITS, MINIDUMP_STREAM } from "./constants.js";
import { listEntries, memoryDescriptor, noteLostRanges, type MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpMemoryRange, MinidumpStreamEntry } from "./types.js";

/** sizeof(MINIDUMP_MEMORY_DESCRIPTOR). */
export const MEMORY_DESCRIPTOR_SIZE = 16;
/** sizeof(MINIDUMP_MEMORY_DESCRIPTOR64). */
export const MEMORY64_DESCRIPTOR_SIZE = 16;

/** At most {@link MINIDUMP_LIMITS}' `maxMemoryRanges` of a list's `count` ranges, with a note when that is fewer. */
function mostRanges(input: MinidumpInput, stream: string, count: number, at: number): number {
  if (count <= MINIDUMP_LIMITS.maxMemoryRanges) return count;
  input.note(at, `${stream}: ${count} ranges; the first ${MINIDUMP_LIMITS.maxMemoryRanges} are read (the limit of memory ranges read from one list), the rest passed over`);
  return MINIDUMP_LIMITS.maxMemoryRanges;
}

function readMemoryList(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpMemoryRange[] {
  const listed = listEntries(input, s, held, MEMORY_DESCRIPTOR_SIZE);
  const { first } = listed;
  const count = mostRanges(input, "MemoryList", listed.count, s.location.rva);
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
function readMemory64List(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpMemoryRange[] {
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
  const n = mostRanges(input, "Memory64List", Number(count), rva);
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

/** The MemoryList stream's reader. */
export const memoryListStream: MinidumpStream<MinidumpMemoryRange[]> = {
  type: MINIDUMP_STREAM.MemoryList,
  read: (input, entry, held) => readMemoryList(input, entry, held),
  store(dump, ranges) {
    // One by one: a list of millions of ranges is more than a call's arguments can hold.
    for (const r of ranges) dump.memory.push(r);
  },
};

/** The Memory64List stream's reader. */
export const memory64ListStream: MinidumpStream<MinidumpMemoryRange[]> = {
  type: MINIDUMP_STREAM.Memory64List,
  read: (input, entry, held) => readMemory64List(input, entry, held),
  store(dump, ranges) {
    // One by one: a list of millions of ranges is more than a call's arguments can hold.
    for (const r of ranges) dump.memory.push(r);
  },
};
