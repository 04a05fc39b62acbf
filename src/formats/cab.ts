/**
 * Microsoft cabinet files (docs/spec/cab.md): the compressed form a symbol store keeps a file in
 * (`ntdll.dl_`, `app.pd_`: the name with its last letter replaced by `_`). A cabinet is a header
 * (CFHEADER), its folders (CFFOLDER: where a folder's data blocks begin, how many, how they are
 * compressed), its files (CFFILE: size, offset in the folder's uncompressed bytes, folder, name)
 * and each folder's data blocks (CFDATA: at most 32 KiB uncompressed each). Stored blocks
 * (method 0) and MSZIP blocks (method 1: `CK` then raw DEFLATE, inflate.ts, the window carried
 * from block to block) are read; Quantum and LZX are named in an "unsupported" error, as is a
 * cabinet continued from or into another one.
 *
 * Every size is checked against the bytes before it is used, and against `maxBytes` before
 * anything is allocated: a file is extracted only when its folder's blocks, added up, hold it,
 * and no output is larger than the file's declared size. Errors are {@link InputError}s naming
 * the byte offset.
 */
import { InputError } from "../errors.js";
import { hex } from "../hex.js";
import { ByteCursor } from "../memory/cursor.js";
import { inflateRaw } from "./inflate.js";

/** "MSCF". */
export const CAB_MAGIC = "MSCF";

/** The most uncompressed bytes one data block holds (MSZIP's frame). */
const BLOCK_MAX = 0x8000;
/** CFHEADER.flags. */
const PREV_CABINET = 0x1;
const NEXT_CABINET = 0x2;
const RESERVE_PRESENT = 0x4;
/** CFFILE.attribs: the name is UTF-8. */
const NAME_IS_UTF = 0x80;
/** CFFOLDER.typeCompress & 0xf. */
const METHODS = ["none", "MSZIP", "Quantum", "LZX"] as const;

/** Default cap on one extracted file: 1 GiB (a PE image is at most PE_LIMITS.maxSizeOfImage mapped). */
export const CAB_MAX_BYTES = 1 << 30;

/** One file of a cabinet. */
export interface CabFile {
  /** The name as stored (a path with `\` separators is possible). */
  name: string;
  /** Uncompressed size in bytes. */
  size: number;
  /** The folder it is in. */
  folder: number;
  /** Its offset in the folder's uncompressed bytes. */
  offset: number;
}

/** A parsed cabinet: its files, and a way to extract one. */
export interface Cabinet {
  files: CabFile[];
  /** The file's bytes; throws {@link InputError} for damaged data or an unsupported method. */
  extract(file: CabFile): Uint8Array;
}

interface Folder {
  dataOffset: number;
  blocks: number;
  method: number;
  /** Where the CFFOLDER entry is, for errors. */
  at: number;
}

/** Options of {@link readCabinet}. */
export interface CabOptions {
  /** The largest file extracted, in bytes (default {@link CAB_MAX_BYTES}); a larger declared size is refused before any work. */
  maxBytes?: number;
}

const latin1 = (bytes: Uint8Array): string => String.fromCharCode(...bytes);

/** Reads a NUL-terminated string of at most `max` bytes at the cursor. */
function zstring(c: ByteCursor, max: number, what: string, utf8: boolean): string {
  const start = c.pos;
  const end = c.bytes.indexOf(0, start);
  if (end < 0 || end - start > max) throw new InputError("bad-value", `${what}: no NUL within ${max} bytes`, { offset: c.base + start });
  const bytes = c.bytes.subarray(start, end);
  c.pos = end + 1;
  return utf8 ? new TextDecoder("utf-8", { fatal: false }).decode(bytes) : latin1(bytes);
}

