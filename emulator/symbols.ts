/**
 * Module symbols for emulated images, from the PDB that sits beside the image. They name the
 * functions in ground truth (`function` of a truth frame) and resolve `--break NAME`; finding
 * the function that contains an address is a symbol lookup, not a stack walk. The same PDB's
 * x86 unwind records travel with the module into the vectors, for the walkers.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, dirname, extname, join } from "node:path";
import { InputError, type Module, type ModuleSymbol } from "../src/index.js";
import { moduleAt, type ModuleUnwind, parsePdb, type Pdb, type PdbSymbol, type PeImage, symbolAt } from "../src/entry/formats.js";
import { IMAGE_FILE_MACHINE } from "../src/entry/arch.js";

/**
 * The undecorated name of an x86 public symbol. The x86 Microsoft ABI decorates C names:
 * cdecl `f` is `_f`, stdcall `f` is `_f@12` (12 bytes of arguments) and fastcall `f` is
 * `@f@12`. On x64 names are not decorated, so they are returned unchanged.
 */
export function undecorate(name: string, machine: number): string {
  if (machine !== IMAGE_FILE_MACHINE.I386) return name;
  const fastcall = /^@([^@]+)@\d+$/.exec(name);
  if (fastcall !== null) return fastcall[1]!;
  const stdcall = /^_([^@]+)@\d+$/.exec(name);
  if (stdcall !== null) return stdcall[1]!;
  if (name.startsWith("_") && name.length > 1) return name.slice(1);
  return name;
}

/**
 * Converts PDB function symbols into module symbols sorted by RVA, one per address.
 * Procedures (which have sizes) win over publics at the same RVA; several publics at one RVA
 * are aliases (`__chkstk` and `__alloca_probe`), and the shortest undecorated name is kept
 * (alphabetical order breaks ties), so the choice never depends on the PDB's record order.
 */
export function moduleSymbols(symbols: readonly PdbSymbol[], machine: number): ModuleSymbol[] {
  const byRva = new Map<number, { symbol: ModuleSymbol; procedure: boolean }>();
  for (const s of symbols) {
    const procedure = s.kind === "procedure";
    const symbol: ModuleSymbol = { name: procedure ? s.name : undecorate(s.name, machine), rva: BigInt(s.rva) };
    if (procedure && s.size !== undefined) symbol.size = BigInt(s.size);
    if (procedure && s.inlines !== undefined) symbol.inlines = s.inlines;
    if (procedure && s.lines !== undefined && s.lines.length > 0) symbol.lines = s.lines;
    const held = byRva.get(s.rva);
    if (held === undefined || better({ symbol, procedure }, held)) byRva.set(s.rva, { symbol, procedure });
  }
  return [...byRva.values()].map((e) => e.symbol).sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0));
}

function better(
  candidate: { symbol: ModuleSymbol; procedure: boolean },
  held: { symbol: ModuleSymbol; procedure: boolean },
): boolean {
  if (candidate.procedure !== held.procedure) return candidate.procedure;
  const a = candidate.symbol.name;
  const b = held.symbol.name;
  return a.length !== b.length ? a.length < b.length : a < b;
}

/** The PDB beside an image: the same path with the extension replaced by `.pdb`. */
export function pdbPathFor(imagePath: string): string {
  return join(dirname(imagePath), `${basename(imagePath, extname(imagePath))}.pdb`);
}

/** What the PDB beside an image gives a module: its symbols and, for x86, its unwind records. */
export interface ModuleDebugInfo {
  symbols: ModuleSymbol[];
  /** FPO_DATA and FrameData from the PDB (x86-fpo.md §4), when it has any. */
  unwind?: ModuleUnwind;
}

/**
 * Reads the symbols and unwind records of the image at `imagePath` from the PDB beside it;
 * no symbols when there is no PDB. A PDB whose debug identifier differs from the image's
 * CodeView record belongs to another build and is refused with an {@link InputError}.
 */
export function loadModuleDebugInfo(imagePath: string, pe: PeImage): ModuleDebugInfo {
  const path = pdbPathFor(imagePath);
  if (!existsSync(path)) return { symbols: [] };
  let bytes: Uint8Array;
  try {
    bytes = readFileSync(path);
  } catch (e) {
    throw new InputError("io", `cannot read: ${e instanceof Error ? e.message : String(e)}`, { file: path });
  }
  let pdb: Pdb;
  try {
    pdb = parsePdb(bytes);
  } catch (e) {
    if (e instanceof InputError) throw e.inFile(path);
    throw e;
  }
  if (pe.codeView !== undefined && pe.codeView.debugId !== pdb.info.debugId) {
    throw new InputError(
      "bad-value",
      `does not belong to ${basename(imagePath)}: the PDB's debug id is ${pdb.info.debugId}, the image's ${pe.codeView.debugId}`,
      { file: path },
    );
  }
  const info: ModuleDebugInfo = { symbols: moduleSymbols(pdb.symbols(pe.sections), pe.machine) };
  if (pdb.fpo.length > 0 || pdb.frameData.length > 0) info.unwind = { fpo: pdb.fpo, frameData: pdb.frameData, origin: `PDB ${basename(path)}` };
  return info;
}

/** The symbols of the image at `imagePath` from the PDB beside it (see {@link loadModuleDebugInfo}). */
export function loadModuleSymbols(imagePath: string, pe: PeImage): ModuleSymbol[] {
  return loadModuleDebugInfo(imagePath, pe).symbols;
}

/** The name of the function containing `address` in any of `modules`, or undefined. */
export function functionNameAt(modules: readonly Module[], address: bigint): string | undefined {
  const module = moduleAt(modules, address);
  if (module === undefined) return undefined;
  return symbolAt(module, address - module.base)?.name;
}
