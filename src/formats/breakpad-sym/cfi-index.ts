/**
 * A `.sym` file's STACK CFI records (minidump.md §7) looked up by address in the parse's tables,
 * as Breakpad's CFI map keeps them (arch/cfi.ts does the same for a list of records): the INIT
 * record covering an address (empty ones never; of overlapping ones, the one earlier in the
 * file), and the delta rows of the whole file from its start up to the address, one per address
 * (the last in the file). A lookup reads the rules of the records it finds and nothing else; a
 * file that lists its records in address order is searched where the parse stored them; one whose
 * INIT records come in another order, each followed by its own delta rows in order inside its
 * range (dump_syms writes most Linux files so: 6 of the 8 out of order among the Mozilla x86
 * dump's), has only its INIT records sorted; any other is sorted once.
 *
 * Records whose rules pass a postfix limit (../postfix-limits.ts) are left out, as symbol
 * attachment leaves them out of a list of records: an INIT record with its delta rows, a delta row
 * alone. Only rules at least {@link LONG_RULES} bytes long can pass one, and the parse lists those.
 */
import type { BreakpadStackCfi, StackCfiAt, StackCfiIndex } from "../../model/stack-cfi.js";
import { cfiRulesOverLimit } from "../postfix-limits.js";
import { countKeysAtOrBelow, orderOfKeys } from "../sorted-ranges.js";
import { CFI_DELTA, CFI_INIT, type SymTables } from "./tables.js";

/** The STACK CFI records a postfix limit leaves out, and in words the first of them. */
export interface CfiRefusals {
  inits: ReadonlySet<number>;
  deltas: ReadonlySet<number>;
  /** Records left out: INIT records (with their delta rows) and delta rows of the others. */
  count: number;
  first?: string;
}

const REFUSALS = {};

/** The STACK CFI rows of `tables` a postfix limit leaves out (found once per parse). */
export function cfiRefusals(tables: SymTables): CfiRefusals {
  return tables.derived(REFUSALS, () => {
    const inits = new Set<number>();
    const deltas = new Set<number>();
    // In file order: each INIT record before its delta rows.
    const found: { order: [number, number]; why: string }[] = [];
    for (const row of tables.longCfiInits) {
      const why = cfiRulesOverLimit(tables.cfiInitRules(row));
      if (why === undefined) continue;
      inits.add(row);
      found.push({ order: [row, -1], why: `STACK CFI INIT ${tables.cfiInits.get(row, CFI_INIT.address).toString(16)}: ${why}` });
    }
    for (const d of tables.longCfiDeltas) {
      const owner = ownerOf(tables, d);
      if (inits.has(owner)) continue;
      const why = cfiRulesOverLimit(tables.cfiDeltaRules(d));
      if (why === undefined) continue;
      deltas.add(d);
      found.push({ order: [owner, d], why: `STACK CFI ${tables.cfiDeltas.get(d, CFI_DELTA.address).toString(16)}: ${why}` });
    }
    found.sort((a, b) => a.order[0] - b.order[0] || a.order[1] - b.order[1]);
    const out: CfiRefusals = { inits, deltas, count: found.length };
    if (found.length > 0) out.first = found[0]!.why;
    return out;
  });
}

