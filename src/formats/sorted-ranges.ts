/**
 * Searches over records sorted by their start address, the lookups every unwind table shares
 * (FrameData, FPO_DATA, OMAP): the greatest start at or below an address, and the innermost or
 * outermost record that contains it when records nest (x86-fpo.md §2.2).
 */

/** The number of records whose start is ≤ `value` (the index just past the last such record). */
export function countStartingAtOrBelow<T, K extends number | bigint>(sorted: readonly T[], value: K, startOf: (r: T) => K): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (startOf(sorted[mid]!) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The number of places, of `count` whose keys (`keyAt(k)`) ascend, whose key is ≤ `value`: the
 * same search over records kept as rows of numbers (a `.sym` file's tables) instead of objects.
 */
export function countKeysAtOrBelow(count: number, value: number, keyAt: (k: number) => number): number {
  let lo = 0;
  let hi = count;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (keyAt(mid) <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Places a sort packs into one number with its key: 2^21, so that a key below 2^32 packs exactly. */
const PACKED_PLACES = 1 << 21;
const PACKED_KEYS = 2 ** 32;

/**
 * The places 0 … keys.length − 1 in the order of their keys, ascending, and in their own order
 * among equal keys (a stable sort). Whole keys below 2^32 (the addresses of a module's tables),
 * for up to 2^21 places, are sorted packed with their place into one number each by the engine's
 * own numeric sort, several times faster than a sort that calls back to compare; any other keys
 * by a comparison.
 */
export function orderOfKeys(keys: Float64Array): Uint32Array {
  const n = keys.length;
  const order = new Uint32Array(n);
  let packable = n <= PACKED_PLACES;
  for (let i = 0; i < n && packable; i++) {
    const key = keys[i]!;
    packable = key >= 0 && key < PACKED_KEYS && Math.floor(key) === key;
  }
  if (!packable) {
    for (let i = 0; i < n; i++) order[i] = i;
    return order.sort((a, b) => keys[a]! - keys[b]! || a - b);
  }
  const packed = new Float64Array(n);
  for (let i = 0; i < n; i++) packed[i] = keys[i]! * PACKED_PLACES + i;
  packed.sort();
  for (let i = 0; i < n; i++) order[i] = packed[i]! % PACKED_PLACES;
  return order;
}

/**
 * The innermost record containing `value` (`start ≤ value < start + size`): search the greatest
 * start ≤ value, then walk back to the first record whose range contains it, since the nearest
 * start is not always a container. `maxBack` bounds the walk; by default it is unbounded.
 */
export function innermostContaining<T>(sorted: readonly T[], value: number, startOf: (r: T) => number, sizeOf: (r: T) => number, maxBack = Infinity): T | undefined {
  const end = countStartingAtOrBelow(sorted, value, startOf);
  for (let i = end - 1; i >= 0 && end - i <= maxBack; i--) {
    const r = sorted[i]!;
    if (value - startOf(r) < sizeOf(r)) return r;
  }
  return undefined;
}

/** The outermost record containing `value` among the `maxBack` records starting at or below it. */
export function outermostContaining<T>(sorted: readonly T[], value: number, startOf: (r: T) => number, sizeOf: (r: T) => number, maxBack: number): T | undefined {
  const end = countStartingAtOrBelow(sorted, value, startOf);
  let best: T | undefined;
  for (let i = end - 1; i >= 0 && end - i <= maxBack; i--) {
    const r = sorted[i]!;
    if (value - startOf(r) < sizeOf(r)) best = r;
  }
  return best;
}

/**
 * Index of the entry with begin ≤ value < end in a function table stored as (begin, end, data)
 * triples sorted by begin (RUNTIME_FUNCTION and IMAGE_IA64_RUNTIME_FUNCTION_ENTRY), or −1.
 */
export function findTripleIndex(triples: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = triples.length / 3 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (value < triples[mid * 3]!) hi = mid - 1;
    else if (value >= triples[mid * 3 + 1]!) lo = mid + 1;
    else return mid;
  }
  return -1;
}

/**
 * Index of the last entry whose begin is ≤ value in a function table stored as (begin, data)
 * pairs sorted by begin (ARM64 `.pdata`, which holds no end: the caller checks the length), or −1.
 */
export function findPairIndex(pairs: ArrayLike<number>, value: number): number {
  let lo = 0;
  let hi = pairs.length / 2;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (pairs[mid * 2]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}
