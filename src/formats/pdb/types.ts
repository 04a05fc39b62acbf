/**
 * What the PDB reader returns (x86-fpo.md §4): the info stream's identifiers, function symbols,
 * OMAP entries, section headers and the unwind records.
 */
import type { FpoData } from "../../model/fpo-data.js";
import type { FrameData } from "../../model/frame-data.js";
import type { InlineSites } from "../../model/inline.js";
import type { SourceLine } from "../../model/snapshot.js";

/** The PDB info stream header (§4.3), with the identifiers a symbol store uses. */
export interface PdbInfo {
  /** Version, normally 20000404 (VC70). */
  version: number;
  /** The 32-bit signature (a timestamp for MSVC; lld writes the GUID's first dword). */
  signature: number;
  /** The info stream's age: how many times the PDB was written. */
  age: number;
  /** The GUID as 32 upper-case hex digits in Windows display order (Data1-3 little-endian, then Data4), no dashes, as pe.ts prints RSDS GUIDs. */
  guid: string;
  /** Symbol-store identifier: `guid` then the DBI age in lower-case hex without padding (minidump.md §8), equal to the image's. */
  debugId: string;
}

/** One function symbol with an RVA. */
export interface PdbSymbol {
  /** The symbol name: decorated for publics (`_entry`), plain for procedures (`entry`). */
  name: string;
  /** Relative virtual address of the first byte. */
  rva: number;
  /** Bytes of code; procedures only. */
  size?: number;
  /** `public` for S_PUB32, `procedure` for S_GPROC32/S_LPROC32 and their variants. */
  kind: "public" | "procedure";
  /** A procedure's inline sites (S_INLINESITE records with their annotations), when it has any. */
  inlines?: InlineSites;
  /**
   * A procedure's source lines from its module's line table (C13 DEBUG_S_LINES), sorted by rva;
   * read when first asked for.
   */
  lines?: SourceLine[];
}

/** One OMAP entry: addresses from `rva` up to the next entry map to `rvaTo` plus the distance. */
export interface OmapEntry {
  /** Start of the range in the source address space. */
  rva: number;
  /** Where the range starts in the target space; 0 means "eliminated". */
  rvaTo: number;
}

/** An IMAGE_SECTION_HEADER copied into the PDB (debug header slots 5 and 10). */
export interface PdbSection {
  /** The section name, up to 8 bytes. */
  name: string;
  /** VirtualSize. */
  virtualSize: number;
  /** VirtualAddress: the section's RVA. */
  virtualAddress: number;
  /** Characteristics (IMAGE_SCN_*). */
  characteristics: number;
}

/** A section table entry as symbols() needs it: a PE section header or a PdbSection. */
export interface SectionAddress {
  /** The section's RVA. */
  virtualAddress: number;
  /** IMAGE_SCN_* flags when known; used to drop publics that are data. */
  characteristics?: number;
}

/** A PDB's function symbols looked up by RVA, each made (its name read) when a lookup returns it. */
export interface PdbSymbolIndex {
  /** The number of symbols ({@link Pdb.symbols}'s length). */
  readonly count: number;
  /** The last symbol starting at or below `rva`, within its size when it has one. */
  at(rva: number): PdbSymbol | undefined;
  /** Every symbol, sorted as {@link Pdb.symbols} gives them. */
  all(): PdbSymbol[];
}

/** What parsePdb extracts from a PDB. */
export interface Pdb {
  /** The PDB info stream header. */
  info: PdbInfo;
  /** The DBI header's age, which matches the age in the image's CodeView (RSDS) record. */
  dbiAge: number;
  /** IMAGE_FILE_MACHINE_* from the DBI header (0x14C x86, 0x8664 x64). */
  machine: number;
  /** MSF block size in bytes. */
  blockSize: number;
  /** Number of streams in the directory. */
  streamCount: number;
  /** Old FPO_DATA from debug header slot 0, sorted by ulOffStart; [] when absent. */
  fpo: FpoData[];
  /** FrameData from slot 9, sorted by rvaStart, programs resolved through `/names`; [] when absent. */
  frameData: FrameData[];
  /** OMAP from the original (source) layout to the image (slot 4), when the PDB has one. */
  omapFromSrc?: OmapEntry[];
  /** OMAP from the image back to the original layout (slot 3), when the PDB has one. */
  omapToSrc?: OmapEntry[];
  /** The image's section headers (slot 5), when the PDB has them. */
  sections?: PdbSection[];
  /** The pre-transform section headers (slot 10), present in OMAP'd PDBs. */
  originalSections?: PdbSection[];
  /**
   * Function symbols sorted by RVA: code publics and procedures. Segment:offset is converted
   * with the PDB's own section headers when present, else with `sections` (a PE section table);
   * OMAP'd addresses are mapped to the image. A public at the same RVA as a procedure is dropped
   * in favour of the procedure, which has a size. Throws InputError ("missing-field") when the
   * PDB has no section headers and none are given.
   */
  symbols(sections?: readonly SectionAddress[]): PdbSymbol[];
  /**
   * The same symbols looked up by RVA without making them all: one pass over the symbol records
   * at parse kept each symbol's address, size and where its name lies; a lookup makes the one it
   * returns. Throws as {@link symbols} does.
   */
  symbolIndex(sections?: readonly SectionAddress[]): PdbSymbolIndex;
}
