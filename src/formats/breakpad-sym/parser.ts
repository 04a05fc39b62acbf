/**
 * The `.sym` parser (minidump.md §7). Lines are found in the bytes as they come; the common records
 * (FILE, FUNC, its line records, PUBLIC, STACK WIN, STACK CFI, INLINE, INLINE_ORIGIN) are read by
 * the byte readers of scan.ts and stored in the parse's tables (tables.ts) as numbers and offsets
 * into the bytes, without a string or an object for each; every other line is decoded and read by
 * the strict reader (fields.ts), which also names the line and byte offset of anything malformed.
 * The parse checks every line (so that a malformed one is found, or counted, as before), but keeps
 * only the index: a record's text, line records and rules are read when a lookup asks for them.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { ByteSource } from "../../memory/byte-source.js";
import { lazyProperty } from "../lazy-property.js";
import { ContainedRanges } from "./contained-ranges.js";
import { HEX_VALUE } from "./digits.js";
import { clip, fail, Fields, HEX_DIGITS, type LineSite } from "./fields.js";
import { readInline, readInlineOrigin } from "./inline-records.js";
import { allocatesBasePointer, bytesAsText, FIELDS, fileRecord, funcRecord, inlineRecord, publicRecord, STACK_CFI, STACK_CFI_INIT, stackKind, stackRecord } from "./scan.js";
import { SymTables } from "./tables.js";
import { MAX_MALFORMED_LINES, STACK_WIN_TYPE, type BreakpadCodeId, type BreakpadModule, type BreakpadSymbols, type BreakpadSymOptions } from "./types.js";

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const U32_MAX = 0xffff_ffff;
/**
 * How far into a file a FUNC's line records are checked by the pattern (on a window of text); from
 * here on the byte loop checks them ({@link LineParser.lineRunBytes}): by then the engine has
 * compiled it. Exported for the tests, which check that both read the same.
 */
export const BYTE_LOOP_FROM = 1 << 22;
/** The most bytes read as one piece of text. */
const WINDOW = 1 << 16;
/** A run of line records `<address> <size> <line> <file>`: hex and decimal fields, 32-bit each, trailing spaces allowed. */
const LINE_RUN = /(?:[0-9A-Fa-f]{1,8} +[0-9A-Fa-f]{1,8} +[0-9]{1,9} +[0-9]{1,9} *(?:\r\n|\n|\r))+/y;

/**
 * A run of STACK WIN records in the usual form with one space between fields: type 0 to 4, rva
 * and code size of up to 13 hex digits, six sizes and has_program of up to 8, then a program
 * (has_program not zero) or the allocates_base_pointer flag and spaces. Every line it takes is
 * one {@link stackRecord} reads, with the same values.
 */
const STACK_WIN_RUN = /(?:STACK WIN [0-4] [0-9A-Fa-f]{1,13} [0-9A-Fa-f]{1,13} (?:[0-9A-Fa-f]{1,8} ){6}(?:0{1,8} [0-9A-Fa-f]{1,8} *|(?!0{1,8} )[0-9A-Fa-f]{1,8} [^ \r\n][^\r\n]*)(?:\r\n|\n|\r))+/y;
/** A run of FILE records in the usual form: `FILE`, a number of up to 15 digits, a name, one space between them. */
const FILE_RUN = /(?:FILE [0-9]{1,15} [^ \r\n][^\r\n]*(?:\r\n|\n|\r))+/y;
/** A run of STACK CFI INIT and delta records in the usual form: address (and size) of up to 13 hex digits, rules, one space between fields. */
const STACK_CFI_RUN = /(?:STACK CFI (?:INIT [0-9A-Fa-f]{1,13} [0-9A-Fa-f]{1,13}|[0-9A-Fa-f]{1,13}) [^ \r\n][^\r\n]*(?:\r\n|\n|\r))+/y;

/** Which records a run holds (see {@link LineParser.recordRun}). */
const FILE_LINES = 0;
const STACK_WIN_LINES = 1;
const STACK_CFI_LINES = 2;

/** The end of the last line of `bytes` that ends in [start, limit], or `limit` when no line ends there (a longer line is cut and read strictly). */
function lastLineEnd(bytes: Uint8Array, start: number, limit: number): number {
  for (let i = limit; i > start; i--) if (bytes[i - 1] === LF || bytes[i - 1] === CR) return bytes[i - 1] === CR && bytes[i] === LF ? i + 1 : i;
  return limit;
}

