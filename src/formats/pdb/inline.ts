/**
 * A PDB's inline sites and source lines (CodeView, as LLVM's native PDB reader reads them): the
 * S_INLINESITE / S_INLINESITE2 records nested in a module's procedures (closed by
 * S_INLINESITE_END) with their binary annotations, the IPI stream's LF_FUNC_ID / LF_MFUNC_ID
 * records that name the inlined functions, and a module's C13 debug subsections: the line table
 * (DEBUG_S_LINES), the file checksums that name its files through `/names` (DEBUG_S_FILECHKSMS)
 * and the inlinee lines (DEBUG_S_INLINEELINES: where each inlined function starts).
 *
 * The sites covering an address are found as LLVM's NativeFunctionSymbol::findInlineFramesByVA
 * finds them: in a procedure's records, the first site whose annotations' code ranges cover the
 * address's offset in the procedure, then the first such site inside it, and so on. A site's
 * line at the address is its inlinee's first line plus the line offset its annotations give there
 * (as LLVM 14's NativeInlineSiteSymbol::getLineOffset sums them: llvm-symbolizer-14's answer, the
 * ground truth of the tests); its file the annotations' file, or the inlinee's. A site's call site is where the code one level out is at
 * the address: the enclosing site's line there, or the procedure's line table for the outermost.
 */
import { InputError } from "../../errors.js";
import { ByteCursor } from "../../memory/cursor.js";
import type { InlineSite, InlineSites } from "../../model/inline.js";
import { recordName } from "./streams.js";

const S_END = 0x0006;
const S_THUNK32 = 0x1102;
const S_BLOCK32 = 0x1103;
const S_LPROC32 = 0x110f;
const S_GPROC32 = 0x1110;
const S_SEPCODE = 0x1132;
const S_LPROC32_ID = 0x1146;
const S_GPROC32_ID = 0x1147;
const S_INLINESITE = 0x114d;
const S_INLINESITE_END = 0x114e;
const S_PROC_ID_END = 0x114f;
const S_LPROC32_DPC = 0x1155;
const S_LPROC32_DPC_ID = 0x1156;
const S_INLINESITE2 = 0x115d;
const PROCS = new Set([S_LPROC32, S_GPROC32, S_LPROC32_ID, S_GPROC32_ID, S_LPROC32_DPC, S_LPROC32_DPC_ID]);
/** Records that open a scope closed by S_END (procedures open one too). */
const SCOPES = new Set([S_THUNK32, S_BLOCK32, S_SEPCODE]);

const LF_FUNC_ID = 0x1601;
const LF_MFUNC_ID = 0x1602;
const LF_STRING_ID = 0x1605;

const DEBUG_S_LINES = 0xf2;
const DEBUG_S_FILECHKSMS = 0xf4;
const DEBUG_S_INLINEELINES = 0xf6;
/** DEBUG_S_LINES flag: the block has column records after its line records. */
const CV_LINES_HAVE_COLUMNS = 0x1;


/** One inline site record of a procedure: its inlinee (an IPI item id), its annotations, the site it is nested in (−1: the procedure). */
export interface RawInlineSite {
  inlinee: number;
  annotations: Uint8Array;
  parent: number;
  /** Where the record is in its module stream, for messages. */
  offset: number;
}

/** A procedure's segment:offset and the inline sites nested in it, in record order. */
export interface RawProcedureSites {
  segment: number;
  offset: number;
  sites: RawInlineSite[];
}

