/**
 * Writes single-folder cabinets (docs/spec/cab.md) for tests: the compressed form a symbol store
 * serves (`app.ex_`). Each 32 KiB block of the file is a "CK" signature and a raw DEFLATE stream
 * made by Node's zlib; with `history`, each block is compressed with the previous 32 KiB as its
 * preset dictionary, so its distances reach back into earlier blocks as Microsoft's MSZIP
 * compressor's do (cabextract, libmspack's reader, extracts these byte for byte). Data-block
 * checksums are 0 (none), as the format allows.
 */
import { deflateRawSync } from "node:zlib";

/** Options of {@link writeCab}. */
export interface CabWriteOptions {
  /** "mszip" (default) or "none" (stored blocks). */
  method?: "mszip" | "none";
  /** MSZIP blocks use the window of the blocks before them (default true). */
  history?: boolean;
}

const BLOCK = 0x8000;

/** A cabinet holding `files` in one folder. */
export function writeCab(files: readonly { name: string; bytes: Uint8Array }[], options: CabWriteOptions = {}): Uint8Array {
  const method = options.method ?? "mszip";
  const all = Buffer.concat(files.map((f) => Buffer.from(f.bytes)));
  const blocks: Buffer[] = [];
  for (let at = 0; at < all.length || (at === 0 && all.length === 0); at += BLOCK) {
    const raw = all.subarray(at, Math.min(all.length, at + BLOCK));
    let data: Buffer;
    if (method === "none") data = raw;
    else {
      const dictionary = options.history === false ? undefined : all.subarray(Math.max(0, at - BLOCK), at);
      const deflated = deflateRawSync(raw, dictionary === undefined || dictionary.length === 0 ? {} : { dictionary });
      data = Buffer.concat([Buffer.from("CK", "latin1"), deflated]);
    }
    const header = Buffer.alloc(8);
    header.writeUInt16LE(data.length, 4);
    header.writeUInt16LE(raw.length, 6);
    blocks.push(Buffer.concat([header, data]));
    if (all.length === 0) break;
  }
  const names = files.map((f) => Buffer.concat([Buffer.from(f.name, "latin1"), Buffer.alloc(1)]));
  const coffFiles = 36 + 8;
  const cfFiles: Buffer[] = [];
  let offset = 0;
  for (const [i, f] of files.entries()) {
    const entry = Buffer.alloc(16);
    entry.writeUInt32LE(f.bytes.length, 0);
    entry.writeUInt32LE(offset, 4);
    entry.writeUInt16LE(0, 8);
    entry.writeUInt16LE(0x5a21, 10); // 2025-01-01
    entry.writeUInt16LE(0, 12);
    entry.writeUInt16LE(0x20, 14); // _A_ARCH
    cfFiles.push(entry, names[i]!);
    offset += f.bytes.length;
  }
  const filesBytes = Buffer.concat(cfFiles);
  const dataStart = coffFiles + filesBytes.length;
  const body = Buffer.concat(blocks);
  const header = Buffer.alloc(36);
  header.write("MSCF", 0, "latin1");
  header.writeUInt32LE(dataStart + body.length, 8);
  header.writeUInt32LE(coffFiles, 16);
  header.writeUInt8(3, 24);
  header.writeUInt8(1, 25);
  header.writeUInt16LE(1, 26);
  header.writeUInt16LE(files.length, 28);
  const folder = Buffer.alloc(8);
  folder.writeUInt32LE(dataStart, 0);
  folder.writeUInt16LE(blocks.length, 4);
  folder.writeUInt16LE(method === "none" ? 0 : 1, 6);
  return new Uint8Array(Buffer.concat([header, folder, filesBytes, body]));
}
