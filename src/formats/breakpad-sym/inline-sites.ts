/**
 * A FUNC's INLINE records as inline sites (../../model/inline.ts), looked up as Breakpad's
 * resolver looks them up (minidump.md §7): every range of every record goes into one contained
 * range map that allows equal ranges, a record deeper than one below the last one kept is left
 * out (its parent was), and the sites at an address are the stored ranges covering it, innermost
 * first. An origin id with no INLINE_ORIGIN record names the function `<name omitted>`; a call
 * file with no FILE record is no call file.
 */
import type { InlineSite, InlineSites } from "../../model/inline.js";
import { ContainedRanges } from "./contained-ranges.js";
import type { BreakpadInline } from "./types.js";

/** The name Breakpad gives an inlined function whose origin has no INLINE_ORIGIN record. */
export const NAME_OMITTED = "<name omitted>";

class BreakpadInlineSites implements InlineSites {
  private readonly ranges = new ContainedRanges(true);
  private readonly sites: InlineSite[] = [];
  private readonly found: number[] = [];

  constructor(records: readonly BreakpadInline[], originName: (id: number) => string | undefined, fileName: (n: number) => string | undefined) {
    let lastDepth = 0;
    for (const r of records) {
      if (r.depth > lastDepth + 1) continue;
      lastDepth = r.depth;
      const site: InlineSite = {
        function: originName(r.origin) ?? NAME_OMITTED,
        depth: r.depth,
        callLine: r.callLine,
        ranges: r.ranges.map(([address, size]) => [BigInt(address), BigInt(size)] as const),
      };
      const callFile = r.callFile === undefined ? undefined : fileName(r.callFile);
      if (callFile !== undefined) site.callFile = callFile;
      const entry = this.sites.push(site) - 1;
      for (const [address, size] of r.ranges) if (Number.isSafeInteger(address + size)) this.ranges.store(address, size, entry);
    }
  }

  /** The last address looked up and its sites: a recursion's frames ask for one address again and again. */
  private lastRva = -1n;
  private last: readonly InlineSite[] = [];

  at(rva: bigint): readonly InlineSite[] {
    if (rva === this.lastRva) return this.last;
    if (rva < 0n || rva > BigInt(Number.MAX_SAFE_INTEGER)) return [];
    const found = this.ranges.retrieveAll(Number(rva), this.found);
    const out = found.map((e) => this.sites[e]!);
    found.length = 0;
    this.lastRva = rva;
    this.last = out;
    return out;
  }
}

/** A FUNC's INLINE records (file order) as inline sites; undefined when it has none. */
export function breakpadInlineSites(records: readonly BreakpadInline[] | undefined, originName: (id: number) => string | undefined, fileName: (n: number) => string | undefined): InlineSites | undefined {
  return records === undefined || records.length === 0 ? undefined : new BreakpadInlineSites(records, originName, fileName);
}
