/**
 * The container reader: bounds-checked access to a minidump's bytes, where every error names an
 * absolute file offset, and the notes a lenient read leaves (minidump.md §1). Also the pieces
 * the list streams share: a list's count and entries, a memory descriptor, and the note for
 * ranges whose bytes the file does not hold.
 */
import { InputError, type InputErrorCode } from "../../errors.js";
import { hex } from "../../hex.js";
import type { ByteSource } from "../../memory/byte-source.js";
import { ByteCursor } from "../../memory/cursor.js";
import { MINIDUMP_LIMITS, streamTypeName } from "./constants.js";
import type { MemoryOrigin, MinidumpLocation, MinidumpMemoryRange, MinidumpStreamEntry } from "./types.js";

/** Why a string cannot be read: what an InputError would say, and where. */
interface Refusal {
  code: InputErrorCode;
  offset: number;
  reason: string;
}

const utf16 = new TextDecoder("utf-16le");

/**
 * Bounds-checked access to the source; every error names an absolute offset. What the reader
 * passes over or repairs to keep going (a damaged or cut-off dump) goes to `notes`, each naming
 * the offset of the field that was wrong.
 */
export class MinidumpInput {
  readonly size: number;
  readonly notes: string[] = [];
  /** Notes past {@link MINIDUMP_LIMITS.maxNotes}, counted and not kept. */
  private leftOut = 0;
  constructor(readonly source: ByteSource) {
    this.size = source.size;
  }

  /** Records something passed over or repaired, at the offset of the field concerned. */
  note(offset: number | undefined, text: string): void {
    if (this.notes.length >= MINIDUMP_LIMITS.maxNotes) this.leftOut++;
    else this.notes.push(offset === undefined ? text : `offset ${hex(offset)}: ${text}`);
  }

  /** Ends the notes: those left out are counted in a last one. */
  closeNotes(): void {
    if (this.leftOut > 0) this.notes.push(`${this.leftOut} more note(s) left out: the first ${MINIDUMP_LIMITS.maxNotes} are kept`);
    this.leftOut = 0;
  }

  /** The part of a location the file holds: all of it, its bytes up to the end of the file, or none when its RVA lies outside. */
  held(loc: MinidumpLocation): MinidumpLocation {
    if (loc.rva >= this.size) return { dataSize: 0, rva: loc.rva };
    return loc.dataSize <= this.size - loc.rva ? loc : { dataSize: this.size - loc.rva, rva: loc.rva };
  }

  /**
   * {@link held}, with a note when bytes are lost: `DataSize` is at `at` and `Rva` at `at + 4`.
   */
  clip(loc: MinidumpLocation, at: number, what: string): MinidumpLocation {
    const held = this.held(loc);
    if (held.dataSize === loc.dataSize) return held;
    if (held.dataSize === 0) {
      this.note(at + 4, `${what}: RVA ${hex(loc.rva)} lies outside the file (${hex(this.size)} bytes); none of its ${loc.dataSize} byte(s) are read`);
    } else {
      this.note(at, `${what}: ${loc.dataSize} byte(s) at RVA ${hex(loc.rva)} run past the end of the file (${hex(this.size)} bytes); the first ${held.dataSize} are read`);
    }
    return held;
  }

  /** Runs `read`; an InputError becomes a note (`what` passed over) and `undefined`. */
  lenient<T>(what: string, read: () => T): T | undefined {
    try {
      return read();
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      this.note(e.offset, `${what} passed over: ${e.reason}`);
      return undefined;
    }
  }

  /** A cursor over `length` bytes at `offset`; if they are not all in the file, "truncated" at `errorAt`. */
  cursor(offset: number, length: number, what: string, errorAt = offset): ByteCursor {
    if (offset > this.size || length > this.size - offset) {
      throw new InputError("truncated", `${what}: ${length} byte(s) at ${hex(offset)} run past the end of the file (${hex(this.size)} bytes)`, { offset: errorAt });
    }
    const bytes = this.source.read(offset, length);
    if (bytes === undefined || bytes.byteLength !== length) {
      throw new InputError("truncated", `${what}: cannot read ${length} byte(s) at ${hex(offset)}`, { offset: errorAt });
    }
    return new ByteCursor(bytes, offset);
  }

  /**
   * Checks a location (`DataSize` at `at`, `Rva` at `at + 4`) against the file: an RVA outside
   * it is "bad-value" at the Rva field, data running past its end is "truncated" at DataSize.
   */
  location(loc: MinidumpLocation, at: number, what: string, needed = loc.dataSize): void {
    if (loc.rva > this.size) {
      throw new InputError("bad-value", `${what}: RVA ${hex(loc.rva)} lies outside the file (${hex(this.size)} bytes)`, { offset: at + 4 });
    }
    if (needed > this.size - loc.rva) {
      throw new InputError("truncated", `${what}: ${needed} byte(s) at RVA ${hex(loc.rva)} run past the end of the file (${hex(this.size)} bytes)`, { offset: at });
    }
  }

