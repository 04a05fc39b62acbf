/**
 * Breakpad `.sym` text symbol files (minidump.md §7) and their `STACK WIN` records (x86-fpo.md
 * §5.1). The parser reads MODULE, INFO, FILE, FUNC with its line records, PUBLIC, STACK WIN and
 * STACK CFI records; INLINE, INLINE_ORIGIN and unknown record kinds are counted and skipped, as
 * Breakpad skips them. It runs over plain bytes or text (no Node APIs) and can be fed in chunks.
 *
 * Lines end at LF, CR or CR LF; empty lines are skipped but still counted. Fields are separated by
 * spaces, and the last field of MODULE, FILE, FUNC, PUBLIC, STACK WIN and STACK CFI is the rest of
 * the line. Numbers are strict: hex digits only (no `0x`) where the format says hex, decimal digits
 * only where it says decimal, and at most 2^53 − 1. Every malformed line throws an
 * {@link InputError} whose reason starts with `line N` (1-based) and whose offset is the byte offset
 * of the line's first byte.
 *
 * Error codes: "bad-magic" when the first record is not MODULE, "missing-field" when a record has
 * too few fields, "bad-hex" for a hex field that is not hex, and "bad-value" for everything else
 * (numbers out of range, a STACK WIN type outside 0..4, a bad decimal field, extra fields, a line
 * record before any FUNC).
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";
import type { InputErrorCode } from "../errors.js";
import type { FpoData } from "../model/fpo-data.js";
import type { FrameData } from "../model/frame-data.js";
import type { BreakpadCfiDelta, BreakpadStackCfi } from "../model/stack-cfi.js";

export type { BreakpadCfiDelta, BreakpadStackCfi };

/** The MODULE record: `MODULE <os> <arch> <debug id> <debug file>`. */
export interface BreakpadModule {
  /** `windows`, `Linux`, `mac`, … */
  os: string;
  /** `x86`, `x86_64`, `arm64`, … */
  arch: string;
  /** Symbol-store identifier, e.g. `5A9832E5287241C1838ED98914E9B7FF1` (minidump.md §8). */
  debugId: string;
  /** The debug file's name as written, e.g. `test_app.pdb`. */
  debugFile: string;
}

/** `INFO CODE_ID <id> [<code file>]`: the executable's identifier (for PE: timestamp and image size). */
export interface BreakpadCodeId {
  id: string;
  file?: string;
}

/** A line record `<address> <size> <line> <file number>` of a FUNC. */
export interface BreakpadLine {
  address: number;
  size: number;
  /** Source line (decimal in the file). */
  line: number;
  /** FILE number (decimal in the file). */
  file: number;
}

/** `FUNC [m] <address> <size> <param size> <name>` with the line records that follow it. */
export interface BreakpadFunc {
  /** Module-relative address. */
  address: number;
  size: number;
  /** Bytes of stack parameters. */
  paramSize: number;
  name: string;
  /** `m`: several symbols share this code (identical-code folding). */
  multiple: boolean;
  /** Line records in file order (made from a packed table when read). */
  readonly lines: BreakpadLine[];
}

/**
 * A FUNC record whose line records are kept as the text they were read from, already checked,
 * and decoded into a packed table (four u32 each: address, size, line, file) when `lines` is
 * first read: a large .sym holds far more line records than anything else, most of them are
 * never looked at, and objects per line would cost several times the file's size.
 */
class FuncRecord implements BreakpadFunc {
  // The text and the table are not part of the record: private fields are not own enumerable
  // properties, so copies and comparisons of a FUNC see its fields and `lines` only.
  /** Runs of whole, valid line-record lines: text, start, end, text, start, end, ... */
  #runs: (string | number)[] | undefined;
  /** The decoded line records, once `lines` has been read. */
  #table: Uint32Array | undefined;

  constructor(
    readonly address: number,
    readonly size: number,
    readonly paramSize: number,
    readonly name: string,
    readonly multiple: boolean,
  ) {}

