/**
 * The common `.sym` records in their usual form, read straight from the file's bytes: nothing is
 * allocated for a record. Each reader takes the bytes, the index of the line's first byte and the
 * index of its line end (the first LF or CR after it, or the end of the bytes when there is
 * none); it returns the index just past the line end (LF, CR LF or CR), having put what it read
 * in {@link FIELDS}, or −1 when the line is not that record in its usual form.
 *
 * The usual form: fields separated by one or more spaces; hex fields of at most 13 digits (below
 * 2^53), or 8 where a record keeps 32 bits; decimal fields of at most 15 digits, or 9 for a line
 * record's line and file numbers; the last field (a name, rules, a program) is the rest of the
 * line from its first non-space byte; the line ends with a line end. A line none of them reads
 * (longer fields with leading zeros, a malformed line, another kind of record, the last line of a
 * file without a line end) is read by the strict reader (fields.ts), which gives the same values
 * or the error. A FUNC's run of line records is checked by one pattern, or far into a file by a
 * loop over its bytes (parser.ts).
 */
import { HEX_VALUE } from "./digits.js";

const LF = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;

/**
 * What the last reader read: numbers, and byte indices of text (start, end). A plain array whose
 * elements are tagged values: a small whole number stays a small integer from the reader to the
 * tables, where a typed array of doubles would box every value read from it in code the engine
 * has not optimised (most of a short process).
 */
export const FIELDS: number[] = new Array<number>(16).fill(0);
// Tagged elements from the start (a double stored later must not turn the array into doubles).
(FIELDS as unknown[])[0] = null;
FIELDS[0] = 0;

/** Index past the spaces at `i` (at least one), or −1 when there is none. */
function spaces(b: Uint8Array, i: number, n: number): number {
  if (i >= n || b[i] !== SPACE) return -1;
  do i++;
  while (i < n && b[i] === SPACE);
  return i;
}

/** Where the last {@link hexField} or {@link decField} stopped. */
const cursor = { stop: 0 };

/** 1 to `max` hex digits at `i` (the value, with `cursor.stop` after them), or −1. */
function hexField(b: Uint8Array, i: number, n: number, max: number): number {
  let v = 0;
  let j = i;
  for (; j < n; j++) {
    const d = HEX_VALUE[b[j]!]!;
    if (d < 0) break;
    v = v * 16 + d;
  }
  if (j === i || j - i > max) return -1;
  cursor.stop = j;
  return v;
}

/** 1 to `max` decimal digits at `i` (the value, with `cursor.stop` after them), or −1. */
function decField(b: Uint8Array, i: number, n: number, max: number): number {
  let v = 0;
  let j = i;
  for (; j < n; j++) {
    const d = b[j]! - 0x30;
    if (d < 0 || d > 9) break;
    v = v * 10 + d;
  }
  if (j === i || j - i > max) return -1;
  cursor.stop = j;
  return v;
}

/** The index past the line end at `e` (CR LF, LF or CR), or −1 when there is none (`e` is the end of the bytes). */
function pastLineEnd(b: Uint8Array, e: number): number {
  const c = b[e];
  if (c === LF) return e + 1;
  if (c !== CR) return -1;
  return b[e + 1] === LF ? e + 2 : e + 1;
}

/**
 * The rest of the line from `i` (which follows spaces) to its line end `e`: it must not be empty.
 * Sets FIELDS[at] and FIELDS[at + 1] to its start and end; returns the index past the line end,
 * or −1.
 */
function rest(b: Uint8Array, i: number, e: number, at: number): number {
  if (i >= e) return -1;
  FIELDS[at] = i;
  FIELDS[at + 1] = e;
  return pastLineEnd(b, e);
}

/** Whether the bytes at `i` are `word`. */
function isWord(b: Uint8Array, i: number, n: number, word: Uint8Array): boolean {
  if (i + word.length > n) return false;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return false;
  return true;
}

const ascii = (word: string): Uint8Array => Uint8Array.from(word, (c) => c.charCodeAt(0));
const FILE = ascii("FILE");
const FUNC = ascii("FUNC");
const PUBLIC = ascii("PUBLIC");
const STACK = ascii("STACK");
const WIN = ascii("WIN");
const CFI = ascii("CFI");
const INIT = ascii("INIT");
const INLINE = ascii("INLINE");
const ORIGIN = ascii("_ORIGIN");

/**
 * `count` hex fields from `i`, each followed by spaces: the first `wide` of 1 to 13 digits, the
 * others of 1 to 8. Their values go to FIELDS[at…]; returns the index after the last spaces, or
 * −1. One loop for all of a record's numbers (a call per field costs more than the field, in code
 * the engine has not optimised yet).
 */
function hexFields(b: Uint8Array, i: number, n: number, count: number, wide: number, at: number): number {
  const hex = HEX_VALUE;
  let j = i;
  for (let f = 0; f < count; f++) {
    const start = j;
    let v = 0;
    while (j < n) {
      const d = hex[b[j]!]!;
      if (d < 0) break;
      v = v * 16 + d;
      j++;
    }
    if (j === start || j - start > (f < wide ? 13 : 8) || j >= n || b[j] !== SPACE) return -1;
    do j++;
    while (j < n && b[j] === SPACE);
    FIELDS[at + f] = v;
  }
  return j;
}

