/**
 * Writes PE-shaped images for the emulator's test programs: a DOS header, "PE\0\0", the COFF
 * file header, an optional header with 16 data directories, the section table, and the
 * sections. The result is what a linker would produce for a program with no imports and no
 * base relocations, loaded at a fixed ImageBase: enough for `parsePe` (src/formats/pe.ts), the
 * PE loader and the walkers, and nothing a real loader would need on top.
 *
 * Layout facts follow Microsoft's "PE Format" specification; section names in the comments
 * refer to it. The x86 walkers find FPO_DATA through the debug directory's
 * IMAGE_DEBUG_TYPE_FPO entry (x86-fpo.md §1.3); {@link debugSection} builds that directory.
 *
 * Sections are placed in the order given, each at the next SectionAlignment boundary, so a
 * section's address depends only on the sections before it. A section's content may therefore
 * be a function of where it landed and where the earlier sections landed: a `.pdata` builder can
 * point its RUNTIME_FUNCTIONs at an earlier `.xdata` (x64-unwind.md §1.1), and the debug
 * directory points at its own payloads. The same bytes come out for the same input, always.
 */
import { hex } from "../src/index.js";
import { encodeFpoTable, type FpoData } from "../src/entry/dbghelp.js";
import { IMAGE_FILE_MACHINE } from "../src/entry/arch.js";

/** The machines the writer lays out: x86 and ARM (ARMNT) images are PE32, x64 and ARM64 images PE32+. */
export type ImageMachine = "x86" | "x64" | "arm64" | "arm";

/** IMAGE_FILE_HEADER.Machine of each. */
const FILE_MACHINE: Readonly<Record<ImageMachine, number>> = { x86: IMAGE_FILE_MACHINE.I386, x64: IMAGE_FILE_MACHINE.AMD64, arm64: IMAGE_FILE_MACHINE.ARM64, arm: IMAGE_FILE_MACHINE.ARMNT };

/** Section alignment in memory: one 4 KiB page, as link.exe and lld use. */
export const SECTION_ALIGNMENT = 0x1000;
/** Section alignment in the file: one 512-byte sector, as link.exe and lld use. */
export const FILE_ALIGNMENT = 0x200;
/**
 * The RVA of the first section. The headers always fit in the first page (at most
 * {@link MAX_SECTIONS} section headers), so code assembled for the first section can be
 * assembled at `imageBase + FIRST_SECTION_RVA` before the image is written.
 */
export const FIRST_SECTION_RVA = SECTION_ALIGNMENT;
/** The most sections an image may have here; their headers then still fit in the first page. */
export const MAX_SECTIONS = 16;

/** IMAGE_SCN_* characteristics of the usual sections (PE Format, "Section Flags"). */
export const SECTION_CHARACTERISTICS = {
  /** CNT_CODE | MEM_EXECUTE | MEM_READ. */
  text: 0x6000_0020,
  /** CNT_INITIALIZED_DATA | MEM_READ: `.rdata`, `.pdata`, `.xdata`. */
  rdata: 0x4000_0040,
  /** CNT_INITIALIZED_DATA | MEM_READ | MEM_WRITE. */
  data: 0xc000_0040,
  /** CNT_UNINITIALIZED_DATA | MEM_READ | MEM_WRITE: memory with no file bytes. */
  bss: 0xc000_0080,
} as const;

/** Data-directory indices the writer's helpers fill (PE Format, "Optional Header Data Directories"). */
export const DIRECTORY_INDEX = {
  EXCEPTION: 3,
  DEBUG: 6,
} as const;

/** IMAGE_DEBUG_TYPE_* values the writer emits (PE Format, "Debug Type"). */
export const DEBUG_TYPE = {
  CODEVIEW: 2,
  FPO: 3,
} as const;

/** Where a section landed, handed to content builders. */
export interface SectionPlacement {
  readonly name: string;
  /** VirtualAddress. */
  readonly rva: number;
  /** PointerToRawData: the file offset of the section's first byte. */
  readonly fileOffset: number;
}

/** One data directory a section provides: an RVA range inside the image. */
export interface DirectoryEntry {
  /** Data-directory index, e.g. {@link DIRECTORY_INDEX}.DEBUG. */
  readonly index: number;
  readonly rva: number;
  readonly size: number;
}

