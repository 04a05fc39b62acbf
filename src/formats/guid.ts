/**
 * GUIDs as debug identifiers and ETW provider ids print them: Data1, Data2 and Data3 read
 * little-endian, then Data4 byte by byte (minidump.md §8).
 */
import { hexUpper } from "../hex.js";

/** The 16 bytes at the start of `g` as `%08X%04X%04X` + 8 × `%02X` (a PDB's or CodeView record's GUID). */
export function guidText(g: Uint8Array): string {
  const v = new DataView(g.buffer, g.byteOffset, 16);
  return hexUpper(v.getUint32(0, true), 8) + hexUpper(v.getUint16(4, true), 4) + hexUpper(v.getUint16(6, true), 4) + Array.from(g.subarray(8, 16), (b) => hexUpper(b, 2)).join("");
}

/** The same GUID in registry form, lower case: `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`. */
export function guidRegistryText(g: Uint8Array): string {
  const t = guidText(g).toLowerCase();
  return `${t.slice(0, 8)}-${t.slice(8, 12)}-${t.slice(12, 16)}-${t.slice(16, 20)}-${t.slice(20)}`;
}
