/**
 * stackwalk-emu/node: what needs the file system or the network. Minidumps read lazily from
 * files and written to files, inputs loaded by path, symbol and image directories searched for a
 * snapshot's modules, symbol paths and HTTP(S) symbol servers. Everything else (walking, formats
 * on bytes, renderers) is in the core entry, `stackwalk-emu`.
 */
export { fileSource, ioReason, reopeningFileSource } from "./file-source.js";
export { fileSink, writeMinidumpFile } from "./file-sink.js";
export { openDump, loadInput, type Input, type OpenedDump } from "./input.js";
export { attachSymbolDirectories, besideInput, readInputFile, readSymbolFile, SymbolFileCache, type SymbolDirectoryOptions, type SymbolNote } from "./symbol-store.js";
export { attachImageDirectories, attachImagePath, downloadImages, type ImageNote, type ImagePathOptions, type ImageDownloadResult } from "./images.js";
export {
  parseSymbolPath,
  attachSymbolPath,
  downloadSymbols,
  missingDirectories,
  defaultSymbolCache,
  type SymbolPath,
  type SymbolServer,
  type SymbolPathOptions,
  type DownloadOptions,
  type DownloadResult,
} from "./symbol-path.js";
export { loadInstructionDecoder, DISASSEMBLER_PACKAGE, type DecoderLoad } from "./disassembler.js";
export { loadSnapshot, attachSymbols, fetchSymbols, reportSymbols, symbolSpecOf, LoadOptionError, type LoadSnapshotOptions, type LoadedSnapshot, type SymbolSpec } from "./load.js";
