/**
 * Where a parsed `.sym` file's records are kept: rows of numbers in typed arrays (the index: the
 * addresses and sizes lookups search, and where each record's text is), and text as byte ranges
 * of the file, read and decoded when a record is. A large symbol file holds millions of records of
 * which a walk reads a handful, so no object is made for a record until it is asked for, and no
 * string until its text is. The bytes are the regions the parser was given, kept, or the file
 * itself read again by position (a {@link ByteSource}), so that a file of hundreds of megabytes
 * is never held in memory.
 *
 * A text reference is a pair of numbers: the file offsets [start, end) of UTF-8 bytes, or, for a
 * line that only the strict reader could read, a negative start naming a string it read.
 */
import { InputError } from "../../errors.js";
import type { ByteSource } from "../../memory/byte-source.js";
import type { BreakpadStackCfi } from "../../model/stack-cfi.js";
import { orderOfKeys } from "../sorted-ranges.js";
import { HEX_VALUE } from "./digits.js";
import { readInline } from "./inline-records.js";
import { allocatesBasePointer, FIELDS, STACK_WIN, stackKind, stackRecord } from "./scan.js";
import { STACK_WIN_TYPE, type BreakpadFunc, type BreakpadInline as InlineRecord, type BreakpadInlineOrigin as InlineOriginRecord, type BreakpadLine, type BreakpadPublic, type BreakpadStackWin } from "./types.js";

/** Marks a number outside the typed array's range, kept in a map instead. */
const WIDE = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** Numbers in one page of a {@link Rows} (256 KiB). */
const PAGE_BITS = 16;
const PAGE = 1 << PAGE_BITS;

/**
 * Rows of `width` whole numbers, one after the other in pages of a typed array added as rows are:
 * no object per record, the numbers live outside the JavaScript heap, and a table that grows is
 * never copied (a large file's tables take tens of megabytes). The rare number too wide for 32
 * bits (a .sym file's numbers may reach 2^53) is kept in a map. A row is added a number at a
 * time, in column order ({@link push}).
 */
export class Rows {
  private readonly pages: Int32Array[] = [];
  private page: Int32Array = new Int32Array(0);
  /** Numbers stored. */
  private count = 0;
  private readonly wide = new Map<number, number>();

  constructor(readonly width: number) {
    this.next = new Array<number>(width).fill(0);
  }

  /** The number of rows (whole rows: between the numbers of one row it is not a whole number). */
  get length(): number {
    return this.count / this.width;
  }

  /**
   * The numbers of the next row, to be set in column order and added with {@link add}: one call
   * for a row (a call per number costs more than the number, in code the engine has not
   * optimised yet).
   */
  readonly next: number[];

  /** Adds {@link next} as a row. */
  add(): void {
    const next = this.next;
    const width = next.length;
    const at = this.count;
    const i = at & (PAGE - 1);
    const page = this.page;
    if (i === 0 || i + width > page.length) {
      // A new page, or one that grows, is begun number by number.
      for (let c = 0; c < width; c++) this.push(next[c]!);
      return;
    }
    for (let c = 0; c < width; c++) {
      const value = next[c]!;
      if (value > WIDE && value <= INT32_MAX) page[i + c] = value;
      else this.putWide(at + c, value);
    }
    this.count = at + width;
  }

  /** Adds the next number of the row being added. */
  push(value: number): void {
    const at = this.count;
    const i = at & (PAGE - 1);
    if (i === 0) {
      // The first page is small: most tables of most files are.
      this.page = new Int32Array(at === 0 ? 256 : PAGE);
      this.pages.push(this.page);
    } else if (i === this.page.length) {
      const grown = new Int32Array(Math.min(PAGE, i * 4));
      grown.set(this.page);
      this.page = grown;
      this.pages[this.pages.length - 1] = grown;
    }
    if (value > WIDE && value <= INT32_MAX) this.page[i] = value;
    else this.putWide(at, value);
    this.count = at + 1;
  }

  /** Once every row is in: gives back the room the last page grew into. */
  finish(): void {
    const used = this.count & (PAGE - 1);
    if (this.pages.length > 0 && used !== 0 && this.page.length > used) this.pages[this.pages.length - 1] = this.page = this.page.slice(0, used);
  }

  /** Sets the last number of the last row. */
  setLast(value: number): void {
    const at = this.count - 1;
    if (value > WIDE && value <= INT32_MAX) {
      this.pages[at >>> PAGE_BITS]![at & (PAGE - 1)] = value;
      this.wide.delete(at);
    } else this.putWide(at, value);
  }

  /** The number at `column` of row `row`. */
  get(row: number, column: number): number {
    const at = row * this.width + column;
    const value = this.pages[at >>> PAGE_BITS]![at & (PAGE - 1)]!;
    return value === WIDE ? this.wide.get(at)! : value;
  }

