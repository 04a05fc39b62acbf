/**
 * The headers of a PE image, one reader each, in file order (PE Format, "MS-DOS Stub", "Signature",
 * "COFF File Header", "Optional Header", "Optional Header Data Directories", "Section Table"). Each
 * reader checks what it reads against the file and the headers before it, and throws an
 * {@link InputError} naming the absolute file offset of the field that is wrong (or, for a read
 * that runs off the end, where the field begins).
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { ByteCursor } from "../../memory/cursor.js";
import { DIRECTORY_NAMES, IMAGE_DIRECTORY_ENTRY, PE_LIMITS, type PeSection } from "./types.js";

const MZ = 0x5a4d; // "MZ"
const PE_SIGNATURE = 0x00004550; // "PE\0\0"
const PE32_MAGIC = 0x10b;
const PE32PLUS_MAGIC = 0x20b;
const E_LFANEW_OFFSET = 0x3c;
const FILE_HEADER_SIZE = 20;
const SECTION_HEADER_SIZE = 40;
const DATA_DIRECTORY_COUNT = 16;

/** IMAGE_FILE_HEADER, the COFF file header that follows "PE\0\0". */
export interface CoffHeader {
  /** File offset of the header. */
  at: number;
  machine: number;
  numberOfSections: number;
  timeDateStamp: number;
  sizeOfOptionalHeader: number;
  characteristics: number;
}

/** The optional header's fields the parser uses, PE32 and PE32+ alike. */
export interface OptionalHeader {
  /** File offset of the header. */
  at: number;
  /** PE32+ (magic 0x20B) rather than PE32 (0x10B). */
  is64: boolean;
  /** Size of the fixed part, before the data directories. */
  fixed: number;
  /** Offset of NumberOfRvaAndSizes from the start of the header. */
  numberOfRvaAndSizesAt: number;
  entryRva: number;
  imageBase: bigint;
  sectionAlignment: number;
  fileAlignment: number;
  sizeOfImage: number;
  sizeOfHeaders: number;
  sizeOfStackReserve: bigint;
  dllCharacteristics: number;
  numberOfRvaAndSizes: number;
}

/** The data directories: always 16 entries, those beyond NumberOfRvaAndSizes read as zero. */
export interface DataDirectories {
  entries: { rva: number; size: number }[];
  /** How many entries the header holds (at most 16; the loader ignores any beyond). */
  used: number;
  /** File offset of the first entry. */
  at: number;
}

/** Optional-header layouts: where the fields that differ between PE32 and PE32+ are (PE Format, "Optional Header"). */
const LAYOUTS = {
  [PE32_MAGIC]: { is64: false, fixed: 96, imageBase: 28, numberOfRvaAndSizes: 92 },
  [PE32PLUS_MAGIC]: { is64: true, fixed: 112, imageBase: 24, numberOfRvaAndSizes: 108 },
} as const;

/** IMAGE_DOS_HEADER: only e_magic ("MZ") and e_lfanew (at 0x3C) matter. Returns e_lfanew. */
export function readDosHeader(c: ByteCursor): number {
  const fileLength = c.bytes.byteLength;
  const magic = c.seek(0).u16("IMAGE_DOS_HEADER.e_magic");
  if (magic !== MZ) {
    throw new InputError("bad-magic", `not a PE image: e_magic is ${hex(magic)}, expected "MZ" (0x5a4d)`, { offset: 0 });
  }
  const lfanew = c.seek(E_LFANEW_OFFSET, "IMAGE_DOS_HEADER.e_lfanew").u32("IMAGE_DOS_HEADER.e_lfanew");
  if (lfanew > fileLength - 4) {
    throw new InputError("bad-value", `e_lfanew ${hex(lfanew)} points outside the file (length ${hex(fileLength)})`, { offset: E_LFANEW_OFFSET });
  }
  return lfanew;
}

/** "PE\0\0" at e_lfanew, then IMAGE_FILE_HEADER (PE Format, "COFF File Header"). */
export function readCoffHeader(c: ByteCursor, lfanew: number): CoffHeader {
  const signature = c.seek(lfanew).u32("PE signature");
  if (signature !== PE_SIGNATURE) {
    throw new InputError("bad-magic", `PE signature is ${hex(signature)}, expected "PE\\0\\0" (0x4550)`, { offset: lfanew });
  }
  const at = lfanew + 4;
  const machine = c.u16("IMAGE_FILE_HEADER.Machine");
  const numberOfSections = c.u16("IMAGE_FILE_HEADER.NumberOfSections");
  const timeDateStamp = c.u32("IMAGE_FILE_HEADER.TimeDateStamp");
  c.skip(8, "IMAGE_FILE_HEADER.PointerToSymbolTable/NumberOfSymbols");
  const sizeOfOptionalHeader = c.u16("IMAGE_FILE_HEADER.SizeOfOptionalHeader");
  const characteristics = c.u16("IMAGE_FILE_HEADER.Characteristics");
  if (numberOfSections > PE_LIMITS.maxSections) {
    throw new InputError("bad-value", `NumberOfSections ${numberOfSections} exceeds the loader's limit of ${PE_LIMITS.maxSections}`, { offset: at + 2 });
  }
  return { at, machine, numberOfSections, timeDateStamp, sizeOfOptionalHeader, characteristics };
}

