/**
 * A zip archive writer for tests (PKWARE APPNOTE: local headers, central directory, end record),
 * members stored or deflated by Node's zlib, so the project's zip reader (src/formats/zip.ts) and
 * its DEFLATE decoder are checked against bytes they did not make.
 */
import { deflateRawSync } from "node:zlib";

/** A zip archive with stored or deflated members. */
export function zip(members: { name: string; bytes: Uint8Array; deflate?: boolean }[]): Uint8Array {
  const parts: number[] = [];
  const central: number[] = [];
  const u16 = (v: number): number[] => [v & 0xff, v >>> 8];
  const u32 = (v: number): number[] => [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, v >>> 24];
  for (const m of members) {
    const name = [...new TextEncoder().encode(m.name)];
    const data = m.deflate === true ? deflateRawSync(m.bytes) : m.bytes;
    const method = m.deflate === true ? 8 : 0;
    const local = parts.length;
    parts.push(...u32(0x04034b50), ...u16(20), ...u16(0), ...u16(method), ...u32(0), ...u32(0), ...u32(data.length), ...u32(m.bytes.length), ...u16(name.length), ...u16(0), ...name, ...data);
    central.push(...u32(0x02014b50), ...u16(20), ...u16(20), ...u16(0), ...u16(method), ...u32(0), ...u32(0), ...u32(data.length), ...u32(m.bytes.length));
    central.push(...u16(name.length), ...u16(0), ...u16(0), ...u16(0), ...u16(0), ...u32(0), ...u32(local), ...name);
  }
  const at = parts.length;
  return Uint8Array.from([...parts, ...central, ...u32(0x06054b50), ...u16(0), ...u16(0), ...u16(members.length), ...u16(members.length), ...u32(central.length), ...u32(at), ...u16(0)]);
}