/** What a section holds once placed. */
export interface SectionContent {
  /** The initialised bytes (SizeOfRawData is this length rounded up to FileAlignment). */
  readonly bytes: Uint8Array;
  /** VirtualSize when larger than the bytes (the rest is zero-filled in memory); defaults to the byte count. */
  readonly virtualSize?: number;
  /** Data directories that point into this section. */
  readonly directories?: readonly DirectoryEntry[];
}

/** A function that builds a section once its placement, and every earlier section's, is known. */
export type SectionBuilder = (at: SectionPlacement, earlier: ReadonlyMap<string, SectionPlacement>) => SectionContent;

/** One section to write. */
export interface SectionSpec {
  /** At most 8 ASCII bytes, e.g. ".text"; unique within the image. */
  readonly name: string;
  /** IMAGE_SCN_* flags, e.g. {@link SECTION_CHARACTERISTICS}.text. */
  readonly characteristics: number;
  /** The content itself, or a builder called with the section's placement. */
  readonly content: SectionContent | SectionBuilder;
}

/** Everything that decides the bytes of an image. */
export interface ImageSpec {
  /** "x86" and "arm" write PE32 for IMAGE_FILE_MACHINE_I386 and ARMNT; "x64" and "arm64" write PE32+ for AMD64 and ARM64. */
  readonly machine: ImageMachine;
  /** ImageBase: a multiple of 64 KiB; below 4 GiB for x86 and ARM. */
  readonly imageBase: bigint;
  /** AddressOfEntryPoint. */
  readonly entryRva: number;
  /** Sections in address order. */
  readonly sections: readonly SectionSpec[];
  /** IMAGE_FILE_HEADER.TimeDateStamp (default 0). */
  readonly timeDateStamp?: number;
  /** SizeOfStackReserve (default 1 MiB). */
  readonly stackReserve?: number;
  /** SizeOfStackCommit (default 4 KiB). */
  readonly stackCommit?: number;
}

/** A written image and where its sections ended up. */
export interface WrittenImage {
  readonly bytes: Uint8Array;
  readonly sizeOfImage: number;
  readonly sections: readonly (SectionPlacement & { readonly virtualSize: number; readonly rawSize: number })[];
}

/** The CodeView "RSDS" record that names the PDB (minidump.md §2.3). */
export interface CodeViewRecord {
  /** The 16 GUID bytes as stored (Data1, Data2 and Data3 little-endian, then Data4). */
  readonly guid: Uint8Array;
  /** The PDB age. */
  readonly age: number;
  /** The PDB path as stored, e.g. "ebp-chain-5.pdb". */
  readonly pdbName: string;
}

/** What the debug directory of {@link debugSection} holds. */
export interface DebugInfo {
  /** A CODEVIEW entry naming the PDB. */
  readonly codeView?: CodeViewRecord;
  /** An FPO entry: the records are written sorted by ulOffStart (x86-fpo.md §1.3). */
  readonly fpo?: readonly FpoData[];
  /** TimeDateStamp of each entry (default 0). */
  readonly timeDateStamp?: number;
}

const E_LFANEW = 0x40;
const FILE_HEADER_SIZE = 20;
const SECTION_HEADER_SIZE = 40;
const DATA_DIRECTORY_COUNT = 16;
const DEBUG_ENTRY_SIZE = 28;
/** Fixed part of the optional header before the data directories: PE32 and PE32+. */
const OPTIONAL_FIXED = { x86: 96, x64: 112, arm64: 112, arm: 96 } as const;
/** IMAGE_FILE_* characteristics (PE Format, "Characteristics"). */
const FILE_RELOCS_STRIPPED = 0x0001;
const FILE_EXECUTABLE_IMAGE = 0x0002;
const FILE_LARGE_ADDRESS_AWARE = 0x0020;
const FILE_32BIT_MACHINE = 0x0100;
/** IMAGE_SCN_CNT_* bits that decide which size field of the optional header a section counts in. */
const SCN_CNT_CODE = 0x20;
const SCN_CNT_INITIALIZED_DATA = 0x40;
const SCN_CNT_UNINITIALIZED_DATA = 0x80;
/** IMAGE_SUBSYSTEM_WINDOWS_CUI. */
const SUBSYSTEM_CONSOLE = 3;
/** IMAGE_DLLCHARACTERISTICS_NX_COMPAT; no DYNAMIC_BASE, since there are no relocations. */
const DLL_NX_COMPAT = 0x0100;

const alignUp = (value: number, alignment: number): number => Math.ceil(value / alignment) * alignment;