  /** The numbers of row `row`, into `into`. */
  row(row: number, into: number[]): number[] {
    for (let c = 0; c < this.width; c++) into[c] = this.get(row, c);
    return into;
  }

  private putWide(at: number, value: number): void {
    this.pages[at >>> PAGE_BITS]![at & (PAGE - 1)] = WIDE;
    this.wide.set(at, value);
  }
}

const utf8 = new TextDecoder("utf-8", { ignoreBOM: true });

/** Bytes read from a source at a time, and how many such blocks are kept. */
const BLOCK = 1 << 16;
const BLOCKS_KEPT = 16;

/**
 * The bytes of a `.sym` file: the regions the parser read, kept, or a {@link ByteSource} read
 * again a block at a time when a record's text is asked for (the last few blocks are kept, so that
 * records read in file order cost one read per block); and the strings the strict reader read.
 */
export class SymText {
  private readonly regions: Uint8Array[] = [];
  /** File offset of each region's first byte, ascending. */
  private readonly starts: number[] = [];
  private readonly strings: string[] = [];
  private readonly blocks = new Map<number, Uint8Array>();

  /** `source`: the file, read again when text is asked for (the regions are not kept). */
  constructor(private readonly source?: ByteSource) {}

  /** File offset of the last region's first byte. */
  get lastRegionStart(): number {
    return this.starts[this.starts.length - 1] ?? 0;
  }

  /** The parser read the lines at file offset `start`: their bytes are kept, unless a source gives them again. */
  addRegion(start: number, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.starts.push(start);
    if (this.source === undefined) this.regions.push(bytes);
  }

  /** Keeps `text` and returns its reference (a negative start). */
  addString(text: string): number {
    this.strings.push(text);
    return -this.strings.length;
  }

  /** The index of the region holding file offset `at`. */
  private regionIndex(at: number): number {
    let lo = 0;
    let hi = this.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >>> 1;
      if (this.starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }

  /** The file's bytes [start, end), which lie in one region (a view: do not change it). */
  bytes(start: number, end: number): Uint8Array {
    const source = this.source;
    if (source === undefined) {
      const i = this.regionIndex(start);
      const base = this.starts[i]!;
      return this.regions[i]!.subarray(start - base, end - base);
    }
    const first = Math.floor(start / BLOCK);
    if (first !== Math.floor((end - 1) / BLOCK) || end <= start) return this.read(source, start, end - start);
    let block = this.blocks.get(first);
    if (block === undefined) {
      if (this.blocks.size >= BLOCKS_KEPT) this.blocks.delete(this.blocks.keys().next().value!);
      block = this.read(source, first * BLOCK, Math.min(BLOCK, source.size - first * BLOCK));
      this.blocks.set(first, block);
    }
    return block.subarray(start - first * BLOCK, end - first * BLOCK);
  }

  private read(source: ByteSource, offset: number, length: number): Uint8Array {
    const bytes = source.read(offset, length);
    if (bytes === undefined) throw new InputError("io", `the symbol file's bytes at offset 0x${offset.toString(16)} could not be read again (was the file changed?)`, { offset });
    return bytes;
  }

  /** The text a reference names. */
  text(start: number, end: number): string {
    if (start < 0) return this.strings[-start - 1]!;
    return utf8.decode(this.bytes(start, end));
  }

  /** The length in bytes (or characters, for a string) of the text a reference names. */
  length(start: number, end: number): number {
    return start < 0 ? this.strings[-start - 1]!.length : end - start;
  }
}

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

/** FUNC rows: address, size, parameter size, name (start, end), `m`, index of the first line run, index of the first INLINE record. */
export const FUNC = { width: 8, address: 0, size: 1, paramSize: 2, name: 3, multiple: 5, firstRun: 6, firstInline: 7 } as const;
/** INLINE rows: where the record's fields are (start, end). */
export const INLINE = { width: 2, fields: 0 } as const;
/** INLINE_ORIGIN rows: id, file id (−2: the record names none), name (start, end). */
export const ORIGIN = { width: 4, id: 0, file: 1, name: 2 } as const;
/** PUBLIC rows: address, parameter size, name (start, end), `m`. */
export const PUBLIC = { width: 5, address: 0, paramSize: 1, name: 2, multiple: 4 } as const;
/** FILE rows: number, name (start, end). */
export const FILE = { width: 3, number: 0, name: 1 } as const;
/**
 * STACK WIN rows: type, rva, code_size (what decides which records a file keeps), the line number,
 * and the line's bytes with its line end (start, end), from which a FrameData record's other
 * fields are read when a record is made; for a record whose fields the pass kept (types 0-3,
 * which attachment converts all at once, and lines the strict reader read), start is
 * {@link FIELDS_KEPT} and end the index of its fields among the tables' `keptWins`.
 */
export const WIN = { width: 6, type: 0, rva: 1, codeSize: 2, line: 3, start: 4, end: 5 } as const;
const FIELDS_KEPT = -1;
/**
 * A STACK WIN record's fields, as {@link SymTables.winFields} gives them: the ten numbers (type,
 * rva, code_size, prolog, epilog, params, saved_regs, locals, max_stack, has_program), the
 * program (start, end), allocates_base_pointer, the line number and the byte offset of the line.
 */
const WIN_FIELDS = { type: 0, rva: 1, codeSize: 2, prolog: 3, epilog: 4, params: 5, savedRegs: 6, locals: 7, maxStack: 8, hasProgram: 9, program: 10, allocatesBasePointer: 12, line: 13, offset: 14 } as const;
/** STACK CFI INIT rows: address, size, rules (start, end), index of the first delta row. */
export const CFI_INIT = { width: 5, address: 0, size: 1, rules: 2, firstDelta: 4 } as const;
/** STACK CFI delta rows: address, rules (start, end). */
export const CFI_DELTA = { width: 3, address: 0, rules: 1 } as const;

/** Rules texts this long or longer may pass a postfix limit (postfix-limits.ts: shorter ones cannot). */
export const LONG_RULES = 128;

/** The fields of a STACK WIN record that FrameData takes (x86-fpo.md §5.1). */
export interface StackWinSizes {
  rva: number;
  codeSize: number;
  prologSize: number;
  paramsSize: number;
  savedRegsSize: number;
  localsSize: number;
  maxStackSize: number;
  program?: string | undefined;
}

/** Indices of the rows of `rows` sorted by the number at `key`, file order kept among equal ones. */
export function sortedOrder(rows: Rows, key: number): Uint32Array {
  const n = rows.length;
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) keys[i] = rows.get(i, key);
  return orderOfKeys(keys);
}