/** Parses a cabinet's header, folders and files. */
export function readCabinet(bytes: Uint8Array, options: CabOptions = {}): Cabinet {
  const maxBytes = options.maxBytes ?? CAB_MAX_BYTES;
  const c = new ByteCursor(bytes);
  c.need(36, "CFHEADER");
  if (latin1(bytes.subarray(0, 4)) !== CAB_MAGIC) throw new InputError("bad-magic", `not a cabinet (no "${CAB_MAGIC}" signature)`, { offset: 0 });
  c.pos = 16;
  const coffFiles = c.u32();
  c.pos = 24;
  const minor = c.u8();
  const major = c.u8();
  const cFolders = c.u16();
  const cFiles = c.u16();
  const flags = c.u16();
  c.pos = 36;
  if (major !== 1 || minor !== 3) throw new InputError("unsupported", `cabinet version ${major}.${minor} (only 1.3 is read)`, { offset: 24 });
  if ((flags & (PREV_CABINET | NEXT_CABINET)) !== 0) throw new InputError("unsupported", "a cabinet continued from or into another cabinet (a spanned set) is not read", { offset: 30 });
  let folderReserve = 0;
  let dataReserve = 0;
  if ((flags & RESERVE_PRESENT) !== 0) {
    const headerReserve = c.u16();
    folderReserve = c.u8();
    dataReserve = c.u8();
    c.need(headerReserve, "CFHEADER.abReserve");
    c.pos += headerReserve;
  }
  const folders: Folder[] = [];
  for (let i = 0; i < cFolders; i++) {
    const at = c.pos;
    c.need(8 + folderReserve, `CFFOLDER ${i}`);
    folders.push({ dataOffset: c.u32(), blocks: c.u16(), method: c.u16(), at });
    c.pos += folderReserve;
  }
  c.seek(coffFiles, "CFHEADER.coffFiles");
  const files: CabFile[] = [];
  for (let i = 0; i < cFiles; i++) {
    const at = c.pos;
    c.need(16, `CFFILE ${i}`);
    const size = c.u32();
    const offset = c.u32();
    const folder = c.u16();
    c.pos += 4;
    const attribs = c.u16();
    const name = zstring(c, 256, `CFFILE ${i}.szName`, (attribs & NAME_IS_UTF) !== 0);
    if (folder >= folders.length) throw new InputError("unsupported", `file ${JSON.stringify(name)} is in folder ${hex(folder)}, which this cabinet does not hold (a spanned set, or damage)`, { offset: at + 8 });
    files.push({ name, size, folder, offset });
  }
  const extract = (file: CabFile): Uint8Array => {
    const folder = folders[file.folder]!;
    const method = folder.method & 0xf;
    if (method !== 0 && method !== 1) throw new InputError("unsupported", `folder ${file.folder} is compressed with ${METHODS[method] ?? `method ${method}`} (only none and MSZIP are read)`, { offset: folder.at + 6 });
    if (file.size > maxBytes) throw new InputError("bad-value", `file ${JSON.stringify(file.name)} declares ${file.size} bytes, more than the ${maxBytes}-byte limit`, { offset: coffFiles });
    const need = file.offset + file.size;
    // The blocks up to the one that holds the file's last byte: their sizes are read first, so
    // nothing is allocated or inflated for a file the blocks cannot hold.
    const blocks: { at: number; data: number; size: number; out: number }[] = [];
    const d = new ByteCursor(bytes);
    d.seek(folder.dataOffset, `CFFOLDER ${file.folder}.coffCabStart`);
    let total = 0;
    for (let i = 0; i < folder.blocks && total < need; i++) {
      const at = d.pos;
      d.need(8 + dataReserve, `CFDATA ${i} of folder ${file.folder}`);
      d.pos += 4;
      const size = d.u16();
      const out = d.u16();
      d.pos += dataReserve;
      if (out === 0 || out > BLOCK_MAX) throw new InputError("bad-value", `CFDATA ${i}: ${out} uncompressed bytes (1 to ${BLOCK_MAX})`, { offset: at + 6 });
      if (method === 0 && size !== out) throw new InputError("bad-value", `CFDATA ${i}: a stored block of ${size} bytes that says it holds ${out}`, { offset: at + 4 });
      d.need(size, `CFDATA ${i} data`);
      blocks.push({ at, data: d.pos, size, out });
      d.pos += size;
      total += out;
    }
    if (total < need) throw new InputError("bad-value", `file ${JSON.stringify(file.name)} ends at ${need} bytes into folder ${file.folder}, whose blocks hold ${total}`, { offset: folder.at });
    if (total > maxBytes + BLOCK_MAX) throw new InputError("bad-value", `folder ${file.folder} holds more than the ${maxBytes}-byte limit before the file's end`, { offset: folder.at });
    const folderBytes = new Uint8Array(total);
    let pos = 0;
    for (const [i, b] of blocks.entries()) {
      const data = bytes.subarray(b.data, b.data + b.size);
      if (method === 0) folderBytes.set(data, pos);
      else {
        if (b.size < 2 || data[0] !== 0x43 || data[1] !== 0x4b) throw new InputError("bad-value", `CFDATA ${i}: an MSZIP block without its "CK" signature`, { offset: b.data });
        inflateRaw(data.subarray(2), folderBytes, pos, pos + b.out, b.data + 2);
      }
      pos += b.out;
    }
    return folderBytes.slice(file.offset, need);
  };
  return { files, extract };
}
