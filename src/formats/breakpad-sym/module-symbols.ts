/**
 * A `.sym` file's FUNC and PUBLIC records as a module's symbols (minidump.md §7), for the
 * symbolizer: looked up in the parse's tables by address ({@link symbolIndex}), with an object
 * made only for a symbol a lookup returns; a symbol's name and a FUNC's line records are read from
 * the file's bytes when they are first read (a walk names a handful of symbols).
 */
import { lineAt, type ModuleSymbol, type SourceLine, type SymbolIndex } from "../../model/snapshot.js";
import { countKeysAtOrBelow } from "../sorted-ranges.js";
import type { InlineSites } from "../../model/inline.js";
import { breakpadInlineSites } from "./inline-sites.js";
import { symTables } from "./parser.js";
import { FUNC, PUBLIC, type SymTables } from "./tables.js";
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
 * they are first read. Symbols of a parse are made once and shared with its {@link symbolIndex}.
 */
export function breakpadSymbols(sym: BreakpadSymbols): ModuleSymbol[] {
  const tables = symTables(sym);
  if (tables !== undefined) return symbolIndex(tables).all();
  let funcs: ModuleSymbol[];
  let publics: ModuleSymbol[];
  {
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
  return merged(funcs, publics);
}

/** FUNC and PUBLIC symbols, each sorted by address, as one list: FUNCs first at one address. */
function merged(funcs: readonly ModuleSymbol[], publics: readonly ModuleSymbol[]): ModuleSymbol[] {
  const out: ModuleSymbol[] = [];
  let f = 0;
  let p = 0;
  while (f < funcs.length || p < publics.length) {
    if (p >= publics.length || (f < funcs.length && funcs[f]!.rva <= publics[p]!.rva)) out.push(funcs[f++]!);
    else out.push(publics[p++]!);
  }
  return out;
}

/**
 * The module symbols of a parse's tables looked up by address: the FUNC and PUBLIC rows are
 * searched where they are, and an object is made (once) for a symbol a lookup returns.
 */
class TableSymbols implements SymbolIndex {
  readonly count: number;
  /** The FUNC rows with a size, in address order, when some FUNC has none (else every FUNC row in address order); made on first use. */
  private sizedRows: Uint32Array | undefined;
  private readonly funcSymbols = new Map<number, ModuleSymbol>();
  private readonly publicSymbols = new Map<number, ModuleSymbol>();
  /** The line records of FUNC rows looked up, as (address, size, line, file) quadruples. */
  private readonly lineTables = new Map<number, Uint32Array>();
  private list: ModuleSymbol[] | undefined;

  constructor(private readonly tables: SymTables) {
    this.count = tables.funcs.length + tables.publics.length;
  }

  private get sized(): Uint32Array | undefined {
    const t = this.tables;
    if (t.emptyFuncs === 0 || this.sizedRows !== undefined) return this.sizedRows;
    const funcs = t.funcs;
    const sized = new Uint32Array(funcs.length - t.emptyFuncs);
    let n = 0;
    for (let k = 0; k < funcs.length; k++) {
      const row = t.funcRow(k);
      if (funcs.get(row, FUNC.size) !== 0) sized[n++] = row;
    }
    return (this.sizedRows = sized);
  }

  all(): ModuleSymbol[] {
    const t = this.tables;
    return (this.list ??= merged(
      t.mapFuncs((row) => this.func(row)),
      t.mapPublics((row) => this.public(row)),
    ));
  }

  private func(row: number): ModuleSymbol {
    let symbol = this.funcSymbols.get(row);
    if (symbol === undefined) {
      const f = this.tables.funcs;
      symbol = tableFunc(this.tables, row, f.get(row, FUNC.address), f.get(row, FUNC.size), f.get(row, FUNC.paramSize));
      this.funcSymbols.set(row, symbol);
    }
    return symbol;
  }

  private public(row: number): ModuleSymbol {
    let symbol = this.publicSymbols.get(row);
    if (symbol === undefined) {
      const p = this.tables.publics;
      symbol = tablePublic(this.tables, row, p.get(row, PUBLIC.address), p.get(row, PUBLIC.paramSize));
      this.publicSymbols.set(row, symbol);
    }
    return symbol;
  }

  /** The FUNC row of the last FUNC starting at or below `rva` (of those with a size when `sized`), or −1. */
  private funcAtOrBelow(rva: number, sized: boolean): number {
    const t = this.tables;
    const list = sized ? this.sized : undefined;
    const rowAt = list === undefined ? (k: number): number => t.funcRow(k) : (k: number): number => list[k]!;
    const k = countKeysAtOrBelow(list === undefined ? t.funcs.length : list.length, rva, (k) => t.funcs.get(rowAt(k), FUNC.address)) - 1;
    return k < 0 ? -1 : rowAt(k);
  }

  /** The last PUBLIC place (address order) starting at or below `rva`, or −1. */
  private publicAtOrBelow(rva: number): number {
    const t = this.tables;
    return countKeysAtOrBelow(t.publics.length, rva, (k) => t.publics.get(t.publicRow(k), PUBLIC.address)) - 1;
  }

  at(rva: bigint): ModuleSymbol | undefined {
    const r = Number(rva);
    const t = this.tables;
    const f = this.funcAtOrBelow(r, false);
    const p = this.publicAtOrBelow(r);
    const fa = f < 0 ? -1 : t.funcs.get(f, FUNC.address);
    // At one address the FUNCs come before the PUBLICs: the last symbol is the PUBLIC.
    if (p >= 0 && t.publics.get(t.publicRow(p), PUBLIC.address) >= fa) return this.public(t.publicRow(p));
    if (f < 0) return undefined;
    return r - fa >= t.funcs.get(f, FUNC.size) ? undefined : this.func(f);
  }

  resolve(rva: bigint, lines: boolean): { symbol: ModuleSymbol; line?: SourceLine } | undefined {
    const r = Number(rva);
    const t = this.tables;
    const f = this.funcAtOrBelow(r, true);
    const fa = f < 0 ? -1 : t.funcs.get(f, FUNC.address);
    if (f >= 0 && r - fa < t.funcs.get(f, FUNC.size)) {
      const symbol = this.func(f);
      if (!lines) return { symbol };
      const line = this.lineAt(f, symbol, r);
      return line === undefined ? { symbol } : { symbol, line };
    }
    // PUBLICs: the first of each address, none at 0 (Breakpad skips those), above the nearest FUNC.
    let p = this.publicAtOrBelow(r);
    if (p < 0) return undefined;
    const pa = t.publics.get(t.publicRow(p), PUBLIC.address);
    if (pa === 0 || (f >= 0 && pa <= fa)) return undefined;
    while (p > 0 && t.publics.get(t.publicRow(p - 1), PUBLIC.address) === pa) p--;
    return { symbol: this.public(t.publicRow(p)) };
  }

  /** The line record of FUNC row `row` covering `rva`: of the records at or below it, the last at the greatest address, if it covers it. */
  private lineAt(row: number, symbol: ModuleSymbol, rva: number): SourceLine | undefined {
    const source = (symbol as unknown as WithSource)[SOURCE];
    if (source.lines !== undefined) return lineAt(source.lines, BigInt(rva));
    let q = this.lineTables.get(row);
    if (q === undefined) this.lineTables.set(row, (q = this.tables.lines(row)));
    let best = -1;
    for (let i = 0; i < q.length; i += 4) if (q[i]! <= rva && (best < 0 || q[i]! >= q[best]!)) best = i;
    if (best < 0 || q[best + 1] === 0 || rva - q[best]! >= q[best + 1]!) return undefined;
    return sourceLine(q[best]!, q[best + 1]!, q[best + 2]!, this.tables.fileName(q[best + 3]!));
  }
}

const SYMBOL_INDEX = {};

/** The module symbols of a parse's tables, looked up by address; one index per parse, which every module it is attached to shares. */
export function symbolIndex(tables: SymTables): SymbolIndex {
  return tables.derived(SYMBOL_INDEX, () => new TableSymbols(tables));
}