/**
 * The optional header after the COFF header: the magic selects PE32 or PE32+ (PE Format,
 * "Optional Header Standard Fields"); the sizes are checked against the file and each other.
 */
export function readOptionalHeader(c: ByteCursor, coff: CoffHeader): OptionalHeader {
  const fileLength = c.bytes.byteLength;
  const oh = coff.at + FILE_HEADER_SIZE;
  const magic = c.seek(oh).u16("IMAGE_OPTIONAL_HEADER.Magic");
  const layout = magic === PE32_MAGIC || magic === PE32PLUS_MAGIC ? LAYOUTS[magic] : undefined;
  if (layout === undefined) {
    throw new InputError("bad-magic", `optional-header magic is ${hex(magic)}, expected 0x10b (PE32) or 0x20b (PE32+)`, { offset: oh });
  }
  const { is64 } = layout;
  if (coff.sizeOfOptionalHeader < layout.fixed) {
    throw new InputError(
      "bad-value",
      `SizeOfOptionalHeader ${coff.sizeOfOptionalHeader} is smaller than the ${layout.fixed}-byte fixed part of a ${is64 ? "PE32+" : "PE32"} optional header`,
      { offset: coff.at + 16 },
    );
  }
  // A field past the end of the file is reported at its own offset, with where the file ends.
  const field16 = (off: number, what: string): number => {
    c.need(2, what, oh + off);
    return c.seek(oh + off).u16(what);
  };
  const field32 = (off: number, what: string): number => {
    c.need(4, what, oh + off);
    return c.seek(oh + off).u32(what);
  };
  const field64 = (off: number, what: string): bigint => {
    c.need(8, what, oh + off);
    return c.seek(oh + off).u64(what);
  };
  /** A field that is a u32 in PE32 and a u64 in PE32+. */
  const pointerField = (off: number, what: string): bigint => (is64 ? field64(off, what) : BigInt(field32(off, what)));
  const entryRva = field32(16, "AddressOfEntryPoint");
  const imageBase = pointerField(layout.imageBase, "ImageBase");
  const sectionAlignment = field32(32, "SectionAlignment");
  const fileAlignment = field32(36, "FileAlignment");
  const sizeOfImage = field32(56, "SizeOfImage");
  const sizeOfHeaders = field32(60, "SizeOfHeaders");
  // PE32 and PE32+ both put SizeOfStackReserve at offset 72.
  const sizeOfStackReserve = pointerField(72, "SizeOfStackReserve");
  const dllCharacteristics = field16(70, "DllCharacteristics");
  const numberOfRvaAndSizes = field32(layout.numberOfRvaAndSizes, "NumberOfRvaAndSizes");

  if (sizeOfImage > PE_LIMITS.maxSizeOfImage) {
    throw new InputError("unsupported", `SizeOfImage ${hex(sizeOfImage)} exceeds the ${hex(PE_LIMITS.maxSizeOfImage)}-byte limit`, { offset: oh + 56 });
  }
  if (sizeOfHeaders > sizeOfImage) {
    throw new InputError("bad-value", `SizeOfHeaders ${hex(sizeOfHeaders)} exceeds SizeOfImage ${hex(sizeOfImage)}`, { offset: oh + 60 });
  }
  if (sizeOfHeaders > fileLength) {
    throw new InputError("truncated", `SizeOfHeaders ${hex(sizeOfHeaders)} runs past the end of the file (length ${hex(fileLength)})`, { offset: oh + 60 });
  }
  if (entryRva !== 0 && entryRva >= sizeOfImage) {
    throw new InputError("bad-value", `AddressOfEntryPoint ${hex(entryRva)} lies outside the image (SizeOfImage ${hex(sizeOfImage)})`, { offset: oh + 16 });
  }
  return {
    at: oh,
    is64,
    fixed: layout.fixed,
    numberOfRvaAndSizesAt: layout.numberOfRvaAndSizes,
    entryRva,
    imageBase,
    sectionAlignment,
    fileAlignment,
    sizeOfImage,
    sizeOfHeaders,
    sizeOfStackReserve,
    dllCharacteristics,
    numberOfRvaAndSizes,
  };
}