/** Lays out and writes a PE32 (x86, ARM) or PE32+ (x64, ARM64) image; a malformed spec throws a RangeError naming the field. */
export function writePeImage(spec: ImageSpec): WrittenImage {
  const is64 = spec.machine === "x64" || spec.machine === "arm64";
  checkSpec(spec);
  const optionalSize = OPTIONAL_FIXED[spec.machine] + DATA_DIRECTORY_COUNT * 8;
  const sectionTable = E_LFANEW + 4 + FILE_HEADER_SIZE + optionalSize;
  const sizeOfHeaders = alignUp(sectionTable + spec.sections.length * SECTION_HEADER_SIZE, FILE_ALIGNMENT);

  // Place the sections one after another, calling each builder once its placement is known.
  const placed = new Map<string, SectionPlacement>();
  const laid: { placement: SectionPlacement; content: SectionContent; virtualSize: number; rawSize: number; characteristics: number }[] = [];
  let rva = FIRST_SECTION_RVA;
  let fileOffset = sizeOfHeaders;
  for (const section of spec.sections) {
    const placement: SectionPlacement = { name: section.name, rva, fileOffset };
    const content = typeof section.content === "function" ? section.content(placement, new Map(placed)) : section.content;
    const virtualSize = Math.max(content.virtualSize ?? 0, content.bytes.length);
    if (virtualSize === 0) throw new RangeError(`section ${section.name} is empty`);
    const rawSize = alignUp(content.bytes.length, FILE_ALIGNMENT);
    laid.push({ placement, content, virtualSize, rawSize, characteristics: section.characteristics });
    placed.set(section.name, placement);
    rva += alignUp(virtualSize, SECTION_ALIGNMENT);
    fileOffset += rawSize;
  }
  const sizeOfImage = rva;
  if (spec.entryRva < FIRST_SECTION_RVA || spec.entryRva >= sizeOfImage) {
    throw new RangeError(`entryRva ${hex(spec.entryRva)} lies outside the sections (${hex(FIRST_SECTION_RVA)}..${hex(sizeOfImage)})`);
  }

  const directories = new Array<{ rva: number; size: number }>(DATA_DIRECTORY_COUNT).fill({ rva: 0, size: 0 });
  for (const { placement, content, virtualSize } of laid) {
    for (const entry of content.directories ?? []) {
      if (!Number.isInteger(entry.index) || entry.index < 0 || entry.index >= DATA_DIRECTORY_COUNT) {
        throw new RangeError(`section ${placement.name}: data-directory index ${entry.index} is not 0..15`);
      }
      if (directories[entry.index]!.size !== 0) {
        throw new RangeError(`section ${placement.name}: data directory ${entry.index} is already set by an earlier section`);
      }
      if (entry.rva < placement.rva || entry.rva + entry.size > placement.rva + virtualSize) {
        throw new RangeError(`section ${placement.name}: data directory ${entry.index} (${hex(entry.rva)}+${hex(entry.size)}) lies outside the section`);
      }
      directories[entry.index] = { rva: entry.rva, size: entry.size };
    }
  }

  const out = new Uint8Array(fileOffset);
  const view = new DataView(out.buffer);

  // IMAGE_DOS_HEADER: e_magic "MZ" and e_lfanew; no DOS stub program.
  view.setUint16(0x00, 0x5a4d, true);
  view.setUint32(0x3c, E_LFANEW, true);

  // "PE\0\0" and IMAGE_FILE_HEADER (PE Format, "COFF File Header (Object and Image)").
  view.setUint32(E_LFANEW, 0x0000_4550, true);
  const fh = E_LFANEW + 4;
  view.setUint16(fh + 0, FILE_MACHINE[spec.machine], true);
  view.setUint16(fh + 2, spec.sections.length, true);
  view.setUint32(fh + 4, spec.timeDateStamp ?? 0, true);
  view.setUint16(fh + 16, optionalSize, true);
  view.setUint16(
    fh + 18,
    FILE_RELOCS_STRIPPED | FILE_EXECUTABLE_IMAGE | (is64 ? FILE_LARGE_ADDRESS_AWARE : FILE_32BIT_MACHINE),
    true,
  );

  // Optional header (PE Format, "Optional Header Standard Fields" and "Windows-Specific Fields").
  // PE32 has BaseOfData at 24 and a 4-byte ImageBase at 28; PE32+ has an 8-byte ImageBase at 24,
  // and its four stack/heap sizes are 8 bytes wide, which moves everything after them by 16.
  const oh = fh + FILE_HEADER_SIZE;
  const sizeOf = (flag: number, size: (s: (typeof laid)[number]) => number): number =>
    laid.filter((s) => (s.characteristics & flag) !== 0).reduce((sum, s) => sum + size(s), 0);
  const firstWith = (test: (characteristics: number) => boolean): number =>
    laid.find((s) => test(s.characteristics))?.placement.rva ?? 0;
  view.setUint16(oh + 0, is64 ? 0x20b : 0x10b, true);
  view.setUint8(oh + 2, 14); // MajorLinkerVersion
  view.setUint32(oh + 4, sizeOf(SCN_CNT_CODE, (s) => s.rawSize), true);
  view.setUint32(oh + 8, sizeOf(SCN_CNT_INITIALIZED_DATA, (s) => s.rawSize), true);
  view.setUint32(oh + 12, sizeOf(SCN_CNT_UNINITIALIZED_DATA, (s) => alignUp(s.virtualSize, FILE_ALIGNMENT)), true);
  view.setUint32(oh + 16, spec.entryRva, true);
  view.setUint32(oh + 20, firstWith((c) => (c & SCN_CNT_CODE) !== 0), true);
  if (is64) {
    view.setBigUint64(oh + 24, spec.imageBase, true);
  } else {
    view.setUint32(oh + 24, firstWith((c) => (c & SCN_CNT_CODE) === 0), true);
    view.setUint32(oh + 28, Number(spec.imageBase), true);
  }
  view.setUint32(oh + 32, SECTION_ALIGNMENT, true);
  view.setUint32(oh + 36, FILE_ALIGNMENT, true);
  view.setUint16(oh + 40, 6, true); // MajorOperatingSystemVersion
  view.setUint16(oh + 48, 6, true); // MajorSubsystemVersion
  view.setUint32(oh + 56, sizeOfImage, true);
  view.setUint32(oh + 60, sizeOfHeaders, true);
  view.setUint16(oh + 68, SUBSYSTEM_CONSOLE, true);
  view.setUint16(oh + 70, DLL_NX_COMPAT, true);
  const sizes = [spec.stackReserve ?? 0x10_0000, spec.stackCommit ?? 0x1000, 0x10_0000, 0x1000];
  sizes.forEach((size, i) => {
    if (is64) view.setBigUint64(oh + 72 + i * 8, BigInt(size), true);
    else view.setUint32(oh + 72 + i * 4, size, true);
  });
  const fixed = OPTIONAL_FIXED[spec.machine];
  view.setUint32(oh + fixed - 4, DATA_DIRECTORY_COUNT, true); // NumberOfRvaAndSizes
  directories.forEach((d, i) => {
    view.setUint32(oh + fixed + i * 8, d.rva, true);
    view.setUint32(oh + fixed + i * 8 + 4, d.size, true);
  });

  // Section table, then each section's bytes at PointerToRawData, zero-padded to FileAlignment.
  laid.forEach(({ placement, content, virtualSize, rawSize, characteristics }, i) => {
    const sh = sectionTable + i * SECTION_HEADER_SIZE;
    for (let k = 0; k < placement.name.length; k++) view.setUint8(sh + k, placement.name.charCodeAt(k));
    view.setUint32(sh + 8, virtualSize, true);
    view.setUint32(sh + 12, placement.rva, true);
    view.setUint32(sh + 16, rawSize, true);
    view.setUint32(sh + 20, rawSize === 0 ? 0 : placement.fileOffset, true);
    view.setUint32(sh + 36, characteristics >>> 0, true);
    out.set(content.bytes, placement.fileOffset);
  });

  return {
    bytes: out,
    sizeOfImage,
    sections: laid.map(({ placement, virtualSize, rawSize }) => ({ ...placement, virtualSize, rawSize })),
  };
}

