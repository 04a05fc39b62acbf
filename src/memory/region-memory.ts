/**
 * Memory made of non-overlapping regions kept sorted by base address; lookups are binary
 * searches. A read may span adjacent regions (one region ends exactly where the next begins);
 * a read touching any unmapped byte returns `undefined`.
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";
import type { MemoryReader } from "./reader.js";

/** One mapped range of target memory. */
export interface MemoryRegion {
  /** Address of `bytes[0]`. */
  base: bigint;
  bytes: Uint8Array;
  /** Where the region came from, for error messages (e.g. a JSON path or a dump offset). */
  origin?: string;
}

/** A {@link MemoryReader} over sorted, non-overlapping regions. */
export class RegionMemory implements MemoryReader {
  /** Regions sorted by base. */
  readonly regions: readonly MemoryRegion[];
  private readonly bases: bigint[];
  private readonly ends: bigint[];
  private readonly views: DataView[];
  /** Bases and ends as numbers, for the number fast path (exact below 2^53). */
  private readonly nbases: number[];
  private readonly nends: number[];
  /** The region the last lookup found: stack walks read neighbouring words. */
  private last = 0;

  /** Sorts the regions; overlapping regions are an {@link InputError} naming both. */
  constructor(regions: Iterable<MemoryRegion>) {
    const sorted = [...regions].filter((r) => r.bytes.length > 0).sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
    for (let i = 1; i < sorted.length; i++) {
      const prev = sorted[i - 1]!;
      const cur = sorted[i]!;
      const prevEnd = prev.base + BigInt(prev.bytes.length);
      if (cur.base < prevEnd) {
        const where: { path?: string } = {};
        if (cur.origin !== undefined) where.path = cur.origin;
        throw new InputError(
          "overlap",
          `memory region at ${hex(cur.base)} overlaps the region ${hex(prev.base)}..${hex(prevEnd)}` +
            (prev.origin !== undefined ? ` (${prev.origin})` : ""),
          where,
        );
      }
    }
    this.regions = sorted;
    this.bases = sorted.map((r) => r.base);
    this.ends = sorted.map((r) => r.base + BigInt(r.bytes.length));
    this.views = sorted.map((r) => new DataView(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength));
    this.nbases = this.bases.map(Number);
    this.nends = this.ends.map(Number);
  }

  /** Index of the region containing `address`, or -1. */
  indexOf(address: bigint): number {
    const last = this.last;
    if (last < this.bases.length && address >= this.bases[last]! && address < this.ends[last]!) return last;
    let lo = 0;
    let hi = this.bases.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (address < this.bases[mid]!) hi = mid - 1;
      else if (address >= this.ends[mid]!) lo = mid + 1;
      else {
        this.last = mid;
        return mid;
      }
    }
    return -1;
  }

  /** Index of the region containing `address`, given as a number below 2^53, or −1 (the number fast path). */
  indexOfN(address: number): number {
    if (!(address >= 0 && address <= Number.MAX_SAFE_INTEGER)) return -1;
    const last = this.last;
    if (last < this.nbases.length && address >= this.nbases[last]! && address < this.nends[last]!) return last;
    let lo = 0;
    let hi = this.nbases.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (address < this.nbases[mid]!) hi = mid - 1;
      else if (address >= this.nends[mid]!) lo = mid + 1;
      else {
        this.last = mid;
        return mid;
      }
    }
    return -1;
  }

  /** Region `index`'s bytes as a DataView, and its base and end as numbers (for {@link indexOfN}'s callers). */
  viewOf(index: number): DataView {
    return this.views[index]!;
  }

  baseOfN(index: number): number {
    return this.nbases[index]!;
  }

  endOfN(index: number): number {
    return this.nends[index]!;
  }

  u32n(address: number): number | undefined {
    const i = this.indexOfN(address);
    if (i < 0) return undefined;
    const off = address - this.nbases[i]!;
    if (off + 4 <= this.nends[i]! - this.nbases[i]!) return this.views[i]!.getUint32(off, true);
    return this.u32(BigInt(address));
  }

  u64n(address: number, into: { low: number; high: number }): boolean {
    const i = this.indexOfN(address);
    if (i < 0) return false;
    const off = address - this.nbases[i]!;
    if (off + 8 <= this.nends[i]! - this.nbases[i]!) {
      const view = this.views[i]!;
      into.low = view.getUint32(off, true);
      into.high = view.getUint32(off + 4, true);
      return true;
    }
    // Across two adjacent regions.
    const lo = this.u32n(address);
    const hi = lo === undefined ? undefined : this.u32n(address + 4);
    if (lo === undefined || hi === undefined) return false;
    into.low = lo;
    into.high = hi;
    return true;
  }

  u32(address: bigint): number | undefined {
    const i = this.indexOf(address);
    if (i < 0) return undefined;
    const off = Number(address - this.bases[i]!);
    if (off + 4 <= this.regions[i]!.bytes.length) return this.views[i]!.getUint32(off, true);
    const b = this.read(address, 4);
    return b === undefined ? undefined : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  /** The region containing `address`, if any. */
  regionAt(address: bigint): MemoryRegion | undefined {
    const i = this.indexOf(address);
    return i < 0 ? undefined : this.regions[i];
  }

  read(address: bigint, size: number): Uint8Array | undefined {
    if (size < 0 || address < 0n) return undefined;
    let i = this.indexOf(address);
    if (i < 0) return undefined;
    const first = this.regions[i]!;
    const start = Number(address - first.base);
    if (start + size <= first.bytes.length) return first.bytes.subarray(start, start + size);
    // The range continues into the following regions: they must be exactly adjacent.
    const out = new Uint8Array(size);
    let filled = 0;
    let at = address;
    while (filled < size) {
      const r = this.regions[i];
      if (r === undefined || at < r.base || at >= this.ends[i]!) return undefined;
      const off = Number(at - r.base);
      const n = Math.min(size - filled, r.bytes.length - off);
      out.set(r.bytes.subarray(off, off + n), filled);
      filled += n;
      at += BigInt(n);
      i++;
    }
    return out;
  }
}
