/**
 * 64-bit memory words read into two unsigned 32-bit halves, without making a bigint per word: the
 * last word read stays in {@link Words.low} and {@link Words.high}. The 64-bit walkers (x64,
 * ARM64) keep one per cache and read every stack word through it.
 */
import { bigintOf } from "./bigint-cache.js";
import type { MemoryReader } from "./reader.js";

/** A reader of 64-bit words at number addresses (below 2^53), with a bigint fallback. */
export class Words {
  low = 0;
  high = 0;

  /** Reads the word at `address` (a number below 2^53); false when unreadable. */
  read(memory: MemoryReader, address: number): boolean {
    if (memory.u64n !== undefined) return memory.u64n(address, this);
    if (memory.u32n !== undefined) {
      const lo = memory.u32n(address);
      if (lo === undefined) return false;
      const hi = memory.u32n(address + 4);
      if (hi === undefined) return false;
      this.low = lo;
      this.high = hi;
      return true;
    }
    return this.readBig(memory, BigInt(address));
  }

  /** {@link read} at any 64-bit address. */
  readBig(memory: MemoryReader, address: bigint): boolean {
    const b = memory.read(address, 8);
    if (b === undefined || b.length < 8) return false;
    this.low = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
    this.high = (b[4]! | (b[5]! << 8) | (b[6]! << 16) | (b[7]! << 24)) >>> 0;
    return true;
  }

  /** The last word read, as a bigint (from recent ones when it was seen before). */
  big(): bigint {
    return bigintOf(this.low, this.high);
  }

  /** The last word read as a number, or −1 when it is 2^53 or more. */
  number(): number {
    return this.high < 0x20_0000 ? this.high * 4294967296 + this.low : -1;
  }
}