/** The records of one `.sym` file, as the parser stored them. */
export class SymTables {
  readonly text: SymText;
  readonly funcs = new Rows(FUNC.width);
  /** Runs of checked line-record lines: file offsets [start, end). */
  private readonly runs = new Rows(2);
  readonly publics = new Rows(PUBLIC.width);
  private readonly files = new Rows(FILE.width);
  private readonly wins = new Rows(WIN.width);
  private readonly inlines = new Rows(INLINE.width);
  private readonly origins = new Rows(ORIGIN.width);
  readonly cfiInits = new Rows(CFI_INIT.width);
  readonly cfiDeltas = new Rows(CFI_DELTA.width);
  /** INLINE_ORIGIN rows by id, the first of each id (made on first use). */
  private originIndex: Map<number, number> | undefined;
  /** FUNC rows in address order, when the file does not list them so (undefined: file order). */
  funcOrder: Uint32Array | undefined;
  publicOrder: Uint32Array | undefined;
  /** FILE rows by number, the first of each number only, when the file does not list them so (undefined: file order). */
  private fileIndex: Uint32Array | undefined;
  /** Whether the records came in order so far: FUNC and PUBLIC by address, FILE by strictly increasing number. */
  private funcsInOrder = true;
  /** FUNC records of size 0 (the symbolizer passes over them). */
  emptyFuncs = 0;
  /** Whether INLINE_ORIGIN ids came strictly increasing (then the rows are searched by id where they are). */
  private originsInOrder = true;
  private lastOrigin = -Infinity;
  private publicsInOrder = true;
  private filesInOrder = true;
  /** Whether STACK CFI INIT rows came by address, none empty and none overlapping the ones before; delta rows by address (of the whole file). */
  cfiInitsPlain = true;
  cfiDeltasInOrder = true;
  /** The STACK CFI INIT and delta rows whose rules are long enough to pass a postfix limit, in file order. */
  readonly longCfiInits: number[] = [];
  readonly longCfiDeltas: number[] = [];
  /** The last FUNC's address and first line run, the last PUBLIC's address, the last FILE number, where the last line run ends. */
  private lastFunc = -Infinity;
  private lastFuncFirstRun = 0;
  private lastPublic = -Infinity;
  private lastFile = -Infinity;
  private lastRunEnd = -1;
  private lastInit = -Infinity;
  private lastInitEnd = -Infinity;
  private lastDelta = -Infinity;
  /** The kept STACK WIN rows of types 0-3 (FPO_DATA) and of type 4 (FrameData), in file order. */
  private readonly fpo: number[] = [];
  private readonly frameData: number[] = [];
  /** The ranges of the type-4 rows (start, size), in file order, as the pass adds them. */
  private readonly frameDataRanges: number[] = [];
  /** The fields of the STACK WIN records the pass kept them for (types 0-3, and lines the strict reader read). */
  private readonly keptWins: number[][] = [];
  private winCount = 0;
  /** STACK WIN programs read so far, one string for each text. */
  private readonly programs = new Map<string, string>();
  /** A STACK WIN row read, and its sizes, used again by the next call of {@link stackWinSizes}. */
  private readonly winRow: number[] = [];
  private readonly sizes: StackWinSizes = { rva: 0, codeSize: 0, prologSize: 0, paramsSize: 0, savedRegsSize: 0, localsSize: 0, maxStackSize: 0, program: undefined };
  /** What lookups and attachments make from the tables, made once (see {@link derived}). */
  private readonly made = new Map<object, unknown>();

