/**
 * Target memory read lazily from a dump (minidump.md §2.4, §4): the captured ranges sorted and
 * made disjoint, the ranges a snapshot reads (the lists plus thread stacks no list covers), and
 * {@link MinidumpMemory}, which reads them page by page from the dump's source.
 */
import { hex } from "../../hex.js";
import type { ByteSource } from "../../memory/byte-source.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { Minidump, MinidumpMemoryRange } from "./types.js";

/**
 * Sorts ranges by start and makes them disjoint, as a reader over them needs. Exact duplicates
 * (same start, size and data) are dropped. Where ranges overlap otherwise (a real Windows x86
 * dump's MemoryList does), the one that starts lower, then the one declared first, supplies the
 * shared bytes and the other keeps the rest: a note names the first such descriptor and counts
 * the others.
 */
export function sortRanges(ranges: readonly MinidumpMemoryRange[], note?: (offset: number, text: string) => void): MinidumpMemoryRange[] {
  const sorted = ranges.filter((r) => r.size > 0n).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.descriptor - b.descriptor));
  const out: MinidumpMemoryRange[] = [];
  let covered = 0n;
  let first: { range: MinidumpMemoryRange; over: MinidumpMemoryRange } | undefined;
  let overlaps = 0;
  for (const r of sorted) {
    const prev = out[out.length - 1];
    const end = r.start + r.size;
    if (prev === undefined || r.start >= covered) {
      out.push(r);
      covered = end;
      continue;
    }
    if (r.start === prev.start && r.size === prev.size && r.rva === prev.rva) continue;
    overlaps++;
    first ??= { range: r, over: prev };
    if (end <= covered) continue;
    out.push({ ...r, start: covered, size: end - covered, rva: r.rva + Number(covered - r.start) });
    covered = end;
  }
  if (first !== undefined && note !== undefined) {
    const { range: r, over } = first;
    const more = overlaps > 1 ? `; ${overlaps - 1} more overlap(s) are resolved the same way` : "";
    note(
      r.descriptor,
      `${r.from} range ${hex(r.start)}..${hex(r.start + r.size)} overlaps the ${over.from} range ${hex(over.start)}..${hex(over.start + over.size)} (descriptor at ${hex(over.descriptor)}): the shared bytes are read from the range that starts lower${more}`,
    );
  }
  return out;
}



interface Span {
  start: bigint;
  end: bigint;
  /** `start` and `end` as numbers: exact below 2^53, which is all the number fast path asks about. */
  nstart: number;
  nend: number;
  /** File offset of the byte at `start`. */
  file: number;
}

interface Page {
  /** The span the page belongs to (two spans can share an address page). */
  span: number;
  start: bigint;
  end: bigint;
  nstart: number;
  nend: number;
  bytes: Uint8Array;
  view: DataView;
}

/**
 * Target memory read lazily from a dump: binary search over the captured ranges (sorted by
 * start; ranges adjacent both in memory and in the file are joined), then a read of at most one
 * page from the source, kept in a small cache of recently used pages. A read spanning ranges
 * that touch in memory is stitched together; any unmapped byte makes the read `undefined`.
 */
export class MinidumpMemory implements MemoryReader {
  /** Bytes per cached page (address-aligned, clipped to the range). */
  static readonly PAGE_SIZE = 4096;
  private readonly spans: Span[];
  /** Pages by address page number (address / PAGE_SIZE, exact: a 64-bit address has a 52-bit page number). */
  private readonly cache = new Map<number, Page>();
  private current: Page | undefined;
  private lastSpan = 0;

  /** `ranges` are sorted, made disjoint as a parsed dump's are (the lower start wins), and joined here. */
  constructor(
    private readonly source: ByteSource,
    ranges: readonly MinidumpMemoryRange[],
    private readonly maxPages = 64,
  ) {
    const sorted = sortRanges(ranges);
    const spans: Span[] = [];
    for (const r of sorted) {
      const prev = spans[spans.length - 1];
      const end = r.start + r.size;
      if (prev !== undefined && prev.end === r.start && prev.file + Number(prev.end - prev.start) === r.rva) {
        prev.end = end;
        prev.nend = Number(end);
        continue;
      }
      spans.push({ start: r.start, end, nstart: Number(r.start), nend: Number(end), file: r.rva });
    }
    this.spans = spans;
  }

