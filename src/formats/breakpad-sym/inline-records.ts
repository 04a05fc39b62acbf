/**
 * INLINE and INLINE_ORIGIN records (minidump.md §7), in both of the forms dump_syms has written,
 * read as Breakpad's SymbolParseHelper reads them:
 *
 * - `INLINE_ORIGIN <origin id> <name>`, and the older `INLINE_ORIGIN <origin id> <file id> <name>`
 *   (the field after the id is a file id when it is all digits, with an optional leading `-`);
 * - `INLINE <depth> <call line> <call file id> <origin id> (<address> <size>)+`, and the older
 *   `INLINE <depth> <call line> <origin id> (<address> <size>)+` without the call site's file
 *   (an even number of fields is the current form, an odd number the older one).
 *
 * Numbers are decimal except the hex addresses and sizes; a file id may be −1 (no file). A record
 * these rules refuse is left out and counted: Breakpad logs it and does not count it against the
 * symbol file.
 */
import { HEX_VALUE } from "./digits.js";
import { FIELDS } from "./scan.js";

const SPACE = 0x20;
const MINUS = 0x2d;
/** The largest number a field may hold (the fields are kept as doubles). */
const MAX = Number.MAX_SAFE_INTEGER;
/** A call file of an INLINE record in the older form, which names none. */
export const NO_CALL_FILE = -2;

/** A decimal field [start, end), at least `min`; NaN when it is not one. */
function decimal(b: Uint8Array, start: number, end: number, min: number): number {
  let i = start;
  let negative = false;
  if (b[i] === MINUS) {
    negative = true;
    i++;
  }
  if (i >= end) return Number.NaN;
  let value = 0;
  for (; i < end; i++) {
    const d = b[i]! - 0x30;
    if (d < 0 || d > 9) return Number.NaN;
    value = value * 10 + d;
    if (value > MAX) return Number.NaN;
  }
  if (negative) value = -value;
  return value < min ? Number.NaN : value;
}

/** A hex field [start, end); NaN when it is not one. */
function hexField(b: Uint8Array, start: number, end: number): number {
  if (start >= end || end - start > 13) return Number.NaN;
  let value = 0;
  for (let i = start; i < end; i++) {
    const d = HEX_VALUE[b[i]!]!;
    if (d < 0) return Number.NaN;
    value = value * 16 + d;
  }
  return value;
}

/** The number of space-separated fields of `b` [from, to). */
function fieldCount(b: Uint8Array, from: number, to: number): number {
  let count = 0;
  let i = from;
  while (i < to) {
    while (i < to && b[i] === SPACE) i++;
    if (i >= to) break;
    count++;
    while (i < to && b[i] !== SPACE) i++;
  }
  return count;
}

/**
 * Reads the INLINE record whose fields are `b` [from, to) (after the keyword): whether Breakpad
 * takes it, with its numbers (depth, call line, call file or {@link NO_CALL_FILE}, origin, then
 * (address, size) pairs) pushed onto `out` when given. Nothing is allocated: the parse only
 * checks a record, a lookup reads it.
 */
export function readInline(b: Uint8Array, from: number, to: number, out?: number[]): boolean {
  const count = fieldCount(b, from, to);
  if (count < 5) return false;
  // An even number of fields is the current form, with a call file; the pairs then fill the rest.
  const withFile = count % 2 === 0;
  const numbers = withFile ? 4 : 3;
  const at = out === undefined ? 0 : out.length;
  let i = from;
  for (let k = 0; k < count; k++) {
    while (b[i] === SPACE) i++;
    const start = i;
    while (i < to && b[i] !== SPACE) i++;
    const value = k < numbers ? decimal(b, start, i, withFile && k === 2 ? -1 : 0) : hexField(b, start, i);
    if (Number.isNaN(value)) {
      if (out !== undefined) out.length = at;
      return false;
    }
    if (out === undefined) continue;
    if (k === 2 && !withFile) out.push(NO_CALL_FILE);
    out.push(value);
  }
  return true;
}

/**
 * Reads the INLINE_ORIGIN record whose text after the keyword is `b` [from, to): whether Breakpad
 * takes it, with FIELDS[0] its id, FIELDS[1] its file id ({@link NO_CALL_FILE} when it has none),
 * FIELDS[2..3] where its name is.
 */
export function readInlineOrigin(b: Uint8Array, from: number, to: number): boolean {
  let i = from;
  while (i < to && b[i] === SPACE) i++;
  const idStart = i;
  while (i < to && b[i] !== SPACE) i++;
  const id = decimal(b, idStart, i, 0);
  while (i < to && b[i] === SPACE) i++;
  if (Number.isNaN(id) || i >= to) return false;
  // The older form has a file id here: a first word of digits, with an optional leading minus.
  let j = i;
  let digits = true;
  for (; j < to && b[j] !== SPACE; j++) {
    const c = b[j]!;
    if (!(c >= 0x30 && c <= 0x39) && !(c === MINUS && j === i)) {
      digits = false;
      break;
    }
  }
  let file = NO_CALL_FILE;
  if (digits) {
    while (j < to && b[j] !== SPACE) j++;
    file = decimal(b, i, j, -1);
    if (Number.isNaN(file)) return false;
    while (j < to && b[j] === SPACE) j++;
    if (j >= to) return false;
    i = j;
  }
  FIELDS[0] = id;
  FIELDS[1] = file;
  FIELDS[2] = i;
  FIELDS[3] = to;
  return true;
}
