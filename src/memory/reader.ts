/**
 * The one way walkers see memory. A read either returns every byte asked for or `undefined`:
 * dbghelp's read callback is all-or-nothing in practice (stackwalk64.md §3), and a failed read
 * is "no data", never an exception.
 */

/** Reads target memory; returns `undefined` when any byte of the range is unreadable. Never throws. */
export interface MemoryReader {
  read(address: bigint, size: number): Uint8Array | undefined;
  /** Optional fast path: the little-endian u32 at `address` as a number, or `undefined`. Same answer as `read`. */
  u32?(address: bigint): number | undefined;
  /** Optional fast path for addresses below 2^53 given as numbers (32-bit targets): as {@link u32}. */
  u32n?(address: number): number | undefined;
  /**
   * Optional fast path for 64-bit targets: the little-endian u64 at a number address below 2^53,
   * into `into` as two unsigned 32-bit halves; false when unreadable. Same answer as `read`.
   */
  u64n?(address: number, into: { low: number; high: number }): boolean;
}

/** Reads a little-endian unsigned 32-bit value, or `undefined`. */
export function readU32(memory: MemoryReader, address: bigint): bigint | undefined {
  if (memory.u32 !== undefined) {
    const v = memory.u32(address);
    return v === undefined ? undefined : BigInt(v);
  }
  const b = memory.read(address, 4);
  if (b === undefined || b.length < 4) return undefined;
  return BigInt((b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0);
}

/** Reads a little-endian unsigned 32-bit value at an address below 2^53 given as a number, or `undefined`. */
export function readU32n(memory: MemoryReader, address: number): number | undefined {
  if (memory.u32n !== undefined) return memory.u32n(address);
  const v = readU32(memory, BigInt(address));
  return v === undefined ? undefined : Number(v);
}

/** Reads a little-endian unsigned 64-bit value, or `undefined`. */
export function readU64(memory: MemoryReader, address: bigint): bigint | undefined {
  const b = memory.read(address, 8);
  if (b === undefined || b.length < 8) return undefined;
  return new DataView(b.buffer, b.byteOffset, 8).getBigUint64(0, true);
}

/** Reads an unsigned little-endian pointer of `width` bytes (4 or 8), or `undefined`. */
export function readPointer(memory: MemoryReader, address: bigint, width: 4 | 8): bigint | undefined {
  return width === 4 ? readU32(memory, address) : readU64(memory, address);
}