  /** `source`: the file, read again for text (see {@link SymText}). */
  constructor(source?: ByteSource) {
    this.text = new SymText(source);
  }

  /**
   * The value `make` makes from these tables, made once per key: the lookup structures and the
   * unwind records attached to modules, which every module the file is attached to (every dump
   * of a batch) then shares.
   */
  derived<T>(key: object, make: () => T): T {
    if (this.made.has(key)) return this.made.get(key) as T;
    const value = make();
    this.made.set(key, value);
    return value;
  }

  /** A FUNC record, its name at text [nameStart, nameEnd); its line records follow with {@link addLineRun}. */
  addFunc(address: number, size: number, paramSize: number, nameStart: number, nameEnd: number, multiple: boolean): void {
    if (address < this.lastFunc) this.funcsInOrder = false;
    if (size === 0) this.emptyFuncs++;
    this.lastFunc = address;
    this.lastFuncFirstRun = this.runs.length;
    const f = this.funcs;
    const r = f.next;
    r[0] = address;
    r[1] = size;
    r[2] = paramSize;
    r[3] = nameStart;
    r[4] = nameEnd;
    r[5] = multiple ? 1 : 0;
    r[6] = this.lastFuncFirstRun;
    r[7] = this.inlines.length;
    f.add();
  }

  /** An INLINE record of the FUNC added last, checked: where its fields are. */
  addInline(start: number, end: number): void {
    this.inlines.push(start);
    this.inlines.push(end);
  }

  /** An INLINE_ORIGIN record, its name at text [nameStart, nameEnd). */
  addOrigin(id: number, file: number, nameStart: number, nameEnd: number): void {
    if (id <= this.lastOrigin) this.originsInOrder = false;
    this.lastOrigin = id;
    const o = this.origins;
    const r = o.next;
    r[0] = id;
    r[1] = file;
    r[2] = nameStart;
    r[3] = nameEnd;
    o.add();
  }

  /** The INLINE records of FUNC row `row`, in file order (read from the file now). */
  funcInlines(row: number): InlineRecord[] {
    const first = this.funcs.get(row, FUNC.firstInline);
    const last = row + 1 < this.funcs.length ? this.funcs.get(row + 1, FUNC.firstInline) : this.inlines.length;
    const out: InlineRecord[] = [];
    const numbers: number[] = [];
    for (let i = first; i < last; i++) {
      const bytes = this.text.bytes(this.inlines.get(i, INLINE.fields), this.inlines.get(i, INLINE.fields + 1));
      numbers.length = 0;
      readInline(bytes, 0, bytes.length, numbers);
      const ranges: [number, number][] = [];
      for (let r = 4; r + 1 < numbers.length; r += 2) ranges.push([numbers[r]!, numbers[r + 1]!]);
      const record: InlineRecord = { depth: numbers[0]!, callLine: numbers[1]!, origin: numbers[3]!, ranges };
      if (numbers[2] !== -2) record.callFile = numbers[2]!;
      out.push(record);
    }
    return out;
  }

  /** Whether FUNC row `row` has INLINE records. */
  hasInlines(row: number): boolean {
    const last = row + 1 < this.funcs.length ? this.funcs.get(row + 1, FUNC.firstInline) : this.inlines.length;
    return last > this.funcs.get(row, FUNC.firstInline);
  }

