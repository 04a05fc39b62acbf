/**
 * A PE32 / PE32+ image parser over plain bytes (no Node APIs: it runs in a browser). It reads the
 * headers and the section table, validates every pointer against the file and the image, and
 * exposes what the PE loader and the walkers need: the mapped view, the x64/IA64 exception
 * directory (x64-unwind.md §1.1), the old-FPO debug payload (x86-fpo.md §1.3) and the CodeView
 * record that names the PDB (minidump.md §2.3, §8).
 *
 * Layout facts come from Microsoft's "PE Format" specification (section names below refer to it).
 * Every malformed input throws an {@link InputError} naming the absolute file offset of the field
 * that is wrong (or, for a read that runs off the end, where that read began).
 */
import { InputError } from "../errors.js";
import { ByteCursor } from "../memory/cursor.js";
import { IMAGE_FILE_MACHINE } from "../model/machine.js";

/** Data-directory indices (PE Format, "Optional Header Data Directories"). */
export const IMAGE_DIRECTORY_ENTRY = {
  EXPORT: 0,
  IMPORT: 1,
  RESOURCE: 2,
  EXCEPTION: 3,
  SECURITY: 4,
  BASERELOC: 5,
  DEBUG: 6,
  ARCHITECTURE: 7,
  GLOBALPTR: 8,
  TLS: 9,
  LOAD_CONFIG: 10,
  BOUND_IMPORT: 11,
  IAT: 12,
  DELAY_IMPORT: 13,
  COM_DESCRIPTOR: 14,
} as const;

/** IMAGE_DEBUG_TYPE_* values (PE Format, "Debug Type"). */
export const IMAGE_DEBUG_TYPE = {
  UNKNOWN: 0,
  COFF: 1,
  CODEVIEW: 2,
  FPO: 3,
  MISC: 4,
  EXCEPTION: 5,
  FIXUP: 6,
  OMAP_TO_SRC: 7,
  OMAP_FROM_SRC: 8,
  BORLAND: 9,
  CLSID: 11,
  REPRO: 16,
  EX_DLLCHARACTERISTICS: 20,
} as const;

/** Limits applied before anything is allocated, so hostile headers cannot exhaust memory. */
export const PE_LIMITS = {
  /** The Windows loader refuses images with more sections than this. */
  maxSections: 96,
  /** SizeOfImage cap: `mapped()` allocates this many bytes. */
  maxSizeOfImage: 1 << 30,
  /** Debug-directory entries; real images carry a handful. */
  maxDebugEntries: 1024,
} as const;

/** One IMAGE_SECTION_HEADER (40 bytes), with the fields a loader uses. */
export interface PeSection {
  name: string;
  virtualAddress: number;
  virtualSize: number;
  rawOffset: number;
  rawSize: number;
  characteristics: number;
}

/** One IMAGE_DEBUG_DIRECTORY entry (28 bytes). */
export interface PeDebugEntry {
  type: number;
  /** AddressOfRawData: where the payload is mapped (0 when it is not mapped). */
  rva: number;
  /** PointerToRawData: where the payload is in the file (0 when it is not stored there). */
  fileOffset: number;
  size: number;
  timeDateStamp: number;
}

/** The CodeView debug record that names the PDB (minidump.md §2.3). */
export interface CodeViewInfo {
  /** "RSDS" (PDB 7.0, GUID) or "NB10" (PDB 2.0, 32-bit signature). */
  format: "RSDS" | "NB10";
  /**
   * Upper-case hex without dashes, GUID fields in the order Windows prints them (Data1, Data2 and
   * Data3 read little-endian, then Data4 byte by byte). For NB10: the signature as 8 hex digits.
   */
  guid: string;
  age: number;
  /** The PDB path exactly as stored (lld with `/pdbaltpath:%_PDB%` stores just the file name). */
  pdbName: string;
  /** Symbol-store identifier: `guid` followed by the age in lower-case hex without padding (minidump.md §8). */
  debugId: string;
}

