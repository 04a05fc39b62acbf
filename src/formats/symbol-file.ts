/**
 * Symbol files from bytes, attached to a snapshot's modules by identity. A Breakpad `.sym` file
 * (minidump.md §7) or a PDB (x86-fpo.md §4) belongs to the module whose debug id (CodeView GUID +
 * age, minidump.md §8) it carries: the module list's, or the CodeView record of the image mapped
 * at the module's base. A PE image belongs to the module whose code id (TimeDateStamp and
 * SizeOfImage) it has, and is laid under the snapshot's memory at the module's base, where the
 * unwinders find its exception directory and code (x64-unwind.md §1.1).
 *
 * Attaching never edits a module in place: the module is replaced by a new object, in a new
 * module list (and an image gives the snapshot a new memory). Everything a walk learns about a
 * snapshot is kept per module, module list and memory, so a walk after an attachment uses the
 * new records, whether or not the snapshot was walked before.
 */
import { hex } from "../hex.js";
import { InputError, readingFile } from "../errors.js";
import { OverlayMemory } from "../memory/overlay-memory.js";
import type { MemoryReader } from "../memory/reader.js";
import type { MemoryRegion } from "../memory/region-memory.js";
import { machineFromImageFileMachine, type Machine } from "../model/machine.js";
import { copyModule, hasSymbols, lineAt, withSymbolIndex, type Module, type ModuleSymbol, type ModuleUnwind, type SymbolIndex } from "../model/snapshot.js";
import type { ByteSource } from "../memory/byte-source.js";
import { breakpadFpoData, breakpadFrameData, breakpadFrameDataIndex, parseBreakpadSym, readBreakpadSym, symTables, type BreakpadStackCfi, type BreakpadSymbols } from "./breakpad-sym.js";
import { cfiIndex, cfiRecordsWithinLimits, cfiRefusals } from "./breakpad-sym/cfi-index.js";
import { breakpadSymbols, symbolIndex } from "./breakpad-sym/module-symbols.js";
import { lazyProperty } from "./lazy-property.js";
import { cfiRulesOverLimit } from "./postfix-limits.js";
import { MSF_MAGIC, parsePdb, type Pdb, type PdbSymbol, type PdbSymbolIndex } from "./pdb.js";
import { readMappedImage } from "./pe-mapped.js";
import { parsePe, peCodeId, type PeImage } from "./pe.js";
import { fileNameOf } from "../path-name.js";

/** A Breakpad `.sym` file and the module it describes. */
export interface BreakpadSymbolFile {
  kind: "breakpad";
  /** The file's name, for messages and the records' origin. */
  name?: string;
  /** The MODULE record's debug file (`test_app.pdb`). */
  debugFile: string;
  /** The MODULE record's debug id. */
  debugId: string;
  symbols: BreakpadSymbols;
}

/** A PDB and the module it describes. */
export interface PdbSymbolFile {
  kind: "pdb";
  name?: string;
  /** The PDB's debug id: its GUID and DBI age (minidump.md §8). */
  debugId: string;
  pdb: Pdb;
}

/** A PE image and the module it is. */
export interface ImageFile {
  kind: "image";
  name?: string;
  /** TimeDateStamp as `%08X` followed by SizeOfImage as `%x`, as a minidump's module list gives it. */
  codeId: string;
  image: PeImage;
}

/** A file that {@link attachSymbolFile} can attach: symbols and unwind records, or an image. */
export type SymbolFile = BreakpadSymbolFile | PdbSymbolFile | ImageFile;

/** Options of {@link parseSymbolFile}. */
export interface ParseSymbolFileOptions {
  /** The file's name: errors and the attached records' origin name it. */
  name?: string;
  /**
   * A `.sym` file's malformed lines are left out and counted, as Breakpad's loader does, instead
   * of ending the parse (the attachment then warns of corrupt symbols). Default false.
   */
  skipMalformed?: boolean;
}

const startsWith = (bytes: Uint8Array, text: string): boolean => {
  if (bytes.length < text.length) return false;
  for (let i = 0; i < text.length; i++) if (bytes[i] !== text.charCodeAt(i)) return false;
  return true;
};

/** Errors of `parse` name the file, when it has a name. */
function named<T extends SymbolFile>(name: string | undefined, parse: () => T): T {
  const file = readingFile(name, parse);
  if (name !== undefined) file.name = name;
  return file;
}

/**
 * A Breakpad `.sym` file from its bytes, its text, or a {@link ByteSource} it is read from by
 * position (one pass builds its index; the records a lookup asks for are read again, so that the
 * file is never held whole: the source must keep giving the same bytes); throws
 * {@link InputError} naming the line and byte offset.
 */