  /** The name of INLINE_ORIGIN `id` (the first record of that id), if there is one. */
  originName(id: number): string | undefined {
    const o = this.origins;
    let row: number | undefined;
    if (this.originsInOrder) {
      let lo = 0;
      let hi = o.length - 1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        const at = o.get(mid, ORIGIN.id);
        if (at === id) {
          row = mid;
          break;
        }
        if (at < id) lo = mid + 1;
        else hi = mid - 1;
      }
    } else row = (this.originIndex ??= this.makeOriginIndex()).get(id);
    return row === undefined ? undefined : this.text.text(o.get(row, ORIGIN.name), o.get(row, ORIGIN.name + 1));
  }

  /** The INLINE_ORIGIN records, the first of each id, in file order. */
  originRecords(): InlineOriginRecord[] {
    const index = (this.originIndex ??= this.makeOriginIndex());
    return [...index.values()].map((row) => {
      const o = this.origins;
      const record: InlineOriginRecord = { id: o.get(row, ORIGIN.id), name: this.text.text(o.get(row, ORIGIN.name), o.get(row, ORIGIN.name + 1)) };
      if (o.get(row, ORIGIN.file) !== -2) record.file = o.get(row, ORIGIN.file);
      return record;
    });
  }

  private makeOriginIndex(): Map<number, number> {
    const index = new Map<number, number>();
    for (let row = 0; row < this.origins.length; row++) {
      const id = this.origins.get(row, ORIGIN.id);
      if (!index.has(id)) index.set(id, row);
    }
    return index;
  }

  /** A PUBLIC record. */
  addPublic(address: number, paramSize: number, nameStart: number, nameEnd: number, multiple: boolean): void {
    if (address < this.lastPublic) this.publicsInOrder = false;
    this.lastPublic = address;
    const p = this.publics;
    const r = p.next;
    r[0] = address;
    r[1] = paramSize;
    r[2] = nameStart;
    r[3] = nameEnd;
    r[4] = multiple ? 1 : 0;
    p.add();
  }

  /** A FILE record (a repeated number keeps its first name, as Breakpad does). */
  addFile(number: number, nameStart: number, nameEnd: number): void {
    if (number <= this.lastFile) this.filesInOrder = false;
    this.lastFile = number;
    const f = this.files;
    const r = f.next;
    r[0] = number;
    r[1] = nameStart;
    r[2] = nameEnd;
    f.add();
  }

  /**
   * A kept STACK WIN record: its type and range, and either its line, at file bytes [start, end)
   * with its line end, which the byte reader reads (scan.ts) again for its other fields when a
   * record is made from it ({@link winFields}), or {@link FIELDS_KEPT} and the index of the fields
   * {@link addStackWin} kept.
   */
  addStackWinLine(type: number, rva: number, codeSize: number, line: number, start: number, end: number): void {
    const row = this.winCount++;
    if (type === STACK_WIN_TYPE.FRAME_DATA) {
      this.frameData.push(row);
      this.frameDataRanges.push(rva, codeSize);
    } else this.fpo.push(row);
    const r = this.wins.next;
    r[0] = type;
    r[1] = rva;
    r[2] = codeSize;
    r[3] = line;
    r[4] = start;
    r[5] = end;
    this.wins.add();
  }

  /**
   * A kept STACK WIN record with its fields: its numbers in the record's order (type to
   * has_program), its program's text reference or the allocates_base_pointer flag, its line and
   * the byte offset of the line.
   */
  addStackWin(
    type: number,
    rva: number,
    codeSize: number,
    prolog: number,
    epilog: number,
    params: number,
    savedRegs: number,
    locals: number,
    maxStack: number,
    hasProgram: number,
    programStart: number,
    programEnd: number,
    allocatesBasePointer: boolean,
    line: number,
    offset: number,
  ): void {
    this.keptWins.push([type, rva, codeSize, prolog, epilog, params, savedRegs, locals, maxStack, hasProgram, programStart, programEnd, allocatesBasePointer ? 1 : 0, line, offset]);
    this.addStackWinLine(type, rva, codeSize, line, FIELDS_KEPT, this.keptWins.length - 1);
  }

  /** A STACK CFI INIT record, its rules at text [start, end). */
  addCfiInit(address: number, size: number, start: number, end: number): void {
    if (address < this.lastInitEnd || size <= 0 || address < this.lastInit) this.cfiInitsPlain = false;
    this.lastInit = address;
    if (address + size > this.lastInitEnd) this.lastInitEnd = address + size;
    const rows = this.cfiInits;
    if (this.text.length(start, end) >= LONG_RULES) this.longCfiInits.push(rows.length);
    const r = rows.next;
    r[0] = address;
    r[1] = size;
    r[2] = start;
    r[3] = end;
    r[4] = this.cfiDeltas.length;
    rows.add();
  }

  /** A STACK CFI delta record of the INIT added last (false, and nothing stored, when there is none), its rules at text [start, end). */
  addCfiDelta(address: number, start: number, end: number): boolean {
    if (this.cfiInits.length === 0) return false;
    if (address < this.lastDelta) this.cfiDeltasInOrder = false;
    this.lastDelta = address;
    const rows = this.cfiDeltas;
    if (this.text.length(start, end) >= LONG_RULES) this.longCfiDeltas.push(rows.length);
    const r = rows.next;
    r[0] = address;
    r[1] = start;
    r[2] = end;
    rows.add();
    return true;
  }

  /** The first delta row of INIT row `row`. */
  cfiDeltaFirst(row: number): number {
    return this.cfiInits.get(row, CFI_INIT.firstDelta);
  }

  /** The delta row after the last of INIT row `row` (two numbers, not a pair: a lookup's path makes no array for them). */
  cfiDeltaEnd(row: number): number {
    return row + 1 < this.cfiInits.length ? this.cfiInits.get(row + 1, CFI_INIT.firstDelta) : this.cfiDeltas.length;
  }

  /** The rules of CFI INIT row `row`. */
  cfiInitRules(row: number): string {
    return this.text.text(this.cfiInits.get(row, CFI_INIT.rules), this.cfiInits.get(row, CFI_INIT.rules + 1));
  }

  /** The rules of CFI delta row `row`. */
  cfiDeltaRules(row: number): string {
    return this.text.text(this.cfiDeltas.get(row, CFI_DELTA.rules), this.cfiDeltas.get(row, CFI_DELTA.rules + 1));
  }

  /** The STACK CFI records as objects, in file order; `keep` chooses the INIT rows and delta rows taken (all by default). */
  cfiRecords(keepInit: (row: number) => boolean = () => true, keepDelta: (row: number) => boolean = () => true): BreakpadStackCfi[] {
    const out: BreakpadStackCfi[] = [];
    const inits = this.cfiInits;
    for (let row = 0; row < inits.length; row++) {
      if (!keepInit(row)) continue;
      const first = this.cfiDeltaFirst(row);
      const end = this.cfiDeltaEnd(row);
      const deltas = [];
      for (let d = first; d < end; d++) if (keepDelta(d)) deltas.push({ address: this.cfiDeltas.get(d, CFI_DELTA.address), rules: this.cfiDeltaRules(d) });
      out.push({ address: inits.get(row, CFI_INIT.address), size: inits.get(row, CFI_INIT.size), init: this.cfiInitRules(row), deltas });
    }
    return out;
  }

  /** Checked line-record lines at file offsets [start, end), of the FUNC added last. */
  addLineRun(start: number, end: number): void {
    const runs = this.runs;
    // A run stays inside one region of bytes: lines that follow on in the next region start another.
    if (runs.length > this.lastFuncFirstRun && this.lastRunEnd === start && start !== this.text.lastRegionStart) runs.setLast(end);
    else {
      runs.push(start);
      runs.push(end);
    }
    this.lastRunEnd = end;
  }

  /** Once every record is in: trims the tables and sorts what needs sorting (nothing, for a file that lists its records in order). */
  finish(): void {
    for (const rows of [this.funcs, this.runs, this.publics, this.files, this.wins, this.inlines, this.origins, this.cfiInits, this.cfiDeltas]) rows.finish();
    if (!this.funcsInOrder) this.funcOrder = sortedOrder(this.funcs, FUNC.address);
    if (!this.publicsInOrder) this.publicOrder = sortedOrder(this.publics, PUBLIC.address);
    if (this.filesInOrder) return;
    const first: number[] = [];
    const files = this.files;
    for (const i of sortedOrder(files, FILE.number)) {
      const prev = first[first.length - 1];
      if (prev === undefined || files.get(prev, FILE.number) !== files.get(i, FILE.number)) first.push(i);
    }
    this.fileIndex = Uint32Array.from(first);
  }

  get fileCount(): number {
    return this.fileIndex === undefined ? this.files.length : this.fileIndex.length;
  }

  get stackWinCount(): number {
    return this.wins.length;
  }

  funcName(row: number): string {
    return this.text.text(this.funcs.get(row, FUNC.name), this.funcs.get(row, FUNC.name + 1));
  }

  publicName(row: number): string {
    return this.text.text(this.publics.get(row, PUBLIC.name), this.publics.get(row, PUBLIC.name + 1));
  }

  /** The FUNC row at place `k` in address order. */
  funcRow(k: number): number {
    return this.funcOrder === undefined ? k : this.funcOrder[k]!;
  }

  /** The PUBLIC row at place `k` in address order. */
  publicRow(k: number): number {
    return this.publicOrder === undefined ? k : this.publicOrder[k]!;
  }

  /** `make` of each FUNC in address order (its row, address, size and parameter size): one pass over the table. */
  mapFuncs<T>(make: (row: number, address: number, size: number, paramSize: number) => T): T[] {
    const f = this.funcs;
    const out: T[] = [];
    for (let k = 0; k < f.length; k++) {
      const row = this.funcRow(k);
      out.push(make(row, f.get(row, FUNC.address), f.get(row, FUNC.size), f.get(row, FUNC.paramSize)));
    }
    return out;
  }

  /** `make` of each PUBLIC in address order (its row, address and parameter size): one pass over the table. */
  mapPublics<T>(make: (row: number, address: number, paramSize: number) => T): T[] {
    const p = this.publics;
    const out: T[] = [];
    for (let k = 0; k < p.length; k++) {
      const row = this.publicRow(k);
      out.push(make(row, p.get(row, PUBLIC.address), p.get(row, PUBLIC.paramSize)));
    }
    return out;
  }

  /** A PUBLIC record as an object. */
  publicRecord(row: number): BreakpadPublic {
    const p = this.publics;
    return { address: p.get(row, PUBLIC.address), paramSize: p.get(row, PUBLIC.paramSize), name: this.publicName(row), multiple: p.get(row, PUBLIC.multiple) === 1 };
  }

  /** A FUNC record as an object, its line records read when first asked for. */
  funcRecord(row: number): BreakpadFunc {
    const f = this.funcs;
    return new FuncRecord(f.get(row, FUNC.address), f.get(row, FUNC.size), f.get(row, FUNC.paramSize), this.funcName(row), f.get(row, FUNC.multiple) === 1, this, row);
  }

  /** The line records of FUNC row `row` as (address, size, line, file) quadruples, in file order (read from the file now). */
  lines(row: number): Uint32Array {
    const first = this.funcs.get(row, FUNC.firstRun);
    const last = row + 1 < this.funcs.length ? this.funcs.get(row + 1, FUNC.firstRun) : this.runs.length;
    const values: number[] = [];
    for (let r = first; r < last; r++) {
      const bytes = this.text.bytes(this.runs.get(r, 0), this.runs.get(r, 1));
      decodeLineRun(bytes, 0, bytes.length, values);
    }
    return Uint32Array.from(values);
  }

  /** The FILE row at place `k` in number order. */
  private fileRow(k: number): number {
    return this.fileIndex === undefined ? k : this.fileIndex[k]!;
  }

  /** The name FILE number `n` has, if a FILE record gives it one. */
  fileName(n: number): string | undefined {
    const files = this.files;
    let lo = 0;
    let hi = this.fileCount - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const row = this.fileRow(mid);
      const number = files.get(row, FILE.number);
      if (number < n) lo = mid + 1;
      else if (number > n) hi = mid - 1;
      else return this.text.text(files.get(row, FILE.name), files.get(row, FILE.name + 1));
    }
    return undefined;
  }

  /** FILE number → name, in the order of the FILE records. */
  fileMap(): Map<number, string> {
    const map = new Map<number, string>();
    const files = this.files;
    const rows = Array.from({ length: this.fileCount }, (_, k) => this.fileRow(k)).sort((a, b) => a - b);
    for (const row of rows) map.set(files.get(row, FILE.number), this.text.text(files.get(row, FILE.name), files.get(row, FILE.name + 1)));
    return map;
  }

  /** The kept STACK WIN records of types 0-3 (FPO_DATA's frame kinds), in file order. */
  fpoRows(): readonly number[] {
    return this.fpo;
  }

  /** The kept type-4 (FrameData) STACK WIN records, in file order. */
  frameDataRows(): readonly number[] {
    return this.frameData;
  }

  /** The ranges of {@link frameDataRows}, in the same order: start and size of each, one after the other. */
  frameDataRangeList(): readonly number[] {
    return this.frameDataRanges;
  }

  /** The fields of STACK WIN row `i` (laid out as {@link WIN_FIELDS}), into `into`: those the pass kept, or read from its line now. */
  private winFields(i: number, into: number[]): number[] {
    const w = this.wins;
    const start = w.get(i, WIN.start);
    if (start === FIELDS_KEPT) {
      const fields = this.keptWins[w.get(i, WIN.end)]!;
      for (let c = 0; c < fields.length; c++) into[c] = fields[c]!;
      return into;
    }
    const line = this.text.bytes(start, w.get(i, WIN.end));
    let e = 0;
    while (e < line.length && line[e] !== LF && line[e] !== CR) e++;
    // The parse read the line: it reads now as it read then, unless the file changed since.
    if (stackRecord(line, 0, e) < 0 || stackKind !== STACK_WIN) throw new InputError("io", `the symbol file's STACK WIN line at offset 0x${start.toString(16)} no longer reads as it did (was the file changed?)`, { offset: start });
    const f = FIELDS;
    for (let c = WIN_FIELDS.type; c <= WIN_FIELDS.hasProgram; c++) into[c] = f[c]!;
    into[WIN_FIELDS.program] = start + f[10]!;
    into[WIN_FIELDS.program + 1] = start + f[11]!;
    into[WIN_FIELDS.allocatesBasePointer] = f[9] === 0 && allocatesBasePointer(line, f[10]!, f[11]!) !== 0 ? 1 : 0;
    into[WIN_FIELDS.line] = w.get(i, WIN.line);
    into[WIN_FIELDS.offset] = start;
    return into;
  }

  /** The program of STACK WIN row `i` (one string for each text). */
  private program(r: readonly number[]): string {
    const text = this.text.text(r[WIN_FIELDS.program]!, r[WIN_FIELDS.program + 1]!);
    const known = this.programs.get(text);
    if (known !== undefined) return known;
    this.programs.set(text, text);
    return text;
  }

  /**
   * The sizes and program of the `i`th kept STACK WIN record, in one object used again by the next
   * call: for converting every record of a module without making an object for each first.
   */
  stackWinSizes(i: number): StackWinSizes {
    const r = this.winFields(i, this.winRow);
    const s = this.sizes;
    s.rva = r[WIN_FIELDS.rva]!;
    s.codeSize = r[WIN_FIELDS.codeSize]!;
    s.prologSize = r[WIN_FIELDS.prolog]!;
    s.paramsSize = r[WIN_FIELDS.params]!;
    s.localsSize = r[WIN_FIELDS.locals]!;
    s.savedRegsSize = r[WIN_FIELDS.savedRegs]!;
    s.maxStackSize = r[WIN_FIELDS.maxStack]!;
    s.program = r[WIN_FIELDS.hasProgram] !== 0 ? this.program(r) : undefined;
    return s;
  }

  /** The `i`th kept STACK WIN record as an object; records with the same program share its string. */
  stackWinRecord(i: number): BreakpadStackWin {
    const r = this.winFields(i, []);
    const record: BreakpadStackWin = {
      type: r[WIN_FIELDS.type]!,
      rva: r[WIN_FIELDS.rva]!,
      codeSize: r[WIN_FIELDS.codeSize]!,
      prologSize: r[WIN_FIELDS.prolog]!,
      epilogSize: r[WIN_FIELDS.epilog]!,
      paramsSize: r[WIN_FIELDS.params]!,
      savedRegsSize: r[WIN_FIELDS.savedRegs]!,
      localsSize: r[WIN_FIELDS.locals]!,
      maxStackSize: r[WIN_FIELDS.maxStack]!,
      hasProgram: r[WIN_FIELDS.hasProgram] !== 0,
      line: r[WIN_FIELDS.line]!,
      offset: r[WIN_FIELDS.offset]!,
    };
    if (record.hasProgram) record.program = this.program(r);
    else record.allocatesBasePointer = r[WIN_FIELDS.allocatesBasePointer] === 1;
    return record;
  }
}

