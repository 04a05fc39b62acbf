/**
 * Breakpad's `ContainedRangeMap` (x86-fpo.md §5.1): without equal ranges, it decides which STACK
 * WIN records of one type a symbol file keeps (ranges nest or are disjoint); with equal ranges,
 * it holds a FUNC's INLINE ranges and gives every range covering an address, innermost first.
 */

/**
 * Breakpad's `ContainedRangeMap::StoreRange` (x86-fpo.md §5.1): ranges nest or are disjoint. A
 * range that is empty or partly overlaps a stored range is refused; one that repeats a stored
 * range exactly is refused too, unless the map allows equal ranges (as a FUNC's INLINE ranges
 * do), when it goes inside the stored one.
 *
 * Each stored range is a node: an inclusive range [base, high] and the disjoint ranges stored
 * inside it, sorted by high. Nodes are numbers indexing arrays of numbers, and a level is an array
 * of node numbers, made only for a node that gets children (most get none).
 */
/** The deepest a map with equal ranges nests. */
export const MAX_NESTING = 256;

export class ContainedRanges {
  private readonly base: number[] = [];
  private readonly high: number[] = [];
  /** The level inside each node that has children, by node (most have none). */
  private readonly children: (number[] | undefined)[] = [];
  private readonly root: number[] = [];
  /** The value stored with each node. */
  private readonly entry: number[] = [];

  /**
   * `allowEqual`: a range equal to a stored one goes inside it instead of being refused; then a
   * range that would nest deeper than {@link MAX_NESTING} levels is refused too (no compiler
   * inlines that deep; a file that repeats one range a million times must not take quadratic time).
   */
  constructor(private readonly allowEqual = false) {}

  /** Stores [base, base + size) and reports whether it was stored (one function: it runs for every STACK WIN record). */
  store(base: number, size: number, entry = 0): boolean {
    if (size <= 0) return false;
    const high = base + size - 1;
    const bases = this.base;
    const highs = this.high;
    const children = this.children;
    const node = bases.length;
    let level = this.root;
    for (let depth = 0; ; depth++) {
      if (this.allowEqual && depth > MAX_NESTING) return false;
      // Records usually come sorted: past every stored range, a new last range at this level;
      // inside the last one, a level down (the searches below would find the same).
      const last = level[level.length - 1];
      if (last === undefined || base > highs[last]!) {
        level.push(node);
        bases.push(base);
        highs.push(high);
        this.entry.push(entry);
        return true;
      }
      let inside = base >= bases[last]! && high <= highs[last]! ? last : -1;
      if (inside < 0) {
        // The first node whose high is ≥ base, and the first whose high is ≥ high (std::map::lower_bound on the high key).
        let lo = 0;
        let hi = level.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (highs[level[mid]!]! < base) lo = mid + 1;
          else hi = mid;
        }
        const ib = lo;
        hi = level.length;
        while (lo < hi) {
          const mid = (lo + hi) >>> 1;
          if (highs[level[mid]!]! < high) lo = mid + 1;
          else hi = mid;
        }
        const ih = lo;
        const atBase = level[ib];
        if (ib === ih && atBase !== undefined && base >= bases[atBase]!) inside = atBase;
        else {
          const atHigh = level[ih];
          const containsHigh = atHigh !== undefined && high >= bases[atHigh]!;
          // Ranges the new one reaches into must lie wholly inside it.
          if ((atBase !== undefined && base > bases[atBase]!) || (containsHigh && high < highs[atHigh]!)) return false;
          const stop = containsHigh ? ih + 1 : ih;
          if (stop > ib) children[node] = level.slice(ib, stop);
          level.splice(ib, stop - ib, node);
          bases.push(base);
          highs.push(high);
          this.entry.push(entry);
          return true;
        }
      }
      // Inside an existing range: an identical range is refused, a smaller one goes a level down.
      if (!this.allowEqual && bases[inside] === base && highs[inside] === high) return false;
      let inner = children[inside];
      if (inner === undefined) children[inside] = inner = [];
      level = inner;
    }
  }

  /** The entries of every stored range covering `address`, innermost first (Breakpad's `RetrieveRanges`), onto `out`. */
  retrieveAll(address: number, out: number[]): number[] {
    const at = out.length;
    let level: number[] | undefined = this.root;
    while (level !== undefined) {
      // The first range at this level whose high is ≥ address (std::map::lower_bound).
      let lo = 0;
      let hi = level.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.high[level[mid]!]! < address) lo = mid + 1;
        else hi = mid;
      }
      const node: number | undefined = level[lo];
      if (node === undefined || address < this.base[node]!) break;
      out.splice(at, 0, this.entry[node]!);
      level = this.children[node];
    }
    return out;
  }
}
