/**
 * GUIDs as debug identifiers and ETW provider ids print them: Data1, Data2 and Data3 read
 * little-endian, then Data4 byte by byte (minidump.md §8).
 */
import { hexUpper } from "../hex.js";

/** Each byte's two upper-case hex digits. */
const BYTE_HEX = Array.from({ length: 256 }, (_, b) => hexUpper(b, 2));

/** The 16 bytes at the start of `g` as `%08X%04X%04X` + 8 × `%02X` (a PDB's or CodeView record's GUID). */
export function guidText(g: Uint8Array): string {
  if (g.length < 16) throw new RangeError(`a GUID is 16 bytes, not ${g.length}`);
  const h = BYTE_HEX;
  // Data1 to Data3 little-endian, Data4 in byte order: a dump names hundreds of modules by their GUIDs.
  return (
    h[g[3]!]! + h[g[2]!]! + h[g[1]!]! + h[g[0]!]! + h[g[5]!]! + h[g[4]!]! + h[g[7]!]! + h[g[6]!]! +
    h[g[8]!]! + h[g[9]!]! + h[g[10]!]! + h[g[11]!]! + h[g[12]!]! + h[g[13]!]! + h[g[14]!]! + h[g[15]!]!
  );
}

/** The same GUID in registry form, lower case: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
export function guidRegistryText(g: Uint8Array): string {
  const t = guidText(g).toLowerCase();
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`;
}