export function breakpadSymbolFile(input: Uint8Array | string | ByteSource, options: ParseSymbolFileOptions = {}): BreakpadSymbolFile {
  return named(options.name, () => {
    const parse = { skipMalformed: options.skipMalformed === true };
    const symbols = typeof input === "string" || input instanceof Uint8Array ? parseBreakpadSym(input, parse) : readBreakpadSym(input, parse);
    return { kind: "breakpad", debugFile: symbols.module.debugFile, debugId: symbols.module.debugId, symbols };
  });
}

/**
 * A PDB from its bytes, or from a {@link ByteSource} it is read from by position (only the
 * streams a walk needs; the source must keep giving the same bytes, see {@link parsePdb}); throws
 * {@link InputError} naming the byte offset.
 */
export function pdbSymbolFile(input: Uint8Array | ByteSource, options: { name?: string } = {}): PdbSymbolFile {
  return named(options.name, () => {
    const pdb = parsePdb(input);
    return { kind: "pdb", debugId: pdb.info.debugId, pdb };
  });
}

/** A PE image from its bytes (the file as on disk); throws {@link InputError} naming the byte offset. */
export function imageFile(bytes: Uint8Array, options: { name?: string } = {}): ImageFile {
  return named(options.name, () => {
    const image = parsePe(bytes);
    return { kind: "image", codeId: imageCodeId(image), image };
  });
}

/**
 * Parses a Breakpad `.sym` file, a PDB or a PE image, told apart by their first bytes (`MODULE`,
 * the MSF 7.00 magic, `MZ`). Throws {@link InputError}: "bad-magic" for anything else, or the
 * format's own error naming the byte offset.
 */
export function parseSymbolFile(bytes: Uint8Array, options: ParseSymbolFileOptions = {}): SymbolFile {
  if (startsWith(bytes, "MZ")) return imageFile(bytes, options);
  if (startsWith(bytes, MSF_MAGIC)) return pdbSymbolFile(bytes, options);
  const bom = startsWith(bytes, "\xef\xbb\xbf") ? 3 : 0;
  if (startsWith(bytes.subarray(bom), "MODULE ")) return breakpadSymbolFile(bytes, options);
  const where = options.name === undefined ? { offset: 0 } : { offset: 0, file: options.name };
  throw new InputError("bad-magic", "not a Breakpad .sym file (MODULE ...), a PDB (MSF 7.00) or a PE image (MZ)", where);
}

/** A PE image's code id: TimeDateStamp as `%08X`, then SizeOfImage as `%x` (Breakpad's form). */
export function imageCodeId(image: PeImage): string {
  return peCodeId(image.timeDateStamp, image.sizeOfImage);
}

/** What symbol files attach to: a snapshot (or a sweep), whose module list and memory are replaced. */
export interface SymbolTarget {
  modules: Module[];
  memory: MemoryReader;
  /** The snapshot's machine, when known (a snapshot has it): an image built for another machine is refused. */
  machine?: Machine;
}

/** Who a module is, as symbol files name it. */
export interface ModuleIdentity {
  /** The PDB named by the CodeView record, as stored. */
  debugFile?: string;
  /** Symbol-store identifier (minidump.md §8). */
  debugId?: string;
  /** TimeDateStamp + SizeOfImage (minidump.md §8), when the snapshot knows it. */
  codeId?: string;
}

/**
 * A module's identity: the module list's CodeView record (a minidump), else the CodeView record
 * of the image mapped at its base in `memory`; the code id from the module list.
 */
export function moduleIdentity(module: Module, memory: MemoryReader): ModuleIdentity {
  const id: ModuleIdentity = {};
  if (module.debugFile !== undefined && module.debugId !== undefined) {
    id.debugFile = module.debugFile;
    id.debugId = module.debugId;
  } else {
    const cv = readMappedImage(memory, module.base)?.codeView;
    if (cv !== undefined) {
      id.debugFile = cv.pdbName;
      id.debugId = cv.debugId;
    }
  }
  if (module.codeId !== undefined) id.codeId = module.codeId;
  return id;
}

/** The identity `file` carries, in words. */
function fileIdentity(file: SymbolFile): string {
  if (file.kind === "breakpad") return `debug id ${file.debugId} (${file.debugFile})`;
  if (file.kind === "pdb") return `debug id ${file.debugId}`;
  return `code id ${file.codeId}`;
}