/** The INIT row delta row `d` belongs to (the last whose first delta is at or before it). */
function ownerOf(tables: SymTables, d: number): number {
  const inits = tables.cfiInits;
  let lo = 0;
  let hi = inits.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (inits.get(mid, CFI_INIT.firstDelta) <= d) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/** The records within the postfix limits, as objects in file order (made once per parse). */
export function cfiRecordsWithinLimits(tables: SymTables): BreakpadStackCfi[] {
  return tables.derived(RECORDS, () => {
    const refused = cfiRefusals(tables);
    return tables.cfiRecords((row) => !refused.inits.has(row), (d) => !refused.deltas.has(d));
  });
}
const RECORDS = {};

/** The last of `count` places whose key is ≤ `value` (keys ascending), or −1. */
const lastAtOrBelow = (count: number, value: number, key: (k: number) => number): number => countKeysAtOrBelow(count, value, key) - 1;

/** The rows 0 … count − 1 that `keep` keeps, in order. */
function kept(count: number, keep: (row: number) => boolean): Uint32Array {
  const out = new Uint32Array(count);
  let n = 0;
  for (let row = 0; row < count; row++) if (keep(row)) out[n++] = row;
  return out.subarray(0, n);
}

/**
 * Whether every INIT's delta rows inside its range come in ascending order: dump_syms writes each
 * function's rows after its INIT so, while the functions come in the order of the unwind
 * sections, not of their addresses. A row outside its INIT's range (dump_syms writes one at a
 * function's end now and then) is a stray: the strays are returned, to be looked up on their own,
 * with the INIT rows they follow. Undefined when some INIT's rows inside its range are out of order.
 */
function groupedDeltas(tables: SymTables): { strays: number[]; owners: Set<number> } | undefined {
  const inits = tables.cfiInits;
  const deltas = tables.cfiDeltas;
  const strays: number[] = [];
  const owners = new Set<number>();
  for (let row = 0; row < inits.length; row++) {
    const first = tables.cfiDeltaFirst(row);
    const end = tables.cfiDeltaEnd(row);
    const start = inits.get(row, CFI_INIT.address);
    const limit = start + inits.get(row, CFI_INIT.size);
    let previous = start;
    for (let d = first; d < end; d++) {
      const address = deltas.get(d, CFI_DELTA.address);
      if (address < start || address >= limit) {
        strays.push(d);
        owners.add(row);
        continue;
      }
      if (address < previous) return undefined;
      previous = address;
    }
  }
  return { strays, owners };
}

/** Sorts `rows` by `key` (file order among equal keys), reading each key once. */
function sortByKey(rows: Uint32Array, key: (row: number) => number): void {
  const keys = new Float64Array(rows.length);
  for (let k = 0; k < rows.length; k++) keys[k] = key(rows[k]!);
  const places = orderOfKeys(keys);
  const sorted = new Uint32Array(rows.length);
  for (let k = 0; k < rows.length; k++) sorted[k] = rows[places[k]!]!;
  rows.set(sorted);
}

class TableCfi implements StackCfiIndex {
  readonly count: number;
  /** The INIT ranges kept, in address order, when they are not the rows as stored: start, end and row. */
  private initStart: Float64Array | undefined;
  private initEnd: Float64Array | undefined;
  private initRow: Uint32Array | undefined;
  /** The delta rows kept, by address (file order among equal ones), when they are not the rows as stored. */
  private deltaRow: Uint32Array | undefined;
  private deltaAddress: Float64Array | undefined;
  /**
   * The delta rows need no sort: the INIT ranges kept are all there are and do not overlap, and
   * each INIT's rows inside its range follow it in ascending order, so the rows of the whole file
   * between an INIT's start and an address are that INIT's own, and the strays that lie there
   * (see {@link groupedDeltas}).
   */
  private grouped = false;
  /** With `grouped`: the stray delta rows by address (file order among equal ones), and the INIT rows they follow. */
  private strayRow: Uint32Array | undefined;
  private strayAddress: Float64Array | undefined;
  private strayOwners: Set<number> | undefined;

  private built = false;

  constructor(private readonly tables: SymTables) {
    this.count = tables.cfiInits.length - cfiRefusals(tables).inits.size;
  }

  /** The tables a file out of order needs, made when first looked up in (a walk may never ask). */
  private build(): void {
    this.built = true;
    const tables = this.tables;
    const refused = cfiRefusals(tables);
    const inits = tables.cfiInits;
    const deltas = tables.cfiDeltas;
    let overlapped = false;
    if (!tables.cfiInitsPlain || refused.inits.size > 0) {
      // The rows kept, by address: sorted once, by keys read into a typed array.
      const rows = kept(inits.length, (row) => inits.get(row, CFI_INIT.size) > 0 && !refused.inits.has(row));
      if (!tables.cfiInitsPlain) sortByKey(rows, (row) => inits.get(row, CFI_INIT.address));
      const start = new Float64Array(rows.length);
      const end = new Float64Array(rows.length);
      const at = new Uint32Array(rows.length);
      let n = 0;
      for (let k = 0; k < rows.length; k++) {
        const row = rows[k]!;
        const address = inits.get(row, CFI_INIT.address);
        const high = address + inits.get(row, CFI_INIT.size);
        if (n > 0 && address < end[n - 1]!) {
          // Overlapping ranges: the one earlier in the file is kept.
          overlapped = true;
          if (row < at[n - 1]!) {
            start[n - 1] = address;
            end[n - 1] = high;
            at[n - 1] = row;
          }
          continue;
        }
        start[n] = address;
        end[n] = high;
        at[n++] = row;
      }
      this.initStart = start.subarray(0, n);
      this.initEnd = end.subarray(0, n);
      this.initRow = at.subarray(0, n);
    }
    const grouped = !tables.cfiDeltasInOrder && refused.count === 0 && !overlapped ? groupedDeltas(tables) : undefined;
    if (grouped !== undefined) {
      this.grouped = true;
      if (grouped.strays.length > 0) {
        const rows = Uint32Array.from(grouped.strays);
        sortByKey(rows, (d) => deltas.get(d, CFI_DELTA.address));
        this.strayRow = rows;
        this.strayAddress = Float64Array.from(rows, (d) => deltas.get(d, CFI_DELTA.address));
        this.strayOwners = grouped.owners;
      }
    } else if (!tables.cfiDeltasInOrder || refused.count > 0) {
      const rows = kept(deltas.length, (d) => !refused.deltas.has(d) && (refused.inits.size === 0 || !refused.inits.has(ownerOf(tables, d))));
      if (!tables.cfiDeltasInOrder) sortByKey(rows, (d) => deltas.get(d, CFI_DELTA.address));
      const addresses = new Float64Array(rows.length);
      for (let k = 0; k < rows.length; k++) addresses[k] = deltas.get(rows[k]!, CFI_DELTA.address);
      this.deltaRow = rows;
      this.deltaAddress = addresses;
    }
  }

  at(rva: number): StackCfiAt | undefined {
    if (!this.built) this.build();
    const t = this.tables;
    const inits = t.cfiInits;
    let row: number;
    let address: number;
    if (this.initStart === undefined) {
      row = lastAtOrBelow(inits.length, rva, (k) => inits.get(k, CFI_INIT.address));
      if (row < 0) return undefined;
      address = inits.get(row, CFI_INIT.address);
      if (rva - address >= inits.get(row, CFI_INIT.size)) return undefined;
    } else {
      const starts = this.initStart;
      const k = lastAtOrBelow(starts.length, rva, (k) => starts[k]!);
      if (k < 0 || rva >= this.initEnd![k]!) return undefined;
      row = this.initRow![k]!;
      address = starts[k]!;
    }
    const found: string[] = [];
    if (this.grouped) {
      const deltas = t.cfiDeltas;
      const first = t.cfiDeltaFirst(row);
      const end = t.cfiDeltaEnd(row);
      const strays = this.strayAddress;
      const strayFrom = strays === undefined ? 0 : lastAtOrBelow(strays.length, address - 1, (k) => strays[k]!) + 1;
      if (strays === undefined || (!this.strayOwners!.has(row) && !(strayFrom < strays.length && strays[strayFrom]! <= rva))) {
        for (let k = first; k < end; k++) {
          const at = deltas.get(k, CFI_DELTA.address);
          if (at > rva) break;
          // The last row at an address is the one kept.
          if (k + 1 < end && deltas.get(k + 1, CFI_DELTA.address) === at) continue;
          found.push(t.cfiDeltaRules(k));
        }
        return { address, init: t.cfiInitRules(row), deltas: found };
      }
      // The INIT's own rows from its start to the address, and the strays there, by address and file order.
      const rows: number[] = [];
      for (let k = first; k < end; k++) {
        const at = deltas.get(k, CFI_DELTA.address);
        if (at >= address && at <= rva) rows.push(k);
      }
      for (let k = strayFrom; k < strays.length && strays[k]! <= rva; k++) rows.push(this.strayRow![k]!);
      const at = (d: number): number => deltas.get(d, CFI_DELTA.address);
      rows.sort((a, b) => at(a) - at(b) || a - b);
      for (let k = 0; k < rows.length; k++) {
        // The last row at an address is the one kept.
        if (k + 1 < rows.length && at(rows[k + 1]!) === at(rows[k]!)) continue;
        found.push(t.cfiDeltaRules(rows[k]!));
      }
      return { address, init: t.cfiInitRules(row), deltas: found };
    }
    const rows = this.deltaRow;
    const count = rows === undefined ? t.cfiDeltas.length : rows.length;
    const addressAt = rows === undefined ? (k: number): number => t.cfiDeltas.get(k, CFI_DELTA.address) : (k: number): number => this.deltaAddress![k]!;
    for (let k = lastAtOrBelow(count, address - 1, addressAt) + 1; k < count; k++) {
      const at = addressAt(k);
      if (at > rva) break;
      // The last row at an address is the one kept.
      if (k + 1 < count && addressAt(k + 1) === at) continue;
      found.push(t.cfiDeltaRules(rows === undefined ? k : rows[k]!));
    }
    return { address, init: t.cfiInitRules(row), deltas: found };
  }
}

const INDEX = {};

/** The STACK CFI records of a parse's tables looked up by address; one per parse, which every module it is attached to shares. */
export function cfiIndex(tables: SymTables): StackCfiIndex {
  return tables.derived(INDEX, () => new TableCfi(tables));
}
