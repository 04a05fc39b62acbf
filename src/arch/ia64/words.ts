/**
 * 64-bit words of a snapshot's {@link RegionMemory} read at addresses given as numbers. Every
 * user-mode stack and backing store lies below 2^53, where a number is exact, and address
 * arithmetic on numbers allocates nothing, unlike bigints: the IA-64 walker's per-frame path uses
 * this, and falls back to bigints (rse.ts `readWord`) for anything else.
 */
import { bigintOf } from "../../memory/bigint-cache.js";
import { RegionMemory } from "../../memory/region-memory.js";
import { cacheSlot, keyed, keyedSlot, type UnwindCache } from "../../unwind/cache.js";

/** Words of one RegionMemory at number addresses, through its number index. */
export class NumberWords {
  /** The low and high 32 bits of the word the last {@link read} returned. */
  lo = 0;
  hi = 0;

  constructor(private readonly memory: RegionMemory) {}

  /** Index of the region holding [address, address + 8), or −1 (a word across two regions is not found). */
  private find(address: number): number {
    const i = this.memory.indexOfN(address);
    return i >= 0 && address + 8 <= this.memory.endOfN(i) && this.memory.endOfN(i) <= Number.MAX_SAFE_INTEGER ? i : -1;
  }

  /** The little-endian u64 at `address` (its low half also in {@link lo}), or undefined. */
  read(address: number): bigint | undefined {
    const i = this.find(address);
    if (i < 0) return undefined;
    const view = this.memory.viewOf(i);
    const off = address - this.memory.baseOfN(i);
    this.lo = view.getUint32(off, true);
    this.hi = view.getUint32(off + 4, true);
    // Return links and frame markers recur from frame to frame: made once, then looked up.
    return bigintOf(this.lo, this.hi);
  }

  /** Bit `bit` (0-63) of the u64 at `address`: 0 or 1, or −1 when it cannot be read. */
  bit(address: number, bit: number): number {
    const i = this.find(address);
    if (i < 0) return -1;
    const view = this.memory.viewOf(i);
    const off = address - this.memory.baseOfN(i);
    return bit < 32 ? (view.getUint32(off, true) >>> bit) & 1 : (view.getUint32(off + 4, true) >>> (bit - 32)) & 1;
  }

  /** Whether the u64 at `address` is readable. */
  has(address: number): boolean {
    return this.find(address) >= 0;
  }
}

const READERS = keyedSlot<RegionMemory, NumberWords>("ia64 number words");
/** The last memory asked about and its reader (one per cache: a walk asks about one memory every frame). */
const LAST = cacheSlot("ia64 last number words", () => ({ memory: undefined as unknown, words: undefined as NumberWords | undefined }));

/** The number-address reader of `memory` (made once per memory and cache), or undefined when it is not a RegionMemory. */
export function numberWords(memory: unknown, cache: UnwindCache): NumberWords | undefined {
  const last = cache.get(LAST);
  if (memory === last.memory) return last.words;
  const words = memory instanceof RegionMemory ? keyed(cache, READERS, memory, () => new NumberWords(memory)) : undefined;
  last.memory = memory;
  last.words = words;
  return words;
}