/**
 * Why `file` is not `module`'s, or undefined when it is: a `.sym` file or PDB by debug id, an
 * image by code id; an image for a module whose code id the snapshot does not know (a vector)
 * by SizeOfImage and the file's name, which must be the module's. When `machine` is given, an
 * image must also be built for it (its IMAGE_FILE_MACHINE).
 */
export function symbolFileMismatch(module: Module, memory: MemoryReader, file: SymbolFile, machine?: Machine): string | undefined {
  const id = moduleIdentity(module, memory);
  const what = file.name ?? `the ${file.kind === "breakpad" ? ".sym file" : file.kind === "pdb" ? "PDB" : "image"}`;
  if (file.kind === "image") {
    const image = file.image;
    if (machine !== undefined && machineFromImageFileMachine(image.machine) !== machine) {
      return `${what} is built for ${machineFromImageFileMachine(image.machine) ?? `IMAGE_FILE_MACHINE ${hex(image.machine)}`}, the snapshot is ${machine}`;
    }
    if (BigInt(image.sizeOfImage) !== module.size) return `${what} has SizeOfImage ${hex(image.sizeOfImage)}, the module ${hex(module.size)}`;
    if (id.codeId !== undefined) {
      if (id.codeId.toUpperCase() !== file.codeId.toUpperCase()) {
        const stamp = file.codeId.slice(0, 8);
        return `${what} has TimeDateStamp ${stamp}, the module's code id is ${id.codeId}`;
      }
      return undefined;
    }
    if (file.name === undefined) return `the snapshot does not know ${module.name}'s code id, and the image has no file name to match`;
    if (fileNameOf(file.name).toLowerCase() !== fileNameOf(module.name).toLowerCase()) return `${what} is not named ${fileNameOf(module.name)}`;
    return undefined;
  }
  if (id.debugId === undefined) return `${module.name} has no CodeView record (in the module list or the mapped image), so its debug id is unknown`;
  if (id.debugId.toUpperCase() !== file.debugId.toUpperCase()) return `${what} is for debug id ${file.debugId}, not ${id.debugId}`;
  return undefined;
}

/** Options of {@link attachSymbolFile}. */
export interface AttachOptions {
  /**
   * The module's names: "replace" (default) uses the file's names when it has any; "keep" keeps
   * names the module already has (a vector's) and uses the file's only when it has none.
   */
  names?: "replace" | "keep";
}

/** What one file gave one module. */
export interface Attachment {
  /** The module as it is now in the target's module list (a new object). */
  module: Module;
  /** What was attached, in words ("unwind records from x.sym"). */
  detail: string;
  /** Problems with the file that did not stop it being used (Breakpad's "corrupt symbols"). */
  warnings: string[];
}

/**
 * Attaches `file` to every module of `target` it belongs to (see {@link symbolFileMismatch}):
 * a `.sym` file or PDB gives the module its x86 unwind records (FPO_DATA, FrameData) and its
 * names (and, from a `.sym` file, STACK CFI records and source lines); an image is laid under the target's memory at
 * the module's base. The module is replaced by a new object in a new module list, so the next
 * walk sees the records even when the snapshot was walked before. Throws {@link InputError}
 * ("bad-value") when no module of the target is the file's, naming the identity it carries.
 */
export function attachSymbolFile(target: SymbolTarget, file: SymbolFile, options: AttachOptions = {}): Attachment[] {
  return attachSymbolFiles(target, [file], options);
}

/**
 * {@link attachSymbolFile} for several files at once; images are laid under the memory in one
 * layer. Every file must belong to at least one module.
 */
export function attachSymbolFiles(target: SymbolTarget, files: readonly SymbolFile[], options: AttachOptions = {}): Attachment[] {
  return attachEachSymbolFile(target, files, options).flat();
}

/**
 * {@link attachSymbolFiles}, with what each file gave, file by file. Linear in the modules and
 * the files: a `.sym` file or PDB finds its modules through an index of the modules by debug id
 * made once per call (a dump of 60,000 modules, each with its own file, would otherwise compare
 * every file with every module); an image is compared with every module.
 */
