/**
 * Where a frame's PC is: module, offset, function, source line. Caller frames are looked up at
 * return address − 1 (lookup-address.ts); the printed offsets use the PC itself.
 *
 * Symbols from a Breakpad `.sym` file (those with a `kind`) follow Breakpad's resolver
 * (minidump.md §7): the nearest FUNC at or below the address, used only if it covers the
 * address; then a PUBLIC, only when no FUNC covers the address and the PUBLIC starts above the
 * nearest preceding FUNC. The FUNC's line record covering the address gives the source line.
 * Symbols from other sources (a PDB, a vector) are looked up by start: the last one at or below
 * the address, within its size when it has one.
 */
import { hex } from "../hex.js";
import { inlineChain, type InlineFrame } from "../model/inline.js";
import { moduleAt, type Module, type ModuleSymbol, type SourceLine } from "../model/snapshot.js";
import type { Frame } from "../walk/frame.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import { symbolize, type SymbolMatch } from "../unwind/symbolize.js";

export { symbolize, type SymbolMatch };

/** A frame's place in the loaded modules; offsets are from the real PC, the lookup used PC − 1 for callers. */
export interface Location {
  module?: Module;
  moduleOffset?: bigint;
  function?: string;
  functionOffset?: bigint;
  /** The symbol that named the function. */
  symbol?: ModuleSymbol;
  /** The line record covering the lookup address (FUNC symbols with line records only). */
  line?: SourceLine;
  /** PC − the start of {@link line}. */
  lineOffset?: bigint;
  /**
   * The calls inlined at the lookup address, innermost first (../model/inline.ts): virtual frames
   * shown before this one. Absent when the function has no inline site there.
   */
  inlines?: InlineFrame[];
  /**
   * With {@link inlines}: where this frame is in the source, the outermost inlined call's site
   * (its file is the line record's when the site names none).
   */
  callSite?: { file?: string; line: number };
}

/** The file and line shown for a frame: the outermost inlined call's site when there are inline frames, else the line record's. */
export function sourceOf(loc: Location): { file?: string; line: number } | undefined {
  return loc.callSite ?? loc.line;
}

/** Finds the module, function and source line of a code address; `isReturnAddress` for caller frames. */
export function locateAddress(modules: readonly Module[], pc: bigint, isReturnAddress: boolean): Location {
  const at = lookupAddress(pc, isReturnAddress);
  const module = moduleAt(modules, at);
  if (module === undefined) return {};
  const loc: Location = { module, moduleOffset: pc - module.base };
  const match = symbolize(module, at - module.base);
  if (match !== undefined) {
    loc.symbol = match.symbol;
    loc.function = match.symbol.name;
    loc.functionOffset = pc - module.base - match.symbol.rva;
    if (match.line !== undefined) {
      loc.line = match.line;
      loc.lineOffset = pc - module.base - match.line.rva;
    }
    const sites = match.symbol.inlines;
    if (sites !== undefined) {
      const rva = at - module.base;
      const chain = inlineChain(sites.at(rva), rva, match.line);
      if (chain !== undefined) {
        loc.inlines = chain.frames;
        loc.callSite = chain.file === undefined ? { line: chain.line } : { file: chain.file, line: chain.line };
      }
    }
  }
  return loc;
}

/** Finds the module and function of a frame. */
export function locate(modules: readonly Module[], frame: Frame): Location {
  return locateAddress(modules, frame.addrPC, frame.index > 0);
}

/**
 * An inline frame of the frame at `loc` (PC `pc`) as debuggers print it: `module!function+0xoff`,
 * the offset from the start of the inlined range that covers the address.
 */
export function inlineLocationText(loc: Location, frame: InlineFrame, pc: bigint, stripExtension = false): string {
  const name = stripExtension ? loc.module!.name.replace(/\.[^.\\/]*$/, "") : loc.module!.name;
  return `${name}!${frame.function}+${hex(pc - loc.module!.base - frame.base)}`;
}

/** `module!function+0xoff`, `module+0xoff` or the bare address, the way debuggers print a code address. */
export function locationText(loc: Location, pcText: string, stripExtension = false): string {
  if (loc.module === undefined) return pcText;
  const name = stripExtension ? loc.module.name.replace(/\.[^.\\/]*$/, "") : loc.module.name;
  if (loc.function !== undefined) return `${name}!${loc.function}+${hex(loc.functionOffset!)}`;
  return `${name}+${hex(loc.moduleOffset!)}`;
}