/**
 * A `.rdata` section holding the debug directory (an array of 28-byte IMAGE_DEBUG_DIRECTORY,
 * PE Format "Debug Directory (Image Only)") followed by the payloads it points at: the
 * CodeView RSDS record, then the FPO_DATA array sorted by ulOffStart (x86-fpo.md §1.3). Each
 * entry carries both AddressOfRawData and PointerToRawData, as linkers write them.
 */
export function debugSection(info: DebugInfo, name = ".rdata"): SectionSpec {
  const payloads: { type: number; bytes: Uint8Array }[] = [];
  if (info.codeView !== undefined) payloads.push({ type: DEBUG_TYPE.CODEVIEW, bytes: encodeRsds(info.codeView) });
  if (info.fpo !== undefined) {
    const sorted = [...info.fpo].sort((a, b) => a.ulOffStart - b.ulOffStart);
    payloads.push({ type: DEBUG_TYPE.FPO, bytes: encodeFpoTable(sorted) });
  }
  if (payloads.length === 0) throw new RangeError("debugSection needs a CodeView record or FPO data");
  const build: SectionBuilder = (at) => {
    const directorySize = payloads.length * DEBUG_ENTRY_SIZE;
    let cursor = directorySize;
    const offsets = payloads.map((p) => {
      const offset = alignUp(cursor, 4);
      cursor = offset + p.bytes.length;
      return offset;
    });
    const bytes = new Uint8Array(cursor);
    const view = new DataView(bytes.buffer);
    payloads.forEach((p, i) => {
      const e = i * DEBUG_ENTRY_SIZE;
      const offset = offsets[i]!;
      view.setUint32(e + 4, info.timeDateStamp ?? 0, true);
      view.setUint32(e + 12, p.type, true);
      view.setUint32(e + 16, p.bytes.length, true);
      view.setUint32(e + 20, at.rva + offset, true);
      view.setUint32(e + 24, at.fileOffset + offset, true);
      bytes.set(p.bytes, offset);
    });
    return { bytes, directories: [{ index: DIRECTORY_INDEX.DEBUG, rva: at.rva, size: directorySize }] };
  };
  return { name, characteristics: SECTION_CHARACTERISTICS.rdata, content: build };
}

