/**
 * Zip archives, read (PKWARE APPNOTE): the end-of-central-directory record, the central
 * directory, a member's local header and its data, stored (method 0) or deflated (method 8, by
 * ./inflate.ts). Only what reading one member of a small archive needs: no ZIP64, no encryption,
 * no data descriptors. A member is inflated to at most the size its entry declares (and never
 * more than {@link ZIP_MEMBER_LIMIT}), so a small archive cannot unpack to gigabytes. Bad bytes
 * are an {@link InputError} naming the archive offset.
 */
import { InputError } from "../errors.js";
import { inflateRawInto } from "./inflate.js";

/** The largest zip member inflated: 1 GiB. */
export const ZIP_MEMBER_LIMIT = 1 << 30;

/** One central directory entry. */
export interface ZipEntry {
  /** The member's name, quoted as JSON when it holds control characters (so no message breaks its line). */
  name: string;
  /** The name as stored (UTF-8 decoded). */
  storedName: string;
  /** 0 stored, 8 deflate; others are not read. */
  method: number;
  compressed: number;
  size: number;
  /** Archive offset of the member's local header. */
  local: number;
  /** Archive offset of this central directory entry. */
  entry: number;
}

/** A member's bytes, with where its data starts in the archive. */
export interface ZipMember {
  name: string;
  bytes: Uint8Array;
  dataOffset: number;
}

const hexText = (n: number): string => `0x${n.toString(16)}`;

/** Whether `bytes` start with a zip local file header. */
export function isZip(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && bytes[0] === 0x50 && bytes[1] === 0x4b && bytes[2] === 0x03 && bytes[3] === 0x04;
}

/** The central directory's entries, found through the end-of-central-directory record. */
export function zipEntries(zip: Uint8Array): ZipEntry[] {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  let eocd = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 0xffff); at--) {
    if (v.getUint32(at, true) === 0x06054b50) {
      eocd = at;
      break;
    }
  }
  if (eocd < 0) throw new InputError("bad-magic", "a zip archive without an end-of-central-directory record", { offset: zip.length });
  const entries = v.getUint16(eocd + 10, true);
  let at = v.getUint32(eocd + 16, true);
  const entriesAt = eocd + 16;
  const found: ZipEntry[] = [];
  for (let i = 0; i < entries; i++) {
    if (at + 46 > zip.length || v.getUint32(at, true) !== 0x02014b50) {
      throw new InputError("bad-value", `zip central directory entry ${i} is not at ${hexText(at)}, where the directory says${at + 46 > zip.length ? ` (the archive has ${zip.length} bytes)` : ""}`, { offset: i === 0 ? entriesAt : Math.min(at, zip.length) });
    }
    const nameLength = v.getUint16(at + 28, true);
    const storedName = new TextDecoder().decode(zip.subarray(at + 46, at + 46 + nameLength));
    const name = /[\u0000-\u001f\u007f]/.test(storedName) ? JSON.stringify(storedName) : storedName;
    found.push({ name, storedName, method: v.getUint16(at + 10, true), compressed: v.getUint32(at + 20, true), size: v.getUint32(at + 24, true), local: v.getUint32(at + 42, true), entry: at });
    at += 46 + nameLength + v.getUint16(at + 30, true) + v.getUint16(at + 32, true);
  }
  return found;
}

/** A member's bytes: its local header checked, its data stored or inflated to the size its entry declares. */
export function zipMember(zip: Uint8Array, e: ZipEntry): ZipMember {
  const v = new DataView(zip.buffer, zip.byteOffset, zip.byteLength);
  if (e.local + 30 > zip.length || v.getUint32(e.local, true) !== 0x04034b50) {
    throw new InputError("bad-value", `zip member ${e.name}: no local header at ${hexText(e.local)}, where its directory entry says${e.local + 30 > zip.length ? ` (the archive has ${zip.length} bytes)` : ""}`, { offset: e.entry + 42 });
  }
  const start = e.local + 30 + v.getUint16(e.local + 26, true) + v.getUint16(e.local + 28, true);
  if (e.compressed === 0xffff_ffff || e.size === 0xffff_ffff) throw new InputError("unsupported", `zip member ${e.name} uses ZIP64 sizes`, { offset: e.local });
  if (start + e.compressed > zip.length) {
    throw new InputError("truncated", `zip member ${e.name}: ${e.compressed} compressed bytes at ${hexText(start)} need ${start + e.compressed} bytes, the archive has ${zip.length}`, { offset: Math.min(start, e.local) });
  }
  if (e.size > ZIP_MEMBER_LIMIT) throw new InputError("unsupported", `zip member ${e.name} declares ${e.size} unpacked bytes, more than the ${ZIP_MEMBER_LIMIT} read`, { offset: e.entry + 24 });
  const data = zip.subarray(start, start + e.compressed);
  let bytes: Uint8Array;
  if (e.method === 0) bytes = data;
  else if (e.method === 8) {
    const out = new Uint8Array(e.size);
    let end: number;
    try {
      end = inflateRawInto(data, out, 0, e.size, start);
    } catch (err) {
      if (err instanceof InputError) throw new InputError("bad-value", `zip member ${e.name} does not inflate: ${err.reason.replace(/^deflate: /, "")}`, { offset: start });
      throw err;
    }
    if (end < 0) throw new InputError("bad-value", `zip member ${e.name} does not inflate: it inflates to more than the ${e.size} bytes its entry says`, { offset: start });
    bytes = out.subarray(0, end);
  } else throw new InputError("unsupported", `zip member ${e.name} uses compression method ${e.method} (only 0 stored and 8 deflate are read)`, { offset: e.local });
  if (bytes.length !== e.size) throw new InputError("bad-value", `zip member ${e.name} inflates to ${bytes.length} bytes, not the ${e.size} its entry says`, { offset: start });
  return { name: e.name, bytes, dataOffset: start };
}

/**
 * An error inside a zipped member, as the archive's: it names the member and where its data
 * starts in the archive (the error's offset), with the offset in the unpacked member in words.
 */
export function inZipMember(e: InputError, member: { name: string; dataOffset: number }): InputError {
  const within = e.offset === undefined ? "" : `, at offset ${hexText(e.offset)} of the unpacked member`;
  return new InputError(e.code, `zip member ${member.name} (its data at archive offset ${hexText(member.dataOffset)})${within}: ${e.reason}`, { offset: member.dataOffset });
}
