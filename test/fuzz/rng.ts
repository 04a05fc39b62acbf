/**
 * The fuzzer's randomness: every input is made from a generator seeded by the hash of its
 * (target, seed, iteration) key, so any input can be made again from those three alone.
 */

/** FNV-1a over the UTF-16 units of `text`, as an unsigned 32-bit number. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** A small, fast, seedable generator (mulberry32). */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /** The generator of one input. */
  static of(target: string, seed: string, iteration: number): Rng {
    return new Rng(hash32(`${target}\u0000${seed}\u0000${iteration}`));
  }

  /** A uniform 32-bit unsigned number. */
  u32(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }

  /** A whole number in [0, n) (0 when n ≤ 0). */
  below(n: number): number {
    return n <= 0 ? 0 : Math.floor((this.u32() / 0x1_0000_0000) * n);
  }

  /** A whole number in [lo, hi]. */
  between(lo: number, hi: number): number {
    return lo + this.below(hi - lo + 1);
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.u32() / 0x1_0000_0000 < p;
  }

  /** One element of a non-empty list. */
  pick<T>(list: readonly T[]): T {
    return list[this.below(list.length)]!;
  }

  /** A small number, more often small than large: 1, 2, 4 … up to 2^bits. */
  small(bits = 8): number {
    return this.below(1 << this.below(bits + 1)) + 1;
  }
}
