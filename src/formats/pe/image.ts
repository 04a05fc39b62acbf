/**
 * A PE32 / PE32+ image from its file bytes (no Node APIs: it runs in a browser): the headers,
 * read one after the other by the readers in headers.ts, the exception directory (x64-unwind.md
 * §1.1) and the debug directory (debug.ts), and the image as the loader maps it.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import { ByteCursor } from "../../memory/cursor.js";
import { IMAGE_FILE_MACHINE } from "../../model/machine.js";
import { readDebugDirectory, type FileBacking } from "./debug.js";
import { checkDataDirectories, readCoffHeader, readDataDirectories, readDosHeader, readOptionalHeader, readSectionTable, virtualSpan, type DataDirectories } from "./headers.js";
import { DIRECTORY_NAMES, IMAGE_DIRECTORY_ENTRY, type PeImage, type PeSection, type RuntimeFunction } from "./types.js";

const DEBUG_ENTRY_SIZE = 28;
const RUNTIME_FUNCTION_SIZE = 12;

/** Machines whose exception directory holds RUNTIME_FUNCTION triples (x64-unwind.md §1.1, ia64.md); ARM64's 8-byte entries are not read. */
const RUNTIME_FUNCTION_MACHINES: readonly number[] = [IMAGE_FILE_MACHINE.AMD64, IMAGE_FILE_MACHINE.IA64];

/** Parses a PE32 or PE32+ image from its file bytes; throws {@link InputError} on malformed input. */
export function parsePe(bytes: Uint8Array): PeImage {
  const c = new ByteCursor(bytes);
  const lfanew = readDosHeader(c);
  const coff = readCoffHeader(c, lfanew);
  const opt = readOptionalHeader(c, coff);
  const dirs = readDataDirectories(c, coff, opt);
  const sections = readSectionTable(c, coff, opt);
  checkDataDirectories(dirs, opt, bytes.byteLength);
  const layout = new ImageLayout(bytes, sections, opt.sizeOfHeaders);

  const pdata = RUNTIME_FUNCTION_MACHINES.includes(coff.machine) ? directoryInFile(layout, dirs, IMAGE_DIRECTORY_ENTRY.EXCEPTION, RUNTIME_FUNCTION_SIZE) : undefined;
  const debugDir = directoryInFile(layout, dirs, IMAGE_DIRECTORY_ENTRY.DEBUG, DEBUG_ENTRY_SIZE);
  const debug = debugDir === undefined ? { entries: [] } : readDebugDirectory(debugDir, layout, dirs.at + IMAGE_DIRECTORY_ENTRY.DEBUG * 8 + 4);

  const { sizeOfImage } = opt;
  const image: PeImage = {
    machine: coff.machine,
    is64: opt.is64,
    imageBase: opt.imageBase,
    entryRva: opt.entryRva,
    sizeOfImage,
    sizeOfHeaders: opt.sizeOfHeaders,
    sizeOfStackReserve: opt.sizeOfStackReserve,
    sectionAlignment: opt.sectionAlignment,
    fileAlignment: opt.fileAlignment,
    timeDateStamp: coff.timeDateStamp,
    characteristics: coff.characteristics,
    dllCharacteristics: opt.dllCharacteristics,
    sections,
    dataDirectories: dirs.entries,
    debug: debug.entries,
    hasImports: dirs.entries[IMAGE_DIRECTORY_ENTRY.IMPORT]!.size !== 0,
    hasRelocations: dirs.entries[IMAGE_DIRECTORY_ENTRY.BASERELOC]!.size !== 0,
    mapped: () => layout.readMapped(0, sizeOfImage),
    readRva: (rva, size) => {
      if (!Number.isInteger(rva) || !Number.isInteger(size) || rva < 0 || size < 0 || rva + size > sizeOfImage) return undefined;
      return layout.readMapped(rva, size);
    },
    runtimeFunctions: () => (pdata === undefined ? [] : decodeRuntimeFunctions(pdata)),
    fpoData: () => debug.fpo?.slice(),
  };
  if (debug.codeView !== undefined) image.codeView = debug.codeView;
  return image;
}

/** Where the image's mapped bytes come from in the file: the headers at RVA 0, then each section's raw data. */
class ImageLayout implements FileBacking {
  constructor(
    readonly bytes: Uint8Array,
    private readonly sections: readonly PeSection[],
    private readonly sizeOfHeaders: number,
  ) {}

  fileRange(rva: number, size: number): number | undefined {
    for (const s of this.sections) {
      const backed = Math.min(s.rawSize, virtualSpan(s));
      if (rva >= s.virtualAddress && rva + size <= s.virtualAddress + backed) return s.rawOffset + (rva - s.virtualAddress);
    }
    return rva + size <= this.sizeOfHeaders ? rva : undefined;
  }

  /**
   * The loader's view of [rva, rva+size): the first SizeOfHeaders bytes of the file at RVA 0, then
   * each section's first min(SizeOfRawData, VirtualSize) file bytes at its VirtualAddress, zeros
   * elsewhere. No alignment rounding is applied to the raw fields.
   */
  readMapped(rva: number, size: number): Uint8Array {
    const out = new Uint8Array(size);
    const copy = (fileAt: number, mapAt: number, length: number): void => {
      const from = Math.max(rva, mapAt);
      const to = Math.min(rva + size, mapAt + length);
      if (from < to) out.set(this.bytes.subarray(fileAt + (from - mapAt), fileAt + (to - mapAt)), from - rva);
    };
    copy(0, 0, this.sizeOfHeaders);
    for (const s of this.sections) copy(s.rawOffset, s.virtualAddress, Math.min(s.rawSize, virtualSpan(s)));
    return out;
  }
}

/**
 * A directory this parser reads, from the file: a zero-filled table is corrupt, and reading from
 * the file bounds the work by the input size. Undefined when the directory is empty.
 */
function directoryInFile(layout: ImageLayout, dirs: DataDirectories, index: number, entrySize: number): ByteCursor | undefined {
  const { rva, size } = dirs.entries[index]!;
  if (size === 0) return undefined;
  const entry = dirs.at + index * 8;
  if (size % entrySize !== 0) {
    throw new InputError("bad-value", `${DIRECTORY_NAMES[index]} directory size ${hex(size)} is not a multiple of ${entrySize}`, { offset: entry + 4 });
  }
  const at = layout.fileRange(rva, size);
  if (at === undefined) {
    throw new InputError("bad-value", `${DIRECTORY_NAMES[index]} directory ${hex(rva)}..${hex(rva + size)} is not backed by file data`, { offset: entry });
  }
  return new ByteCursor(layout.bytes.subarray(at, at + size), at);
}

/** The exception directory's RUNTIME_FUNCTION triples (x64-unwind.md §1.1), in table order. */
function decodeRuntimeFunctions(pdata: ByteCursor): RuntimeFunction[] {
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
}
