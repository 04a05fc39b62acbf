/**
 * A `.sym` file's STACK WIN records as the unwind records the x86 walker reads (x86-fpo.md
 * §5.1): types 0-3 as FPO_DATA, type 4 as FrameData with its program string. From a parse's
 * tables a record is made only to be converted, one at a time.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { FpoData } from "../../model/fpo-data.js";
import type { FrameData, FrameDataIndex } from "../../model/frame-data.js";
import { fail } from "./fields.js";
import { symTables } from "./parser.js";
import type { StackWinSizes, SymTables } from "./tables.js";
import { STACK_WIN_TYPE, type BreakpadStackWin, type BreakpadSymbols } from "./types.js";

const U32_MAX = 0xffff_ffff;

/** Sort order for converted records: by start, and for equal starts the larger range first, so a backward search meets the inner one first. */
function byStartOuterFirst(a: BreakpadStackWin, b: BreakpadStackWin): number {
  return a.rva - b.rva || b.codeSize - a.codeSize;
}

function conversionError(r: BreakpadStackWin, message: string): never {
  fail("bad-value", r, `STACK WIN ${r.type} at rva ${hex(r.rva)}: ${message}`);
}

/**
 * Converts the type-0 to type-3 records (FPO_DATA's frame kinds: FPO, trap, TSS, non-FPO; Breakpad
 * looks up only type 0, dump_syms writes the others) to FPO_DATA values sorted by start:
 * cdwLocals = locals / 4, cdwParams = params / 4, cbRegs = saved_regs / 4, cbProlog = prolog,
 * fUseBP = allocates_base_pointer, cbFrame = the type. FPO_DATA has no program string: a record
 * that carries one converts with fUseBP false. A size that is not a multiple of 4 or does not fit its
 * FPO_DATA field (cbRegs 3 bits, cbProlog 8 bits, cdwParams 16 bits, start and size 32 bits)
 * throws InputError("bad-value") naming the record's line.
 */
export function stackWinToFpoData(records: readonly BreakpadStackWin[]): FpoData[] {
  // Types 0-3 are FPO_DATA's frame kinds (FRAME_FPO, FRAME_TRAP, FRAME_TSS, FRAME_NONFPO).
  return records.filter((x) => x.type <= STACK_WIN_TYPE.STANDARD).sort(byStartOuterFirst).map(fpoDataOf);
}

/** One type 0-3 record as FPO_DATA (see {@link stackWinToFpoData}). */
function fpoDataOf(r: BreakpadStackWin): FpoData {
  if (r.rva > U32_MAX || r.codeSize > U32_MAX) conversionError(r, "the range does not fit FPO_DATA's 32-bit start and size");
  if (r.localsSize % 4 !== 0) conversionError(r, `locals size ${hex(r.localsSize)} is not a multiple of 4`);
  if (r.paramsSize % 4 !== 0 || r.paramsSize / 4 > 0xffff) {
    conversionError(r, `parameter size ${hex(r.paramsSize)} is not 4 × 0..0xffff (FPO_DATA.cdwParams has 16 bits)`);
  }
  if (r.savedRegsSize % 4 !== 0 || r.savedRegsSize / 4 > 7) {
    conversionError(r, `saved register size ${hex(r.savedRegsSize)} is not 4 × 0..7 (FPO_DATA.cbRegs has 3 bits)`);
  }
  if (r.prologSize > 0xff) conversionError(r, `prolog size ${hex(r.prologSize)} does not fit FPO_DATA.cbProlog (8 bits)`);
  return {
    ulOffStart: r.rva,
    cbProcSize: r.codeSize,
    cdwLocals: r.localsSize / 4,
    cdwParams: r.paramsSize / 4,
    cbProlog: r.prologSize,
    cbRegs: r.savedRegsSize / 4,
    fHasSEH: false,
    fUseBP: r.allocatesBasePointer === true,
    reserved: 0,
    cbFrame: r.type,
  };
}

/**
 * Converts the type-4 (FrameData) records to FrameData values sorted by start, with all sizes in
 * bytes as the record gives them, frameFunc 0, no flags, and `program` set when the record has one.
 */
export function stackWinToFrameData(records: readonly BreakpadStackWin[]): FrameData[] {
  return records.filter((r) => r.type === STACK_WIN_TYPE.FRAME_DATA).sort(byStartOuterFirst).map(frameDataOf);
}

/** One type-4 record as FrameData (see {@link stackWinToFrameData}). */
function frameDataOf(r: StackWinSizes): FrameData {
  const fd: FrameData = {
    rvaStart: r.rva,
    codeSize: r.codeSize,
    localSize: r.localsSize,
    paramsSize: r.paramsSize,
    maxStackSize: r.maxStackSize,
    frameFunc: 0,
    prologSize: r.prologSize,
    savedRegsSize: r.savedRegsSize,
    flags: 0,
    hasSEH: false,
    hasEH: false,
    isFunctionStart: false,
  };
  if (r.program !== undefined) fd.program = r.program;
  return fd;
}

/**
 * The FPO_DATA of a `.sym` file's type 0-3 STACK WIN records; like Breakpad's loader, records
 * that do not convert (sizes FPO_DATA cannot hold) are left out and counted.
 */
export function breakpadFpoData(sym: BreakpadSymbols): { fpo: FpoData[]; unconverted: number } {
  const tables = symTables(sym);
  return tables === undefined ? fpoData(sym) : tables.derived(FPO, () => fpoData(sym));
}
const FPO = {};

