/**
 * `--symbols DIR`: unwind records (and symbols) for a snapshot's modules from files on disk. A
 * module is identified by the CodeView record of its image, read where the image is mapped in
 * the snapshot (minidump.md §2.3): the PDB file name and the debug id (GUID + age). Each symbol
 * directory, then the input file's own directory ("beside the image"), is searched for
 *
 *     DIR/<pdb>                       a PDB lying in the directory
 *     DIR/<pdb>/<debug id>/<pdb>      a symbol-store PDB
 *     DIR/<pdb>/<debug id>/<name>.sym a Breakpad symbol file (minidump.md §8)
 *
 * and the first file whose identity matches the image is used (x86-fpo.md §4, §5). A file that
 * belongs to another build is passed over and reported; a damaged file is an InputError naming
 * it. Records already in the input are kept: files only fill in modules that have none.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { InputError } from "../errors.js";
import { parseBreakpadSym, STACK_WIN_TYPE, stackWinToFpoData, stackWinToFrameData, symbolStorePath, type BreakpadSymbols } from "../formats/breakpad-sym.js";
import { parsePdb } from "../formats/pdb.js";
import { readMappedImage } from "../formats/pe-mapped.js";
import type { MemoryReader } from "../memory/reader.js";
import type { Module, ModuleSymbol, SourceLine } from "../model/snapshot.js";

/** What happened for one module. */
export interface SymbolNote {
  module: string;
  /** The file used, when one was. */
  file?: string;
  /** Why files were passed over, or why none was looked for. */
  detail: string;
  /** Files that were found but belong to another build. */
  passedOver?: string[];
  /** The symbol file used had malformed lines or records, which were left out (Breakpad's "corrupt symbols"). */
  corrupt?: boolean;
  /** The module's debug file or id cannot name a file in a symbol store, so none was looked for. */
  unusable?: boolean;
}

function isFile(path: string): boolean {
  try {
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

function read(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new InputError("io", `cannot read: ${e instanceof Error ? e.message : String(e)}`, { file });
  }
}

function withFile<T>(file: string, f: () => T): T {
  try {
    return f();
  } catch (e) {
    if (e instanceof InputError && e.file === undefined) throw e.inFile(file);
    throw e;
  }
}

/** Uses the PDB at `file` for `module` when its debug id matches; returns why not otherwise. */
function tryPdb(module: Module, file: string, debugId: string, _warn: (text: string) => void): string | undefined {
  const pdb = withFile(file, () => parsePdb(read(file)));
  if (pdb.info.debugId.toUpperCase() !== debugId.toUpperCase()) return `${file} is for debug id ${pdb.info.debugId}, not ${debugId}`;
  module.unwind = { fpo: pdb.fpo, frameData: pdb.frameData, origin: `PDB ${file}` };
  if (module.symbols.length === 0) {
    module.symbols = pdb.symbols().map((s): ModuleSymbol => (s.size === undefined ? { name: s.name, rva: BigInt(s.rva) } : { name: s.name, rva: BigInt(s.rva), size: BigInt(s.size) }));
  }
  return undefined;
}

/**
 * Uses the Breakpad file at `file` for `module` when its MODULE line matches; returns why not
 * otherwise. Like Breakpad's loader, malformed lines and records that do not convert are left
 * out and counted, and `warn` is told once per file.
 */
function trySym(module: Module, file: string, debugId: string, warn: (text: string) => void): string | undefined {
  const sym = withFile(file, () => parseBreakpadSym(read(file), { skipMalformed: true }));
  if (sym.module.debugId.toUpperCase() !== debugId.toUpperCase()) return `${file} is for debug id ${sym.module.debugId}, not ${debugId}`;
  let unconverted = 0;
  const usable = sym.stackWin.filter((r) => {
    try {
      if (r.type === STACK_WIN_TYPE.FRAME_DATA) stackWinToFrameData([r]);
      else stackWinToFpoData([r]);
      return true;
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      unconverted++;
      return false;
    }
  });
  module.unwind = { fpo: stackWinToFpoData(usable), frameData: stackWinToFrameData(usable), stackCfi: sym.stackCfi, origin: `Breakpad ${file}` };
  if (module.symbols.length === 0) module.symbols = breakpadSymbols(sym);
  if (sym.malformedCount > 0 || unconverted > 0) {
    const first = sym.firstMalformed === undefined ? "" : ` (first: ${sym.firstMalformed.reason})`;
    const stopped = sym.truncated ? "; reading stopped after 100" : "";
    warn(`${file}: corrupt symbols: ${sym.malformedCount} malformed line(s) and ${unconverted} unusable STACK WIN record(s) left out${first}${stopped}`);
  }
  return undefined;
}

/**
 * A `.sym` file's FUNC and PUBLIC records as module symbols, sorted by rva (FUNCs before PUBLICs
 * at one address, file order otherwise), each marked with its kind and parameter size; FUNCs
 * carry their line records with FILE numbers resolved to names (minidump.md §7).
 */
export function breakpadSymbols(sym: BreakpadSymbols): ModuleSymbol[] {
  const funcs = sym.functions.map((f): ModuleSymbol => {
    const lines = f.lines
      .map((l): SourceLine => {
        const file = sym.files.get(l.file);
        const line: SourceLine = { rva: BigInt(l.address), size: BigInt(l.size), line: l.line };
        if (file !== undefined) line.file = file;
        return line;
      })
      .sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0));
    return { name: f.name, rva: BigInt(f.address), size: BigInt(f.size), kind: "func", paramSize: f.paramSize, lines };
  });
  const publics = sym.publics.map((p): ModuleSymbol => ({ name: p.name, rva: BigInt(p.address), kind: "public", paramSize: p.paramSize }));
  return [...funcs, ...publics].sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0));
}