/** One RUNTIME_FUNCTION (12 bytes, x64-unwind.md §1.1). */
export interface RuntimeFunction {
  beginRva: number;
  /** Exclusive. */
  endRva: number;
  /** RVA of the UNWIND_INFO; when bit 0 is set, `unwindData & ~1` is the RVA of another RUNTIME_FUNCTION. */
  unwindData: number;
}

/** A parsed PE image. */
export interface PeImage {
  /** IMAGE_FILE_MACHINE_* */
  machine: number;
  /** PE32+ (optional-header magic 0x20B) rather than PE32 (0x10B). */
  is64: boolean;
  imageBase: bigint;
  entryRva: number;
  sizeOfImage: number;
  sizeOfHeaders: number;
  /** SizeOfStackReserve: the main thread's stack the image was linked for (`/stack`), in bytes. */
  sizeOfStackReserve: bigint;
  sectionAlignment: number;
  fileAlignment: number;
  timeDateStamp: number;
  characteristics: number;
  dllCharacteristics: number;
  sections: PeSection[];
  /** Always 16 entries; those beyond NumberOfRvaAndSizes read as zero. */
  dataDirectories: { rva: number; size: number }[];
  debug: PeDebugEntry[];
  codeView?: CodeViewInfo;
  hasImports: boolean;
  hasRelocations: boolean;
  /** bytes of the image as the loader maps it (headers + sections at their RVAs, zero-filled gaps/BSS), length sizeOfImage */
  mapped(): Uint8Array;
  /** read `size` bytes at an RVA from the mapped view (undefined when outside) */
  readRva(rva: number, size: number): Uint8Array | undefined;
  /** RUNTIME_FUNCTIONs from the exception directory (x64 and IA64), in table order; [] when none. */
  runtimeFunctions(): RuntimeFunction[];
  /** The raw IMAGE_DEBUG_TYPE_FPO payload (an array of 16-byte FPO_DATA) when present. */
  fpoData(): Uint8Array | undefined;
}

const MZ = 0x5a4d; // "MZ"
const PE_SIGNATURE = 0x00004550; // "PE\0\0"
const PE32_MAGIC = 0x10b;
const PE32PLUS_MAGIC = 0x20b;
const RSDS = 0x53445352; // "RSDS"
const NB10 = 0x3031424e; // "NB10"
const E_LFANEW_OFFSET = 0x3c;
const FILE_HEADER_SIZE = 20;
const SECTION_HEADER_SIZE = 40;
const DATA_DIRECTORY_COUNT = 16;
const DEBUG_ENTRY_SIZE = 28;
const RUNTIME_FUNCTION_SIZE = 12;
const FPO_DATA_SIZE = 16;
const DIRECTORY_NAMES = [
  "export", "import", "resource", "exception", "security", "base relocation", "debug", "architecture",
  "global pointer", "TLS", "load config", "bound import", "IAT", "delay import", "CLR header", "reserved",
];

const hex = (n: number): string => `0x${n.toString(16)}`;
const hexPad = (n: number, digits: number): string => n.toString(16).toUpperCase().padStart(digits, "0");

/** Optional-header field offsets that differ between PE32 and PE32+ (PE Format, "Optional Header"). */
interface OptionalLayout {
  /** Size of the fixed part, before the data directories. */
  fixed: number;
  imageBase: number;
  numberOfRvaAndSizes: number;
}
const PE32_LAYOUT: OptionalLayout = { fixed: 96, imageBase: 28, numberOfRvaAndSizes: 92 };
const PE32PLUS_LAYOUT: OptionalLayout = { fixed: 112, imageBase: 24, numberOfRvaAndSizes: 108 };

