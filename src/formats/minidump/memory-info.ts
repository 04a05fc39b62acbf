/**
 * The MemoryInfoList stream (type 16): MINIDUMP_MEMORY_INFO_LIST, a header (SizeOfHeader,
 * SizeOfEntry, NumberOfEntries as a u64) and entries of SizeOfEntry bytes (MINIDUMP_MEMORY_INFO,
 * 48): BaseAddress, AllocationBase, AllocationProtect, a pad, RegionSize, State, Protect, Type
 * and a pad. It says what every region of the address space was (free, reserved, committed) and
 * its page protection, which the crash analysis reads (is the faulting address readable?).
 */
import { MINIDUMP_STREAM } from "./constants.js";
import { sizedListEntries, type MinidumpInput, type SizedListShape } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/** One MINIDUMP_MEMORY_INFO: a region of pages with the same state and protection. */
export interface MinidumpMemoryInfo {
  base: bigint;
  allocationBase: bigint;
  allocationProtect: number;
  size: bigint;
  /** MEM_COMMIT 0x1000, MEM_RESERVE 0x2000, MEM_FREE 0x10000. */
  state: number;
  /** The PAGE_* protection of the region's pages. */
  protect: number;
  /** MEM_PRIVATE 0x20000, MEM_MAPPED 0x40000, MEM_IMAGE 0x1000000. */
  type: number;
}

/** sizeof(MINIDUMP_MEMORY_INFO). */
const ENTRY_SIZE = 48;
const MEMORY_INFO_LIST: SizedListShape = { stream: "MemoryInfoList", headerSize: 16, entrySize: ENTRY_SIZE, entry: "an entry", sizeField: "SizeOfEntry", countField: "NumberOfEntries" };

function readMemoryInfo(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpMemoryInfo[] {
  const { first, entrySize, count } = sizedListEntries(input, s, held, MEMORY_INFO_LIST);
  const out: MinidumpMemoryInfo[] = [];
  for (let i = 0; i < count; i++) {
    const c = input.cursor(first + i * entrySize, ENTRY_SIZE, `memory info ${i}`);
    const base = c.u64();
    const allocationBase = c.u64();
    const allocationProtect = c.u32();
    c.u32();
    const size = c.u64();
    out.push({ base, allocationBase, allocationProtect, size, state: c.u32(), protect: c.u32(), type: c.u32() });
  }
  return out;
}

/** The MemoryInfoList stream's reader. */
export const memoryInfoListStream: MinidumpStream<MinidumpMemoryInfo[]> = {
  type: MINIDUMP_STREAM.MemoryInfoList,
  read: (input, entry, held) => readMemoryInfo(input, entry, held),
  store(dump, regions) {
    dump.memoryInfo = regions;
  },
};