/** The line ends in `text` [from, to) (which ends at one): LFs, CRs not followed by LF. */
function lineEnds(text: string, from: number, to: number, hasCR: boolean): number {
  let count = 0;
  if (!hasCR) {
    for (let i = text.indexOf("\n", from); i >= 0 && i < to; i = text.indexOf("\n", i + 1)) count++;
    return count;
  }
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === LF || (c === CR && text.charCodeAt(i + 1) !== LF)) count++;
  }
  return count;
}

/** The parse's tables, on the symbols it returned (not enumerable: a copy or comparison of the symbols sees the records). */
const TABLES = Symbol("sym tables");

/** The tables a parse keeps its records in, when `sym` came from the parser. */
export function symTables(sym: BreakpadSymbols): SymTables | undefined {
  return (sym as { [TABLES]?: SymTables })[TABLES];
}

/**
 * The streaming `.sym` parser: `push` chunks of bytes (UTF-8) or text in order, then `finish`.
 * A chunk may end anywhere, including inside a line or a UTF-8 sequence. For example, in Node:
 * `for await (const chunk of createReadStream(path)) parser.push(chunk)`. The symbols keep the
 * bytes pushed (names and programs are read from them when asked for): do not change them
 * afterwards. To read a file by position instead of holding it, see {@link readBreakpadSym}.
 */
export class BreakpadSymParser {
  private readonly lines: LineParser;
  private readonly encoder = new TextEncoder();
  /** Bytes of the line being read, from earlier chunks. */
  private partial: Uint8Array[] = [];
  private partialLength = 0;
  /** A high surrogate that ended a text chunk, waiting for its low half. */
  private heldSurrogate = "";
  private finished = false;

  constructor(options: BreakpadSymOptions = {}) {
    this.lines = new LineParser(options);
  }

  /** The MODULE record, once the first line has been read. */
  get module(): BreakpadModule | undefined {
    return this.lines.module;
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
    if (this.partial.length > 0) this.lines.parseRegion(this.takePartial(new Uint8Array(0)));
    return this.lines.finish();
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
    if (cut > 0) this.lines.parseRegion(this.takePartial(bytes.subarray(0, cut)));
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
}

/** Bytes read from a source at a time, at least (a longer line takes a longer read). */
const CHUNK = 1 << 20;

/**
 * Reads a `.sym` file by position: one pass over its bytes, a chunk at a time, builds the tables,
 * and the file is read again where a record's text is asked for, so that it is never held in
 * memory whole (a symbol file may be hundreds of megabytes, of which a walk reads a few records).
 * The source must keep giving the same bytes for as long as the symbols are used. Throws
 * {@link InputError} on a malformed line, as {@link BreakpadSymParser} does.
 */
export function readBreakpadSym(source: ByteSource, options: BreakpadSymOptions = {}): BreakpadSymbols {
  const lines = new LineParser(options, source);
  let at = 0;
  let length = CHUNK;
  // One buffer for every chunk, when the source can fill one: the chunks are dropped once parsed.
  let buffer: Uint8Array | undefined;
  while (at < source.size) {
    const want = Math.min(length, source.size - at);
    let bytes: Uint8Array | undefined;
    if (source.readInto === undefined) bytes = source.read(at, want);
    else {
      if (buffer === undefined || buffer.length < want) buffer = new Uint8Array(Math.max(want, CHUNK));
      bytes = source.readInto(at, buffer.subarray(0, want)) ? buffer.subarray(0, want) : undefined;
    }
    if (bytes === undefined) throw new InputError("io", `cannot read the bytes at offset 0x${at.toString(16)}`, { offset: at });
    // Whole lines only: the rest is read again with the next chunk.
    let cut = bytes.length;
    if (at + cut < source.size) while (cut > 0 && bytes[cut - 1] !== LF && bytes[cut - 1] !== CR) cut--;
    if (cut === 0) {
      length *= 2;
      continue;
    }
    lines.parseRegion(bytes.subarray(0, cut));
    at += cut;
    length = CHUNK;
  }
  return lines.finish();
}

/** The parse itself: whole lines in, one region of the file at a time. */
class LineParser {
  private malformedCount = 0;
  private firstMalformed: InputError | undefined;
  private truncated = false;