function fpoData(sym: BreakpadSymbols): { fpo: FpoData[]; unconverted: number } {
  const records = fpoRecords(sym);
  try {
    return { fpo: stackWinToFpoData(records), unconverted: 0 };
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
  }
  let unconverted = 0;
  const usable = records.filter((r) => {
    try {
      fpoDataOf(r);
      return true;
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      unconverted++;
      return false;
    }
  });
  return { fpo: stackWinToFpoData(usable), unconverted };
}

/**
 * The FrameData of a `.sym` file's type-4 STACK WIN records, sorted as {@link stackWinToFrameData}
 * sorts them; every record converts. Those of a parse are made once, and shared by every module
 * the file is attached to (the same objects {@link breakpadFrameDataIndex} returns).
 */
export function breakpadFrameData(sym: BreakpadSymbols): FrameData[] {
  const tables = symTables(sym);
  if (tables === undefined) return stackWinToFrameData(sym.stackWin);
  return tables.derived(FRAME_DATA, () => frameDataIndexOfTables(tables).all());
}
const FRAME_DATA = {};

/**
 * The same records looked up by RVA, a record made (its program read from the file) when a lookup
 * returns it; undefined for symbols that did not come from the parser. Made once per parse.
 */
export function breakpadFrameDataIndex(sym: BreakpadSymbols): FrameDataIndex | undefined {
  const tables = symTables(sym);
  return tables === undefined ? undefined : frameDataIndexOfTables(tables);
}

function frameDataIndexOfTables(tables: SymTables): SymFrameDataIndex {
  return tables.derived(FRAME_DATA_INDEX, () => new SymFrameDataIndex(tables));
}
const FRAME_DATA_INDEX = {};

/** A parse's type-4 STACK WIN rows in {@link stackWinToFrameData}'s order, their ranges as numbers. */
class SymFrameDataIndex implements FrameDataIndex {
  readonly count: number;
  /** The STACK WIN row at each place, and its start and size. */
  private readonly rows: Uint32Array;
  private readonly starts: Float64Array;
  private readonly sizes: Float64Array;
  /** The records made so far, by place. */
  private readonly made: (FrameData | undefined)[];

  constructor(private readonly tables: SymTables) {
    const fileOrder = tables.frameDataRows();
    const ranges = tables.frameDataRangeList();
    const n = fileOrder.length;
    const starts = new Float64Array(n);
    const sizes = new Float64Array(n);
    let sorted = true;
    for (let k = 0; k < n; k++) {
      starts[k] = ranges[2 * k]!;
      sizes[k] = ranges[2 * k + 1]!;
      if (k > 0 && (starts[k]! < starts[k - 1]! || (starts[k] === starts[k - 1] && sizes[k]! > sizes[k - 1]!))) sorted = false;
    }
    this.count = n;
    this.made = new Array<FrameData | undefined>(n);
    if (sorted) {
      this.rows = Uint32Array.from(fileOrder);
      this.starts = starts;
      this.sizes = sizes;
      return;
    }
    // By start, the larger range first, then file order.
    const order = new Uint32Array(n);
    for (let k = 0; k < n; k++) order[k] = k;
    order.sort((a, b) => starts[a]! - starts[b]! || sizes[b]! - sizes[a]! || a - b);
    this.rows = new Uint32Array(n);
    this.starts = new Float64Array(n);
    this.sizes = new Float64Array(n);
    for (let k = 0; k < n; k++) {
      const from = order[k]!;
      this.rows[k] = fileOrder[from]!;
      this.starts[k] = starts[from]!;
      this.sizes[k] = sizes[from]!;
    }
  }

  innermost(rva: number): FrameData | undefined {
    const starts = this.starts;
    const sizes = this.sizes;
    for (let k = this.countAtOrBelow(rva) - 1; k >= 0; k--) if (rva - starts[k]! < sizes[k]!) return this.record(k);
    return undefined;
  }

  outermost(rva: number, maxBack: number): FrameData | undefined {
    const starts = this.starts;
    const sizes = this.sizes;
    const end = this.countAtOrBelow(rva);
    let best = -1;
    for (let k = end - 1; k >= 0 && end - k <= maxBack; k--) if (rva - starts[k]! < sizes[k]!) best = k;
    return best < 0 ? undefined : this.record(best);
  }

  /** Every record, in order. */
  all(): FrameData[] {
    return Array.from({ length: this.count }, (_, k) => this.record(k));
  }

  /** The number of places whose start is ≤ `rva` (a search of the typed array itself: a walk asks it for every frame). */
  private countAtOrBelow(rva: number): number {
    const starts = this.starts;
    let lo = 0;
    let hi = this.count;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (starts[mid]! <= rva) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private record(k: number): FrameData {
    return (this.made[k] ??= frameDataOf(this.tables.stackWinSizes(this.rows[k]!)));
  }
}

/** The STACK WIN records of `sym` of types 0-3 (FPO_DATA's frame kinds), in file order. */
function fpoRecords(sym: BreakpadSymbols): BreakpadStackWin[] {
  const tables = symTables(sym);
  if (tables === undefined) return sym.stackWin.filter((r) => r.type <= STACK_WIN_TYPE.STANDARD);
  return tables.fpoRows().map((i) => tables.stackWinRecord(i));
}
