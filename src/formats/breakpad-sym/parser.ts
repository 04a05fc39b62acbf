/**
 * The streaming `.sym` parser (minidump.md §7). Lines are found in the bytes as they come; the
 * common records (FILE, FUNC, its line records, PUBLIC, STACK WIN, STACK CFI, INLINE) are matched
 * by patterns (scan.ts) and stored in the parse's tables (tables.ts) as numbers and offsets into
 * the bytes, without a string or an object for each; every other line is decoded and read by
 * the strict reader (fields.ts), which also names the line and byte offset of anything
 * malformed.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { BreakpadStackCfi } from "../../model/stack-cfi.js";
import { lazyProperty } from "../lazy-property.js";
import { ContainedRanges } from "./contained-ranges.js";
import { clip, fail, Fields, HEX_DIGITS, type LineSite } from "./fields.js";
import { readInline, readInlineOrigin } from "./inline-records.js";
import { ALLOCATES_BASE_POINTER, bytesAsText, CFI_DELTA_RECORD, CFI_INIT_RECORD, FILE_RECORD, FUNC_RECORD, INLINE_ORIGIN_RECORD, INLINE_RECORD, LINE_RECORD, PUBLIC_RECORD, STACK_WIN_RECORD } from "./scan.js";
import { HEX_VALUE, SymTables } from "./tables.js";
import { MAX_MALFORMED_LINES, STACK_WIN_TYPE, type BreakpadCodeId, type BreakpadModule, type BreakpadSymbols, type BreakpadSymOptions } from "./types.js";

const LF = 0x0a;
const CR = 0x0d;
const U32_MAX = 0xffff_ffff;
/** The most bytes matched as one piece of text. */
const WINDOW = 1 << 16;

