/**
 * The debug directory of a PE image (PE Format, "Debug Directory (Image Only)"): its 28-byte
 * IMAGE_DEBUG_DIRECTORY entries, the CodeView record that names the PDB (minidump.md §2.3, §8)
 * and the old-FPO payload (x86-fpo.md §1.3).
 */
import { InputError } from "../../errors.js";
import { hex, hexUpper } from "../../hex.js";
import { ByteCursor } from "../../memory/cursor.js";
import { FPO_DATA_SIZE } from "../../model/fpo-data.js";
import { guidText } from "../guid.js";
import { IMAGE_DEBUG_TYPE, PE_LIMITS, type CodeViewInfo, type PeDebugEntry } from "./types.js";

const DEBUG_ENTRY_SIZE = 28;
const RSDS = 0x53445352; // "RSDS"
const NB10 = 0x3031424e; // "NB10"

/** What the debug directory gives. */
export interface DebugDirectory {
  entries: PeDebugEntry[];
  codeView?: CodeViewInfo;
  /** The raw IMAGE_DEBUG_TYPE_FPO payload. */
  fpo?: Uint8Array;
}

/** Where the image's mapped bytes lie in the file (see image.ts). */
export interface FileBacking {
  readonly bytes: Uint8Array;
  /** The file offset holding `size` mapped bytes at `rva`, when they all come from one stretch of the file. */
  fileRange(rva: number, size: number): number | undefined;
}

/**
 * Reads the debug directory's entries from `dir` (the directory's bytes in the file; its size a
 * multiple of 28, checked by the caller), with the first CodeView record and the first FPO
 * payload. `sizeAt` is the file offset of the directory's Size field.
 */
export function readDebugDirectory(dir: ByteCursor, image: FileBacking, sizeAt: number): DebugDirectory {
  const count = dir.bytes.byteLength / DEBUG_ENTRY_SIZE;
  if (count > PE_LIMITS.maxDebugEntries) {
    throw new InputError("unsupported", `the debug directory has ${count} entries, more than ${PE_LIMITS.maxDebugEntries}`, { offset: sizeAt });
  }
  const out: DebugDirectory = { entries: [] };
  for (let i = 0; i < count; i++) {
    const e = dir.base + i * DEBUG_ENTRY_SIZE;
    dir.skip(4, "IMAGE_DEBUG_DIRECTORY.Characteristics");
    const timeDateStamp = dir.u32("IMAGE_DEBUG_DIRECTORY.TimeDateStamp");
    dir.skip(4, "IMAGE_DEBUG_DIRECTORY.MajorVersion/MinorVersion");
    const entry: PeDebugEntry = {
      type: dir.u32("IMAGE_DEBUG_DIRECTORY.Type"),
      size: dir.u32("IMAGE_DEBUG_DIRECTORY.SizeOfData"),
      rva: dir.u32("IMAGE_DEBUG_DIRECTORY.AddressOfRawData"),
      fileOffset: dir.u32("IMAGE_DEBUG_DIRECTORY.PointerToRawData"),
      timeDateStamp,
    };
    const payload = debugPayload(image, entry, e);
    if (entry.type === IMAGE_DEBUG_TYPE.CODEVIEW && out.codeView === undefined && payload !== undefined) {
      out.codeView = parseCodeView(payload);
    } else if (entry.type === IMAGE_DEBUG_TYPE.FPO && out.fpo === undefined && payload !== undefined) {
      if (entry.size % FPO_DATA_SIZE !== 0) {
        throw new InputError("bad-value", `FPO debug data size ${hex(entry.size)} is not a multiple of ${FPO_DATA_SIZE}`, { offset: e + 16 });
      }
      out.fpo = payload.bytes;
    }
    out.entries.push(entry);
  }
  return out;
}

/**
 * Where a debug entry's payload is: PointerToRawData in the file when set (it need not be
 * mapped), otherwise AddressOfRawData in the image. Undefined for an empty payload (lld's
 * IMAGE_DEBUG_TYPE_REPRO entry has SizeOfData 0 and both pointers 0). `e` is the entry's offset.
 */
function debugPayload(image: FileBacking, entry: PeDebugEntry, e: number): ByteCursor | undefined {
  if (entry.size === 0) return undefined;
  const fileLength = image.bytes.byteLength;
  if (entry.fileOffset !== 0) {
    if (entry.fileOffset + entry.size > fileLength) {
      throw new InputError(
        "truncated",
        `debug entry (type ${entry.type}) data ${hex(entry.fileOffset)}..${hex(entry.fileOffset + entry.size)} runs past the end of the file (length ${hex(fileLength)})`,
        { offset: e + 24 },
      );
    }
    return new ByteCursor(image.bytes.subarray(entry.fileOffset, entry.fileOffset + entry.size), entry.fileOffset);
  }
  const at = entry.rva === 0 ? undefined : image.fileRange(entry.rva, entry.size);
  if (at === undefined) {
    throw new InputError("bad-value", `debug entry (type ${entry.type}) has ${hex(entry.size)} bytes of data but no file-backed location (RVA ${hex(entry.rva)})`, {
      offset: e + 20,
    });
  }
  return new ByteCursor(image.bytes.subarray(at, at + entry.size), at);
}

/**
 * Parses a CodeView debug record (minidump.md §2.3): "RSDS" + GUID(16) + age(4) + NUL-terminated
 * UTF-8 PDB path, or "NB10" + offset(4) + signature(4) + age(4) + path. Anything else is rejected.
 */
export function parseCodeView(c: ByteCursor): CodeViewInfo {
  const start = c.base;
  const signature = c.u32("CodeView signature");
  if (signature === RSDS) {
    const guid = guidText(c.take(16, "CodeView RSDS GUID"));
    const age = c.u32("CodeView RSDS age");
    const pdbName = cString(c, "CodeView RSDS PDB name");
    return { format: "RSDS", guid, age, pdbName, debugId: guid + age.toString(16) };
  }
  if (signature === NB10) {
    c.skip(4, "CodeView NB10 offset");
    const guid = hexUpper(c.u32("CodeView NB10 signature"), 8);
    const age = c.u32("CodeView NB10 age");
    const pdbName = cString(c, "CodeView NB10 PDB name");
    return { format: "NB10", guid, age, pdbName, debugId: guid + age.toString(16) };
  }
  const text = Array.from(c.bytes.subarray(0, 4), (b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
  throw new InputError("bad-magic", `CodeView signature "${text}" (${hex(signature)}) is neither "RSDS" nor "NB10"`, { offset: start });
}

/** A NUL-terminated UTF-8 string that must end inside the cursor's bytes. */
function cString(c: ByteCursor, what: string): string {
  const rest = c.bytes.subarray(c.pos);
  const nul = rest.indexOf(0);
  if (nul < 0) {
    throw new InputError("truncated", `${what} has no NUL terminator before the end of the record (offset ${hex(c.base + c.bytes.byteLength)})`, { offset: c.offset });
  }
  return new TextDecoder("utf-8").decode(rest.subarray(0, nul));
}

/** A PE image's code id, as a minidump's module list and Breakpad give it: TimeDateStamp as `%08X`, then SizeOfImage as `%x` (minidump.md §8). */
export function peCodeId(timeDateStamp: number, sizeOfImage: number | bigint): string {
  return hexUpper(timeDateStamp, 8) + sizeOfImage.toString(16);
}