  private readonly decoder = new TextDecoder("utf-8", { ignoreBOM: true });
  /** Byte offset of the first byte not yet parsed (the start of the line being read). */
  private regionStart = 0;
  /** Lines ended so far. */
  private lineCount = 0;
  /** The last line ended with CR, so an LF right after it belongs to the same line end. */
  private afterCR = false;

  private readonly tables: SymTables;
  private moduleRecord: BreakpadModule | undefined;
  private readonly info: string[] = [];
  private codeId: BreakpadCodeId | undefined;
  private droppedStackWin = 0;
  private readonly stackWinRanges: ContainedRanges[] = [0, 1, 2, 3, 4].map(() => new ContainedRanges());
  private inlineCount = 0;
  private inlineOriginCount = 0;
  private droppedInlineCount = 0;
  private unknownCount = 0;
  /** Whether line records attach to the last FUNC; a PUBLIC record ends that, as in Breakpad. */
  private inFunc = false;
  /** The window {@link window} read last: its region, where it starts and ends, its text, whether it holds a CR. */
  private windowOf: Uint8Array | undefined;
  private windowStart = 0;
  private windowEnd = 0;
  private windowText = "";
  private windowHasCR = false;

  /** `source`: the file, read again for text; without one the regions parsed are kept. */
  constructor(
    private readonly options: BreakpadSymOptions,
    source?: ByteSource,
  ) {
    this.tables = new SymTables(source);
  }

  get module(): BreakpadModule | undefined {
    return this.moduleRecord;
  }

  /** The symbols, once every line is in; a file without a MODULE record throws "bad-magic". */
  finish(): BreakpadSymbols {
    const module = this.moduleRecord;
    if (module === undefined) {
      fail("bad-magic", { line: this.lineCount + 1, offset: this.regionStart }, "the file ends before its MODULE record (a .sym file starts with MODULE)");
    }
    const tables = this.tables;
    tables.finish();
    const out = { module, info: this.info } as BreakpadSymbols;
    lazyProperty(out, "files", () => tables.fileMap());
    lazyProperty(out, "functions", () => tables.mapFuncs((row) => tables.funcRecord(row)));
    lazyProperty(out, "publics", () => tables.mapPublics((row) => tables.publicRecord(row)));
    lazyProperty(out, "stackWin", () => Array.from({ length: tables.stackWinCount }, (_, i) => tables.stackWinRecord(i)));
    lazyProperty(out, "inlineOrigins", () => tables.originRecords());
    Object.assign(out, { droppedStackWin: this.droppedStackWin });
    lazyProperty(out, "stackCfi", () => tables.cfiRecords());
    Object.assign(out, {
      inlineCount: this.inlineCount,
      inlineOriginCount: this.inlineOriginCount,
      droppedInlineCount: this.droppedInlineCount,
      unknownCount: this.unknownCount,
      malformedCount: this.malformedCount,
      truncated: this.truncated,
    });
    if (this.firstMalformed !== undefined) out.firstMalformed = this.firstMalformed;
    if (this.codeId !== undefined) out.codeId = this.codeId;
    Object.defineProperty(out, TABLES, { value: tables });
    return out;
  }

  /**
   * Parses whole lines: `bytes` start at a line start and end after a line end (or at the end of
   * the file). The tables keep them (the records read from them point into them) unless they read
   * the file again. The common records are read by the byte readers of scan.ts; every other line
   * by the strict reader.
   */
  parseRegion(bytes: Uint8Array): void {
    // A plain view: the byte buffers Node reads files into have a slower indexOf of their own.
    const region = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.tables.text.addRegion(this.regionStart, region);
    const n = region.length;
    let c = 0;
    if (this.afterCR && region[0] === LF) c = 1;
    while (c < n) {
      this.lineCount++;
      const end = this.moduleRecord === undefined || this.truncated ? -1 : this.parseRecord(region, c, n);
      if (end >= 0) {
        c = end;
        continue;
      }
      const ce = this.lineEnd(region, c, n);
      if (ce > c && !this.truncated) this.parseOrSkip(region, c, ce);
      c = ce + (region[ce] === CR && region[ce + 1] === LF ? 2 : 1);
    }
    this.afterCR = region[n - 1] === CR;
    this.regionStart += n;
  }