/** Parses a PE32 or PE32+ image from its file bytes; throws {@link InputError} on malformed input. */
export function parsePe(bytes: Uint8Array): PeImage {
  const fileLength = bytes.byteLength;
  const c = new ByteCursor(bytes);

  // IMAGE_DOS_HEADER: only e_magic ("MZ") and e_lfanew (at 0x3C) matter.
  const magic = c.u16("IMAGE_DOS_HEADER.e_magic");
  if (magic !== MZ) {
    throw new InputError("bad-magic", `not a PE image: e_magic is ${hex(magic)}, expected "MZ" (0x5a4d)`, { offset: 0 });
  }
  const lfanew = c.seek(E_LFANEW_OFFSET, "IMAGE_DOS_HEADER.e_lfanew").u32("IMAGE_DOS_HEADER.e_lfanew");
  if (lfanew > fileLength - 4) {
    throw new InputError("bad-value", `e_lfanew ${hex(lfanew)} points outside the file (length ${hex(fileLength)})`, {
      offset: E_LFANEW_OFFSET,
    });
  }

  // "PE\0\0", then IMAGE_FILE_HEADER (PE Format, "COFF File Header").
  const signature = c.seek(lfanew).u32("PE signature");
  if (signature !== PE_SIGNATURE) {
    throw new InputError("bad-magic", `PE signature is ${hex(signature)}, expected "PE\\0\\0" (0x4550)`, { offset: lfanew });
  }
  const fh = lfanew + 4;
  const machine = c.u16("IMAGE_FILE_HEADER.Machine");
  const numberOfSections = c.u16("IMAGE_FILE_HEADER.NumberOfSections");
  const timeDateStamp = c.u32("IMAGE_FILE_HEADER.TimeDateStamp");
  c.skip(8, "IMAGE_FILE_HEADER.PointerToSymbolTable/NumberOfSymbols");
  const sizeOfOptionalHeader = c.u16("IMAGE_FILE_HEADER.SizeOfOptionalHeader");
  const characteristics = c.u16("IMAGE_FILE_HEADER.Characteristics");
  if (numberOfSections > PE_LIMITS.maxSections) {
    throw new InputError("bad-value", `NumberOfSections ${numberOfSections} exceeds the loader's limit of ${PE_LIMITS.maxSections}`, {
      offset: fh + 2,
    });
  }

  // Optional header: the magic selects PE32 or PE32+ (PE Format, "Optional Header Standard Fields").
  const oh = fh + FILE_HEADER_SIZE;
  const optMagic = c.u16("IMAGE_OPTIONAL_HEADER.Magic");
  if (optMagic !== PE32_MAGIC && optMagic !== PE32PLUS_MAGIC) {
    throw new InputError("bad-magic", `optional-header magic is ${hex(optMagic)}, expected 0x10b (PE32) or 0x20b (PE32+)`, {
      offset: oh,
    });
  }
  const is64 = optMagic === PE32PLUS_MAGIC;
  const layout = is64 ? PE32PLUS_LAYOUT : PE32_LAYOUT;
  if (sizeOfOptionalHeader < layout.fixed) {
    throw new InputError(
      "bad-value",
      `SizeOfOptionalHeader ${sizeOfOptionalHeader} is smaller than the ${layout.fixed}-byte fixed part of a ${is64 ? "PE32+" : "PE32"} optional header`,
      { offset: fh + 16 },
    );
  }
  // A field past the end of the file is reported at its own offset, with where the file ends.
  const field32 = (off: number, what: string): number => {
    c.need(4, what, oh + off);
    return c.seek(oh + off).u32(what);
  };
  const field16 = (off: number, what: string): number => {
    c.need(2, what, oh + off);
    return c.seek(oh + off).u16(what);
  };
  const entryRva = field32(16, "AddressOfEntryPoint");
  const field64 = (off: number, what: string): bigint => {
    c.need(8, what, oh + off);
    return c.seek(oh + off).u64(what);
  };
  const imageBase = is64 ? field64(layout.imageBase, "ImageBase") : BigInt(field32(layout.imageBase, "ImageBase"));
  const sectionAlignment = field32(32, "SectionAlignment");
  const fileAlignment = field32(36, "FileAlignment");
  const sizeOfImage = field32(56, "SizeOfImage");
  const sizeOfHeaders = field32(60, "SizeOfHeaders");
  // PE32 and PE32+ both put SizeOfStackReserve at offset 72: a u32 in PE32, a u64 in PE32+.
  const sizeOfStackReserve = is64 ? field64(72, "SizeOfStackReserve") : BigInt(field32(72, "SizeOfStackReserve"));
  const dllCharacteristics = field16(70, "DllCharacteristics");
  const numberOfRvaAndSizes = field32(layout.numberOfRvaAndSizes, "NumberOfRvaAndSizes");

  if (sizeOfImage > PE_LIMITS.maxSizeOfImage) {
    throw new InputError("unsupported", `SizeOfImage ${hex(sizeOfImage)} exceeds the ${hex(PE_LIMITS.maxSizeOfImage)}-byte limit`, {
      offset: oh + 56,
    });
  }
  if (sizeOfHeaders > sizeOfImage) {
    throw new InputError("bad-value", `SizeOfHeaders ${hex(sizeOfHeaders)} exceeds SizeOfImage ${hex(sizeOfImage)}`, { offset: oh + 60 });
  }
  if (sizeOfHeaders > fileLength) {
    throw new InputError("truncated", `SizeOfHeaders ${hex(sizeOfHeaders)} runs past the end of the file (length ${hex(fileLength)})`, {
      offset: oh + 60,
    });
  }
  if (entryRva !== 0 && entryRva >= sizeOfImage) {
    throw new InputError("bad-value", `AddressOfEntryPoint ${hex(entryRva)} lies outside the image (SizeOfImage ${hex(sizeOfImage)})`, {
      offset: oh + 16,
    });
  }

  // Data directories: NumberOfRvaAndSizes entries of {RVA, Size}; the loader ignores any past 16.
  const usedDirectories = Math.min(numberOfRvaAndSizes, DATA_DIRECTORY_COUNT);
  if (layout.fixed + usedDirectories * 8 > sizeOfOptionalHeader) {
    throw new InputError(
      "bad-value",
      `NumberOfRvaAndSizes ${numberOfRvaAndSizes} does not fit in SizeOfOptionalHeader ${sizeOfOptionalHeader}`,
      { offset: oh + layout.numberOfRvaAndSizes },
    );
  }
  const dirBase = oh + layout.fixed;
  const dataDirectories: { rva: number; size: number }[] = [];
  c.seek(dirBase, "data directories");
  for (let i = 0; i < DATA_DIRECTORY_COUNT; i++) {
    dataDirectories.push(i < usedDirectories ? { rva: c.u32("data directory RVA"), size: c.u32("data directory Size") } : { rva: 0, size: 0 });
  }

  // Section table: right after the optional header (PE Format, "Section Table (Section Headers)").
  const sectionTable = oh + sizeOfOptionalHeader;
  c.need(numberOfSections * SECTION_HEADER_SIZE, `section table (${numberOfSections} × 40 bytes)`, sectionTable);
  const sections: PeSection[] = [];
  for (let i = 0; i < numberOfSections; i++) {
    const sh = sectionTable + i * SECTION_HEADER_SIZE;
    c.seek(sh);
    const nameBytes = c.take(8, "section Name");
    const nul = nameBytes.indexOf(0);
    const name = String.fromCharCode(...nameBytes.subarray(0, nul < 0 ? 8 : nul));
    const virtualSize = c.u32("section VirtualSize");
    const virtualAddress = c.u32("section VirtualAddress");
    const rawSize = c.u32("section SizeOfRawData");
    const rawOffset = c.u32("section PointerToRawData");
    c.skip(12, "section relocation/line-number fields");
    const sectionCharacteristics = c.u32("section Characteristics");
    const section: PeSection = { name, virtualAddress, virtualSize, rawOffset, rawSize, characteristics: sectionCharacteristics };
    const label = `section ${i + 1} "${name}"`;
    if (rawSize > 0 && rawOffset + rawSize > fileLength) {
      throw new InputError(
        "truncated",
        `${label}: raw data ${hex(rawOffset)}..${hex(rawOffset + rawSize)} runs past the end of the file (length ${hex(fileLength)})`,
        { offset: sh + 20 },
      );
    }
    const span = virtualSpan(section);
    if (virtualAddress + span > sizeOfImage) {
      throw new InputError(
        "bad-value",
        `${label}: RVA range ${hex(virtualAddress)}..${hex(virtualAddress + span)} lies outside the image (SizeOfImage ${hex(sizeOfImage)})`,
        { offset: sh + 12 },
      );
    }
    for (const other of sections) {
      const otherSpan = virtualSpan(other);
      if (span > 0 && otherSpan > 0 && virtualAddress < other.virtualAddress + otherSpan && other.virtualAddress < virtualAddress + span) {
        throw new InputError("overlap", `${label}: RVA range ${hex(virtualAddress)}..${hex(virtualAddress + span)} overlaps section "${other.name}"`, {
          offset: sh + 12,
        });
      }
    }
    sections.push(section);
  }

  // Every directory must lie inside the image; the security directory alone holds a file offset.
  for (let i = 0; i < usedDirectories; i++) {
    const { rva, size } = dataDirectories[i]!;
    if (size === 0) continue;
    const where = { offset: dirBase + i * 8 };
    if (i === IMAGE_DIRECTORY_ENTRY.SECURITY) {
      if (rva + size > fileLength) {
        throw new InputError("truncated", `security directory ${hex(rva)}..${hex(rva + size)} runs past the end of the file (length ${hex(fileLength)})`, where);
      }
    } else if (rva + size > sizeOfImage) {
      throw new InputError(
        "bad-value",
        `${DIRECTORY_NAMES[i]} directory ${hex(rva)}..${hex(rva + size)} lies outside the image (SizeOfImage ${hex(sizeOfImage)})`,
        where,
      );
    }
  }

  /** The file offset holding `size` mapped bytes at `rva`, when they all come from one stretch of the file. */
  const fileRange = (rva: number, size: number): number | undefined => {
    for (const s of sections) {
      const backed = Math.min(s.rawSize, virtualSpan(s));
      if (rva >= s.virtualAddress && rva + size <= s.virtualAddress + backed) return s.rawOffset + (rva - s.virtualAddress);
    }
    return rva + size <= sizeOfHeaders ? rva : undefined;
  };

  /** A directory this parser reads must come from the file: a zero-filled table is corrupt, and reading from the file bounds the work by the input size. */
  const directoryInFile = (index: number, entrySize: number): ByteCursor | undefined => {
    const { rva, size } = dataDirectories[index]!;
    if (size === 0) return undefined;
    const entry = dirBase + index * 8;
    if (size % entrySize !== 0) {
      throw new InputError("bad-value", `${DIRECTORY_NAMES[index]} directory size ${hex(size)} is not a multiple of ${entrySize}`, { offset: entry + 4 });
    }
    const at = fileRange(rva, size);
    if (at === undefined) {
      throw new InputError("bad-value", `${DIRECTORY_NAMES[index]} directory ${hex(rva)}..${hex(rva + size)} is not backed by file data`, { offset: entry });
    }
    return new ByteCursor(bytes.subarray(at, at + size), at);
  };

  // Exception directory: RUNTIME_FUNCTION triples on x64 and IA64 (x64-unwind.md §1.1, ia64.md);
  // other machines (ARM64's 8-byte entries) are not read.
  const hasRuntimeFunctions = machine === IMAGE_FILE_MACHINE.AMD64 || machine === IMAGE_FILE_MACHINE.IA64;
  const pdata = hasRuntimeFunctions ? directoryInFile(IMAGE_DIRECTORY_ENTRY.EXCEPTION, RUNTIME_FUNCTION_SIZE) : undefined;

  // Debug directory: an array of 28-byte IMAGE_DEBUG_DIRECTORY (PE Format, "Debug Directory (Image Only)").
  const debug: PeDebugEntry[] = [];
  let codeView: CodeViewInfo | undefined;
  let fpo: Uint8Array | undefined;
  const dd = directoryInFile(IMAGE_DIRECTORY_ENTRY.DEBUG, DEBUG_ENTRY_SIZE);
  if (dd !== undefined) {
    const count = dd.bytes.byteLength / DEBUG_ENTRY_SIZE;
    if (count > PE_LIMITS.maxDebugEntries) {
      throw new InputError("unsupported", `the debug directory has ${count} entries, more than ${PE_LIMITS.maxDebugEntries}`, {
        offset: dirBase + IMAGE_DIRECTORY_ENTRY.DEBUG * 8 + 4,
      });
    }
    for (let i = 0; i < count; i++) {
      const e = dd.base + i * DEBUG_ENTRY_SIZE;
      dd.skip(4, "IMAGE_DEBUG_DIRECTORY.Characteristics");
      const entryStamp = dd.u32("IMAGE_DEBUG_DIRECTORY.TimeDateStamp");
      dd.skip(4, "IMAGE_DEBUG_DIRECTORY.MajorVersion/MinorVersion");
      const entry: PeDebugEntry = {
        type: dd.u32("IMAGE_DEBUG_DIRECTORY.Type"),
        size: dd.u32("IMAGE_DEBUG_DIRECTORY.SizeOfData"),
        rva: dd.u32("IMAGE_DEBUG_DIRECTORY.AddressOfRawData"),
        fileOffset: dd.u32("IMAGE_DEBUG_DIRECTORY.PointerToRawData"),
        timeDateStamp: entryStamp,
      };
      const payload = debugPayload(entry, e);
      if (entry.type === IMAGE_DEBUG_TYPE.CODEVIEW && codeView === undefined && payload !== undefined) {
        codeView = parseCodeView(payload);
      } else if (entry.type === IMAGE_DEBUG_TYPE.FPO && fpo === undefined && payload !== undefined) {
        if (entry.size % FPO_DATA_SIZE !== 0) {
          throw new InputError("bad-value", `FPO debug data size ${hex(entry.size)} is not a multiple of ${FPO_DATA_SIZE}`, { offset: e + 16 });
        }
        fpo = payload.bytes;
      }
      debug.push(entry);
    }
  }

  /**
   * Where a debug entry's payload is: PointerToRawData in the file when set (it need not be
   * mapped), otherwise AddressOfRawData in the image. Undefined for an empty payload (lld's
   * IMAGE_DEBUG_TYPE_REPRO entry has SizeOfData 0 and both pointers 0).
   */
  function debugPayload(entry: PeDebugEntry, e: number): ByteCursor | undefined {
    if (entry.size === 0) return undefined;
    if (entry.fileOffset !== 0) {
      if (entry.fileOffset + entry.size > fileLength) {
        throw new InputError(
          "truncated",
          `debug entry (type ${entry.type}) data ${hex(entry.fileOffset)}..${hex(entry.fileOffset + entry.size)} runs past the end of the file (length ${hex(fileLength)})`,
          { offset: e + 24 },
        );
      }
      return new ByteCursor(bytes.subarray(entry.fileOffset, entry.fileOffset + entry.size), entry.fileOffset);
    }
    const at = entry.rva === 0 ? undefined : fileRange(entry.rva, entry.size);
    if (at === undefined) {
      throw new InputError(
        "bad-value",
        `debug entry (type ${entry.type}) has ${hex(entry.size)} bytes of data but no file-backed location (RVA ${hex(entry.rva)})`,
        { offset: e + 20 },
      );
    }
    return new ByteCursor(bytes.subarray(at, at + entry.size), at);
  }

  const image: PeImage = {
    machine,
    is64,
    imageBase,
    entryRva,
    sizeOfImage,
    sizeOfHeaders,
    sizeOfStackReserve,
    sectionAlignment,
    fileAlignment,
    timeDateStamp,
    characteristics,
    dllCharacteristics,
    sections,
    dataDirectories,
    debug,
    hasImports: dataDirectories[IMAGE_DIRECTORY_ENTRY.IMPORT]!.size !== 0,
    hasRelocations: dataDirectories[IMAGE_DIRECTORY_ENTRY.BASERELOC]!.size !== 0,
    mapped: () => readMapped(0, sizeOfImage),
    readRva: (rva, size) => {
      if (!Number.isInteger(rva) || !Number.isInteger(size) || rva < 0 || size < 0 || rva + size > sizeOfImage) return undefined;
      return readMapped(rva, size);
    },
    runtimeFunctions: () => {
      if (pdata === undefined) return [];
      const table = new ByteCursor(pdata.bytes, pdata.base);
      const out: RuntimeFunction[] = [];
      while (table.remaining > 0) {
        out.push({
          beginRva: table.u32("RUNTIME_FUNCTION.BeginAddress"),
          endRva: table.u32("RUNTIME_FUNCTION.EndAddress"),
          unwindData: table.u32("RUNTIME_FUNCTION.UnwindData"),
        });
      }
      return out;
    },
    fpoData: () => fpo?.slice(),
  };
  if (codeView !== undefined) image.codeView = codeView;
  return image;

  /**
   * The loader's view of [rva, rva+size): the first SizeOfHeaders bytes of the file at RVA 0, then
   * each section's first min(SizeOfRawData, VirtualSize) file bytes at its VirtualAddress, zeros
   * elsewhere. No alignment rounding is applied to the raw fields.
   */
  function readMapped(rva: number, size: number): Uint8Array {
    const out = new Uint8Array(size);
    const copy = (fileAt: number, mapAt: number, length: number): void => {
      const from = Math.max(rva, mapAt);
      const to = Math.min(rva + size, mapAt + length);
      if (from < to) out.set(bytes.subarray(fileAt + (from - mapAt), fileAt + (to - mapAt)), from - rva);
    };
    copy(0, 0, sizeOfHeaders);
    for (const s of sections) copy(s.rawOffset, s.virtualAddress, Math.min(s.rawSize, virtualSpan(s)));
    return out;
  }
}

