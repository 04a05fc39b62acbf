/**
 * A `.sym` file's STACK WIN records as the unwind records the x86 walker reads (x86-fpo.md
 * §5.1): types 0-3 as FPO_DATA, type 4 as FrameData with its program string. From a parse's
 * tables a record is made only to be converted, one at a time.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { FpoData } from "../../model/fpo-data.js";
import type { FrameData } from "../../model/frame-data.js";
import { fail } from "./fields.js";
import { symTables } from "./parser.js";
import type { StackWinSizes } from "./tables.js";
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
 * the file is attached to.
 */
export function breakpadFrameData(sym: BreakpadSymbols): FrameData[] {
  const tables = symTables(sym);
  if (tables === undefined) return stackWinToFrameData(sym.stackWin);
  return tables.derived(FRAME_DATA, () =>
    tables
      .frameDataRows()
      .map((i) => frameDataOf(tables.stackWinSizes(i)))
      .sort((a, b) => a.rvaStart - b.rvaStart || b.codeSize - a.codeSize),
  );
}
const FRAME_DATA = {};

/** The STACK WIN records of `sym` of types 0-3 (FPO_DATA's frame kinds), in file order. */
function fpoRecords(sym: BreakpadSymbols): BreakpadStackWin[] {
  const tables = symTables(sym);
  if (tables === undefined) return sym.stackWin.filter((r) => r.type <= STACK_WIN_TYPE.STANDARD);
  return tables.fpoRows().map((i) => tables.stackWinRecord(i));
}
