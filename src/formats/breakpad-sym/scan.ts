/**
 * The common `.sym` records in their usual form, as patterns the parser matches on the file's
 * bytes read one character per byte (windows-1252), so that a match's offsets are byte offsets
 * and the text of a record is found again in the bytes. Each pattern is a whole line with its
 * line end (sticky: matched where lastIndex is). Hex fields have at most 13 digits (below 2^53),
 * or 8 where a record keeps 32 bits; decimal fields at most 15 digits, or 9 for a line record's
 * line and file numbers; the last field is the rest of the line from its first non-space
 * character. A line none of them matches (longer fields with leading zeros, a malformed line,
 * another kind of record) is read by the strict reader (fields.ts), which gives the same values
 * or the error. The patterns run as native code, so a parse in a fresh process (the command
 * line's) spends little time in JavaScript.
 */

const EOL = "(?:\\r\\n|\\n|\\r)";
const HEX13 = "([0-9A-Fa-f]{1,13})";
const HEX8 = "([0-9A-Fa-f]{1,8})";
const REST = "([^ \\r\\n][^\\r\\n]*)";

/** `<address> <size> <line> <file>` of a FUNC. */
export const LINE_RECORD = new RegExp(`[0-9A-Fa-f]{1,8} +[0-9A-Fa-f]{1,8} +[0-9]{1,9} +[0-9]{1,9} *${EOL}`, "y");
/** `FILE <number> <name>`. */
export const FILE_RECORD = new RegExp(`FILE +([0-9]{1,15}) +${REST}${EOL}`, "y");
/** `FUNC [m] <address> <size> <param size> <name>`. */
export const FUNC_RECORD = new RegExp(`FUNC +(?:(m) +)?${HEX13} +${HEX13} +${HEX13} +${REST}${EOL}`, "y");
/** `PUBLIC [m] <address> <param size> <name>`. */
export const PUBLIC_RECORD = new RegExp(`PUBLIC +(?:(m) +)?${HEX13} +${HEX13} +${REST}${EOL}`, "y");
/**
 * `STACK WIN` with type, rva, code_size and seven 32-bit fields (the last has_program), then the
 * rest of the line: the program, or the allocates_base_pointer flag ({@link ALLOCATES_BASE_POINTER}).
 */
export const STACK_WIN_RECORD = new RegExp(`STACK +WIN +${HEX13} +${HEX13} +${HEX13}${(" +" + HEX8).repeat(7)} +${REST}${EOL}`, "y");
/** `STACK CFI INIT <address> <size> <rules>`. */
export const CFI_INIT_RECORD = new RegExp(`STACK +CFI +INIT +${HEX13} +${HEX13} +${REST}${EOL}`, "y");
/** `STACK CFI <address> <rules>`. */
export const CFI_DELTA_RECORD = new RegExp(`STACK +CFI +${HEX13} +${REST}${EOL}`, "y");
/** `INLINE <fields>`: the text after the keyword is read by inline-records.ts. */
export const INLINE_RECORD = new RegExp(`INLINE((?: [^\\r\\n]*)?)${EOL}`, "y");
/** `INLINE_ORIGIN <fields>`: the text after the keyword is read by inline-records.ts. */
export const INLINE_ORIGIN_RECORD = new RegExp(`INLINE_ORIGIN((?: [^\\r\\n]*)?)${EOL}`, "y");
/** The rest of a STACK WIN line without a program: the allocates_base_pointer flag, then nothing but spaces. */
export const ALLOCATES_BASE_POINTER = new RegExp(`^${HEX8} *$`);

const LATIN1 = new TextDecoder("latin1");
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * `bytes` as text when they are all ASCII (nearly every .sym file is), else undefined. The UTF-8
 * decoder reads them fastest; UTF-8 that decodes to one character per byte is ASCII.
 */
export function asciiText(bytes: Uint8Array): string | undefined {
  try {
    const text = UTF8.decode(bytes);
    return text.length === bytes.length ? text : undefined;
  } catch {
    return undefined; // not UTF-8, so not ASCII
  }
}

/** Bytes as text, one character per byte (windows-1252), so that offsets in the text are offsets in the bytes. */
export function bytesAsText(bytes: Uint8Array): string {
  return asciiText(bytes) ?? LATIN1.decode(bytes);
}