/**
 * Fills in unwind records for the modules that have none, from PDBs and Breakpad files under
 * `dirs` and then `besideDir`. Returns a note per module looked at.
 */
export function attachSymbolFiles(modules: readonly Module[], memory: MemoryReader, dirs: readonly string[], besideDir?: string): SymbolNote[] {
  const notes: SymbolNote[] = [];
  const roots = besideDir === undefined ? [...dirs] : [...dirs, besideDir];
  for (const module of modules) {
    if (module.unwind !== undefined) continue;
    // The identity: the module list's CodeView record (a minidump), else the mapped image's.
    const mapped = module.debugFile !== undefined && module.debugId !== undefined ? undefined : readMappedImage(memory, module.base)?.codeView;
    const cv = module.debugFile !== undefined && module.debugId !== undefined ? { pdbName: module.debugFile, debugId: module.debugId } : mapped;
    if (cv === undefined) {
      notes.push({ module: module.name, detail: "no CodeView record (in the module list or the mapped image), so its PDB cannot be identified" });
      continue;
    }
    const pdbName = basename(cv.pdbName.replace(/\\/g, "/"));
    // A debug file or id that cannot name a file in a symbol store (empty, "..", odd characters):
    // the module stays without symbols and the walk goes on.
    let storePath: string;
    try {
      storePath = symbolStorePath(pdbName, cv.debugId);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      notes.push({ module: module.name, detail: `${e.reason}: no symbol file is looked for, the module stays without symbols`, unusable: true });
      continue;
    }
    const passedOver: string[] = [];
    const warnings: string[] = [];
    let used: string | undefined;
    for (const root of roots) {
      const candidates: [string, typeof tryPdb][] = [
        [join(root, pdbName), tryPdb],
        [join(root, pdbName, cv.debugId, pdbName), tryPdb],
        [join(root, storePath), trySym],
      ];
      for (const [file, use] of candidates) {
        if (!isFile(file)) continue;
        const why = use(module, file, cv.debugId, (text) => warnings.push(text));
        if (why === undefined) {
          used = file;
          break;
        }
        passedOver.push(why);
      }
      if (used !== undefined) break;
    }
    const found = used === undefined ? undefined : [`unwind records from ${used}`, ...warnings].join("; ");
    const note: SymbolNote = { module: module.name, detail: found ?? (passedOver.length > 0 ? passedOver.join("; ") : `no ${pdbName} or .sym for debug id ${cv.debugId} under ${roots.join(", ")}`) };
    if (warnings.length > 0) note.corrupt = true;
    if (used !== undefined) note.file = used;
    else if (passedOver.length > 0) note.passedOver = passedOver;
    notes.push(note);
  }
  return notes;
}

/** The directory of an input file, where images and their PDBs may lie beside it. */
export function besideInput(file: string): string {
  return dirname(file);
}
