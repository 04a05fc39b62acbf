/**
 * A `.sym` file's FUNC and PUBLIC records as a module's symbols (minidump.md §7), for the
 * symbolizer: a symbol's name and a FUNC's line records are read from the file's bytes when they
 * are first read (a walk names a handful of symbols).
 */
import type { ModuleSymbol, SourceLine } from "../../model/snapshot.js";
import type { InlineSites } from "../../model/inline.js";
import { breakpadInlineSites } from "./inline-sites.js";
import { symTables } from "./parser.js";
import type { SymTables } from "./tables.js";
import type { BreakpadFunc, BreakpadSymbols } from "./types.js";

const byRva = (a: { rva: bigint }, b: { rva: bigint }): number => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0);

/**
 * Where a symbol's name and a FUNC's line records come from, until they are first read: a row of
 * a parse's tables, or a FUNC record of symbols made another way, with their FILE names.
 */
interface SymbolSource {
  tables: SymTables | undefined;
  row: number;
  func: BreakpadFunc | undefined;
  files: Map<number, string> | undefined;
  name: string | undefined;
  lines: SourceLine[] | undefined;
}

/** The line records of `source`, FILE numbers resolved to names, sorted by rva. */
function readLines(source: SymbolSource): SourceLine[] {
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

const SOURCE = Symbol("symbol source");
type WithSource = { [SOURCE]: SymbolSource };

/** `lines` of a FUNC symbol: made from its record on first read (one accessor pair for all symbols). */
const linesProperty: PropertyDescriptor = {
  enumerable: true,
  configurable: true,
  get(this: WithSource): SourceLine[] {
    const source = this[SOURCE];
    return (source.lines ??= readLines(source));
  },
  set(this: WithSource, value: SourceLine[]): void {
    this[SOURCE].lines = value;
  },
};

/** `name` of a symbol from a parse's tables, read from the file's bytes on first read: a walk names a handful of symbols. */
function nameProperty(read: (tables: SymTables, row: number) => string): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: WithSource): string {
      const source = this[SOURCE];
      return (source.name ??= read(source.tables!, source.row));
    },
    set(this: WithSource, value: string): void {
      this[SOURCE].name = value;
    },
  };
}
const funcNameProperty = nameProperty((tables, row) => tables.funcName(row));
const publicNameProperty = nameProperty((tables, row) => tables.publicName(row));

function withSource<T extends object>(symbol: T, source: SymbolSource): T {
  return Object.defineProperty(symbol, SOURCE, { value: source });
}

/** `inlines` of a FUNC symbol with INLINE records: made from them on first read. */
function inlinesProperty(make: () => InlineSites | undefined): PropertyDescriptor {
  let sites: InlineSites | undefined;
  let made = false;
  return {
    enumerable: true,
    configurable: true,
    get(): InlineSites | undefined {
      if (!made) {
        sites = make();
        made = true;
      }
      return sites;
    },
    set(value: InlineSites | undefined): void {
      sites = value;
      made = true;
    },
  };
}

/** A FUNC symbol of a parse's tables: its name, line records and inline sites are read when first asked for. */
function tableFunc(tables: SymTables, row: number, address: number, size: number, paramSize: number): ModuleSymbol {
  const symbol = withSource({ rva: BigInt(address), size: BigInt(size), kind: "func" as const, paramSize }, { tables, row, func: undefined, files: undefined, name: undefined, lines: undefined });
  Object.defineProperty(symbol, "name", funcNameProperty);
  if (tables.hasInlines(row)) {
    Object.defineProperty(symbol, "inlines", inlinesProperty(() => breakpadInlineSites(tables.funcInlines(row), (id) => tables.originName(id), (n) => tables.fileName(n))));
  }
  return Object.defineProperty(symbol, "lines", linesProperty) as ModuleSymbol;
}

/** A PUBLIC symbol of a parse's tables: its name is read when first asked for. */
function tablePublic(tables: SymTables, row: number, address: number, paramSize: number): ModuleSymbol {
  const symbol = withSource({ rva: BigInt(address), kind: "public" as const, paramSize }, { tables, row, func: undefined, files: undefined, name: undefined, lines: undefined });
  return Object.defineProperty(symbol, "name", publicNameProperty) as ModuleSymbol;
}

/** A FUNC symbol of a record: its line records and inline sites are read when first asked for. */
function recordFunc(func: BreakpadFunc, files: Map<number, string>, origins: () => Map<number, string>): ModuleSymbol {
  const symbol = withSource({ name: func.name, rva: BigInt(func.address), size: BigInt(func.size), kind: "func" as const, paramSize: func.paramSize }, { tables: undefined, row: 0, func, files, name: undefined, lines: undefined });
  const records = func.inlines;
  if (records !== undefined && records.length > 0) {
    Object.defineProperty(symbol, "inlines", inlinesProperty(() => breakpadInlineSites(records, (id) => origins().get(id), (n) => files.get(n))));
  }
  return Object.defineProperty(symbol, "lines", linesProperty);
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
    funcs = tables.mapFuncs((row, address, size, paramSize) => tableFunc(tables, row, address, size, paramSize));
    publics = tables.mapPublics((row, address, paramSize) => tablePublic(tables, row, address, paramSize));
  } else {
    const files = sym.files;
    let origins: Map<number, string> | undefined;
    const originNames = (): Map<number, string> => {
      if (origins === undefined) {
        origins = new Map();
        for (const o of sym.inlineOrigins ?? []) if (!origins.has(o.id)) origins.set(o.id, o.name);
      }
      return origins;
    };
    funcs = sym.functions.map((f) => recordFunc(f, files, originNames));
    publics = sym.publics.map((p): ModuleSymbol => ({ name: p.name, rva: BigInt(p.address), kind: "public", paramSize: p.paramSize }));
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
