/**
 * The parts of a PE image a walker reads from target memory, where the loader mapped it: the
 * headers at the module base, the debug directory and its payloads at their RVAs (PE Format,
 * "Debug Directory (Image Only)"), and the exception directory. Only what unwinding needs is
 * decoded: the machine, the CodeView record that names the PDB, the IMAGE_DEBUG_TYPE_FPO array
 * (x86-fpo.md §1.3), and the RUNTIME_FUNCTION table of an x64, IA-64 or ARM64 image (x64-unwind.md
 * §1.1, arm64.md §1.1).
 * Everything is bounded by SizeOfImage; anything unreadable or inconsistent makes the image
 * "not readable" (undefined) or leaves out the part that is bad, never an exception, because a
 * snapshot's memory is the target's and may hold anything.
 */
import { hex } from "../hex.js";
import { InputError } from "../errors.js";
import { ByteCursor } from "../memory/cursor.js";
import type { MemoryReader } from "../memory/reader.js";
import { IMAGE_DEBUG_TYPE, IMAGE_DIRECTORY_ENTRY, parseCodeView, type CodeViewInfo } from "./pe.js";
import { decodeFpoTable, FPO_DATA_SIZE, type FpoData } from "../model/fpo-data.js";

/** What {@link readMappedImage} found. */
export interface MappedImage {
  /** IMAGE_FILE_MACHINE_* */
  machine: number;
  sizeOfImage: number;
  /** The CodeView record (RSDS or NB10): PDB file name, GUID (Windows display order, upper case) and age. */
  codeView?: CodeViewInfo;
  /** FPO_DATA from an IMAGE_DEBUG_TYPE_FPO entry whose payload is mapped, sorted by ulOffStart. */
  fpo?: FpoData[];
  /**
   * The exception directory (data directory 3) as the optional header gives it, when its size is
   * not 0; {@link readMappedRuntimeFunctions} reads the table it points at.
   */
  exceptionDirectory?: { rva: number; size: number };
  /** The section table (each section's RVA and flags), when it is in memory: what turns a PDB's section:offset addresses into RVAs. */
  sections?: { virtualAddress: number; virtualSize: number; characteristics: number }[];
  /** Why part of the image could not be used, when that happened. */
  problems: string[];
}

const DEBUG_ENTRY_SIZE = 28;
const EXCEPTION_DIRECTORY = IMAGE_DIRECTORY_ENTRY.EXCEPTION;
const DEBUG_DIRECTORY = IMAGE_DIRECTORY_ENTRY.DEBUG;
/** More debug entries or FPO records than this is not a real image. */
const MAX_DEBUG_ENTRIES = 64;
const MAX_FPO_BYTES = 16 * 1024 * 1024;