  /** A MINIDUMP_STRING (u32 byte length, UTF-16LE) whose RVA is the u32 at `at`. */
  string(rva: number, at: number, what: string): string {
    const read = this.stringAt(rva, at, what);
    if (typeof read === "string") return read;
    throw new InputError(read.code, read.reason, { offset: read.offset });
  }

  /**
   * {@link string}, or `undefined` with a note (`what` passed over) when the string cannot be
   * read: what a lenient read of a name needs, without an error made and caught per entry.
   */
  optionalString(rva: number, at: number, what: string, passedOver: string): string | undefined {
    const read = this.stringAt(rva, at, what);
    if (typeof read === "string") {
      const over = this.nameChars(read.length, what);
      if (over === undefined) return read;
      this.note(at, `${passedOver} passed over: ${over}`);
      return undefined;
    }
    this.note(read.offset, `${passedOver} passed over: ${read.reason}`);
    return undefined;
  }

  /** Characters of names handed out so far (see {@link MINIDUMP_LIMITS}' `maxNameChars`). */
  private namesChars = 0;

  /**
   * Counts `length` characters of a name against the dump's limit: undefined when they fit, else
   * why the name is passed over (and nothing is counted).
   */
  nameChars(length: number, what: string): string | undefined {
    if (this.namesChars + length <= MINIDUMP_LIMITS.maxNameChars) {
      this.namesChars += length;
      return undefined;
    }
    return `${what}: ${length} more character(s) would take the names read from this dump past ${MINIDUMP_LIMITS.maxNameChars} (the limit of one dump)`;
  }

  /**
   * Decoded strings by RVA, or why the one at an RVA cannot be read: the entries of a damaged
   * list may all name one string, and each would decode it again.
   */
  private readonly strings = new Map<number, string | ((what: string) => Refusal)>();

  private stringAt(rva: number, at: number, what: string): string | Refusal {
    if (rva > this.size - 4 || this.size < 4) {
      return { code: "bad-value", offset: at, reason: `${what}: RVA ${hex(rva)} leaves no room for a MINIDUMP_STRING in the file (${hex(this.size)} bytes)` };
    }
    let known = this.strings.get(rva);
    if (known === undefined) {
      known = this.decodeString(rva);
      this.strings.set(rva, known);
    }
    return typeof known === "string" ? known : known(what);
  }

  /** The string at `rva` (its length field lies inside the file), or how to say why not. */
  private decodeString(rva: number): string | ((what: string) => Refusal) {
    const head = this.source.read(rva, 4);
    if (head === undefined) return (what) => ({ code: "truncated", offset: rva, reason: `${what} length: cannot read 4 byte(s) at ${hex(rva)}` });
    const length = new ByteCursor(head, rva).u32();
    if (length % 2 !== 0) return (what) => ({ code: "bad-value", offset: rva, reason: `${what}: MINIDUMP_STRING length ${length} is odd (it counts UTF-16 bytes)` });
    if (length > MINIDUMP_LIMITS.maxStringBytes) {
      return (what) => ({ code: "bad-value", offset: rva, reason: `${what}: MINIDUMP_STRING length ${length} exceeds the ${MINIDUMP_LIMITS.maxStringBytes}-byte limit` });
    }
    const start = rva + 4;
    if (start > this.size || length > this.size - start) {
      return (what) => ({ code: "truncated", offset: rva, reason: `${what} (${length} bytes of UTF-16): ${length} byte(s) at ${hex(start)} run past the end of the file (${hex(this.size)} bytes)` });
    }
    const body = this.source.read(start, length);
    if (body === undefined || body.byteLength !== length) {
      return (what) => ({ code: "truncated", offset: rva, reason: `${what} (${length} bytes of UTF-16): cannot read ${length} byte(s) at ${hex(start)}` });
    }
    return utf16.decode(body);
  }
}

/**
 * The `u32 count` of a list stream and where its entries start (minidump.md §2.1: optional 4
 * padding bytes). `stream` is the directory entry as declared and `held` the part of it the file
 * holds: a count the stream cannot hold is cut to the entries that fit, with a note.
 */
export function listEntries(input: MinidumpInput, stream: MinidumpStreamEntry, held: MinidumpLocation, entrySize: number): { count: number; first: number } {
  const { rva, dataSize } = stream.location;
  const name = streamTypeName(stream.streamType);
  if (held.dataSize < 4) {
    input.note(stream.offset + 4, `${name} stream holds ${held.dataSize} byte(s), too few for its u32 count: no entries are read`);
    return { count: 0, first: rva };
  }
  const count = input.cursor(rva, 4, `${name} count`).u32();
  // Breakpad also accepts 4 padding bytes after the count: DataSize == 8 + n·entrySize.
  const first = dataSize === 8 + count * entrySize ? rva + 8 : rva + 4;
  const fit = Math.floor((held.dataSize - (first - rva)) / entrySize);
  if (count <= fit) return { count, first };
  const why = held.dataSize < dataSize ? `the file holds ${held.dataSize} of its ${dataSize} bytes` : `the stream holds ${dataSize} bytes`;
  input.note(rva, `${name} count ${count} needs ${4 + count * entrySize} bytes of ${entrySize}-byte entries but ${why}: the first ${fit} entr${fit === 1 ? "y is" : "ies are"} read`);
  return { count: fit, first };
}