  /**
   * Reads the record on the line at `c` of `b` when it is one of the common kinds in its usual
   * form (scan.ts); returns the index after the line's end, or −1, having changed nothing, for
   * the strict reader to read the line.
   */
  private parseRecord(b: Uint8Array, c: number, n: number): number {
    const t = this.tables;
    const at = this.regionStart;
    const first = b[c]!;
    if (this.inFunc && HEX_VALUE[first]! >= 0) {
      // A FUNC's line records come in a run: take all of them.
      const end = at + c >= BYTE_LOOP_FROM ? this.lineRunBytes(b, c, n) : this.lineRun(b, c, n);
      if (end > c) {
        t.addLineRun(at + c, at + end);
        return end;
      }
    }
    const f = FIELDS;
    if (first !== 0x46 && first !== 0x50 && first !== 0x53 && first !== 0x49) return -1;
    // Runs of FILE, STACK WIN and STACK CFI records (most of a module's file): checked by one pattern.
    const run = first === 0x46 ? (b[c + 1] === 0x49 /* FI */ ? FILE_RUN : undefined) : first !== 0x53 ? undefined : b[c + 6] === 0x57 /* STACK W */ ? STACK_WIN_RUN : b[c + 6] === 0x43 /* STACK C */ ? STACK_CFI_RUN : undefined;
    if (run !== undefined) {
      const end = this.recordRun(b, c, n, run);
      if (end > c) return end;
    }
    const e = this.lineEnd(b, c, n);
    switch (first) {
      case 0x46 /* F */: {
        let end = fileRecord(b, c, e);
        if (end >= 0) {
          t.addFile(f[0]!, at + f[1]!, at + f[2]!);
          return end;
        }
        end = funcRecord(b, c, e);
        if (end < 0) return -1;
        t.addFunc(f[1]!, f[2]!, f[3]!, at + f[4]!, at + f[5]!, f[0] === 1);
        this.inFunc = true;
        return end;
      }
      case 0x50 /* P */: {
        const end = publicRecord(b, c, e);
        if (end < 0) return -1;
        t.addPublic(f[1]!, f[2]!, at + f[3]!, at + f[4]!, f[0] === 1);
        this.inFunc = false;
        return end;
      }
      case 0x53 /* S */:
        return this.stackRecord(b, c, e);
      case 0x49 /* I */: {
        const end = inlineRecord(b, c, e);
        if (end < 0) return -1;
        if (f[0] === 1) this.inlineRecord(b, f[1]!, f[2]!, at);
        else this.inlineOriginRecord(b, f[1]!, f[2]!, at);
        return end;
      }
      default:
        return -1;
    }
  }

  /**
   * The end of the run of line records at `c` (c when there is none), counting its lines: checked
   * by one pattern on the region's text, a window at a time (see {@link window}).
   */
  private lineRun(b: Uint8Array, c: number, n: number): number {
    let end = c;
    for (;;) {
      const text = this.window(b, end, n);
      LINE_RUN.lastIndex = end - this.windowStart;
      if (!LINE_RUN.test(text)) break;
      const stop = this.windowStart + LINE_RUN.lastIndex;
      this.lineCount += lineEnds(text, end - this.windowStart, stop - this.windowStart, this.windowHasCR);
      end = stop;
      if (stop < this.windowEnd || stop >= n) break;
    }
    if (end > c) this.lineCount--;
    return end;
  }