/** `FILE <number> <name>`: number, name start and end. */
export function fileRecord(b: Uint8Array, i: number, n: number): number {
  if (!isWord(b, i, n, FILE)) return -1;
  let j = spaces(b, i + 4, n);
  if (j < 0) return -1;
  const v = decField(b, j, n, 15);
  if (v < 0) return -1;
  FIELDS[0] = v;
  j = spaces(b, cursor.stop, n);
  return j < 0 ? -1 : rest(b, j, n, 1);
}

/** `m` and the spaces after it, at `i`: the index after them, or `i` when there is no `m`. */
function multiple(b: Uint8Array, i: number, n: number): number {
  if (b[i] !== 0x6d /* m */ || i + 1 >= n || b[i + 1] !== SPACE) return i;
  return spaces(b, i + 1, n);
}

/** `FUNC [m] <address> <size> <param size> <name>`: m (0 or 1), address, size, parameter size, name start and end. */
export function funcRecord(b: Uint8Array, i: number, n: number): number {
  if (!isWord(b, i, n, FUNC)) return -1;
  let j = spaces(b, i + 4, n);
  if (j < 0) return -1;
  const k = multiple(b, j, n);
  FIELDS[0] = k === j ? 0 : 1;
  j = hexFields(b, k, n, 3, 3, 1);
  return j < 0 ? -1 : rest(b, j, n, 4);
}

/** `PUBLIC [m] <address> <param size> <name>`: m (0 or 1), address, parameter size, name start and end. */
export function publicRecord(b: Uint8Array, i: number, n: number): number {
  if (!isWord(b, i, n, PUBLIC)) return -1;
  let j = spaces(b, i + 6, n);
  if (j < 0) return -1;
  const k = multiple(b, j, n);
  FIELDS[0] = k === j ? 0 : 1;
  j = hexFields(b, k, n, 2, 2, 1);
  return j < 0 ? -1 : rest(b, j, n, 3);
}

/** What {@link stackRecord} read. */
export const STACK_WIN = 1;
export const STACK_CFI_INIT = 2;
export const STACK_CFI = 3;

/** The kind of the last record {@link stackRecord} read. */
export let stackKind = 0;

/**
 * `STACK WIN <type> <rva> <code size>` and seven 32-bit fields (prolog to has_program) then the
 * rest of the line: FIELDS[0..9] the ten numbers, FIELDS[10..11] the rest's start and end.
 * `STACK CFI INIT <address> <size> <rules>`: FIELDS[0..1], rules at FIELDS[2..3].
 * `STACK CFI <address> <rules>`: FIELDS[0], rules at FIELDS[1..2].
 * {@link stackKind} says which.
 */
export function stackRecord(b: Uint8Array, i: number, n: number): number {
  if (!isWord(b, i, n, STACK)) return -1;
  let j = spaces(b, i + 5, n);
  if (j < 0) return -1;
  if (isWord(b, j, n, WIN)) {
    j = spaces(b, j + 3, n);
    if (j >= 0) j = hexFields(b, j, n, 10, 3, 0);
    if (j < 0) return -1;
    stackKind = STACK_WIN;
    return rest(b, j, n, 10);
  }
  if (!isWord(b, j, n, CFI)) return -1;
  j = spaces(b, j + 3, n);
  if (j < 0) return -1;
  if (isWord(b, j, n, INIT)) {
    j = spaces(b, j + 4, n);
    if (j >= 0) j = hexFields(b, j, n, 2, 2, 0);
    if (j < 0) return -1;
    stackKind = STACK_CFI_INIT;
    return rest(b, j, n, 2);
  }
  j = hexFields(b, j, n, 1, 1, 0);
  if (j < 0) return -1;
  stackKind = STACK_CFI;
  return rest(b, j, n, 1);
}

/** The rest of a STACK WIN line without a program, bytes [from, to): the allocates_base_pointer flag (1 to 8 hex digits), then only spaces; the flag, or −1. */
export function allocatesBasePointer(b: Uint8Array, from: number, to: number): number {
  const v = hexField(b, from, to, 8);
  if (v < 0) return -1;
  for (let j = cursor.stop; j < to; j++) if (b[j] !== SPACE) return -1;
  return v;
}

/**
 * `INLINE` or `INLINE_ORIGIN`, then nothing or a space and anything up to the line end: FIELDS[0]
 * is 1 for INLINE, 2 for INLINE_ORIGIN, FIELDS[1..2] the text after the keyword.
 */
export function inlineRecord(b: Uint8Array, i: number, n: number): number {
  if (!isWord(b, i, n, INLINE)) return -1;
  let j = i + 6;
  FIELDS[0] = 1;
  if (isWord(b, j, n, ORIGIN)) {
    j += 7;
    FIELDS[0] = 2;
  }
  if (j < n && b[j] !== SPACE) return -1;
  FIELDS[1] = j;
  FIELDS[2] = n;
  return pastLineEnd(b, n);
}

const LATIN1 = new TextDecoder("latin1");
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Bytes as text, one character per byte (windows-1252), so that offsets in the text are offsets
 * in the bytes. ASCII (nearly every .sym file) is read by the UTF-8 decoder, the fastest.
 */
export function bytesAsText(bytes: Uint8Array): string {
  try {
    const text = UTF8.decode(bytes);
    if (text.length === bytes.length) return text;
  } catch {
    // not UTF-8, so not ASCII
  }
  return LATIN1.decode(bytes);
}