  get lines(): BreakpadLine[] {
    const t = (this.#table ??= decodeLineRuns(this.#runs));
    this.#runs = undefined;
    const out: BreakpadLine[] = [];
    for (let i = 0; i < t.length; i += 4) out.push({ address: t[i]!, size: t[i + 1]!, line: t[i + 2]!, file: t[i + 3]! });
    return out;
  }

  /** Adds the line records of text [start, end): whole lines that {@link BreakpadSymParser} has checked. */
  static addLines(f: FuncRecord, text: string, start: number, end: number): void {
    const runs = (f.#runs ??= []);
    const last = runs.length - 1;
    if (last > 0 && runs[last] === start && runs[last - 2] === text) runs[last] = end;
    else runs.push(text, start, end);
  }
}

const NO_LINES = new Uint32Array(0);

/** Decodes checked line-record text (see FuncRecord) into address, size, line, file quadruples. */
function decodeLineRuns(runs: readonly (string | number)[] | undefined): Uint32Array {
  if (runs === undefined) return NO_LINES;
  const values: number[] = [];
  for (let r = 0; r < runs.length; r += 3) {
    const text = runs[r] as string;
    const end = runs[r + 2] as number;
    let i = runs[r + 1] as number;
    while (i < end) {
      for (let field = 0; field < 4; field++) {
        while (text.charCodeAt(i) === SPACE) i++;
        const base = field < 2 ? 16 : 10;
        let value = 0;
        for (;;) {
          const d = HEX_VALUE[text.charCodeAt(i) & 0xff]!;
          if (d < 0 || i >= end) break;
          value = value * base + d;
          i++;
        }
        values.push(value);
      }
      while (i < end && text.charCodeAt(i) !== LF && text.charCodeAt(i) !== CR) i++;
      while (i < end && (text.charCodeAt(i) === LF || text.charCodeAt(i) === CR)) i++;
    }
  }
  return Uint32Array.from(values);
}

/** `PUBLIC [m] <address> <param size> <name>`. */
export interface BreakpadPublic {
  /** Module-relative address. */
  address: number;
  /** Bytes of stack parameters. */
  paramSize: number;
  name: string;
  /** `m`: several symbols share this address. */
  multiple: boolean;
}

/** STACK WIN record types (Breakpad's `StackInfoTypes`); only FPO and FRAME_DATA are looked up (x86-fpo.md §5.1). */
export const STACK_WIN_TYPE = {
  /** FPO_DATA ("old FPO"). */
  FPO: 0,
  TRAP: 1,
  TSS: 2,
  STANDARD: 3,
  /** FrameData with a program string ("new FPO"). */
  FRAME_DATA: 4,
} as const;

/**
 * `STACK WIN <type> <rva> <code_size> <prolog> <epilog> <params> <saved_regs> <locals> <max_stack>
 * <has_program> <program | allocates_base_pointer>`; all sizes in bytes (x86-fpo.md §5.1).
 */
export interface BreakpadStackWin {
  /** 0..4, see {@link STACK_WIN_TYPE}. */
  type: number;
  rva: number;
  codeSize: number;
  prologSize: number;
  epilogSize: number;
  paramsSize: number;
  savedRegsSize: number;
  localsSize: number;
  maxStackSize: number;
  /** has_program ≠ 0: the last field is a program string. */
  hasProgram: boolean;
  /** The program string, when hasProgram. */
  program?: string;
  /** The allocates_base_pointer flag (FPO_DATA's fUseBP), when not hasProgram. */
  allocatesBasePointer?: boolean;
  /** 1-based line number of the record, for messages. */
  line: number;
  /** Byte offset of the record's line, for messages. */
  offset: number;
}

/** Everything a `.sym` file holds that the walker and the symbolizer use. */
export interface BreakpadSymbols {
  module: BreakpadModule;
  /** The text after `INFO ` of every INFO record, in file order. */
  info: string[];
  /** The first `INFO CODE_ID` record, when there is one. */
  codeId?: BreakpadCodeId;
  /** FILE number → name; a repeated number keeps its first name (as Breakpad does). */
  files: Map<number, string>;
  /** FUNC records sorted by address (file order among equal addresses). */
  functions: BreakpadFunc[];
  /** PUBLIC records sorted by address (file order among equal addresses). */
  publics: BreakpadPublic[];
  /** STACK WIN records that Breakpad's per-type contained range map stores, in file order. */
  stackWin: BreakpadStackWin[];
  /** STACK WIN records dropped by the contained-range rule: zero size, partial overlap or a repeated range. */
  droppedStackWin: number;
  /** STACK CFI INIT ranges in file order. */
  stackCfi: BreakpadStackCfi[];
  /** INLINE records (skipped). */
  inlineCount: number;
  /** INLINE_ORIGIN records (skipped). */
  inlineOriginCount: number;
  /** Records of an unknown kind, including STACK records other than WIN and CFI (skipped). */
  unknownCount: number;
  /** With `skipMalformed`: lines that could not be parsed and were left out. */
  malformedCount: number;
  /** With `skipMalformed`: the first of those, with its line and byte offset. */
  firstMalformed?: InputError;
  /** With `skipMalformed`: reading stopped after {@link MAX_MALFORMED_LINES} malformed lines. */
  truncated: boolean;
}

/** Options of {@link BreakpadSymParser}. */
export interface BreakpadSymOptions {
  /**
   * Leave malformed lines out and count them instead of throwing, as Breakpad's loader does
   * (minidump.md §7 "Errors"): the module's symbols are then "corrupt" but usable. A file whose
   * first record is not MODULE still throws.
   */
  skipMalformed?: boolean;
}

/** Breakpad stops reading a symbol file after more than this many malformed lines. */
export const MAX_MALFORMED_LINES = 100;

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const HEX_DIGITS = /^[0-9A-Fa-f]+$/;
const DEC_DIGITS = /^[0-9]+$/;
const U32_MAX = 0xffff_ffff;


/** Where a line is, for errors. */
interface LineSite {
  line: number;
  offset: number;
}

function fail(code: InputErrorCode, site: LineSite, message: string): never {
  throw new InputError(code, `line ${site.line}: ${message}`, { offset: site.offset });
}

/** A line's text shortened for a message. */
function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Reads the space-separated fields of one line, left to right. */
class Fields {
  private pos: number;

  constructor(
    private readonly text: string,
    start: number,
    private readonly record: string,
    private readonly site: LineSite,
  ) {
    this.pos = start;
  }

  private skipSpaces(): void {
    while (this.pos < this.text.length && this.text.charCodeAt(this.pos) === SPACE) this.pos++;
  }

  /** A reader for the rest of the line, naming `record` in its messages. */
  sub(record: string): Fields {
    return new Fields(this.text, this.pos, record, this.site);
  }

  /** True when only spaces are left. */
  atEnd(): boolean {
    this.skipSpaces();
    return this.pos >= this.text.length;
  }

  /** The next field; a missing field is a "missing-field" error naming `what`. */
  next(what: string): string {
    this.skipSpaces();
    if (this.pos >= this.text.length) fail("missing-field", this.site, `${this.record} has no ${what}`);
    const start = this.pos;
    while (this.pos < this.text.length && this.text.charCodeAt(this.pos) !== SPACE) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /** The rest of the line after the spaces that follow the previous field (kept as written). */
  rest(what: string): string {
    this.skipSpaces();
    if (this.pos >= this.text.length) fail("missing-field", this.site, `${this.record} has no ${what}`);
    const value = this.text.slice(this.pos);
    this.pos = this.text.length;
    return value;
  }

  /** Fails on anything but spaces after the last field. */
  end(): void {
    if (!this.atEnd()) fail("bad-value", this.site, `${this.record} has an unexpected extra field "${clip(this.text.slice(this.pos))}"`);
  }

  /** The next field as strict hex no larger than `max`. */
  hex(what: string, max = Number.MAX_SAFE_INTEGER): number {
    return this.hexValue(this.next(what), what, max);
  }

  /** Parses `field` as strict hex (digits only, no 0x) no larger than `max`. */
  hexValue(field: string, what: string, max = Number.MAX_SAFE_INTEGER): number {
    if (!HEX_DIGITS.test(field)) fail("bad-hex", this.site, `${this.record} ${what} "${clip(field)}" is not a hex number (hex digits only, no 0x)`);
    const value = parseInt(field, 16);
    if (!Number.isSafeInteger(value) || value > max) {
      const limit = max === Number.MAX_SAFE_INTEGER ? "2^53 - 1" : hex(max);
      fail("bad-value", this.site, `${this.record} ${what} ${clip(field)} is larger than ${limit}`);
    }
    return value;
  }

  /** The next field as a decimal number (digits only). */
  dec(what: string): number {
    const field = this.next(what);
    if (!DEC_DIGITS.test(field)) fail("bad-value", this.site, `${this.record} ${what} "${clip(field)}" is not a decimal number`);
    const value = parseInt(field, 10);
    if (!Number.isSafeInteger(value)) fail("bad-value", this.site, `${this.record} ${what} ${clip(field)} is larger than 2^53 - 1`);
    return value;
  }
}

/** One node of a contained range map: an inclusive range and the ranges stored inside it. */
interface RangeNode {
  base: number;
  high: number;
  /** Disjoint children sorted by high; null until one is stored (most ranges have none). */
  children: RangeNode[] | null;
}

/** Index of the first node whose high is ≥ `address` (std::map::lower_bound on the high key). */
function lowerBound(nodes: readonly RangeNode[], address: number): number {
  let lo = 0;
  let hi = nodes.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (nodes[mid]!.high < address) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Breakpad's `ContainedRangeMap::StoreRange` without equal ranges (x86-fpo.md §5.1): ranges nest
 * or are disjoint. A range that is empty, partly overlaps a stored range, or repeats a stored
 * range exactly is refused.
 */
class ContainedRanges {
  private readonly root: RangeNode[] = [];

  /** Stores [base, base + size) and reports whether it was stored. */
  store(base: number, size: number): boolean {
    if (size <= 0) return false;
    const high = base + size - 1;
    let children = this.root;
    for (;;) {
      // Records usually come sorted: past every stored range, a new last range at this level;
      // inside the last one, a level down (the searches below would find the same).
      const last = children[children.length - 1];
      if (last === undefined || base > last.high) {
        children.push({ base, high, children: null });
        return true;
      }
      if (base >= last.base && high <= last.high) {
        if (base === last.base && high === last.high) return false;
        children = last.children ??= [];
        continue;
      }
      const ib = lowerBound(children, base);
      const ih = lowerBound(children, high);
      const atBase = children[ib];
      if (ib === ih && atBase !== undefined && base >= atBase.base) {
        // Inside an existing range: an identical range is refused, a smaller one goes a level down.
        if (atBase.base === base && atBase.high === high) return false;
        children = atBase.children ??= [];
        continue;
      }
      const atHigh = children[ih];
      const containsHigh = atHigh !== undefined && high >= atHigh.base;
      // Ranges the new one reaches into must lie wholly inside it.
      if ((atBase !== undefined && base > atBase.base) || (containsHigh && high < atHigh.high)) return false;
      const stop = containsHigh ? ih + 1 : ih;
      const node: RangeNode = { base, high, children: stop > ib ? children.slice(ib, stop) : null };
      children.splice(ib, stop - ib, node);
      return true;
    }
  }
}

/** Each character code's value as a hex digit, or −1 (codes up to 0xff). */
const HEX_VALUE = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX_VALUE[0x30 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX_VALUE[0x41 + i] = 10 + i;
  HEX_VALUE[0x61 + i] = 10 + i;
}

// The records a .sym file is made of, each a whole line with its line end, as parseLine accepts
// them (sticky: matched where lastIndex is). Hex fields have at most 13 digits (below 2^53), or 8
// where a record keeps 32 bits; decimal fields at most 15 digits, or 9 for a line record's line
// and file numbers; the last field is the rest of the line from its first non-space character. A
// line that matches none of them (longer fields with leading zeros, a malformed line, another
// kind of record) is read by parseLine, which gives the same values or the error.
const EOL = "(?:\\r\\n|\\n|\\r)";
const HEX13 = "([0-9A-Fa-f]{1,13})";
const HEX8 = "([0-9A-Fa-f]{1,8})";
const REST = "([^ \\r\\n][^\\r\\n]*)";
const LINE_RECORD = new RegExp(`[0-9A-Fa-f]{1,8} +[0-9A-Fa-f]{1,8} +[0-9]{1,9} +[0-9]{1,9} *${EOL}`, "y");
const FILE_RECORD = new RegExp(`FILE +([0-9]{1,15}) +${REST}${EOL}`, "y");
const FUNC_RECORD = new RegExp(`FUNC +(?:(m) +)?${HEX13} +${HEX13} +${HEX13} +${REST}${EOL}`, "y");
const PUBLIC_RECORD = new RegExp(`PUBLIC +(?:(m) +)?${HEX13} +${HEX13} +${REST}${EOL}`, "y");
const STACK_WIN_RECORD = new RegExp(`STACK +WIN +${HEX13} +${HEX13} +${HEX13}${(" +" + HEX8).repeat(7)} +${REST}${EOL}`, "y");
const CFI_INIT_RECORD = new RegExp(`STACK +CFI +INIT +${HEX13} +${HEX13} +${REST}${EOL}`, "y");
const CFI_DELTA_RECORD = new RegExp(`STACK +CFI +${HEX13} +${REST}${EOL}`, "y");
const INLINE_RECORD = new RegExp(`INLINE(?: [^\\r\\n]*)?${EOL}`, "y");
const INLINE_ORIGIN_RECORD = new RegExp(`INLINE_ORIGIN(?: [^\\r\\n]*)?${EOL}`, "y");
/** The rest of a STACK WIN line without a program: the allocates_base_pointer flag, then nothing but spaces. */
const ALLOCATES_BASE_POINTER = /^([0-9A-Fa-f]{1,8}) *$/;
/** The next character that is not ASCII (its UTF-8 form is longer than one byte). */
const NON_ASCII = /[^\x00-\x7f]/g;

/**
 * The streaming `.sym` parser: `push` chunks of bytes (UTF-8) or text in order, then `finish`.
 * A chunk may end anywhere, including inside a line or a UTF-8 sequence. For example, in Node:
 * `for await (const chunk of createReadStream(path)) parser.push(chunk)`.
 */
export class BreakpadSymParser {
  constructor(private readonly options: BreakpadSymOptions = {}) {}

  private malformedCount = 0;
  private firstMalformed: InputError | undefined;
  private truncated = false;

  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  private readonly encoder = new TextEncoder();
  /** Bytes of the line being read, from earlier chunks. */
  private partial: Uint8Array[] = [];
  private partialLength = 0;
  /** Byte offset of the first byte not yet parsed (the start of the line being read). */
  private regionStart = 0;
  /** Lines ended so far. */
  private lineCount = 0;
  /** The last line ended with CR, so an LF right after it belongs to the same line end. */
  private afterCR = false;
  /** A high surrogate that ended a text chunk, waiting for its low half. */
  private heldSurrogate = "";
  private finished = false;

  private moduleRecord: BreakpadModule | undefined;
  private readonly info: string[] = [];
  private codeId: BreakpadCodeId | undefined;
  private readonly files = new Map<number, string>();
  private readonly functions: BreakpadFunc[] = [];
  private readonly publics: BreakpadPublic[] = [];
  private readonly stackWin: BreakpadStackWin[] = [];
  private droppedStackWin = 0;
  private readonly stackWinRanges: ContainedRanges[] = [0, 1, 2, 3, 4].map(() => new ContainedRanges());
  private readonly stackCfi: BreakpadStackCfi[] = [];
  private inlineCount = 0;
  private inlineOriginCount = 0;
  private unknownCount = 0;
  /** The FUNC that line records attach to; a PUBLIC record clears it, as in Breakpad. */
  private currentFunc: FuncRecord | undefined;

  /** The MODULE record, once the first line has been read. */
  get module(): BreakpadModule | undefined {
    return this.moduleRecord;
  }

  /**
   * Reads the next chunk; complete lines are parsed now, and a malformed one throws
   * {@link InputError}, after which the parser accepts nothing more.
   */
  push(chunk: string | Uint8Array): void {
    if (this.finished) throw new Error("BreakpadSymParser: push() after finish() or after an error");
    try {
      this.pushChunk(chunk);
    } catch (e) {
      this.finished = true;
      throw e;
    }
  }

  private pushChunk(chunk: string | Uint8Array): void {
    if (typeof chunk === "string") {
      let text = this.heldSurrogate + chunk;
      this.heldSurrogate = "";
      const last = text.charCodeAt(text.length - 1);
      if (last >= 0xd800 && last <= 0xdbff) {
        this.heldSurrogate = text.slice(-1);
        text = text.slice(0, -1);
      }
      this.scan(this.encoder.encode(text));
    } else {
      this.releaseSurrogate();
      this.scan(chunk);
    }
  }

  /** Parses the last line and returns the symbols; a file without a MODULE record throws "bad-magic". */
  finish(): BreakpadSymbols {
    if (this.finished) throw new Error("BreakpadSymParser: finish() after finish() or after an error");
    this.finished = true;
    this.releaseSurrogate();
    if (this.partial.length > 0) this.parseRegion(this.takePartial(new Uint8Array(0)));
    const module = this.moduleRecord;
    if (module === undefined) {
      fail("bad-magic", { line: this.lineCount + 1, offset: this.regionStart }, "the file ends before its MODULE record (a .sym file starts with MODULE)");
    }
    const out: BreakpadSymbols = {
      module,
      info: this.info,
      files: this.files,
      functions: sortedByAddress(this.functions),
      publics: sortedByAddress(this.publics),
      stackWin: this.stackWin,
      droppedStackWin: this.droppedStackWin,
      stackCfi: this.stackCfi,
      inlineCount: this.inlineCount,
      inlineOriginCount: this.inlineOriginCount,
      unknownCount: this.unknownCount,
      malformedCount: this.malformedCount,
      truncated: this.truncated,
    };
    if (this.firstMalformed !== undefined) out.firstMalformed = this.firstMalformed;
    if (this.codeId !== undefined) out.codeId = this.codeId;
    return out;
  }

  /** A high surrogate with no low half encodes as U+FFFD. */
  private releaseSurrogate(): void {
    if (this.heldSurrogate === "") return;
    const held = this.heldSurrogate;
    this.heldSurrogate = "";
    this.scan(this.encoder.encode(held));
  }

  /** Cuts `bytes` after its last line end and parses the complete lines; the rest waits for more. */
  private scan(bytes: Uint8Array): void {
    let cut = bytes.length;
    while (cut > 0 && bytes[cut - 1] !== LF && bytes[cut - 1] !== CR) cut--;
    if (cut > 0) this.parseRegion(this.takePartial(bytes.subarray(0, cut)));
    if (cut < bytes.length) {
      const rest = bytes.slice(cut);
      this.partial.push(rest);
      this.partialLength += rest.length;
    }
  }

  /** The held bytes followed by `tail`, as one array. */
  private takePartial(tail: Uint8Array): Uint8Array {
    if (this.partial.length === 0) return tail;
    const out = new Uint8Array(this.partialLength + tail.length);
    let at = 0;
    for (const p of this.partial) {
      out.set(p, at);
      at += p.length;
    }
    out.set(tail, at);
    this.partial = [];
    this.partialLength = 0;
    return out;
  }

  /**
   * Parses whole lines: `region` starts at a line start and ends after a line end (or at the end of
   * the file). It is decoded at once; CR and LF bytes are never part of a UTF-8 sequence and each
   * becomes one character, so splitting the bytes (for offsets) and the text (for content) at the
   * same CR, LF and CR LF ends gives the same lines. Byte offsets follow character offsets at a
   * fixed distance until a line holds a character outside ASCII, after which the distance is
   * measured again on the bytes.
   */
  private parseRegion(region: Uint8Array): void {
    const text = this.decoder.decode(region);
    const n = text.length;
    let c = 0;
    if (this.afterCR && region[0] === LF) c = 1;
    /** Byte offset minus character offset at `c`. */
    let delta = 0;
    NON_ASCII.lastIndex = c;
    let nonAscii = NON_ASCII.test(text) ? NON_ASCII.lastIndex - 1 : Infinity;
    let nextLF = -1;
    let nextCR = -1;
    while (c < n) {
      this.lineCount++;
      const offset = this.regionStart + c + delta;
      let end = this.moduleRecord === undefined || this.truncated ? -1 : this.parseRecord(text, c, offset);
      if (end < 0) {
        if (nextLF < c) {
          nextLF = text.indexOf("\n", c);
          if (nextLF < 0) nextLF = n;
        }
        if (nextCR < c) {
          nextCR = text.indexOf("\r", c);
          if (nextCR < 0) nextCR = n;
        }
        const ce = nextLF < nextCR ? nextLF : nextCR;
        if (ce > c) {
          let line = text.slice(c, ce);
          if (this.lineCount === 1 && line.charCodeAt(0) === 0xfeff) line = line.slice(1);
          this.parseOrSkip(line, { line: this.lineCount, offset });
        }
        end = ce + (text.charCodeAt(ce) === CR && text.charCodeAt(ce + 1) === LF ? 2 : 1);
      }
      if (end > nonAscii) {
        // The line held characters of several bytes: find its end in the bytes.
        let be = c + delta;
        while (be < region.length && region[be] !== LF && region[be] !== CR) be++;
        be += region[be] === CR && region[be + 1] === LF ? 2 : 1;
        delta = be - end;
        NON_ASCII.lastIndex = end;
        nonAscii = NON_ASCII.test(text) ? NON_ASCII.lastIndex - 1 : Infinity;
      }
      c = end;
    }
    this.afterCR = region[region.length - 1] === CR;
    this.regionStart += region.length;
  }

  /**
   * Reads the record on the line at text index `c` when it is one of the common kinds and fits
   * its pattern (see LINE_RECORD and the others), exactly as {@link parseLine} would; returns the
   * index after the line's end, or −1, having changed nothing, for parseLine to read the line.
   */
  private parseRecord(text: string, c: number, offset: number): number {
    const first = text.charCodeAt(c);
    const func = this.currentFunc;
    if (func !== undefined && first < 0x80 && HEX_VALUE[first]! >= 0) {
      // A FUNC's line records come in a run: take all of them (one pattern match per line).
      LINE_RECORD.lastIndex = c;
      let end = c;
      while (LINE_RECORD.test(text)) {
        if (end > c) this.lineCount++;
        end = LINE_RECORD.lastIndex;
      }
      if (end > c) {
        FuncRecord.addLines(func, text, c, end);
        return end;
      }
    }
    switch (first) {
      case 0x46 /* F */: {
        FILE_RECORD.lastIndex = c;
        let m = FILE_RECORD.exec(text);
        if (m !== null) {
          const id = Number(m[1]!);
          if (!this.files.has(id)) this.files.set(id, m[2]!);
          return FILE_RECORD.lastIndex;
        }
        FUNC_RECORD.lastIndex = c;
        m = FUNC_RECORD.exec(text);
        if (m === null) return -1;
        const record = new FuncRecord(parseInt(m[2]!, 16), parseInt(m[3]!, 16), parseInt(m[4]!, 16), m[5]!, m[1] !== undefined);
        this.functions.push(record);
        this.currentFunc = record;
        return FUNC_RECORD.lastIndex;
      }
      case 0x50 /* P */: {
        PUBLIC_RECORD.lastIndex = c;
        const m = PUBLIC_RECORD.exec(text);
        if (m === null) return -1;
        this.publics.push({ address: parseInt(m[2]!, 16), paramSize: parseInt(m[3]!, 16), name: m[4]!, multiple: m[1] !== undefined });
        this.currentFunc = undefined;
        return PUBLIC_RECORD.lastIndex;
      }
      case 0x53 /* S */:
        return this.parseStackRecord(text, c, offset);
      case 0x49 /* I */:
        INLINE_RECORD.lastIndex = c;
        if (INLINE_RECORD.test(text)) {
          this.inlineCount++;
          return INLINE_RECORD.lastIndex;
        }
        INLINE_ORIGIN_RECORD.lastIndex = c;
        if (INLINE_ORIGIN_RECORD.test(text)) {
          this.inlineOriginCount++;
          return INLINE_ORIGIN_RECORD.lastIndex;
        }
        return -1;
      default:
        return -1;
    }
  }

  /** {@link parseRecord} for STACK WIN, STACK CFI INIT and STACK CFI delta lines. */
  private parseStackRecord(text: string, c: number, offset: number): number {
    STACK_WIN_RECORD.lastIndex = c;
    let m = STACK_WIN_RECORD.exec(text);
    if (m !== null) {
      const type = parseInt(m[1]!, 16);
      const rva = parseInt(m[2]!, 16);
      const codeSize = parseInt(m[3]!, 16);
      if (type > STACK_WIN_TYPE.FRAME_DATA || !Number.isSafeInteger(rva + codeSize)) return -1;
      const record: BreakpadStackWin = {
        type,
        rva,
        codeSize,
        prologSize: parseInt(m[4]!, 16),
        epilogSize: parseInt(m[5]!, 16),
        paramsSize: parseInt(m[6]!, 16),
        savedRegsSize: parseInt(m[7]!, 16),
        localsSize: parseInt(m[8]!, 16),
        maxStackSize: parseInt(m[9]!, 16),
        hasProgram: parseInt(m[10]!, 16) !== 0,
        line: this.lineCount,
        offset,
      };
      if (record.hasProgram) record.program = m[11]!;
      else {
        const flag = ALLOCATES_BASE_POINTER.exec(m[11]!);
        if (flag === null) return -1;
        record.allocatesBasePointer = parseInt(flag[1]!, 16) !== 0;
      }
      if (this.stackWinRanges[type]!.store(rva, codeSize)) this.stackWin.push(record);
      else this.droppedStackWin++;
      return STACK_WIN_RECORD.lastIndex;
    }
    CFI_INIT_RECORD.lastIndex = c;
    m = CFI_INIT_RECORD.exec(text);
    if (m !== null) {
      this.stackCfi.push({ address: parseInt(m[1]!, 16), size: parseInt(m[2]!, 16), init: m[3]!, deltas: [] });
      return CFI_INIT_RECORD.lastIndex;
    }
    CFI_DELTA_RECORD.lastIndex = c;
    m = CFI_DELTA_RECORD.exec(text);
    const range = this.stackCfi[this.stackCfi.length - 1];
    if (m === null || range === undefined) return -1;
    range.deltas.push({ address: parseInt(m[1]!, 16), rules: m[2]! });
    return CFI_DELTA_RECORD.lastIndex;
  }

  /** Parses a line; with `skipMalformed`, a malformed record after MODULE is counted and left out. */
  private parseOrSkip(text: string, site: LineSite): void {
    if (this.truncated) return;
    if (this.options.skipMalformed !== true || this.moduleRecord === undefined) {
      this.parseLine(text, site);
      return;
    }
    try {
      this.parseLine(text, site);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      this.malformedCount++;
      this.firstMalformed ??= e;
      if (this.malformedCount > MAX_MALFORMED_LINES) this.truncated = true;
    }
  }

  private parseLine(text: string, site: LineSite): void {
    const space = text.indexOf(" ");
    const kind = space < 0 ? text : text.slice(0, space);
    if (this.moduleRecord === undefined) {
      if (kind !== "MODULE") fail("bad-magic", site, `a .sym file starts with a MODULE record, not "${clip(text)}"`);
      this.parseModule(new Fields(text, kind.length, "MODULE", site), site);
      return;
    }
    switch (kind) {
      case "FUNC":
        this.parseFunc(new Fields(text, kind.length, "FUNC", site));
        return;
      case "PUBLIC":
        this.parsePublic(new Fields(text, kind.length, "PUBLIC", site));
        return;
      case "FILE":
        this.parseFile(new Fields(text, kind.length, "FILE", site));
        return;
      case "STACK":
        this.parseStack(new Fields(text, kind.length, "STACK", site), site);
        return;
      case "INFO":
        this.parseInfo(new Fields(text, kind.length, "INFO", site), site);
        return;
      case "INLINE":
        this.inlineCount++;
        return;
      case "INLINE_ORIGIN":
        this.inlineOriginCount++;
        return;
      case "MODULE":
        fail("bad-value", site, "a second MODULE record (a .sym file has one, on its first line)");
      default:
        if (HEX_DIGITS.test(kind)) this.parseLineRecord(new Fields(text, 0, "line record", site), site, text);
        else this.unknownCount++;
    }
  }

  private parseModule(f: Fields, site: LineSite): void {
    const os = f.next("os");
    const arch = f.next("arch");
    const debugId = f.next("debug id");
    if (!HEX_DIGITS.test(debugId)) fail("bad-hex", site, `MODULE debug id "${clip(debugId)}" is not hex`);
    const debugFile = f.rest("debug file name");
    this.moduleRecord = { os, arch, debugId, debugFile };
  }

  private parseInfo(f: Fields, site: LineSite): void {
    const text = f.rest("text");
    this.info.push(text);
    const c = new Fields(text, 0, "INFO CODE_ID", site);
    if (c.next("kind") !== "CODE_ID" || this.codeId !== undefined) return;
    const codeId: BreakpadCodeId = { id: c.next("id") };
    if (!c.atEnd()) codeId.file = c.rest("code file");
    this.codeId = codeId;
  }

  private parseFile(f: Fields): void {
    const id = f.dec("number");
    const name = f.rest("name");
    if (!this.files.has(id)) this.files.set(id, name);
  }

  private parseFunc(f: Fields): void {
    let first = f.next("address");
    const multiple = first === "m";
    if (multiple) first = f.next("address");
    const address = f.hexValue(first, "address");
    const size = f.hex("size");
    const paramSize = f.hex("parameter size");
    const name = f.rest("name");
    const func = new FuncRecord(address, size, paramSize, name, multiple);
    this.functions.push(func);
    this.currentFunc = func;
  }

  private parseLineRecord(f: Fields, site: LineSite, text: string): void {
    const func = this.currentFunc;
    if (func === undefined) {
      fail("bad-value", site, "a line record must follow a FUNC record (there is none before it, or a PUBLIC came between)");
    }
    const address = f.hex("address");
    const size = f.hex("size");
    const line = f.dec("line number");
    const file = f.dec("file number");
    f.end();
    if (address > 0xffff_ffff || size > 0xffff_ffff || line > 0xffff_ffff || file > 0xffff_ffff) {
      fail("bad-value", site, "a line record's address, size, line and file number must each fit in 32 bits");
    }
    FuncRecord.addLines(func, text, 0, text.length);
  }

  private parsePublic(f: Fields): void {
    let first = f.next("address");
    const multiple = first === "m";
    if (multiple) first = f.next("address");
    const address = f.hexValue(first, "address");
    const paramSize = f.hex("parameter size");
    const name = f.rest("name");
    this.publics.push({ address, paramSize, name, multiple });
    this.currentFunc = undefined;
  }

  private parseStack(f: Fields, site: LineSite): void {
    const platform = f.atEnd() ? "" : f.next("kind");
    if (platform === "WIN") this.parseStackWin(f.sub("STACK WIN"), site);
    else if (platform === "CFI") this.parseStackCfi(f.sub("STACK CFI"), site);
    else this.unknownCount++;
  }

  private parseStackWin(f: Fields, site: LineSite): void {
    const type = f.hex("type");
    if (type > STACK_WIN_TYPE.FRAME_DATA) fail("bad-value", site, `STACK WIN type ${hex(type)} is not 0..4`);
    const rva = f.hex("rva");
    const codeSize = f.hex("code_size");
    if (!Number.isSafeInteger(rva + codeSize)) fail("bad-value", site, `STACK WIN rva + code_size is larger than 2^53 - 1`);
    const record: BreakpadStackWin = {
      type,
      rva,
      codeSize,
      prologSize: f.hex("prolog size", U32_MAX),
      epilogSize: f.hex("epilog size", U32_MAX),
      paramsSize: f.hex("parameter size", U32_MAX),
      savedRegsSize: f.hex("saved register size", U32_MAX),
      localsSize: f.hex("locals size", U32_MAX),
      maxStackSize: f.hex("max stack size", U32_MAX),
      hasProgram: f.hex("has_program flag", U32_MAX) !== 0,
      line: site.line,
      offset: site.offset,
    };
    if (record.hasProgram) {
      record.program = f.rest("program string");
    } else {
      record.allocatesBasePointer = f.hex("allocates_base_pointer flag", U32_MAX) !== 0;
      f.end();
    }
    if (this.stackWinRanges[type]!.store(rva, codeSize)) this.stackWin.push(record);
    else this.droppedStackWin++;
  }

  private parseStackCfi(f: Fields, site: LineSite): void {
    const first = f.next("address");
    if (first === "INIT") {
      const address = f.hex("address");
      const size = f.hex("size");
      const init = f.rest("rules");
      this.stackCfi.push({ address, size, init, deltas: [] });
      return;
    }
    const address = f.hexValue(first, "address");
    const rules = f.rest("rules");
    const range = this.stackCfi[this.stackCfi.length - 1];
    if (range === undefined) fail("bad-value", site, "a STACK CFI delta record must follow a STACK CFI INIT record");
    range.deltas.push({ address, rules });
  }
}

/** `records` sorted by address, file order kept among equal addresses (a file usually lists them in order already). */
function sortedByAddress<T extends { address: number }>(records: T[]): T[] {
  for (let i = 1; i < records.length; i++) {
    if (records[i]!.address < records[i - 1]!.address) return records.sort((a, b) => a.address - b.address);
  }
  return records;
}

/** Parses a whole `.sym` file given as UTF-8 bytes or as text; throws {@link InputError} on a malformed line. */
export function parseBreakpadSym(input: Uint8Array | string, options: BreakpadSymOptions = {}): BreakpadSymbols {
  const parser = new BreakpadSymParser(options);
  parser.push(input);
  return parser.finish();
}

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
  const out: FpoData[] = [];
  // Types 0-3 are FPO_DATA's frame kinds (FRAME_FPO, FRAME_TRAP, FRAME_TSS, FRAME_NONFPO).
  for (const r of records.filter((x) => x.type <= STACK_WIN_TYPE.STANDARD).sort(byStartOuterFirst)) {
    if (r.rva > U32_MAX || r.codeSize > U32_MAX) conversionError(r, "the range does not fit FPO_DATA's 32-bit start and size");
    if (r.localsSize % 4 !== 0) conversionError(r, `locals size ${hex(r.localsSize)} is not a multiple of 4`);
    if (r.paramsSize % 4 !== 0 || r.paramsSize / 4 > 0xffff) {
      conversionError(r, `parameter size ${hex(r.paramsSize)} is not 4 × 0..0xffff (FPO_DATA.cdwParams has 16 bits)`);
    }
    if (r.savedRegsSize % 4 !== 0 || r.savedRegsSize / 4 > 7) {
      conversionError(r, `saved register size ${hex(r.savedRegsSize)} is not 4 × 0..7 (FPO_DATA.cbRegs has 3 bits)`);
    }
    if (r.prologSize > 0xff) conversionError(r, `prolog size ${hex(r.prologSize)} does not fit FPO_DATA.cbProlog (8 bits)`);
    out.push({
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
    });
  }
  return out;
}

/**
 * Converts the type-4 (FrameData) records to FrameData values sorted by start, with all sizes in
 * bytes as the record gives them, frameFunc 0, no flags, and `program` set when the record has one.
 */
export function stackWinToFrameData(records: readonly BreakpadStackWin[]): FrameData[] {
  return records
    .filter((r) => r.type === STACK_WIN_TYPE.FRAME_DATA)
    .sort(byStartOuterFirst)
    .map((r) => {
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
    });
}

/**
 * The symbol-store path of a `.sym` file, `<D>/<debug id>/<N>.sym` (minidump.md §8): D is the
 * debug file's base name (after the last `/` or `\`), and N is D without a trailing `.pdb`
 * (compared case-insensitively) or D itself otherwise (`libfoo.so` → `libfoo.so.sym`). An
 * identifier that is not letters and digits, or a base name that is empty, `.` or `..`, throws
 * InputError("bad-value"), so that the result never leaves the store's root.
 */
export function symbolStorePath(debugFile: string, debugId: string): string {
  const slash = Math.max(debugFile.lastIndexOf("/"), debugFile.lastIndexOf("\\"));
  const base = debugFile.slice(slash + 1);
  if (base === "" || base === "." || base === "..") {
    throw new InputError("bad-value", `debug file "${clip(debugFile)}" has no usable file name for a symbol store`);
  }
  if (!/^[0-9A-Za-z]+$/.test(debugId)) {
    throw new InputError("bad-value", `debug id "${clip(debugId)}" is not letters and digits`);
  }
  const name = base.length > 4 && base.slice(-4).toLowerCase() === ".pdb" ? base.slice(0, -4) : base;
  return `${base}/${debugId}/${name}.sym`;
}
