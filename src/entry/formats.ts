/**
 * stackwalk-emu/formats: every format on bytes, read and written: vectors and sweeps, minidumps (each
 * stream, and a writer), PE images and their mapped form, PDBs, Breakpad .sym files (read and
 * written), FrameData, symbol files attached to snapshots; the snapshot model they produce and the
 * memory readers under it.
 * Like the root entry it runs in a browser (no Node built-ins). Re-exports only.
 */
export type * from "../model/snapshot.js";
export { isWindows, moduleAt, symbolAt } from "../model/snapshot.js";
export * from "../model/inline.js";
export type { MemoryReader } from "../memory/reader.js";
export { readU32, readU64, readPointer } from "../memory/reader.js";
export { RegionMemory, type MemoryRegion } from "../memory/region-memory.js";
export { ByteCursor } from "../memory/cursor.js";
export { parseVector, formatVector, VECTOR_FORMAT, type Vector } from "../formats/vector.js";
export { parseSweep, formatSweep, replaySweep, SWEEP_FORMAT, type Sweep, type SweepStep, type MemoryWrite } from "../formats/sweep.js";
export { parseJsonInput, type JsonInput } from "../formats/input.js";
export { JsonNode } from "../formats/json-input.js";
export {
  parseBreakpadSym,
  readBreakpadSym,
  BreakpadSymParser,
  stackWinToFpoData,
  stackWinToFrameData,
  breakpadSymbols,
  symbolStorePath,
  STACK_WIN_TYPE,
  MAX_MALFORMED_LINES,
  type BreakpadSymbols,
  type BreakpadInline,
  type BreakpadInlineOrigin,
  type BreakpadSymOptions,
  type BreakpadModule,
  type BreakpadCodeId,
  type BreakpadFunc,
  type BreakpadLine,
  type BreakpadPublic,
  type BreakpadStackWin,
  type BreakpadStackCfi,
  type StackCfiAt,
  type StackCfiIndex,
  type BreakpadCfiDelta,
} from "../formats/breakpad-sym.js";
export { parsePdb, omapTranslate, MSF_MAGIC, type Pdb, type PdbInfo, type PdbSymbol, type PdbSymbolIndex, type PdbSection, type OmapEntry, type SectionAddress } from "../formats/pdb.js";
export { parsePe, IMAGE_DIRECTORY_ENTRY, IMAGE_DEBUG_TYPE, PE_LIMITS, type PeImage, type PeSection, type PeDebugEntry, type CodeViewInfo, type RuntimeFunction } from "../formats/pe.js";
export { readMappedImage, type MappedImage } from "../formats/pe-mapped.js";
export { decodeFrameData, encodeFrameData, findFrameData, FRAME_DATA_SIZE, type FrameData, type FrameDataIndex } from "../formats/frame-data.js";
export {
  parseSymbolFile,
  breakpadSymbolFile,
  pdbSymbolFile,
  imageFile,
  imageCodeId,
  attachSymbolFile,
  attachSymbolFiles,
  moduleIdentity,
  symbolFileMismatch,
  type SymbolFile,
  type BreakpadSymbolFile,
  type PdbSymbolFile,
  type ImageFile,
  type ParseSymbolFileOptions,
  type SymbolTarget,
  type ModuleIdentity,
  type AttachOptions,
  type Attachment,
} from "../formats/symbol-file.js";
export { readCabinet, CAB_MAGIC, CAB_MAX_BYTES, type Cabinet, type CabFile, type CabOptions } from "../formats/cab.js";
export { imageStoreKey, compressedName, storeFileName, STORE_NAME_MAX_BYTES } from "../formats/store-path.js";
export {
  readMinidump,
  minidumpSnapshot,
  bytesSource,
  snapshotMemoryRanges,
  elfDebugId,
  streamTypeName,
  MinidumpMemory,
  MINIDUMP_SIGNATURE,
  MINIDUMP_VERSION,
  MINIDUMP_STREAM,
  MINIDUMP_LIMITS,
  PROCESSOR_ARCHITECTURE,
  VS_FFI_SIGNATURE,
  type ByteSource,
  type Minidump,
  type MinidumpHeader,
  type MinidumpLocation,
  type MinidumpStreamEntry,
  type MinidumpMemoryRange,
  type MemoryOrigin,
  type MinidumpContext,
  type MinidumpThread,
  type MinidumpVersionInfo,
  type MinidumpModule,
  type MinidumpException,
  type MinidumpCpuInfo,
  type MinidumpSystemInfo,
  type MinidumpMiscInfo,
  type MinidumpFunctionTable,
  type MinidumpFunctionTableStream,
  type MinidumpBreakpadInfo,
  type MinidumpAssertion,
} from "../formats/minidump.js";
export {
  writeMinidump,
  minidumpBytes,
  bytesSink,
  moduleCodeView,
  moduleCodeId,
  moduleTimeDateStamp,
  encodeCodeView,
  EXCEPTION_BREAKPOINT,
  type ByteSink,
  type BytesSink,
  type MemoryExtent,
  type ExtentMemory,
  type MinidumpWriteOptions,
  type MinidumpWriteException,
  type MinidumpWriteSystem,
  type MinidumpWriteResult,
  type WrittenStreamInfo,
  type CodeViewIdentity,
} from "../formats/minidump-write.js";
export {
  breakpadSymLines,
  formatBreakpadSym,
  symFileInput,
  symFileStorePath,
  BREAKPAD_ARCH,
  type SymFileInput,
} from "../formats/breakpad-sym-write.js";