function u16(b: Uint8Array, at: number): number {
  return b[at]! | (b[at + 1]! << 8);
}
function u32(b: Uint8Array, at: number): number {
  return (b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16) | (b[at + 3]! << 24)) >>> 0;
}

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
  // The section table follows the optional header (at most 96 sections, as the loader allows).
  const sectionCount = u16(nt, 6);
  if (sectionCount > 0 && sectionCount <= 96) {
    const table = memory.read(base + BigInt(lfanew + 24 + u16(nt, 20)), 40 * sectionCount);
    if (table !== undefined) image.sections = Array.from({ length: sectionCount }, (_, i) => ({ virtualAddress: u32(table, 40 * i + 12), virtualSize: u32(table, 40 * i + 8), characteristics: u32(table, 40 * i + 36) }));
  }
  if (count > EXCEPTION_DIRECTORY) {
    const rva = u32(nt, dirBase + EXCEPTION_DIRECTORY * 8);
    const size = u32(nt, dirBase + EXCEPTION_DIRECTORY * 8 + 4);
    if (size !== 0) image.exceptionDirectory = { rva, size };
  }
  if (count <= DEBUG_DIRECTORY) return image;
  const debugRva = u32(nt, dirBase + DEBUG_DIRECTORY * 8);
  const debugSize = u32(nt, dirBase + DEBUG_DIRECTORY * 8 + 4);
  if (debugSize === 0) return image;
  const entries = Math.floor(debugSize / DEBUG_ENTRY_SIZE);
  if (entries > MAX_DEBUG_ENTRIES || debugRva + debugSize > sizeOfImage) {
    image.problems.push(`the debug directory (RVA ${hex(debugRva)}, ${debugSize} bytes) does not fit the image`);
    return image;
  }
  const dir = memory.read(base + BigInt(debugRva), entries * DEBUG_ENTRY_SIZE);
  if (dir === undefined) {
    image.problems.push(`the debug directory at RVA ${hex(debugRva)} is not in memory`);
    return image;
  }
  for (let i = 0; i < entries; i++) {
    const at = i * DEBUG_ENTRY_SIZE;
    const type = u32(dir, at + 12);
    const size = u32(dir, at + 16);
    const rva = u32(dir, at + 20);
    if (rva === 0 || size === 0) continue;
    if (rva + size > sizeOfImage) {
      image.problems.push(`debug entry ${i} (type ${type}) at RVA ${hex(rva)} runs past the image`);
      continue;
    }
    if (type === IMAGE_DEBUG_TYPE.CODEVIEW && size < 4096) {
      const cv = memory.read(base + BigInt(rva), size);
      if (cv === undefined) continue;
      try {
        image.codeView = parseCodeView(new ByteCursor(cv));
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        image.problems.push(`the CodeView record at RVA ${hex(rva)}: ${e.reason}`);
      }
    } else if (type === IMAGE_DEBUG_TYPE.FPO) {
      if (size % FPO_DATA_SIZE !== 0 || size > MAX_FPO_BYTES) {
        image.problems.push(`the FPO debug entry is ${size} bytes, not a whole number of 16-byte FPO_DATA records`);
        continue;
      }
      const bytes = memory.read(base + BigInt(rva), size);
      if (bytes === undefined) {
        image.problems.push(`the FPO_DATA at RVA ${hex(rva)} is not in memory`);
        continue;
      }
      image.fpo = decodeFpoTable(bytes).sort((a, b) => a.ulOffStart - b.ulOffStart);
    }
  }
  return image;
}

/** Size of one x64 RUNTIME_FUNCTION (x64-unwind.md §1.1). */
export const RUNTIME_FUNCTION_BYTES = 12;
/** More RUNTIME_FUNCTIONs than this (a 12 MiB exception directory) is not a real image. */
const MAX_RUNTIME_FUNCTIONS = 1 << 20;

/** Size of one ARM64 IMAGE_ARM64_RUNTIME_FUNCTION_ENTRY: BeginAddress and UnwindData (arm64.md §1.1). */
export const ARM64_RUNTIME_FUNCTION_BYTES = 8;

/**
 * The RUNTIME_FUNCTION table of the image mapped at `base`, as read from memory: the entries'
 * u32 fields in table order — BeginAddress, EndAddress and UnwindData of entry i at [3i], [3i + 1],
 * [3i + 2] for 12-byte entries (x64, IA-64), BeginAddress and UnwindData at [2i], [2i + 1] for
 * 8-byte ones (ARM64) — nothing sorted or checked here beyond the bounds of the image. An empty
 * table when the image has no exception directory; a string saying why when the directory cannot
 * be read.
 */
export function readMappedRuntimeFunctions(memory: MemoryReader, base: bigint, image: MappedImage, entryBytes: number = RUNTIME_FUNCTION_BYTES): Uint32Array | string {
  const dir = image.exceptionDirectory;
  if (dir === undefined) return new Uint32Array(0);
  const where = `the exception directory (RVA ${hex(dir.rva)}, ${dir.size} bytes)`;
  if (dir.rva + dir.size > image.sizeOfImage) return `${where} does not fit the image (SizeOfImage ${hex(image.sizeOfImage)})`;
  const count = Math.floor(dir.size / entryBytes);
  if (count > MAX_RUNTIME_FUNCTIONS) return `${where} holds ${count} entries, more than ${MAX_RUNTIME_FUNCTIONS}`;
  const words = count * (entryBytes / 4);
  const table = new Uint32Array(words);
  if (count === 0) return table;
  const bytes = memory.read(base + BigInt(dir.rva), count * entryBytes);
  if (bytes === undefined) return `${where} is not in memory`;
  for (let i = 0; i < words; i++) table[i] = u32(bytes, i * 4);
  return table;
}