/** The inline sites of every procedure of a module's symbols, bytes [start, end) of its stream. */
export function readProcedureSites(bytes: Uint8Array, start: number, end: number): RawProcedureSites[] {
  const c = new ByteCursor(bytes);
  const out: RawProcedureSites[] = [];
  // The open scopes: a procedure, a block or thunk (−2), or an inline site (its index).
  const stack: number[] = [];
  let proc: RawProcedureSites | undefined;
  for (let at = start; at < end; ) {
    const length = c.seek(at).u16("symbol record length");
    if (length < 2) throw new InputError("bad-value", `symbol record length ${length} is too short for a kind`, { offset: at });
    const next = at + 2 + length;
    if (next > end) throw new InputError("truncated", `symbol record of ${length} bytes runs past the end of the symbols`, { offset: at });
    const kind = c.u16("symbol record kind");
    if (PROCS.has(kind)) {
      c.need(35, "procedure symbol", at + 4);
      c.skip(28);
      const offset = c.u32("procedure offset");
      const segment = c.u16("procedure segment");
      proc = { segment, offset, sites: [] };
      out.push(proc);
      stack.push(-1);
    } else if (SCOPES.has(kind)) stack.push(-2);
    else if (kind === S_INLINESITE || kind === S_INLINESITE2) {
      c.need(12, "S_INLINESITE", at + 4);
      c.skip(8);
      const inlinee = c.u32("S_INLINESITE inlinee");
      if (kind === S_INLINESITE2) {
        c.need(4, "S_INLINESITE2 invocations");
        c.skip(4);
      }
      // The nearest enclosing inline site, through blocks.
      let parent = -1;
      for (let i = stack.length - 1; i >= 0; i--) {
        if (stack[i]! >= 0) {
          parent = stack[i]!;
          break;
        }
        if (stack[i] === -1) break;
      }
      if (proc !== undefined && stack.length > 0) {
        stack.push(proc.sites.length);
        proc.sites.push({ inlinee, annotations: bytes.subarray(c.pos, next), parent, offset: at });
      } else stack.push(-2);
    } else if (kind === S_END || kind === S_PROC_ID_END || kind === S_INLINESITE_END) {
      stack.pop();
      if (stack.length === 0) proc = undefined;
    }
    at = next;
  }
  return out;
}

/** The names of the IPI stream's LF_FUNC_ID and LF_MFUNC_ID records by item id (a function id's scope string before `::`). */
export function readIpiNames(bytes: Uint8Array): Map<number, string> {
  const c = new ByteCursor(bytes);
  c.need(56, "IPI stream header");
  c.u32("IPI version");
  const headerSize = c.u32("IPI header size");
  const first = c.u32("IPI TypeIndexBegin");
  c.u32("IPI TypeIndexEnd");
  const recordBytes = c.u32("IPI TypeRecordBytes");
  const end = headerSize + recordBytes;
  c.need(recordBytes, "IPI type records", headerSize);
  const strings = new Map<number, string>();
  const funcs: [number, number, string][] = [];
  let index = first;
  for (let at = headerSize; at < end; index++) {
    const length = c.seek(at).u16("IPI record length");
    if (length < 2) throw new InputError("bad-value", `IPI record length ${length} is too short for a kind`, { offset: at });
    const next = at + 2 + length;
    if (next > end) throw new InputError("truncated", `IPI record of ${length} bytes runs past the records`, { offset: at });
    const kind = c.u16("IPI record kind");
    if (kind === LF_FUNC_ID || kind === LF_MFUNC_ID || kind === LF_STRING_ID) {
      c.need(4, "IPI record", at + 4);
      const scope = c.u32("IPI record scope");
      if (kind === LF_STRING_ID) strings.set(index, recordName(bytes.subarray(c.pos, next)));
      else {
        c.need(4, "IPI function id", c.pos);
        c.skip(4);
        funcs.push([index, kind === LF_FUNC_ID ? scope : 0, recordName(bytes.subarray(c.pos, next))]);
      }
    }
    at = next;
  }
  const out = new Map<number, string>();
  for (const [id, scope, name] of funcs) {
    const prefix = scope === 0 ? undefined : strings.get(scope);
    out.set(id, prefix === undefined ? name : `${prefix}::${name}`);
  }
  return out;
}