  /**
   * The end of the run of FILE, STACK WIN or STACK CFI records at `c` that `run` checks (c when
   * it checks none), each record added to the tables: a FILE's number and name; a FrameData
   * (type 4) STACK WIN record's range (its other fields are read from its line when a record is
   * made from it); a STACK WIN record of another type with all its fields, as a line on its own
   * is read; a STACK CFI record's address (and size) and rules. The run ends before a delta
   * record with no INIT before it, which the strict reader then reads.
   */
  private recordRun(b: Uint8Array, c: number, n: number, run: RegExp): number {
    const text = this.window(b, c, n);
    run.lastIndex = c - this.windowStart;
    if (!run.test(text)) return c;
    // To the window's end at most: a run that goes on is taken up again by the next call.
    const stop = this.windowStart + run.lastIndex;
    const t = this.tables;
    const at = this.regionStart;
    const hex = HEX_VALUE;
    const kind = run === FILE_RUN ? FILE_LINES : run === STACK_WIN_RUN ? STACK_WIN_LINES : STACK_CFI_LINES;
    let p = c;
    while (p < stop) {
      if (p > c) this.lineCount++;
      const e = this.lineEnd(b, p, n);
      const next = b[e] === CR && b[e + 1] === LF ? e + 2 : e + 1;
      if (kind === STACK_CFI_LINES) {
        let j = p + 10;
        let address = 0;
        if (b[j] === 0x49 /* INIT */) {
          for (j += 5; b[j] !== SPACE; j++) address = address * 16 + hex[b[j]!]!;
          let size = 0;
          for (j++; b[j] !== SPACE; j++) size = size * 16 + hex[b[j]!]!;
          t.addCfiInit(address, size, at + j + 1, at + e);
        } else {
          for (; b[j] !== SPACE; j++) address = address * 16 + hex[b[j]!]!;
          if (!t.addCfiDelta(address, at + j + 1, at + e)) {
            // Before any INIT: the line is read on its own.
            if (p > c) this.lineCount--;
            return p;
          }
        }
      } else if (kind === FILE_LINES) {
        let j = p + 5;
        let number = 0;
        for (; b[j] !== SPACE; j++) number = number * 10 + (b[j]! - 0x30);
        t.addFile(number, at + j + 1, at + e);
      } else if (b[p + 10] !== 0x34 /* 4 */) this.stackRecord(b, p, e);
      else {
        const type = STACK_WIN_TYPE.FRAME_DATA;
        let j = p + 12;
        let rva = 0;
        for (; b[j] !== SPACE; j++) rva = rva * 16 + hex[b[j]!]!;
        let codeSize = 0;
        for (j++; b[j] !== SPACE; j++) codeSize = codeSize * 16 + hex[b[j]!]!;
        if (this.stackWinRanges[type]!.store(rva, codeSize)) t.addStackWinLine(type, rva, codeSize, this.lineCount, at + p, at + next);
        else this.droppedStackWin++;
      }
      p = next;
    }
    return stop;
  }

  /**
   * {@link lineRun} read byte by byte, with the same checks: once the engine has compiled it, a
   * third faster than the pattern and the count of its lines, and it makes no text; in the
   * interpreter, where a short parse runs, slower than the pattern's native code. The parse
   * takes it from {@link BYTE_LOOP_FROM} bytes into a file on.
   */
  private lineRunBytes(b: Uint8Array, c: number, n: number): number {
    const hex = HEX_VALUE;
    let end = c;
    let lines = 0;
    for (;;) {
      // <address> <size>: 1 to 8 hex digits each, then spaces.
      let j = end;
      let s = j;
      while (j < n && hex[b[j]!]! >= 0) j++;
      if (j === s || j - s > 8 || b[j] !== SPACE) break;
      do j++;
      while (b[j] === SPACE);
      s = j;
      while (j < n && hex[b[j]!]! >= 0) j++;
      if (j === s || j - s > 8 || b[j] !== SPACE) break;
      do j++;
      while (b[j] === SPACE);
      // <line> <file>: 1 to 9 decimal digits each; spaces after the last allowed.
      s = j;
      while (j < n && b[j]! - 0x30 >>> 0 < 10) j++;
      if (j === s || j - s > 9 || b[j] !== SPACE) break;
      do j++;
      while (b[j] === SPACE);
      s = j;
      while (j < n && b[j]! - 0x30 >>> 0 < 10) j++;
      if (j === s || j - s > 9) break;
      while (b[j] === SPACE) j++;
      const e = b[j];
      if (e === LF) j++;
      else if (e === CR) j += b[j + 1] === LF ? 2 : 1;
      else break;
      lines++;
      end = j;
      if (end >= n) break;
    }
    if (lines > 0) this.lineCount += lines - 1;
    return end;
  }