export function attachEachSymbolFile(target: SymbolTarget, files: readonly SymbolFile[], options: AttachOptions = {}): Attachment[][] {
  const done: { original: Module; detail: string; warnings: string[] }[][] = [];
  const images: MemoryRegion[] = [];
  const replaced = new Map<Module, Module>();
  let byDebugId: Map<string, Module[]> | undefined;
  const modulesOf = (file: SymbolFile): Module[] => {
    if (file.kind === "image") return target.modules.filter((m) => symbolFileMismatch(m, target.memory, file, target.machine) === undefined);
    if (byDebugId === undefined) {
      byDebugId = new Map();
      for (const m of target.modules) {
        const id = moduleIdentity(m, target.memory).debugId?.toUpperCase();
        if (id === undefined) continue;
        const list = byDebugId.get(id);
        if (list === undefined) byDebugId.set(id, [m]);
        else list.push(m);
      }
    }
    return byDebugId.get(file.debugId.toUpperCase()) ?? [];
  };
  for (const file of files) {
    const matches = modulesOf(file);
    if (matches.length === 0) {
      const none = target.modules.length === 0 ? "the snapshot has no modules" : "no module of the snapshot has it";
      throw new InputError("bad-value", `${file.name ?? `the ${file.kind} file`} carries ${fileIdentity(file)}: ${none}`);
    }
    const each: { original: Module; detail: string; warnings: string[] }[] = [];
    for (const original of matches) {
      const { module, detail, warnings, region } = attachOne(replaced.get(original) ?? original, target.memory, file, options);
      replaced.set(original, module);
      if (region !== undefined) images.push(region);
      each.push({ original, detail, warnings });
    }
    done.push(each);
  }
  target.modules = target.modules.map((m) => replaced.get(m) ?? m);
  if (images.length > 0) target.memory = new OverlayMemory(target.memory, images);
  return done.map((each) => each.map(({ original, detail, warnings }) => ({ module: replaced.get(original)!, detail, warnings })));
}

/** A PDB's symbol index as a module's: each symbol made once, with its source data (see {@link withSourceData}). */
function moduleSymbolIndex(index: PdbSymbolIndex): SymbolIndex {
  const made = new Map<PdbSymbol, ModuleSymbol>();
  const of = (s: PdbSymbol): ModuleSymbol => {
    let symbol = made.get(s);
    if (symbol === undefined) {
      symbol = s.size === undefined ? { name: s.name, rva: BigInt(s.rva) } : { name: s.name, rva: BigInt(s.rva), size: BigInt(s.size) };
      withSourceData(symbol, s);
      made.set(s, symbol);
    }
    return symbol;
  };
  // RVAs are below 2^32: a larger one lies past every symbol.
  const at = (rva: bigint): ModuleSymbol | undefined => {
    const s = index.at(rva < 0n ? -1 : rva > 0xffff_ffffn ? 2 ** 32 : Number(rva));
    return s === undefined ? undefined : of(s);
  };
  return {
    count: index.count,
    all: () => index.all().map(of),
    at,
    resolve(rva, lines) {
      const symbol = at(rva);
      if (symbol === undefined) return undefined;
      const line = lines ? lineAt(symbol.lines, rva) : undefined;
      return line === undefined ? { symbol } : { symbol, line };
    },
  };
}

/** Gives `symbol` a PDB procedure's inline sites and its source lines (read from the PDB when a frame first asks for them). */
function withSourceData(symbol: ModuleSymbol, s: PdbSymbol): void {
  if (s.inlines !== undefined) symbol.inlines = s.inlines;
  if (s.kind === "procedure" && "lines" in s) lazyProperty(symbol, "lines", () => s.lines);
}

