/**
 * GUIDs as debug identifiers and ETW provider ids print them: Data1, Data2 and Data3 read
 * little-endian, then Data4 byte by byte (minidump.md §8).
 */
/** The character codes of the upper-case hex digits. */
const DIGIT = Array.from("0123456789ABCDEF", (c) => c.charCodeAt(0));

/** The order the text takes the bytes in: Data1 to Data3 little-endian, Data4 in byte order. */
const BYTE_ORDER = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];

/** The text's character codes, made again for each GUID. */
const CODES = new Uint16Array(32);

/**
 * The 16 bytes at the start of `g` as `%08X%04X%04X` + 8 × `%02X` (a PDB's or CodeView record's
 * GUID). Made as one string from its character codes: a dump names thousands of modules by their
 * GUIDs, and texts joined from pieces would each keep a chain of the pieces (about ten times the
 * text's size) for as long as the module is kept.
 */
export function guidText(g: Uint8Array): string {
  if (g.length < 16) throw new RangeError(`a GUID is 16 bytes, not ${g.length}`);
  for (let k = 0; k < 16; k++) {
    const b = g[BYTE_ORDER[k]!]!;
    CODES[2 * k] = DIGIT[b >> 4]!;
    CODES[2 * k + 1] = DIGIT[b & 15]!;
  }
  return String.fromCharCode.apply(null, CODES as unknown as number[]);
}

/** The same GUID in registry form, lower case: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
export function guidRegistryText(g: Uint8Array): string {
  const t = guidText(g).toLowerCase();
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`;
}