  /**
   * The index of the line end (LF or CR) of the line at `c` of the region `b`, or `n` when the
   * line has none: found by the engine's native search in the window's text when it holds no CR.
   */
  private lineEnd(b: Uint8Array, c: number, n: number): number {
    const text = this.window(b, c, n);
    let e = this.windowEnd;
    if (!this.windowHasCR) {
      const k = text.indexOf("\n", c - this.windowStart);
      if (k >= 0) return this.windowStart + k;
    } else e = c;
    // A window with a CR, or a line longer than a window.
    while (e < n && b[e] !== LF && b[e] !== CR) e++;
    return e;
  }

  /**
   * The text of the window of the region `b` that holds index `c`: at most {@link WINDOW} bytes
   * from `c`, ending at a line end, read one character per byte, so that an index in it plus
   * {@link windowStart} is an index in the region. Patterns run on it as native code.
   */
  private window(b: Uint8Array, c: number, n: number): string {
    if (c >= this.windowStart && c < this.windowEnd && b === this.windowOf) return this.windowText;
    this.windowOf = b;
    this.windowStart = c;
    this.windowEnd = c + WINDOW >= n ? n : lastLineEnd(b, c, c + WINDOW);
    this.windowText = bytesAsText(b.subarray(c, this.windowEnd));
    this.windowHasCR = this.windowText.indexOf("\r") >= 0;
    return this.windowText;
  }

  /** An INLINE record whose fields are `b` [from, to), `b` at file offset `at`: kept for the last FUNC, or left out and counted (as Breakpad logs it). */
  private inlineRecord(b: Uint8Array, from: number, to: number, at: number): void {
    this.inlineCount++;
    if (this.inFunc && readInline(b, from, to)) this.tables.addInline(at + from, at + to);
    else this.droppedInlineCount++;
  }

  /** An INLINE_ORIGIN record whose text after the keyword is `b` [from, to), `b` at file offset `at`. */
  private inlineOriginRecord(b: Uint8Array, from: number, to: number, at: number): void {
    this.inlineOriginCount++;
    if (readInlineOrigin(b, from, to)) this.tables.addOrigin(FIELDS[0]!, FIELDS[1]!, at + FIELDS[2]!, at + FIELDS[3]!);
    else this.droppedInlineCount++;
  }

  /** {@link parseRecord} for STACK WIN, STACK CFI INIT and STACK CFI delta lines; `e` is the line's end. */
  private stackRecord(b: Uint8Array, c: number, e: number): number {
    const end = stackRecord(b, c, e);
    if (end < 0) return -1;
    const f = FIELDS;
    const at = this.regionStart;
    const t = this.tables;
    if (stackKind === STACK_CFI_INIT) {
      t.addCfiInit(f[0]!, f[1]!, at + f[2]!, at + f[3]!);
      return end;
    }
    if (stackKind === STACK_CFI) return t.addCfiDelta(f[0]!, at + f[1]!, at + f[2]!) ? end : -1;
    const type = f[0]!;
    const rva = f[1]!;
    const codeSize = f[2]!;
    if (type > STACK_WIN_TYPE.FRAME_DATA || !Number.isSafeInteger(rva + codeSize)) return -1;
    const program = f[9] !== 0;
    // Without a program, the rest of the line is the allocates_base_pointer flag, then nothing but spaces.
    const allocates = program ? 0 : allocatesBasePointer(b, f[10]!, f[11]!);
    if (allocates < 0) return -1;
    if (!this.stackWinRanges[type]!.store(rva, codeSize)) this.droppedStackWin++;
    // A FrameData record's other fields are read again from its line when a record is made from it.
    else if (type === STACK_WIN_TYPE.FRAME_DATA) t.addStackWinLine(type, rva, codeSize, this.lineCount, at + c, at + end);
    else t.addStackWin(type, rva, codeSize, f[3]!, f[4]!, f[5]!, f[6]!, f[7]!, f[8]!, f[9]!, program ? at + f[10]! : 0, program ? at + f[11]! : 0, allocates !== 0, this.lineCount, at + c);
    return end;
  }

