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
  }
  return loc;
}

/** Finds the module and function of a frame. */
export function locate(modules: readonly Module[], frame: Frame): Location {
  return locateAddress(modules, frame.addrPC, frame.index > 0);
}

/** `module!function+0xoff`, `module+0xoff` or the bare address, the way debuggers print a code address. */
export function locationText(loc: Location, pcText: string, stripExtension = false): string {
  if (loc.module === undefined) return pcText;
  const name = stripExtension ? loc.module.name.replace(/\.[^.\\/]*$/, "") : loc.module.name;
  if (loc.function !== undefined) return `${name}!${loc.function}+${hex(loc.functionOffset!)}`;
  return `${name}+${hex(loc.moduleOffset!)}`;
}
