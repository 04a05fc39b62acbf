/**
 * The symbol covering a module-relative address. Symbols from a Breakpad `.sym` file (those with
 * a `kind`) follow Breakpad's resolver (minidump.md §7): the nearest FUNC at or below the address,
 * used only if it covers the address; then a PUBLIC, only when no FUNC covers the address and the
 * PUBLIC starts above the nearest preceding FUNC. Symbols from other sources (a PDB, a vector) are
 * looked up by start: the last one at or below the address, within its size when it has one.
 * Either way the symbol's line record covering the address (a .sym FUNC's, a PDB procedure's)
 * gives the source line. Rules read it too: Breakpad's
 * scan takes a word only where it names a function of a module with symbols.
 */
import { countStartingAtOrBelow } from "../formats/sorted-ranges.js";
import { lineAt, symbolAt, type Module, type ModuleSymbol, type SourceLine } from "../model/snapshot.js";

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
  if (module.symbolIndex !== undefined) return module.symbolIndex.resolve(rva, true);
  const index = breakpadIndex(module.symbols);
  if (index === undefined) {
    const symbol = symbolAt(module, rva);
    if (symbol === undefined) return undefined;
    const line = lineAt(symbol.lines, rva);
    return line === undefined ? { symbol } : { symbol, line };
  }
  const f = lastAtOrBelow(index.funcs, rva);
  const func = f < 0 ? undefined : index.funcs[f]!;
  if (func !== undefined && rva - func.rva < func.size!) {
    const match: SymbolMatch = { symbol: func };
    const line = lineAt(func.lines, rva);
    if (line !== undefined) match.line = line;
    return match;
  }
  const p = lastAtOrBelow(index.publics, rva);
  if (p < 0) return undefined;
  const pub = index.publics[p]!;
  if (func !== undefined && pub.rva <= func.rva) return undefined;
  return { symbol: pub };
}

/** Whether {@link symbolize} finds a symbol at `rva` (without looking up its line record). */
export function hasSymbolAt(module: Module, rva: bigint): boolean {
  return module.symbolIndex !== undefined ? module.symbolIndex.resolve(rva, false) !== undefined : symbolize(module, rva) !== undefined;
}