/** The end of the last line of `bytes` that ends in [start, limit], or `limit` when no line ends there (a longer line is cut and read strictly). */
function lastLineEnd(bytes: Uint8Array, start: number, limit: number): number {
  for (let i = limit; i > start; i--) if (bytes[i - 1] === LF || bytes[i - 1] === CR) return bytes[i - 1] === CR && bytes[i] === LF ? i + 1 : i;
  return limit;
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
 * afterwards.
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

  private readonly tables = new SymTables();
  private moduleRecord: BreakpadModule | undefined;
  private readonly info: string[] = [];
  private codeId: BreakpadCodeId | undefined;
  private droppedStackWin = 0;
  private readonly stackWinRanges: ContainedRanges[] = [0, 1, 2, 3, 4].map(() => new ContainedRanges());
  private readonly stackCfi: BreakpadStackCfi[] = [];
  private inlineCount = 0;
  private inlineOriginCount = 0;
  private droppedInlineCount = 0;
  private unknownCount = 0;
  /** Whether line records attach to the last FUNC; a PUBLIC record ends that, as in Breakpad. */
  private inFunc = false;

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
    const tables = this.tables;
    tables.finish();
    const out = { module, info: this.info } as BreakpadSymbols;
    lazyProperty(out, "files", () => tables.fileMap());
    lazyProperty(out, "functions", () => tables.mapFuncs((row) => tables.funcRecord(row)));
    lazyProperty(out, "publics", () => tables.mapPublics((row) => tables.publicRecord(row)));
    lazyProperty(out, "stackWin", () => Array.from({ length: tables.stackWinCount }, (_, i) => tables.stackWinRecord(i)));
    lazyProperty(out, "inlineOrigins", () => tables.originRecords());
    Object.assign(out, {
      droppedStackWin: this.droppedStackWin,
      stackCfi: this.stackCfi,
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
   * Parses whole lines: `bytes` start at a line start and end after a line end (or at the end of
   * the file). The tables keep them: the records read from them point into them. The common
   * records are matched on windows of the bytes read one character per byte (scan.ts), each at
   * most {@link WINDOW} bytes and ending at a line end, so that the text made for matching is
   * short-lived (text kept by the engine's heap costs more memory than the bytes).
   */
  private parseRegion(bytes: Uint8Array): void {
    // A plain view: the byte buffers Node reads files into have a slower indexOf of their own.
    const region = new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    this.tables.text.addRegion(this.regionStart, region);
    const n = region.length;
    let c = 0;
    if (this.afterCR && region[0] === LF) c = 1;
    let nextLF = -1;
    let nextCR = -1;
    let windowStart = 0;
    let windowEnd = 0;
    let text = "";
    while (c < n) {
      this.lineCount++;
      if (c >= windowEnd) {
        windowStart = c;
        windowEnd = windowStart + WINDOW >= n ? n : lastLineEnd(region, windowStart, windowStart + WINDOW);
        text = bytesAsText(region.subarray(windowStart, windowEnd));
      }
      const end = this.moduleRecord === undefined || this.truncated ? -1 : this.parseRecord(text, c - windowStart, this.regionStart + windowStart);
      if (end >= 0) {
        c = windowStart + end;
        continue;
      }
      if (nextLF < c) {
        nextLF = region.indexOf(LF, c);
        if (nextLF < 0) nextLF = n;
      }
      if (nextCR < c) {
        nextCR = region.indexOf(CR, c);
        if (nextCR < 0) nextCR = n;
      }
      const ce = nextLF < nextCR ? nextLF : nextCR;
      if (ce > c && !this.truncated) this.parseOrSkip(region, c, ce);
      c = ce + (region[ce] === CR && region[ce + 1] === LF ? 2 : 1);
    }
    this.afterCR = region[n - 1] === CR;
    this.regionStart += n;
  }

  /**
   * Reads the record on the line at `c` of `text` (a window of the file starting at file offset
   * `at`) when it is one of the common kinds and fits its pattern (scan.ts); returns the index
   * after the line's end, or −1, having changed nothing, for the strict reader to read the line.
   */
  private parseRecord(text: string, c: number, at: number): number {
    const t = this.tables;
    const first = text.charCodeAt(c);
    if (this.inFunc && first < 0x80 && HEX_VALUE[first]! >= 0) {
      // A FUNC's line records come in a run: take all of them (one pattern match per line).
      LINE_RECORD.lastIndex = c;
      let end = c;
      while (LINE_RECORD.test(text)) {
        if (end > c) this.lineCount++;
        end = LINE_RECORD.lastIndex;
      }
      if (end > c) {
        t.addLineRun(at + c, at + end);
        return end;
      }
    }
    let m: RegExpExecArray | null;
    switch (first) {
      case 0x46 /* F */: {
        FILE_RECORD.lastIndex = c;
        m = FILE_RECORD.exec(text);
        if (m !== null) {
          const end = FILE_RECORD.lastIndex;
          const restEnd = end - (text.charCodeAt(end - 1) === LF && text.charCodeAt(end - 2) === CR ? 2 : 1);
          t.addFile(Number(m[1]!), at + restEnd - m[2]!.length, at + restEnd);
          return end;
        }
        FUNC_RECORD.lastIndex = c;
        m = FUNC_RECORD.exec(text);
        if (m === null) return -1;
        const end = FUNC_RECORD.lastIndex;
        const restEnd = end - (text.charCodeAt(end - 1) === LF && text.charCodeAt(end - 2) === CR ? 2 : 1);
        t.addFunc(parseInt(m[2]!, 16), parseInt(m[3]!, 16), parseInt(m[4]!, 16), at + restEnd - m[5]!.length, at + restEnd, m[1] !== undefined);
        this.inFunc = true;
        return end;
      }
      case 0x50 /* P */: {
        PUBLIC_RECORD.lastIndex = c;
        m = PUBLIC_RECORD.exec(text);
        if (m === null) return -1;
        const end = PUBLIC_RECORD.lastIndex;
        const restEnd = end - (text.charCodeAt(end - 1) === LF && text.charCodeAt(end - 2) === CR ? 2 : 1);
        t.addPublic(parseInt(m[2]!, 16), parseInt(m[3]!, 16), at + restEnd - m[4]!.length, at + restEnd, m[1] !== undefined);
        this.inFunc = false;
        return end;
      }
      case 0x53 /* S */:
        return this.stackRecord(text, c, at);
      case 0x49 /* I */: {
        INLINE_RECORD.lastIndex = c;
        m = INLINE_RECORD.exec(text);
        if (m !== null) {
          this.inlineRecord(text, c + 6, c + 6 + m[1]!.length);
          return INLINE_RECORD.lastIndex;
        }
        INLINE_ORIGIN_RECORD.lastIndex = c;
        m = INLINE_ORIGIN_RECORD.exec(text);
        if (m === null) return -1;
        this.inlineOriginCount++;
        const o = readInlineOrigin(text, c + 13, c + 13 + m[1]!.length);
        if (o === undefined) this.droppedInlineCount++;
        else t.addOrigin(o.id, o.file, at + o.nameStart, at + o.nameEnd);
        return INLINE_ORIGIN_RECORD.lastIndex;
      }
      default:
        return -1;
    }
  }

  /** An INLINE record whose fields are `text` [from, to): kept for the last FUNC, or left out and counted (as Breakpad logs it). */
  private inlineRecord(text: string, from: number, to: number): void {
    this.inlineCount++;
    const numbers = this.inFunc ? readInline(text, from, to) : undefined;
    if (numbers === undefined) this.droppedInlineCount++;
    else this.tables.addInline(numbers);
  }

  /** {@link parseRecord} for STACK WIN, STACK CFI INIT and STACK CFI delta lines. */
  private stackRecord(text: string, c: number, at: number): number {
    STACK_WIN_RECORD.lastIndex = c;
    let m = STACK_WIN_RECORD.exec(text);
    if (m !== null) {
      const type = parseInt(m[1]!, 16);
      const rva = parseInt(m[2]!, 16);
      const codeSize = parseInt(m[3]!, 16);
      const hasProgram = parseInt(m[10]!, 16);
      if (type > STACK_WIN_TYPE.FRAME_DATA || !Number.isSafeInteger(rva + codeSize)) return -1;
      const rest = m[11]!;
      let program = -1;
      let allocatesBasePointer = false;
      if (hasProgram !== 0) {
        const end = STACK_WIN_RECORD.lastIndex;
        const restEnd = at + end - (text.charCodeAt(end - 1) === LF && text.charCodeAt(end - 2) === CR ? 2 : 1);
        program = this.tables.programOf(rest, restEnd - rest.length, restEnd);
      } else {
        // The rest of the line is the allocates_base_pointer flag, then nothing but spaces.
        const flag = ALLOCATES_BASE_POINTER.exec(rest);
        if (flag === null) return -1;
        allocatesBasePointer = parseInt(flag[1]!, 16) !== 0;
      }
      if (this.stackWinRanges[type]!.store(rva, codeSize)) {
        // The six sizes (prolog to max stack) are read only for a record that is kept.
        const t = this.tables;
        t.addStackWin(type, rva, codeSize, parseInt(m[4]!, 16), parseInt(m[5]!, 16), parseInt(m[6]!, 16), parseInt(m[7]!, 16), parseInt(m[8]!, 16), parseInt(m[9]!, 16), hasProgram, program, allocatesBasePointer, this.lineCount, at + c);
      } else this.droppedStackWin++;
      return STACK_WIN_RECORD.lastIndex;
    }
    const symText = this.tables.text;
    CFI_INIT_RECORD.lastIndex = c;
    m = CFI_INIT_RECORD.exec(text);
    if (m !== null) {
      const end = CFI_INIT_RECORD.lastIndex;
      const restEnd = end - (text.charCodeAt(end - 1) === LF && text.charCodeAt(end - 2) === CR ? 2 : 1);
      this.stackCfi.push({ address: parseInt(m[1]!, 16), size: parseInt(m[2]!, 16), init: symText.text(at + restEnd - m[3]!.length, at + restEnd), deltas: [] });
      return end;
    }
    CFI_DELTA_RECORD.lastIndex = c;
    m = CFI_DELTA_RECORD.exec(text);
    const range = this.stackCfi[this.stackCfi.length - 1];
    if (m === null || range === undefined) return -1;
    const end = CFI_DELTA_RECORD.lastIndex;
    const restEnd = end - (text.charCodeAt(end - 1) === LF && text.charCodeAt(end - 2) === CR ? 2 : 1);
    range.deltas.push({ address: parseInt(m[1]!, 16), rules: symText.text(at + restEnd - m[2]!.length, at + restEnd) });
    return end;
  }

  /** Reads the line at region indices [c, ce) strictly; with `skipMalformed`, a malformed record after MODULE is counted and left out. */
  private parseOrSkip(region: Uint8Array, c: number, ce: number): void {
    let text = this.decoder.decode(region.subarray(c, ce));
    if (this.lineCount === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    const site: LineSite = { line: this.lineCount, offset: this.regionStart + c };
    const span = { start: this.regionStart + c, end: this.regionStart + ce };
    if (this.options.skipMalformed !== true || this.moduleRecord === undefined) {
      this.parseLine(text, site, span);
      return;
    }
    try {
      this.parseLine(text, site, span);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      this.malformedCount++;
      this.firstMalformed ??= e;
      if (this.malformedCount > MAX_MALFORMED_LINES) this.truncated = true;
    }
  }

  /** Reads one line strictly; `span` is its place in the file. */
  private parseLine(text: string, site: LineSite, span: { start: number; end: number }): void {
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
        this.inlineRecord(text, kind.length, text.length);
        return;
      case "INLINE_ORIGIN": {
        this.inlineOriginCount++;
        const o = readInlineOrigin(text, kind.length, text.length);
        if (o === undefined) this.droppedInlineCount++;
        else this.tables.addOrigin(o.id, o.file, this.held(text.slice(o.nameStart, o.nameEnd)), 0);
        return;
      }
      case "MODULE":
        fail("bad-value", site, "a second MODULE record (a .sym file has one, on its first line)");
      default:
        if (HEX_DIGITS.test(kind)) this.parseLineRecord(new Fields(text, 0, "line record", site), site, span);
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

  private parseLineRecord(f: Fields, site: LineSite, span: { start: number; end: number }): void {
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
    this.tables.addLineRun(span.start, span.end);
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
    let program = -1;
    let allocatesBasePointer = false;
    if (hasProgram !== 0) program = this.tables.programOfText(f.rest("program string"));
    else {
      allocatesBasePointer = f.hex("allocates_base_pointer flag", U32_MAX) !== 0;
      f.end();
    }
    if (this.stackWinRanges[type]!.store(rva, codeSize)) {
      this.tables.addStackWin(type, rva, codeSize, prolog, epilog, params, savedRegs, locals, maxStack, hasProgram, program, allocatesBasePointer, site.line, site.offset);
    } else this.droppedStackWin++;
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
