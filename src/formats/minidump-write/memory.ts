/**
 * The captured memory of a written dump (minidump.md §2.4): the ranges to write, the memory list
 * that places them (a MemoryList, or a Memory64List for full-memory dumps larger than a
 * MemoryList's 32-bit RVAs can place), the threads' Stack descriptors that point into them, and
 * the bytes themselves, read from the snapshot and handed to the sink a chunk at a time.
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { machineInfo, type Machine } from "../../model/machine.js";
import { MINIDUMP_STREAM } from "../minidump/constants.js";
import { MEMORY64_DESCRIPTOR_SIZE, MEMORY_DESCRIPTOR_SIZE } from "../minidump/memory-list.js";
import type { MemoryExtent, MinidumpWriteOptions, WrittenStreamInfo } from "./options.js";
import type { Structures } from "./structures.js";

/** One memory descriptor as laid out: `size` bytes at `start`, whose data go to file offset `file`. */
export interface PlacedRange {
  start: bigint;
  size: bigint;
  file: number;
}

/** The memory list as laid out. */
export interface PlacedMemory {
  kind: "MemoryList" | "Memory64List";
  stream: WrittenStreamInfo;
  placed: PlacedRange[];
  /** Bytes of captured memory. */
  memoryBytes: bigint;
}

const U32_MAX = 0xffff_ffff;
/** The largest piece of a range one MemoryList descriptor holds (DataSize is a u32); 2 GiB keeps pieces page-aligned. */
const MEMORY_LIST_PIECE = 0x8000_0000n;

const align16 = (n: number): number => Math.ceil(n / 16) * 16;

/** The ranges of a snapshot's memory, when the reader can list them. */
export function extentsOf(memory: MemoryReader): MemoryExtent[] | undefined {
  const m = memory as { regions?: unknown; extents?: unknown };
  if (Array.isArray(m.regions)) {
    return (m.regions as { base: bigint; bytes: Uint8Array }[]).map((r) => ({ start: r.base, size: BigInt(r.bytes.byteLength) }));
  }
  if (Array.isArray(m.extents)) return (m.extents as { start: bigint; end: bigint }[]).map((e) => ({ start: e.start, size: e.end - e.start }));
  return undefined;
}

/** Sorted, non-empty, non-overlapping ranges inside the machine's address space; anything else is a RangeError. */
export function checkedRanges(ranges: readonly MemoryExtent[], machine: Machine): MemoryExtent[] {
  const limit = 1n << BigInt(8 * machineInfo(machine).pointerSize);
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

/**
 * Lays out the memory list after the structures built so far: its descriptors now, the data
 * after all structures (16-aligned; back to back for a Memory64List).
 */
export function placeMemory(s: Structures, ranges: readonly MemoryExtent[], wanted: NonNullable<MinidumpWriteOptions["memoryList"]>): PlacedMemory {
  const memoryBytes = ranges.reduce((n, r) => n + r.size, 0n);
  const pieces: MemoryExtent[] = [];
  for (const r of ranges) {
    for (let off = 0n; off < r.size; off += MEMORY_LIST_PIECE) {
      pieces.push({ start: r.start + off, size: r.size - off < MEMORY_LIST_PIECE ? r.size - off : MEMORY_LIST_PIECE });
    }
  }
  // A MemoryList is possible when every piece's data lies below 4 GiB; the structures come first.
  const listEnd = s.length + 4 + pieces.length * MEMORY_DESCRIPTOR_SIZE;
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
    return { kind, stream: { type: MINIDUMP_STREAM.MemoryList, rva: list, size: 4 + pieces.length * MEMORY_DESCRIPTOR_SIZE }, placed, memoryBytes };
  }
  const list = s.alloc(16 + ranges.length * MEMORY64_DESCRIPTOR_SIZE, 8);
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
  return { kind, stream: { type: MINIDUMP_STREAM.Memory64List, rva: list, size: 16 + ranges.length * MEMORY64_DESCRIPTOR_SIZE }, placed, memoryBytes };
}

/**
 * Fills in the threads' Stack descriptors: from the stack pointer (16-aligned down) to the end of
 * its range, and on through the ranges that follow it both in memory and in the file (a stack
 * recorded in pieces), whose bytes they share. A stack pointer in no range gets an empty one.
 */
export function writeStackDescriptors(s: Structures, fixups: readonly { at: number; sp: bigint }[], placed: readonly PlacedRange[]): void {
  for (const { at, sp } of fixups) {
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
}

/**
 * Hands the placed ranges' bytes to `put`, read from `memory` `chunkSize` bytes at a time, with
 * the zeros that align each range; `written` is the file offset reached so far. Returns the
 * file offset after the last byte.
 */
export function emitMemory(put: (chunk: Uint8Array) => void, written: number, placed: readonly PlacedRange[], memory: MemoryReader, chunkSize: number): number {
  const zeros = new Uint8Array(16);
  for (const p of placed) {
    if (p.file > written) {
      put(zeros.subarray(0, p.file - written));
      written = p.file;
    }
    if (p.file !== written) throw new Error(`minidump writer: internal layout error at file offset ${hex(written)}`);
    for (let off = 0n; off < p.size; ) {
      const n = p.size - off < BigInt(chunkSize) ? Number(p.size - off) : chunkSize;
      const address = p.start + off;
      const bytes = memory.read(address, n);
      if (bytes === undefined || bytes.byteLength !== n) {
        throw new RangeError(`minidump writer: the snapshot's memory cannot read ${n} byte(s) at ${hex(address)}, inside a range it holds`);
      }
      put(bytes);
      written += n;
      off += BigInt(n);
    }
  }
  return written;
}