/** A line table entry: a module-relative code address from the procedure's section, its line and its file's checksum offset. */
export interface RawLine {
  segment: number;
  offset: number;
  line: number;
  file: number;
  /** The end of the contribution the entry belongs to: no line past it. */
  contributionEnd: number;
}

/** What a module's C13 subsections hold for inline frames and lines. */
export interface ModuleLines {
  lines: RawLine[];
  /** Checksum offset → `/names` offset of the file's name. */
  checksums: Map<number, number>;
  /** Inlinee item id → its first line and file (checksum offset). */
  inlinees: Map<number, { file: number; line: number }>;
}

/** A module's C13 debug subsections, bytes [start, end) of its stream. */
export function readModuleLines(bytes: Uint8Array, start: number, end: number): ModuleLines {
  const c = new ByteCursor(bytes);
  const out: ModuleLines = { lines: [], checksums: new Map(), inlinees: new Map() };
  for (let at = start; at + 8 <= end; ) {
    const kind = c.seek(at).u32("subsection kind");
    const length = c.u32("subsection length");
    const body = at + 8;
    const bodyEnd = body + length;
    if (bodyEnd > end) throw new InputError("truncated", `C13 subsection of ${length} bytes runs past the module's line data`, { offset: at });
    if (kind === DEBUG_S_LINES) readLines(c, body, bodyEnd, out.lines);
    else if (kind === DEBUG_S_FILECHKSMS) {
      for (let e = body; e + 6 <= bodyEnd; ) {
        const name = c.seek(e).u32("file checksum name");
        const size = c.u8("checksum size");
        out.checksums.set(e - body, name);
        e = (e + 6 + size + 3) & ~3;
      }
    } else if (kind === DEBUG_S_INLINEELINES) {
      const signature = c.seek(body).u32("inlinee lines signature");
      for (let e = body + 4; e + 12 <= bodyEnd; ) {
        const inlinee = c.seek(e).u32("inlinee");
        const file = c.u32("inlinee file");
        const line = c.u32("inlinee line");
        e += 12;
        if (signature === 1) e += 4 + 4 * c.u32("inlinee extra file count");
        if (!out.inlinees.has(inlinee)) out.inlinees.set(inlinee, { file, line });
      }
    }
    at = (bodyEnd + 3) & ~3;
  }
  return out;
}

function readLines(c: ByteCursor, body: number, end: number, out: RawLine[]): void {
  const offset = c.seek(body).u32("lines offset");
  const segment = c.u16("lines segment");
  const flags = c.u16("lines flags");
  const codeSize = c.u32("lines code size");
  for (let b = body + 12; b + 12 <= end; ) {
    const file = c.seek(b).u32("line block file");
    const count = c.u32("line block count");
    const blockSize = c.u32("line block size");
    c.need(count * 8, "line records", b + 12);
    for (let i = 0; i < count; i++) {
      const at = c.u32("line offset");
      const bits = c.u32("line flags");
      out.push({ segment, offset: offset + at, line: bits & 0xff_ffff, file, contributionEnd: offset + codeSize });
    }
    if (blockSize < 12) break;
    b += blockSize;
    void flags;
    void CV_LINES_HAVE_COLUMNS;
  }
}

/** One binary annotation: its opcode and operands (U1, U2; S1 the signed line delta). */
interface Annotation {
  op: number;
  u1: number;
  u2: number;
  s1: number;
}

/** Binary annotation opcodes (cvinfo.h BinaryAnnotationOpcode). */
const BA = {
  codeOffset: 1,
  changeCodeOffsetBase: 2,
  changeCodeOffset: 3,
  changeCodeLength: 4,
  changeFile: 5,
  changeLineOffset: 6,
  changeLineEndDelta: 7,
  changeRangeKind: 8,
  changeColumnStart: 9,
  changeColumnEndDelta: 10,
  changeCodeOffsetAndLineOffset: 11,
  changeCodeLengthAndCodeOffset: 12,
  changeColumnEnd: 13,
} as const;