/** How a list stream whose header sizes itself (MINIDUMP_UNLOADED_MODULE_LIST, MINIDUMP_HANDLE_DATA_STREAM) names its parts. */
export interface SizedListShape {
  /** The stream's name in messages. */
  stream: string;
  /** The smallest header: SizeOfHeader, SizeOfEntry and the count (u32 each), and what follows them. */
  headerSize: number;
  /** The smallest entry. */
  entrySize: number;
  /** An entry in words ("an entry"), and the header's names of the entry size and the count. */
  entry: string;
  sizeField: string;
  countField: string;
  /** The most entries read, what they are ("modules") and what the entries are called ("entries"): the rest are passed over with a note. */
  most?: { count: number; of: string; entries: string };
}

/**
 * The header of a list stream that gives its own size, its entries' size and their count: where
 * the entries start, how far apart, and how many the stream holds (a count it cannot hold is cut,
 * with a note; one above the shape's most is cut to it, with a note). An impossible header or
 * entry size is an {@link InputError}.
 */
export function sizedListEntries(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation, shape: SizedListShape): { first: number; entrySize: number; count: number } {
  const { stream, headerSize: least, entrySize: smallest } = shape;
  if (held.dataSize < least) {
    throw new InputError("truncated", `${stream} stream holds ${held.dataSize} bytes, fewer than its ${least}-byte header`, { offset: s.offset + 4 });
  }
  const h = input.cursor(held.rva, least, `${stream} header`);
  const headerSize = h.u32();
  const entrySize = h.u32();
  const declared = h.u32();
  if (headerSize < least || headerSize > held.dataSize) {
    throw new InputError("bad-value", `${stream} SizeOfHeader ${headerSize} is not between ${least} and the stream's ${held.dataSize} bytes`, { offset: held.rva });
  }
  if (entrySize < smallest) {
    throw new InputError("bad-value", `${stream} ${shape.sizeField} ${entrySize} is less than the ${smallest} bytes of ${shape.entry}`, { offset: held.rva + 4 });
  }
  const fit = Math.floor((held.dataSize - headerSize) / entrySize);
  const count = Math.min(declared, fit);
  if (count < declared) input.note(held.rva + 8, `${stream} ${shape.countField} ${declared} needs ${declared * entrySize} bytes after the header but the stream holds ${held.dataSize - headerSize}: the first ${count} are read`);
  const { most } = shape;
  if (most === undefined || count <= most.count) return { first: held.rva + headerSize, entrySize, count };
  input.note(held.rva + 8, `${stream}: ${count} ${most.entries}; the first ${most.count} are read (the limit of ${most.of} read from one dump), the rest passed over`);
  return { first: held.rva + headerSize, entrySize, count: most.count };
}

/**
 * Reads a MINIDUMP_MEMORY_DESCRIPTOR at the cursor (start u64, DataSize u32, Rva u32). A range
 * keeps only the bytes the file holds (`declared` then says what the descriptor claimed); one
 * that would run past the end of the 64-bit address space keeps none. The caller notes losses.
 */
export function memoryDescriptor(input: MinidumpInput, c: ByteCursor, from: MemoryOrigin): MinidumpMemoryRange {
  const at = c.offset;
  const start = c.u64();
  const dataSize = c.u32();
  const rva = c.u32();
  const held = start + BigInt(dataSize) > 1n << 64n ? 0 : input.held({ dataSize, rva }).dataSize;
  const range: MinidumpMemoryRange = { start, size: BigInt(held), rva, descriptor: at, from };
  if (held !== dataSize) range.declared = BigInt(dataSize);
  return range;
}

/** Notes the ranges of a list that lost bytes: the first in words, the rest counted. */
export function noteLostRanges(input: MinidumpInput, what: string, ranges: readonly MinidumpMemoryRange[]): void {
  const lost = ranges.filter((r) => r.declared !== undefined);
  const first = lost[0];
  if (first === undefined) return;
  const end = first.start + first.declared!;
  const more = lost.length > 1 ? `; ${lost.length - 1} more range(s) of the list lose bytes the same way` : "";
  const outOfSpace = first.start + first.declared! > 1n << 64n;
  const cause = outOfSpace ? "would run past the end of the 64-bit address space" : `runs past the end of the file (${hex(input.size)} bytes)`;
  // The field at fault: the start, the Rva (MemoryList and thread descriptors) or the DataSize.
  const field = outOfSpace ? first.descriptor : first.from !== "Memory64List" && first.rva >= input.size ? first.descriptor + 12 : first.descriptor + 8;
  input.note(field, `${what}: the range ${hex(first.start)}..${hex(end)} (${first.declared} bytes at file offset ${hex(first.rva)}) ${cause}; ${first.size} of its bytes are read${more}`);
}

