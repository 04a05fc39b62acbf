/**
 * PE32 / PE32+ image types and constants (Microsoft's "PE Format" specification; section names
 * below refer to it): what {@link parsePe} returns, and the directory and debug-type numbers.
 */

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

/** The data directories by index, as messages name them. */
export const DIRECTORY_NAMES: readonly string[] = [
  "export", "import", "resource", "exception", "security", "base relocation", "debug", "architecture",
  "global pointer", "TLS", "load config", "bound import", "IAT", "delay import", "CLR header", "reserved",
];