const signed = (v: number): number => (v & 1 ? -(v >>> 1) : v >>> 1);

/** Decodes binary annotations (compressed unsigned integers; 0 ends them, as the padding does). */
export function decodeAnnotations(bytes: Uint8Array): Annotation[] {
  let i = 0;
  const next = (): number | undefined => {
    const b = bytes[i++];
    if (b === undefined) return undefined;
    if ((b & 0x80) === 0) return b;
    if ((b & 0xc0) === 0x80) {
      const b1 = bytes[i++];
      return b1 === undefined ? undefined : ((b & 0x3f) << 8) | b1;
    }
    if ((b & 0xe0) === 0xc0) {
      const [b1, b2, b3] = [bytes[i++], bytes[i++], bytes[i++]];
      return b3 === undefined ? undefined : (((b & 0x1f) << 24) | (b1! << 16) | (b2! << 8) | b3) >>> 0;
    }
    return undefined;
  };
  const out: Annotation[] = [];
  for (;;) {
    const op = next();
    if (op === undefined || op === 0 || op > BA.changeColumnEnd) break;
    const a: Annotation = { op, u1: 0, u2: 0, s1: 0 };
    const u1 = next();
    if (u1 === undefined) break;
    if (op === BA.changeCodeOffsetAndLineOffset) {
      a.u1 = u1 & 0xf;
      a.s1 = signed(u1 >>> 4);
    } else if (op === BA.changeCodeLengthAndCodeOffset) {
      const u2 = next();
      if (u2 === undefined) break;
      a.u1 = u1;
      a.u2 = u2;
    } else if (op === BA.changeLineOffset || op === BA.changeColumnEndDelta) {
      a.s1 = signed(u1);
    } else a.u1 = u1;
    out.push(a);
  }
  return out;
}

/** Whether a site's code ranges cover `offset` (LLVM's inlineSiteContainsAddress). */
function covers(annotations: readonly Annotation[], offset: number): boolean {
  let found = false;
  let code = 0;
  for (const a of annotations) {
    switch (a.op) {
      case BA.codeOffset:
      case BA.changeCodeOffset:
      case BA.changeCodeOffsetAndLineOffset:
        code += a.u1;
        if (offset >= code) found = true;
        break;
      case BA.changeCodeLength:
        code += a.u1;
        if (found && offset < code) return true;
        found = false;
        break;
      case BA.changeCodeLengthAndCodeOffset:
        code += a.u2;
        if (offset >= code) found = true;
        code += a.u1;
        if (found && offset < code) return true;
        found = false;
        break;
      default:
        break;
    }
  }
  return false;
}

/** The code range [start, end) of a site that covers `offset` (the inline frame's base is its start); [0, 0) when none does. */
function rangeAt(annotations: readonly Annotation[], offset: number): [number, number] {
  let code = 0;
  let start = 0;
  let open = false;
  for (const a of annotations) {
    switch (a.op) {
      case BA.codeOffset:
      case BA.changeCodeOffset:
      case BA.changeCodeOffsetAndLineOffset:
        code += a.u1;
        if (!open && offset >= code) {
          start = code;
          open = true;
        }
        break;
      case BA.changeCodeLength:
        code += a.u1;
        if (open && offset < code) return [start, code];
        open = false;
        break;
      case BA.changeCodeLengthAndCodeOffset:
        code += a.u2;
        if (!open && offset >= code) {
          start = code;
          open = true;
        }
        code += a.u1;
        if (open && offset < code) return [start, code];
        open = false;
        break;
      default:
        break;
    }
  }
  return [0, 0];
}

/**
 * The line offset and file (checksum offset, 0 for the inlinee's) of a site at `offset`, as
 * LLVM 14's NativeInlineSiteSymbol::getLineOffset reads the annotations (llvm-symbolizer-14's
 * answer): the offsets and deltas are summed in order until the code offset reaches `offset`.
 * A line change that shares an annotation with a code offset past the range's first byte is so
 * counted for the rest of that range: the symbolizer's lines, which this matches, differ from
 * the annotations' plain meaning there.
 */
