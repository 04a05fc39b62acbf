/**
 * Memory seen through a window: reads inside the given address ranges go to the memory below,
 * anything else is unreadable. A dump's thread is walked through its own stack this way
 * (minidump.md §4: Breakpad's walker sees only the thread's stack region), so a saved frame
 * pointer into another thread's stack or a heap block fails as it would there. Never throws.
 */
import type { MemoryReader } from "./reader.js";

/** An address range [start, end). */
export interface AddressRange {
  start: bigint;
  end: bigint;
}

/** `below`, readable only inside `ranges`. */
export class WindowMemory implements MemoryReader {
  private readonly starts: bigint[];
  private readonly ends: bigint[];
  private readonly nstarts: number[];
  private readonly nends: number[];

  constructor(
    private readonly below: MemoryReader,
    ranges: readonly AddressRange[],
  ) {
    const sorted = ranges.filter((r) => r.end > r.start).sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    this.starts = sorted.map((r) => r.start);
    this.ends = sorted.map((r) => r.end);
    // Beyond 2^53 a number is not exact: such a range answers the bigint path only.
    const max = BigInt(Number.MAX_SAFE_INTEGER);
    this.nstarts = sorted.map((r) => (r.start <= max ? Number(r.start) : Infinity));
    this.nends = sorted.map((r) => (r.end <= max ? Number(r.end) : Infinity));
  }

  /** The ranges the window lets through. */
  get ranges(): AddressRange[] {
    return this.starts.map((start, i) => ({ start, end: this.ends[i]! }));
  }

  private inside(address: bigint, size: number): boolean {
    const end = address + BigInt(size);
    for (let i = 0; i < this.starts.length; i++) if (address >= this.starts[i]! && end <= this.ends[i]!) return true;
    return false;
  }

  private insideN(address: number, size: number): boolean {
    for (let i = 0; i < this.nstarts.length; i++) if (address >= this.nstarts[i]! && address + size <= this.nends[i]!) return true;
    return false;
  }

  read(address: bigint, size: number): Uint8Array | undefined {
    return this.inside(address, size) ? this.below.read(address, size) : undefined;
  }

  u32(address: bigint): number | undefined {
    if (!this.inside(address, 4)) return undefined;
    if (this.below.u32 !== undefined) return this.below.u32(address);
    const b = this.below.read(address, 4);
    return b === undefined ? undefined : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  }

  u32n(address: number): number | undefined {
    if (!this.insideN(address, 4)) return undefined;
    return this.below.u32n !== undefined ? this.below.u32n(address) : this.u32(BigInt(address));
  }

  u64n(address: number, into: { low: number; high: number }): boolean {
    if (!this.insideN(address, 8)) return false;
    if (this.below.u64n !== undefined) return this.below.u64n(address, into);
    const b = this.below.read(BigInt(address), 8);
    if (b === undefined) return false;
    into.low = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
    into.high = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
    return true;
  }
}
