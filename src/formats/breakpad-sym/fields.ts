/**
 * The strict reading of one `.sym` line, field by field (minidump.md §7): fields are separated by
 * spaces, the last field of a record may be the rest of the line, numbers are strict hex or
 * decimal no larger than 2^53 − 1. Every problem is an {@link InputError} whose reason starts with
 * `line N` and whose offset is the byte offset of the line's first byte.
 */
import { InputError, type InputErrorCode } from "../../errors.js";
import { hex } from "../../hex.js";

const SPACE = 0x20;
/** Strict hex: digits only, no `0x`. */
export const HEX_DIGITS = /^[0-9A-Fa-f]+$/;
const DEC_DIGITS = /^[0-9]+$/;

/** Where a line is, for errors: its 1-based number and the byte offset of its first byte. */
export interface LineSite {
  line: number;
  offset: number;
}

/** Throws the InputError for a malformed line. */
export function fail(code: InputErrorCode, site: LineSite, message: string): never {
  throw new InputError(code, `line ${site.line}: ${message}`, { offset: site.offset });
}

/** A line's text shortened for a message. */
export function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** Reads the space-separated fields of one line, left to right. */
export class Fields {
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
