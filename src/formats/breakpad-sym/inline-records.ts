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
import { HEX_VALUE } from "./tables.js";

/** An INLINE record's numbers: depth, call line, call file (−2 when the record has none), origin, then (address, size) pairs. */
export type InlineNumbers = number[];

const SPACE = 0x20;
const MINUS = 0x2d;
/** The largest number a field may hold (the fields are kept as doubles). */
const MAX = Number.MAX_SAFE_INTEGER;
/** A call file of an INLINE record in the older form, which names none. */
export const NO_CALL_FILE = -2;

/** The space-separated fields of `text` [from, to). */
function fieldsOf(text: string, from: number, to: number): [number, number][] {
  const out: [number, number][] = [];
  let i = from;
  while (i < to) {
    while (i < to && text.charCodeAt(i) === SPACE) i++;
    if (i >= to) break;
    const start = i;
    while (i < to && text.charCodeAt(i) !== SPACE) i++;
    out.push([start, i]);
  }
  return out;
}

/** A decimal field [start, end), at least `min`; NaN when it is not one. */
function decimal(text: string, start: number, end: number, min: number): number {
  let i = start;
  let negative = false;
  if (text.charCodeAt(i) === MINUS) {
    negative = true;
    i++;
  }
  if (i >= end) return Number.NaN;
  let value = 0;
  for (; i < end; i++) {
    const d = text.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return Number.NaN;
    value = value * 10 + d;
    if (value > MAX) return Number.NaN;
  }
  if (negative) value = -value;
  return value < min ? Number.NaN : value;
}

/** A hex field [start, end); NaN when it is not one. */
function hexField(text: string, start: number, end: number): number {
  if (start >= end || end - start > 13) return Number.NaN;
  let value = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    const d = c < 0x80 ? HEX_VALUE[c]! : -1;
    if (d < 0) return Number.NaN;
    value = value * 16 + d;
  }
  return value;
}

/** The numbers of the INLINE record whose fields are `text` [from, to) (after the keyword), or undefined when Breakpad refuses it. */
export function readInline(text: string, from: number, to: number): InlineNumbers | undefined {
  const f = fieldsOf(text, from, to);
  if (f.length < 5) return undefined;
  const withFile = f.length % 2 === 0;
  const field = (k: number, min: number): number => decimal(text, f[k]![0], f[k]![1], min);
  const depth = field(0, 0);
  const callLine = field(1, 0);
  const callFile = withFile ? field(2, -1) : NO_CALL_FILE;
  const origin = field(withFile ? 3 : 2, 0);
  if (Number.isNaN(depth + callLine + callFile + origin)) return undefined;
  const out = [depth, callLine, callFile, origin];
  for (let k = withFile ? 4 : 3; k + 1 < f.length; k += 2) {
    const address = hexField(text, f[k]![0], f[k]![1]);
    const size = hexField(text, f[k + 1]![0], f[k + 1]![1]);
    if (Number.isNaN(address + size)) return undefined;
    out.push(address, size);
  }
  return out;
}

/** An INLINE_ORIGIN record read from `text` [from, to): the id, the file id (−2 when the record has none) and where the name is. */
export interface OriginFields {
  id: number;
  file: number;
  nameStart: number;
  nameEnd: number;
}

/** The fields of the INLINE_ORIGIN record whose text after the keyword is `text` [from, to), or undefined when Breakpad refuses it. */
export function readInlineOrigin(text: string, from: number, to: number): OriginFields | undefined {
  let i = from;
  while (i < to && text.charCodeAt(i) === SPACE) i++;
  const idStart = i;
  while (i < to && text.charCodeAt(i) !== SPACE) i++;
  const id = decimal(text, idStart, i, 0);
  while (i < to && text.charCodeAt(i) === SPACE) i++;
  if (Number.isNaN(id) || i >= to) return undefined;
  // The older form has a file id here: a first word of digits, with an optional leading minus.
  let j = i;
  let digits = true;
  for (; j < to && text.charCodeAt(j) !== SPACE; j++) {
    const c = text.charCodeAt(j);
    if (!(c >= 0x30 && c <= 0x39) && !(c === MINUS && j === i)) {
      digits = false;
      break;
    }
  }
  let file = NO_CALL_FILE;
  if (digits) {
    while (j < to && text.charCodeAt(j) !== SPACE) j++;
    file = decimal(text, i, j, -1);
    if (Number.isNaN(file)) return undefined;
    while (j < to && text.charCodeAt(j) === SPACE) j++;
    if (j >= to) return undefined;
    i = j;
  }
  return { id, file, nameStart: i, nameEnd: to };
}
