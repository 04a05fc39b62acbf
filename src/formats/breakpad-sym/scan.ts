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
 * `STACK WIN` with type, rva, code_size and seven 32-bit fields (the last has_program), up to the
 * program or the allocates_base_pointer flag that make the rest of the line (lastIndex is left
 * where it starts).
 */
export const STACK_WIN_RECORD = new RegExp(`STACK +WIN +${HEX13} +${HEX13} +${HEX13}${(" +" + HEX8).repeat(7)} +(?=[^ \\r\\n])`, "y");
/** The rest of a line and its line end. */
export const REST_OF_LINE = new RegExp(`[^\\r\\n]*${EOL}`, "y");
/** `STACK CFI INIT <address> <size> <rules>`. */
export const CFI_INIT_RECORD = new RegExp(`STACK +CFI +INIT +${HEX13} +${HEX13} +${REST}${EOL}`, "y");
/** `STACK CFI <address> <rules>`. */
export const CFI_DELTA_RECORD = new RegExp(`STACK +CFI +${HEX13} +${REST}${EOL}`, "y");
/** INLINE records, skipped. */
export const INLINE_RECORD = new RegExp(`INLINE(?: [^\\r\\n]*)?${EOL}`, "y");
/** INLINE_ORIGIN records, skipped. */
export const INLINE_ORIGIN_RECORD = new RegExp(`INLINE_ORIGIN(?: [^\\r\\n]*)?${EOL}`, "y");
/** The rest of a STACK WIN line without a program: the allocates_base_pointer flag, then nothing but spaces, then the line end. */
export const ALLOCATES_BASE_POINTER = new RegExp(`${HEX8} *${EOL}`, "y");

const LATIN1 = new TextDecoder("latin1");
const ASCII = new TextDecoder("utf-8", { ignoreBOM: true });
const NON_ASCII = /[^\x00-\x7f]/;

/**
 * Bytes as text, one character per byte (windows-1252), so that offsets in the text are offsets
 * in the bytes. Text that is all ASCII (nearly every .sym file) is read by the faster UTF-8
 * decoder, which gives the same characters for it.
 */
export function bytesAsText(bytes: Uint8Array): string {
  const text = ASCII.decode(bytes);
  return NON_ASCII.test(text) ? LATIN1.decode(bytes) : text;
}
