/**
 * Inline frames: the calls a compiler inlined into a function, as debuggers show them (virtual
 * frames with no registers of their own). One model for every source of the data: a Breakpad
 * `.sym` file's INLINE and INLINE_ORIGIN records, and a PDB's inline sites.
 *
 * A function's inline data is a set of **inline sites**. A site says that the code at some
 * module-relative ranges is an inlined copy of `function`, called from line `callLine` of
 * `callFile` of the function (or site) it was inlined into. Sites nest: a site inside another
 * site's ranges was inlined into that one. The sites covering an address, innermost first, give
 * the inline chain there: each inlined function is a frame, the innermost one showing the line
 * record of the address, each outer one the call site of the one inside it, and the physical
 * frame the call site of the outermost.
 */
import type { SourceLine } from "./snapshot.js";

/** One inlined call: who was inlined, where its code lies, and where it was called from. */
export interface InlineSite {
  /** The inlined function's name. */
  function: string;
  /** Nesting depth as the source gives it: 0 for a call inlined into the function itself. */
  depth: number;
  /** The line of the call that was inlined, in the function (or site) that made it. */
  callLine: number;
  /**
   * The file of that line. Undefined when the source does not say (Breakpad's older INLINE
   * records): the file of the address's line record is shown instead, as Breakpad does.
   */
  callFile?: string;
  /** The module-relative address ranges of the inlined code, as (start, size) pairs. */
  ranges: readonly (readonly [start: bigint, size: bigint])[];
  /**
   * Where the looked-up address is inside the inlined function, when the source records it per
   * site (a PDB's binary annotations); otherwise the line record (innermost) or the call site of
   * the site inside (the others) gives it.
   */
  line?: number;
  /** The file of {@link line}. */
  file?: string;
}

/** The inline sites of one function, looked up by address. */
export interface InlineSites {
  /** The sites whose ranges cover module-relative address `rva`, innermost first (empty when none). */
  at(rva: bigint): readonly InlineSite[];
}

/** One virtual frame for an inlined call (`trust: "inline"`): it has no registers, only a place in the source. */
export interface InlineFrame {
  trust: "inline";
  /** The inlined function. */
  function: string;
  /** The source file shown for the frame, when known. */
  file?: string;
  /** The source line shown for the frame: the line record's for the innermost, a call site's for the others. */
  line?: number;
  /** The module-relative start of the site's range that covers the address (Breakpad's function base of an inline frame). */
  base: bigint;
  /** The site the frame comes from. */
  site: InlineSite;
}

/** The inline chain at an address: the virtual frames, innermost first, and where the physical frame is in the source. */
export interface InlineChain {
  frames: InlineFrame[];
  /** The physical frame's file: the outermost inlined call's file (or the line record's, when the site names none). */
  file?: string;
  /** The physical frame's line: the outermost inlined call's line. */
  line: number;
}

/**
 * The inline chain at module-relative address `rva` from the sites covering it (innermost first,
 * {@link InlineSites.at}) and the line record covering it, if any; undefined when no site covers
 * it. Each frame shows the position of the frame inside it: the innermost the line record's, the
 * others their inner neighbour's call site; a call site without a file keeps the line record's
 * file (Breakpad's ConstructInlineFrames).
 */
export function inlineChain(sites: readonly InlineSite[], rva: bigint, line: SourceLine | undefined): InlineChain | undefined {
  if (sites.length === 0) return undefined;
  const recordFile = line?.file;
  let file = recordFile;
  let at = line?.line;
  const frames: InlineFrame[] = [];
  for (const site of sites) {
    const frame: InlineFrame = { trust: "inline", function: site.function, base: rangeStart(site, rva), site };
    if (site.line !== undefined) {
      file = site.file;
      at = site.line;
    }
    if (file !== undefined) frame.file = file;
    if (at !== undefined) frame.line = at;
    frames.push(frame);
    file = site.callFile ?? recordFile;
    at = site.callLine;
  }
  const chain: InlineChain = { frames, line: at! };
  if (file !== undefined) chain.file = file;
  return chain;
}

/** The start of the first of `site`'s ranges that covers `rva`; 0 when none does (Breakpad's module-base function base). */
function rangeStart(site: InlineSite, rva: bigint): bigint {
  for (const [start, size] of site.ranges) if (rva >= start && rva - start < size) return start;
  return 0n;
}