/** The data directories: NumberOfRvaAndSizes entries of {RVA, Size} after the optional header's fixed part. */
export function readDataDirectories(c: ByteCursor, coff: CoffHeader, opt: OptionalHeader): DataDirectories {
  const used = Math.min(opt.numberOfRvaAndSizes, DATA_DIRECTORY_COUNT);
  if (opt.fixed + used * 8 > coff.sizeOfOptionalHeader) {
    throw new InputError("bad-value", `NumberOfRvaAndSizes ${opt.numberOfRvaAndSizes} does not fit in SizeOfOptionalHeader ${coff.sizeOfOptionalHeader}`, {
      offset: opt.at + opt.numberOfRvaAndSizesAt,
    });
  }
  const at = opt.at + opt.fixed;
  const entries: { rva: number; size: number }[] = [];
  c.seek(at, "data directories");
  for (let i = 0; i < DATA_DIRECTORY_COUNT; i++) {
    entries.push(i < used ? { rva: c.u32("data directory RVA"), size: c.u32("data directory Size") } : { rva: 0, size: 0 });
  }
  return { entries, used, at };
}

/**
 * The section table right after the optional header (PE Format, "Section Table (Section
 * Headers)"): each section's raw data must lie in the file and its RVA range in the image, and no
 * two sections may overlap in the image.
 */
export function readSectionTable(c: ByteCursor, coff: CoffHeader, opt: OptionalHeader): PeSection[] {
  const fileLength = c.bytes.byteLength;
  const table = opt.at + coff.sizeOfOptionalHeader;
  c.need(coff.numberOfSections * SECTION_HEADER_SIZE, `section table (${coff.numberOfSections} × 40 bytes)`, table);
  const sections: PeSection[] = [];
  for (let i = 0; i < coff.numberOfSections; i++) {
    const sh = table + i * SECTION_HEADER_SIZE;
    c.seek(sh);
    const nameBytes = c.take(8, "section Name");
    const nul = nameBytes.indexOf(0);
    const name = String.fromCharCode(...nameBytes.subarray(0, nul < 0 ? 8 : nul));
    const virtualSize = c.u32("section VirtualSize");
    const virtualAddress = c.u32("section VirtualAddress");
    const rawSize = c.u32("section SizeOfRawData");
    const rawOffset = c.u32("section PointerToRawData");
    c.skip(12, "section relocation/line-number fields");
    const characteristics = c.u32("section Characteristics");
    const section: PeSection = { name, virtualAddress, virtualSize, rawOffset, rawSize, characteristics };
    // Quoted as JSON: a damaged name's control characters never break the error's one line.
    const label = `section ${i + 1} ${JSON.stringify(name)}`;
    if (rawSize > 0 && rawOffset + rawSize > fileLength) {
      throw new InputError("truncated", `${label}: raw data ${hex(rawOffset)}..${hex(rawOffset + rawSize)} runs past the end of the file (length ${hex(fileLength)})`, {
        offset: sh + 20,
      });
    }
    const span = virtualSpan(section);
    if (virtualAddress + span > opt.sizeOfImage) {
      throw new InputError(
        "bad-value",
        `${label}: RVA range ${hex(virtualAddress)}..${hex(virtualAddress + span)} lies outside the image (SizeOfImage ${hex(opt.sizeOfImage)})`,
        { offset: sh + 12 },
      );
    }
    for (const other of sections) {
      const otherSpan = virtualSpan(other);
      if (span > 0 && otherSpan > 0 && virtualAddress < other.virtualAddress + otherSpan && other.virtualAddress < virtualAddress + span) {
        throw new InputError("overlap", `${label}: RVA range ${hex(virtualAddress)}..${hex(virtualAddress + span)} overlaps section "${other.name}"`, { offset: sh + 12 });
      }
    }
    sections.push(section);
  }
  return sections;
}

/** Every directory must lie inside the image; the security directory alone holds a file offset. */
export function checkDataDirectories(dirs: DataDirectories, opt: OptionalHeader, fileLength: number): void {
  for (let i = 0; i < dirs.used; i++) {
    const { rva, size } = dirs.entries[i]!;
    if (size === 0) continue;
    const where = { offset: dirs.at + i * 8 };
    if (i === IMAGE_DIRECTORY_ENTRY.SECURITY) {
      if (rva + size > fileLength) {
        throw new InputError("truncated", `security directory ${hex(rva)}..${hex(rva + size)} runs past the end of the file (length ${hex(fileLength)})`, where);
      }
    } else if (rva + size > opt.sizeOfImage) {
      throw new InputError("bad-value", `${DIRECTORY_NAMES[i]} directory ${hex(rva)}..${hex(rva + size)} lies outside the image (SizeOfImage ${hex(opt.sizeOfImage)})`, where);
    }
  }
}

/** The bytes a section occupies in the image: VirtualSize, or SizeOfRawData when VirtualSize is 0. */
export function virtualSpan(s: PeSection): number {
  return s.virtualSize !== 0 ? s.virtualSize : s.rawSize;
}