/**
 * A FUNC record whose line records stay in the file's bytes, already checked, until `lines` is
 * read: a large .sym holds far more line records than anything else, and most are never looked at.
 */
class FuncRecord implements BreakpadFunc {
  // Private fields are not own enumerable properties: copies and comparisons of a FUNC see its
  // fields and `lines` only.
  readonly #tables: SymTables;
  readonly #row: number;

  constructor(
    readonly address: number,
    readonly size: number,
    readonly paramSize: number,
    readonly name: string,
    readonly multiple: boolean,
    tables: SymTables,
    row: number,
  ) {
    this.#tables = tables;
    this.#row = row;
  }

  get inlines(): InlineRecord[] {
    return this.#tables.funcInlines(this.#row);
  }

  get lines(): BreakpadLine[] {
    const t = this.#tables.lines(this.#row);
    const out: BreakpadLine[] = [];
    for (let i = 0; i < t.length; i += 4) out.push({ address: t[i]!, size: t[i + 1]!, line: t[i + 2]!, file: t[i + 3]! });
    return out;
  }
}

/** Reads checked line-record lines, bytes [from, to) of `bytes`, as address, size, line and file numbers onto `out`. */
function decodeLineRun(bytes: Uint8Array, from: number, to: number, out: number[]): void {
  let i = from;
  while (i < to) {
    for (let field = 0; field < 4; field++) {
      while (bytes[i] === SPACE) i++;
      const base = field < 2 ? 16 : 10;
      let value = 0;
      for (;;) {
        const d = i < to ? HEX_VALUE[bytes[i]!]! : -1;
        if (d < 0) break;
        value = value * base + d;
        i++;
      }
      out.push(value);
    }
    while (i < to && bytes[i] !== LF && bytes[i] !== CR) i++;
    while (i < to && (bytes[i] === LF || bytes[i] === CR)) i++;
  }
}
