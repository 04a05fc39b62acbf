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
import { countStartingAtOrBelow } from "../formats/sorted-ranges.js";
import { hex } from "../hex.js";
import { inlineChain, type InlineFrame } from "../model/inline.js";
import { moduleAt, symbolAt, type Module, type ModuleSymbol, type SourceLine } from "../model/snapshot.js";
import type { Frame } from "../walk/frame.js";
import { lookupAddress } from "../unwind/lookup-address.js";

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

/** The symbol and line record covering a module-relative address. */
export interface SymbolMatch {
  symbol: ModuleSymbol;
  line?: SourceLine;
}

/** FUNC and PUBLIC symbols of one symbol list, apart, as Breakpad's resolver stores them. */
interface BreakpadIndex {
  /** FUNCs with a non-zero size, by rva. */
  funcs: ModuleSymbol[];
  /** PUBLICs by rva, the first of each address only, none at rva 0 (Breakpad skips those). */
  publics: ModuleSymbol[];
}

const indexes = new WeakMap<readonly ModuleSymbol[], BreakpadIndex | null>();

function breakpadIndex(symbols: readonly ModuleSymbol[]): BreakpadIndex | undefined {
  let index = indexes.get(symbols);
  if (index === undefined) {
    index = null;
    if (symbols.some((s) => s.kind !== undefined)) {
      const funcs: ModuleSymbol[] = [];
      const publics: ModuleSymbol[] = [];
      for (const s of symbols) {
        const kind = s.kind ?? (s.size !== undefined ? "func" : "public");
        if (kind === "func") {
          if (s.size !== undefined && s.size > 0n) funcs.push(s);
        } else if (s.rva !== 0n && (publics.length === 0 || publics[publics.length - 1]!.rva !== s.rva)) publics.push(s);
      }
      index = { funcs, publics };
    }
    indexes.set(symbols, index);
  }
  return index ?? undefined;
}

/** The index of the last element whose `rva` is at or below `rva` in a list sorted by rva; -1 when none. */
function lastAtOrBelow<T extends { rva: bigint }>(sorted: readonly T[], rva: bigint): number {
  return countStartingAtOrBelow(sorted, rva, (s) => s.rva) - 1;
}

/**
 * The symbol covering module-relative address `rva` in `module`, with the line record covering
 * it when the symbol is a FUNC with line records. The address is the lookup address (return
 * address − 1 for caller frames); see the file comment for the rules.
 */
export function symbolize(module: Module, rva: bigint): SymbolMatch | undefined {
  const index = breakpadIndex(module.symbols);
  if (index === undefined) {
    const symbol = symbolAt(module, rva);
    return symbol === undefined ? undefined : { symbol };
  }
  const f = lastAtOrBelow(index.funcs, rva);
  const func = f < 0 ? undefined : index.funcs[f]!;
  if (func !== undefined && rva - func.rva < func.size!) {
    const match: SymbolMatch = { symbol: func };
    const lines = func.lines ?? [];
    const l = lastAtOrBelow(lines, rva);
    if (l >= 0) {
      const line = lines[l]!;
      if (line.size > 0n && rva - line.rva < line.size) match.line = line;
    }
    return match;
  }
  const p = lastAtOrBelow(index.publics, rva);
  if (p < 0) return undefined;
  const pub = index.publics[p]!;
  if (func !== undefined && pub.rva <= func.rva) return undefined;
  return { symbol: pub };
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
