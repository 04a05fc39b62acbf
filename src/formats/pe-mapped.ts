/**
 * The parts of a PE image a walker reads from target memory, where the loader mapped it: the
 * headers at the module base, the debug directory and its payloads at their RVAs (PE Format,
 * "Debug Directory (Image Only)"). Only what unwinding needs is decoded: the machine, the
 * CodeView record that names the PDB, and the IMAGE_DEBUG_TYPE_FPO array (x86-fpo.md §1.3).
 * Everything is bounded by SizeOfImage; anything unreadable or inconsistent makes the image
 * "not readable" (undefined) or leaves out the part that is bad, never an exception, because a
 * snapshot's memory is the target's and may hold anything.
 */
import type { MemoryReader } from "../memory/reader.js";
import { decodeFpoTable, FPO_DATA_SIZE, type FpoData } from "../model/fpo-data.js";

/** What {@link readMappedImage} found. */
export interface MappedImage {
  /** IMAGE_FILE_MACHINE_* */
  machine: number;
  sizeOfImage: number;
  /** The RSDS record: PDB file name, GUID (Windows display order, upper case) and age. */
  codeView?: { pdbName: string; guid: string; age: number; debugId: string };
  /** FPO_DATA from an IMAGE_DEBUG_TYPE_FPO entry whose payload is mapped, sorted by ulOffStart. */
  fpo?: FpoData[];
  /** Why part of the image could not be used, when that happened. */
  problems: string[];
}

const DEBUG_DIRECTORY = 6;
const DEBUG_ENTRY_SIZE = 28;
const IMAGE_DEBUG_TYPE_CODEVIEW = 2;
const IMAGE_DEBUG_TYPE_FPO = 3;
const RSDS = 0x53445352;
/** More debug entries or FPO records than this is not a real image. */
const MAX_DEBUG_ENTRIES = 64;
const MAX_FPO_BYTES = 16 * 1024 * 1024;

function u16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}
function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}
const hex2 = (n: number): string => n.toString(16).toUpperCase().padStart(2, "0");

/** Reads the headers of the image mapped at `base`, or undefined when there is no readable PE image there. */
export function readMappedImage(memory: MemoryReader, base: bigint): MappedImage | undefined {
  const dos = memory.read(base, 0x40);
  if (dos === undefined || u16(dos, 0) !== 0x5a4d) return undefined;
  const lfanew = u32(dos, 0x3c);
  if (lfanew > 0x10000) return undefined;
  const nt = memory.read(base + BigInt(lfanew), 24 + 240);
  if (nt === undefined || u32(nt, 0) !== 0x4550) return undefined;
  const machine = u16(nt, 4);
  const oh = 24;
  const magic = u16(nt, oh);
  if (magic !== 0x10b && magic !== 0x20b) return undefined;
  const sizeOfImage = u32(nt, oh + 56);
  const dirBase = oh + (magic === 0x20b ? 112 : 96);
  const count = u32(nt, oh + (magic === 0x20b ? 108 : 92));
  const image: MappedImage = { machine, sizeOfImage, problems: [] };
  if (count <= DEBUG_DIRECTORY) return image;
  const debugRva = u32(nt, dirBase + DEBUG_DIRECTORY * 8);
  const debugSize = u32(nt, dirBase + DEBUG_DIRECTORY * 8 + 4);
  if (debugSize === 0) return image;
  const entries = Math.floor(debugSize / DEBUG_ENTRY_SIZE);
  if (entries > MAX_DEBUG_ENTRIES || debugRva + debugSize > sizeOfImage) {
    image.problems.push(`the debug directory (RVA 0x${debugRva.toString(16)}, ${debugSize} bytes) does not fit the image`);
    return image;
  }
  const dir = memory.read(base + BigInt(debugRva), entries * DEBUG_ENTRY_SIZE);
  if (dir === undefined) {
    image.problems.push(`the debug directory at RVA 0x${debugRva.toString(16)} is not in memory`);
    return image;
  }
  for (let i = 0; i < entries; i++) {
    const at = i * DEBUG_ENTRY_SIZE;
    const type = u32(dir, at + 12);
    const size = u32(dir, at + 16);
    const rva = u32(dir, at + 20);
    if (rva === 0 || size === 0) continue;
    if (rva + size > sizeOfImage) {
      image.problems.push(`debug entry ${i} (type ${type}) at RVA 0x${rva.toString(16)} runs past the image`);
      continue;
    }
    if (type === IMAGE_DEBUG_TYPE_CODEVIEW && size >= 24 && size < 4096) {
      const cv = memory.read(base + BigInt(rva), size);
      if (cv === undefined || u32(cv, 0) !== RSDS) continue;
      const g = cv.subarray(4, 20);
      const guid =
        u32(g, 0).toString(16).toUpperCase().padStart(8, "0") +
        u16(g, 4).toString(16).toUpperCase().padStart(4, "0") +
        u16(g, 6).toString(16).toUpperCase().padStart(4, "0") +
        Array.from(g.subarray(8, 16), hex2).join("");
      const age = u32(cv, 20);
      const nameBytes = cv.subarray(24);
      const nul = nameBytes.indexOf(0);
      const pdbName = new TextDecoder().decode(nameBytes.subarray(0, nul < 0 ? nameBytes.length : nul));
      image.codeView = { pdbName, guid, age, debugId: guid + age.toString(16) };
    } else if (type === IMAGE_DEBUG_TYPE_FPO) {
      if (size % FPO_DATA_SIZE !== 0 || size > MAX_FPO_BYTES) {
        image.problems.push(`the FPO debug entry is ${size} bytes, not a whole number of 16-byte FPO_DATA records`);
        continue;
      }
      const bytes = memory.read(base + BigInt(rva), size);
      if (bytes === undefined) {
        image.problems.push(`the FPO_DATA at RVA 0x${rva.toString(16)} is not in memory`);
        continue;
      }
      image.fpo = decodeFpoTable(bytes).sort((a, b) => a.ulOffStart - b.ulOffStart);
    }
  }
  return image;
}