/** One file on one module: the new module, and the image region to lay under the memory. */
function attachOne(module: Module, memory: MemoryReader, file: SymbolFile, options: AttachOptions): { module: Module; detail: string; warnings: string[]; region?: MemoryRegion } {
  const origin = file.name ?? (file.kind === "breakpad" ? file.debugFile : file.kind === "pdb" ? "PDB" : "image");
  const keepNames = options.names === "keep" && hasSymbols(module);
  if (file.kind === "image") {
    const region: MemoryRegion = { base: module.base, bytes: file.image.mapped() };
    if (file.name !== undefined) region.origin = file.name;
    return { module: copyModule(module), detail: `image from ${origin}`, warnings: [], region };
  }
  if (file.kind === "pdb") {
    const pdb = file.pdb;
    const unwind: ModuleUnwind = { fpo: pdb.fpo, frameData: pdb.frameData, origin: `PDB ${origin}` };
    const next = copyModule(module);
    next.unwind = unwind;
    const warnings: string[] = [];
    let index: PdbSymbolIndex | undefined;
    // A PDB without section headers names its symbols by section:offset only: the image mapped
    // at the module's base has the section table that turns them into RVAs.
    const sections = pdb.sections === undefined && pdb.originalSections === undefined ? readMappedImage(memory, module.base)?.sections : undefined;
    try {
      index = pdb.symbolIndex(sections);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      warnings.push(`${origin}: no function names: ${e.message}`);
    }
    if (!keepNames && index !== undefined && index.count > 0) {
      // Looked up by address: a symbol is made (its name read from the PDB) when a lookup returns it.
      withSymbolIndex(next, moduleSymbolIndex(index));
    } else if (keepNames && index !== undefined) {
      // The module's own names stay; a procedure of the PDB at the same address adds its lines and inline sites.
      const procedures = new Map(index.all().filter((s) => s.kind === "procedure").map((s) => [BigInt(s.rva), s]));
      if (procedures.size > 0) {
        next.symbols = module.symbols.map((symbol) => {
          const s = procedures.get(symbol.rva);
          if (s === undefined || symbol.lines !== undefined || symbol.inlines !== undefined) return symbol;
          const added = { ...symbol };
          withSourceData(added, s);
          return added;
        });
      }
    }
    return { module: next, detail: `unwind records from ${origin}`, warnings };
  }
  const sym = file.symbols;
  const { fpo, unconverted } = breakpadFpoData(sym);
  const tables = symTables(sym);
  // A FrameData record is made when a lookup returns it; the list of them when it is read; the
  // index when a walk first looks in the module (most of a dump's modules hold none of its frames).
  const unwind: ModuleUnwind = { fpo, frameData: [], stackCfi: [], origin: `Breakpad ${origin}` };
  lazyProperty(unwind, "frameData", () => breakpadFrameData(sym));
  if (tables !== undefined) lazyProperty(unwind, "frameDataIndex", () => breakpadFrameDataIndex(sym), false);
  let cfi: { refused: number; first?: string | undefined };
  if (tables === undefined) {
    const within = withinPostfixLimits(sym.stackCfi);
    unwind.stackCfi = within.records;
    cfi = within;
  } else {
    // A parse's records are looked up where they are, and made as a list only when it is read.
    const refusals = cfiRefusals(tables);
    lazyProperty(unwind, "stackCfi", () => cfiRecordsWithinLimits(tables));
    Object.defineProperty(unwind, "stackCfiIndex", { value: cfiIndex(tables), enumerable: false, configurable: true, writable: true });
    cfi = { refused: refusals.count, first: refusals.first };
  }
  const next = copyModule(module);
  next.unwind = unwind;
  if (!keepNames) {
    if (tables !== undefined) {
      const index = symbolIndex(tables);
      if (index.count > 0) withSymbolIndex(next, index);
    } else {
      const names = breakpadSymbols(sym);
      if (names.length > 0) next.symbols = names;
    }
  }
  const warnings: string[] = [];
  if (sym.malformedCount > 0 || unconverted > 0) {
    const first = sym.firstMalformed === undefined ? "" : ` (first: ${sym.firstMalformed.reason})`;
    const stopped = sym.truncated ? "; reading stopped after 100" : "";
    warnings.push(`${origin}: corrupt symbols: ${sym.malformedCount} malformed line(s) and ${unconverted} unusable STACK WIN record(s) left out${first}${stopped}`);
  }
  if (cfi.refused > 0) warnings.push(`${origin}: postfix limits: ${cfi.refused} STACK CFI record(s) left out (first: ${cfi.first})`);
  return { module: next, detail: `unwind records from ${origin}`, warnings };
}

/**
 * The STACK CFI records whose rules are within the postfix limits (postfix-limits.ts): a record
 * whose INIT rules pass one is left out with its delta rows, a delta row that passes one is left
 * out alone. The same list when none does (the usual case: only long texts are looked into).
 */
function withinPostfixLimits(records: readonly BreakpadStackCfi[]): { records: readonly BreakpadStackCfi[]; refused: number; first?: string } {
  let refused = 0;
  let first: string | undefined;
  let out: BreakpadStackCfi[] | undefined;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    const why = cfiRulesOverLimit(r.init);
    let deltas = r.deltas;
    if (why === undefined) {
      let bad = false;
      for (const d of r.deltas) {
        const dw = cfiRulesOverLimit(d.rules);
        if (dw === undefined) continue;
        refused++;
        first ??= `STACK CFI ${d.address.toString(16)}: ${dw}`;
        bad = true;
      }
      if (bad) deltas = r.deltas.filter((d) => cfiRulesOverLimit(d.rules) === undefined);
    } else {
      refused++;
      first ??= `STACK CFI INIT ${r.address.toString(16)}: ${why}`;
    }
    if (why !== undefined || deltas !== r.deltas) out ??= records.slice(0, i);
    if (out !== undefined && why === undefined) out.push(deltas === r.deltas ? r : { ...r, deltas });
  }
  return first === undefined ? { records, refused } : { records: out ?? records, refused, first };
}