/** Encodes a CodeView RSDS record: "RSDS", GUID, age, NUL-terminated UTF-8 PDB path (minidump.md §2.3). */
export function encodeRsds(record: CodeViewRecord): Uint8Array {
  if (record.guid.length !== 16) throw new RangeError(`CodeView GUID must be 16 bytes, not ${record.guid.length}`);
  if (!Number.isInteger(record.age) || record.age < 0 || record.age > 0xffff_ffff) {
    throw new RangeError(`CodeView age ${record.age} is not a u32`);
  }
  const name = new TextEncoder().encode(record.pdbName);
  if (name.includes(0)) throw new RangeError("the PDB name must not contain NUL");
  const out = new Uint8Array(24 + name.length + 1);
  const view = new DataView(out.buffer);
  view.setUint32(0, 0x5344_5352, true); // "RSDS"
  out.set(record.guid, 4);
  view.setUint32(20, record.age, true);
  out.set(name, 24);
  return out;
}

function checkSpec(spec: ImageSpec): void {
  if (!Object.hasOwn(FILE_MACHINE, spec.machine)) throw new RangeError(`machine must be "x86", "x64", "arm64" or "arm", not ${String(spec.machine)}`);
  const limit = spec.machine === "x86" || spec.machine === "arm" ? 1n << 32n : 1n << 64n;
  if (spec.imageBase <= 0n || spec.imageBase >= limit || spec.imageBase % 0x1_0000n !== 0n) {
    throw new RangeError(`imageBase ${hex(spec.imageBase)} must be a non-zero multiple of 64 KiB that fits the ${spec.machine} address space`);
  }
  if (spec.sections.length === 0 || spec.sections.length > MAX_SECTIONS) {
    throw new RangeError(`an image needs 1..${MAX_SECTIONS} sections, not ${spec.sections.length}`);
  }
  const names = new Set<string>();
  for (const section of spec.sections) {
    if (!/^[\x21-\x7e]{1,8}$/.test(section.name)) throw new RangeError(`section name "${section.name}" must be 1..8 printable ASCII bytes`);
    if (names.has(section.name)) throw new RangeError(`section name "${section.name}" is used twice`);
    names.add(section.name);
  }
  const u32 = (name: string, value: number | undefined): void => {
    if (value !== undefined && (!Number.isInteger(value) || value < 0 || value > 0xffff_ffff)) {
      throw new RangeError(`${name} ${value} is not a u32`);
    }
  };
  u32("entryRva", spec.entryRva);
  u32("timeDateStamp", spec.timeDateStamp);
  u32("stackReserve", spec.stackReserve);
  u32("stackCommit", spec.stackCommit);
}