function lineOffsetAt(annotations: readonly Annotation[], offset: number): { line: number; file: number } {
  let line = 0;
  let file = 0;
  let code = 0;
  for (const a of annotations) {
    switch (a.op) {
      case BA.codeOffset:
      case BA.changeCodeOffset:
      case BA.changeCodeLength:
        code += a.u1;
        break;
      case BA.changeCodeLengthAndCodeOffset:
        code += a.u2;
        break;
      case BA.changeLineOffset:
      case BA.changeCodeOffsetAndLineOffset:
        code += a.u1;
        line += a.s1;
        break;
      case BA.changeFile:
        file = a.u1;
        break;
      default:
        break;
    }
    if (code >= offset) break;
  }
  return { line, file };
}

/** What a procedure's inline sites need from its module: names, lines, files. */
export interface SiteContext {
  /** Inlinee item id → name. */
  names: Map<number, string>;
  lines: ModuleLines;
  /** A `/names` offset → the file name. */
  fileName: (namesOffset: number) => string | undefined;
  /** The procedure's own line at a module-relative address (its line table), with its file. */
  procedureLine: (rva: bigint) => { line: number; file?: string } | undefined;
}

/** A procedure's inline sites as the model's (../../model/inline.ts), the procedure starting at `procRva`. */
export class PdbInlineSites implements InlineSites {
  private readonly decoded: Annotation[][];

  constructor(
    private readonly procRva: bigint,
    private readonly sites: readonly RawInlineSite[],
    private readonly context: SiteContext,
  ) {
    this.decoded = sites.map((s) => decodeAnnotations(s.annotations));
  }

  /** The file name of a checksum offset. */
  private file(checksum: number): string | undefined {
    const name = this.context.lines.checksums.get(checksum);
    return name === undefined ? undefined : this.context.fileName(name);
  }

  at(rva: bigint): readonly InlineSite[] {
    const offset = Number(rva - this.procRva);
    if (offset < 0) return [];
    // Outermost first: at each level, the first site in record order covering the offset.
    const chain: number[] = [];
    let parent = -1;
    for (;;) {
      let found = -1;
      for (let i = 0; i < this.sites.length; i++) {
        if (this.sites[i]!.parent === parent && covers(this.decoded[i]!, offset)) {
          found = i;
          break;
        }
      }
      if (found < 0) break;
      chain.push(found);
      parent = found;
    }
    if (chain.length === 0) return [];
    // Each site's own position at the offset; a site's call site is the position one level out.
    const positions = chain.map((i) => {
      const raw = this.sites[i]!;
      const start = this.context.lines.inlinees.get(raw.inlinee);
      if (start === undefined) return undefined;
      const { line, file } = lineOffsetAt(this.decoded[i]!, offset);
      return { line: start.line + line, file: this.file(file === 0 ? start.file : file) };
    });
    const outer = this.context.procedureLine(rva);
    const out: InlineSite[] = [];
    for (let k = chain.length - 1; k >= 0; k--) {
      const i = chain[k]!;
      const raw = this.sites[i]!;
      const call = k === 0 ? outer : positions[k - 1];
      const own = positions[k];
      const [start, end] = rangeAt(this.decoded[i]!, offset);
      const site: InlineSite = {
        function: this.context.names.get(raw.inlinee) ?? `<inlinee 0x${raw.inlinee.toString(16)}>`,
        depth: k,
        callLine: call?.line ?? 0,
        ranges: [[this.procRva + BigInt(start), BigInt(end - start)]],
      };
      if (call?.file !== undefined) site.callFile = call.file;
      if (own !== undefined) {
        site.line = own.line;
        if (own.file !== undefined) site.file = own.file;
      }
      out.push(site);
    }
    return out;
  }
}
