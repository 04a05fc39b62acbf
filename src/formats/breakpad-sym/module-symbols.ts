/**
 * A `.sym` file's FUNC and PUBLIC records as a module's symbols (minidump.md §7), for the
 * symbolizer: names are read from the file's bytes now, a FUNC's line records when its `lines`
 * are first read (a walk looks up a handful of functions).
 */
import type { ModuleSymbol, SourceLine } from "../../model/snapshot.js";
import { symTables } from "./parser.js";
import type { SymTables } from "./tables.js";
import type { BreakpadFunc, BreakpadSymbols } from "./types.js";

const byRva = (a: { rva: bigint }, b: { rva: bigint }): number => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0);

/**
 * Where a FUNC symbol's line records come from, until they are first read: a FUNC row of a
 * parse's tables, or a FUNC record of symbols made another way with their FILE names.
 */
interface LineSource {
  tables: SymTables | undefined;
  row: number;
  func: BreakpadFunc | undefined;
  files: Map<number, string> | undefined;
  lines: SourceLine[] | undefined;
}

/** The line records of `source`, FILE numbers resolved to names, sorted by rva. */
function readLines(source: LineSource): SourceLine[] {
  const { tables, func, files } = source;
  let out: SourceLine[] = [];
  if (tables !== undefined) {
    const t = tables.lines(source.row);
    for (let i = 0; i < t.length; i += 4) out.push(sourceLine(t[i]!, t[i + 1]!, t[i + 2]!, tables.fileName(t[i + 3]!)));
  } else out = func!.lines.map((l) => sourceLine(l.address, l.size, l.line, files!.get(l.file)));
  return out.sort(byRva);
}

function sourceLine(address: number, size: number, line: number, file: string | undefined): SourceLine {
  const out: SourceLine = { rva: BigInt(address), size: BigInt(size), line };
  if (file !== undefined) out.file = file;
  return out;
}

const LINE_SOURCE = Symbol("line source");

/** `lines` of a FUNC symbol: made from its record on first read (one accessor pair for all symbols). */
const linesProperty: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: { [LINE_SOURCE]: LineSource }): SourceLine[] {
    const source = this[LINE_SOURCE];
    return (source.lines ??= readLines(source));
  },
  set(this: { [LINE_SOURCE]: LineSource }, value: SourceLine[]): void {
    this[LINE_SOURCE].lines = value;
  },
};

function funcSymbol(name: string, address: number, size: number, paramSize: number, lines: LineSource): ModuleSymbol {
  const symbol: ModuleSymbol = { name, rva: BigInt(address), size: BigInt(size), kind: "func", paramSize };
  Object.defineProperty(symbol, LINE_SOURCE, { value: lines });
  return Object.defineProperty(symbol, "lines", linesProperty);
}

function publicSymbol(name: string, address: number, paramSize: number): ModuleSymbol {
  return { name, rva: BigInt(address), kind: "public", paramSize };
}

/**
 * A `.sym` file's FUNC and PUBLIC records as module symbols, sorted by rva (FUNCs before PUBLICs
 * at one address, file order otherwise), each marked with its kind and parameter size; FUNCs
 * carry their line records with FILE numbers resolved to names (minidump.md §7), converted when
 * they are first read.
 */
export function breakpadSymbols(sym: BreakpadSymbols): ModuleSymbol[] {
  const tables = symTables(sym);
  let funcs: ModuleSymbol[];
  let publics: ModuleSymbol[];
  if (tables !== undefined) {
    funcs = tables.mapFuncs((name, address, size, paramSize, row) => funcSymbol(name, address, size, paramSize, { tables, row, func: undefined, files: undefined, lines: undefined }));
    publics = tables.mapPublics(publicSymbol);
  } else {
    const files = sym.files;
    funcs = sym.functions.map((f) => funcSymbol(f.name, f.address, f.size, f.paramSize, { tables: undefined, row: 0, func: f, files, lines: undefined }));
    publics = sym.publics.map((p) => publicSymbol(p.name, p.address, p.paramSize));
  }
  // Both lists are sorted by address (the parser's order): merge them, FUNCs first at one address.
  const out: ModuleSymbol[] = [];
  let f = 0;
  let p = 0;
  while (f < funcs.length || p < publics.length) {
    if (p >= publics.length || (f < funcs.length && funcs[f]!.rva <= publics[p]!.rva)) out.push(funcs[f++]!);
    else out.push(publics[p++]!);
  }
  return out;
}