/** The bytes a section occupies in the image: VirtualSize, or SizeOfRawData when VirtualSize is 0. */
function virtualSpan(s: PeSection): number {
  return s.virtualSize !== 0 ? s.virtualSize : s.rawSize;
}

/**
 * Parses a CodeView debug record (minidump.md §2.3): "RSDS" + GUID(16) + age(4) + NUL-terminated
 * UTF-8 PDB path, or "NB10" + offset(4) + signature(4) + age(4) + path. Anything else is rejected.
 */
export function parseCodeView(c: ByteCursor): CodeViewInfo {
  const start = c.base;
  const signature = c.u32("CodeView signature");
  if (signature === RSDS) {
    const g = c.sub(16, "CodeView RSDS GUID");
    const guid = hexPad(g.u32(), 8) + hexPad(g.u16(), 4) + hexPad(g.u16(), 4) + Array.from(g.take(8), (b) => hexPad(b, 2)).join("");
    const age = c.u32("CodeView RSDS age");
    const pdbName = cString(c, "CodeView RSDS PDB name");
    return { format: "RSDS", guid, age, pdbName, debugId: guid + age.toString(16) };
  }
  if (signature === NB10) {
    c.skip(4, "CodeView NB10 offset");
    const guid = hexPad(c.u32("CodeView NB10 signature"), 8);
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
    throw new InputError("truncated", `${what} has no NUL terminator before the end of the record (offset ${hex(c.base + c.bytes.byteLength)})`, {
      offset: c.offset,
    });
  }
  return new TextDecoder("utf-8").decode(rest.subarray(0, nul));
}