  /** Reads the line at region indices [c, ce) strictly; with `skipMalformed`, a malformed record after MODULE is counted and left out. */
  private parseOrSkip(region: Uint8Array, c: number, ce: number): void {
    let text = this.decoder.decode(region.subarray(c, ce));
    if (this.lineCount === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const site: LineSite = { line: this.lineCount, offset: this.regionStart + c };
    const line = region.subarray(c, ce);
    if (this.options.skipMalformed !== true || this.moduleRecord === undefined) {
      this.parseLine(text, site, line);
      return;
    }
    try {
      this.parseLine(text, site, line);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      this.malformedCount++;
      this.firstMalformed ??= e;
      if (this.malformedCount > MAX_MALFORMED_LINES) this.truncated = true;
    }
  }

  /** Reads one line strictly: `text` is its bytes, `line`, decoded, and `site` where it is. */
  private parseLine(text: string, site: LineSite, line: Uint8Array): void {
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
        this.inlineRecord(line, kind.length, line.length, site.offset);
        return;
      case "INLINE_ORIGIN":
        this.inlineOriginRecord(line, kind.length, line.length, site.offset);
        return;
      case "MODULE":
        fail("bad-value", site, "a second MODULE record (a .sym file has one, on its first line)");
      default:
        if (HEX_DIGITS.test(kind)) this.parseLineRecord(new Fields(text, 0, "line record", site), site, line.length);
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

  /** A string the strict reader read, as a text reference. */
  private held(text: string): number {
    return this.tables.text.addString(text);
  }

  private parseFile(f: Fields): void {
    const id = f.dec("number");
    const name = f.rest("name");
    this.tables.addFile(id, this.held(name), 0);
  }

  private parseFunc(f: Fields): void {
    let first = f.next("address");
    const multiple = first === "m";
    if (multiple) first = f.next("address");
    const address = f.hexValue(first, "address");
    const size = f.hex("size");
    const paramSize = f.hex("parameter size");
    const name = f.rest("name");
    this.tables.addFunc(address, size, paramSize, this.held(name), 0, multiple);
    this.inFunc = true;
  }

  private parseLineRecord(f: Fields, site: LineSite, length: number): void {
    if (!this.inFunc) {
      fail("bad-value", site, "a line record must follow a FUNC record (there is none before it, or a PUBLIC came between)");
    }
    const address = f.hex("address");
    const size = f.hex("size");
    const line = f.dec("line number");
    const file = f.dec("file number");
    f.end();
    if (address > U32_MAX || size > U32_MAX || line > U32_MAX || file > U32_MAX) {
      fail("bad-value", site, "a line record's address, size, line and file number must each fit in 32 bits");
    }
    this.tables.addLineRun(site.offset, site.offset + length);
  }

  private parsePublic(f: Fields): void {
    let first = f.next("address");
    const multiple = first === "m";
    if (multiple) first = f.next("address");
    const address = f.hexValue(first, "address");
    const paramSize = f.hex("parameter size");
    const name = f.rest("name");
    this.tables.addPublic(address, paramSize, this.held(name), 0, multiple);
    this.inFunc = false;
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
    const prolog = f.hex("prolog size", U32_MAX);
    const epilog = f.hex("epilog size", U32_MAX);
    const params = f.hex("parameter size", U32_MAX);
    const savedRegs = f.hex("saved register size", U32_MAX);
    const locals = f.hex("locals size", U32_MAX);
    const maxStack = f.hex("max stack size", U32_MAX);
    const hasProgram = f.hex("has_program flag", U32_MAX);
    let program = 0;
    let allocatesBasePointer = false;
    if (hasProgram !== 0) program = this.held(f.rest("program string"));
    else {
      allocatesBasePointer = f.hex("allocates_base_pointer flag", U32_MAX) !== 0;
      f.end();
    }
    if (this.stackWinRanges[type]!.store(rva, codeSize)) {
      this.tables.addStackWin(type, rva, codeSize, prolog, epilog, params, savedRegs, locals, maxStack, hasProgram, program, 0, allocatesBasePointer, site.line, site.offset);
    } else this.droppedStackWin++;
  }

  private parseStackCfi(f: Fields, site: LineSite): void {
    const first = f.next("address");
    if (first === "INIT") {
      const address = f.hex("address");
      const size = f.hex("size");
      this.tables.addCfiInit(address, size, this.held(f.rest("rules")), 0);
      return;
    }
    const address = f.hexValue(first, "address");
    const rules = f.rest("rules");
    if (!this.tables.addCfiDelta(address, this.held(rules), 0)) fail("bad-value", site, "a STACK CFI delta record must follow a STACK CFI INIT record");
  }
}