  /** The captured ranges after joining, as [start, end) pairs. */
  get extents(): readonly { start: bigint; end: bigint }[] {
    return this.spans.map((s) => ({ start: s.start, end: s.end }));
  }

  private spanIndex(address: bigint): number {
    const hint = this.spans[this.lastSpan];
    if (hint !== undefined && address >= hint.start && address < hint.end) return this.lastSpan;
    let lo = 0;
    let hi = this.spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.spans[mid]!;
      if (address < s.start) hi = mid - 1;
      else if (address >= s.end) lo = mid + 1;
      else {
        this.lastSpan = mid;
        return mid;
      }
    }
    return -1;
  }

  /** The cached page of span `i` holding `address`, read from the source on a miss. */
  private pageOf(i: number, address: bigint): Page | undefined {
    const size = BigInt(MinidumpMemory.PAGE_SIZE);
    const key = Number(address / size);
    const page = this.cache.get(key);
    if (page !== undefined && page.span === i) {
      this.cache.delete(key);
      this.cache.set(key, page);
      this.current = page;
      return page;
    }
    const span = this.spans[i]!;
    const aligned = BigInt(key) * size;
    const start = aligned > span.start ? aligned : span.start;
    const end = aligned + size < span.end ? aligned + size : span.end;
    return this.load(key, i, start, end);
  }

  /** The number fast path's page lookup: addresses below 2^53 compare exactly as numbers. */
  private pageOfNumber(address: number): Page | undefined {
    const key = Math.floor(address / MinidumpMemory.PAGE_SIZE);
    const page = this.cache.get(key);
    if (page !== undefined && address >= page.nstart && address < page.nend) {
      this.cache.delete(key);
      this.cache.set(key, page);
      this.current = page;
      return page;
    }
    let lo = 0;
    let hi = this.spans.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const s = this.spans[mid]!;
      if (address < s.nstart) hi = mid - 1;
      else if (address >= s.nend) lo = mid + 1;
      else {
        const aligned = key * MinidumpMemory.PAGE_SIZE;
        const start = Math.max(aligned, s.nstart);
        const end = Math.min(aligned + MinidumpMemory.PAGE_SIZE, s.nend);
        this.lastSpan = mid;
        return this.load(key, mid, BigInt(start), BigInt(end));
      }
    }
    return undefined;
  }

  private load(key: number, i: number, start: bigint, end: bigint): Page | undefined {
    const span = this.spans[i]!;
    const bytes = this.source.read(span.file + Number(start - span.start), Number(end - start));
    if (bytes === undefined) return undefined;
    const page: Page = { span: i, start, end, nstart: Number(start), nend: Number(end), bytes, view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    this.cache.delete(key);
    this.cache.set(key, page);
    if (this.cache.size > this.maxPages) this.cache.delete(this.cache.keys().next().value!);
    this.current = page;
    return page;
  }

  read(address: bigint, size: number): Uint8Array | undefined {
    if (!Number.isSafeInteger(size) || size < 0 || address < 0n) return undefined;
    const cur = this.current;
    if (cur !== undefined && address >= cur.start && address + BigInt(size) <= cur.end && (size > 0 || address < cur.end)) {
      const off = Number(address - cur.start);
      return cur.bytes.subarray(off, off + size);
    }
    const i = this.spanIndex(address);
    if (i < 0) return undefined;
    const end = address + BigInt(size);
    const span = this.spans[i]!;
    if (end <= span.end) {
      const page = this.pageOf(i, address);
      if (page === undefined) return undefined;
      if (end <= page.end) {
        const off = Number(address - page.start);
        return page.bytes.subarray(off, off + size);
      }
      // Larger than what is left of the page: read it straight from the source, uncached.
      return this.source.read(span.file + Number(address - span.start), size);
    }
    // The read runs into the following ranges: check they are adjacent before allocating.
    let j = i;
    while (this.spans[j]!.end < end) {
      const next = this.spans[j + 1];
      if (next === undefined || next.start !== this.spans[j]!.end) return undefined;
      j++;
    }
    const out = new Uint8Array(size);
    let at = address;
    for (let k = i; k <= j; k++) {
      const s = this.spans[k]!;
      const stop = end < s.end ? end : s.end;
      const n = Number(stop - at);
      const part = n <= MinidumpMemory.PAGE_SIZE ? this.read(at, n) : this.source.read(s.file + Number(at - s.start), n);
      if (part === undefined) return undefined;
      out.set(part, Number(at - address));
      at = stop;
    }
    return out;
  }

  u32(address: bigint): number | undefined {
    const cur = this.current;
    if (cur !== undefined && address >= cur.start && address + 4n <= cur.end) return cur.view.getUint32(Number(address - cur.start), true);
    const b = this.read(address, 4);
    if (b === undefined) return undefined;
    return (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  u32n(address: number): number | undefined {
    if (!(address >= 0 && address <= Number.MAX_SAFE_INTEGER) || !Number.isInteger(address)) return undefined;
    let page = this.current;
    if (page === undefined || address < page.nstart || address >= page.nend) page = this.pageOfNumber(address);
    if (page === undefined) return undefined;
    if (address + 4 <= page.nend) return page.view.getUint32(address - page.nstart, true);
    return this.u32(BigInt(address));
  }
}

/**
 * The ranges a snapshot reads: the MemoryList and Memory64List ranges, plus the parts of thread
 * stacks (and IA-64 backing stores) that no list covers. Where a list covers a stack, the list's
 * bytes are used.
 */
export function snapshotMemoryRanges(dump: Minidump): MinidumpMemoryRange[] {
  const listed = dump.memory; // sorted by start, non-overlapping
  const pieces: MinidumpMemoryRange[] = [];
  const piece = (extra: MinidumpMemoryRange, from: bigint, to: bigint): void => {
    pieces.push({ ...extra, start: from, size: to - from, rva: extra.rva + Number(from - extra.start) });
  };
  const extras = dump.threads.flatMap((t) => (t.backingStore === undefined ? [t.stack] : [t.stack, t.backingStore]));
  // A stack that many threads list is cut against the lists once (its copies would be dropped below).
  const seen = new Set<string>();
  for (const extra of extras) {
    if (extra.size === 0n) continue;
    const key = `${extra.start}:${extra.size}:${extra.rva}`;
    if (seen.has(key)) continue;
    seen.add(key);
    const end = extra.start + extra.size;
    // The first listed range that ends after the extra starts.
    let lo = 0;
    let hi = listed.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (listed[mid]!.start + listed[mid]!.size <= extra.start) lo = mid + 1;
      else hi = mid;
    }
    let at = extra.start;
    for (let i = lo; i < listed.length && at < end; i++) {
      const r = listed[i]!;
      if (r.start >= end) break;
      if (r.start > at) piece(extra, at, r.start);
      const rEnd = r.start + r.size;
      if (rEnd > at) at = rEnd;
    }
    if (at < end) piece(extra, at, end);
  }
  // Stacks of different threads may repeat or overlap each other: where they do, the range that
  // starts lower (then the one declared first) supplies the bytes.
  pieces.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : a.descriptor - b.descriptor));
  const kept: MinidumpMemoryRange[] = [];
  let covered = -1n;
  for (const p of pieces) {
    const end = p.start + p.size;
    if (end <= covered) continue;
    if (p.start < covered) kept.push({ ...p, start: covered, size: end - covered, rva: p.rva + Number(covered - p.start) });
    else kept.push(p);
    covered = end;
  }
  return [...listed, ...kept];
}
