/**
 * Symbol directories (`--symbols DIR`): unwind records and names for a snapshot's modules from
 * files on disk. A module is identified by its CodeView record (the module list's, else the
 * image's where it is mapped in the snapshot; minidump.md §2.3): the PDB file name and the debug
 * id (GUID + age). Each directory, then the input file's own directory ("beside the image"), is
 * searched for
 *
 *     DIR/<pdb>                       a PDB lying in the directory
 *     DIR/<pdb>/<debug id>/<pdb>      a symbol-store PDB
 *     DIR/<pdb>/<debug id>/<name>.sym a Breakpad symbol file (minidump.md §8)
 *
 * and the first file whose identity matches is attached with the core's
 * {@link attachSymbolFile} (x86-fpo.md §4, §5). A file that belongs to another build is passed
 * over and reported; a damaged file is an InputError naming it. Modules that already have unwind
 * records keep them, and names the snapshot already has are kept.
 */
import { readFileSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { InputError } from "../errors.js";
import type { ByteSource } from "../memory/byte-source.js";
import { symbolStorePath } from "../formats/breakpad-sym.js";
import {
  attachEachSymbolFile,
  breakpadSymbolFile,
  moduleIdentity,
  parseSymbolFile,
  pdbSymbolFile,
  symbolFileMismatch,
  type ParseSymbolFileOptions,
  type SymbolFile,
  type SymbolTarget,
} from "../formats/symbol-file.js";
import { ioReason, reopeningFileSource } from "./file-source.js";

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
  /** The URL the file was downloaded from (now or into the cache it was read from). */
  url?: string;
  /** What each symbol server answered, when none had the file. */
  misses?: string[];
}

/** The most searches a cache remembers (a batch of dumps from many builds starts again past it). */
const MAX_LOCATED = 4096;

/**
 * Symbol files read once and kept for the walks that follow: a walk of many dumps (a batch's
 * worker, a server) passes one cache to every {@link attachSymbolDirectories} call, and dumps that
 * load the same module share its parse (attaching never changes a parsed file). A file is known
 * by its path, size, time and inode: a file changed on disk is read again. A Breakpad `.sym` file
 * is read by position: one pass builds its index, and the records a lookup asks for are read from
 * the file again, so that a file of hundreds of megabytes is never held in memory; the cache holds
 * its handle, opened again when a file dropped from the cache is read. `close()` releases them.
 * The cache also remembers where it looked: which directories of a symbol path exist, and which
 * candidate files each module identity has under them, so that a batch searches the folders once
 * per module rather than once per dump.
 */
export class SymbolFileCache {
  private readonly files = new Map<string, { stamp: string; file: SymbolFile; close?: () => void }>();
  private readonly places = new Map<string, unknown>();
  /** Files read and parsed, and files found already read, since the cache was made. */
  reads = 0;
  hits = 0;

  /** `maxFiles`: how many parsed files are kept, the most recently used (default 256). */
  constructor(private readonly maxFiles = 256) {}

  /** The Breakpad `.sym` file at `path`, read by position (see the class), now or before; errors name the file. */
  breakpad(path: string, options: Omit<ParseSymbolFileOptions, "name"> = {}): SymbolFile {
    return this.kept(`sym ${options.skipMalformed === true} ${path}`, path, () => readBySource(path, (source) => breakpadSymbolFile(source, { ...options, name: path })));
  }

  /** The PDB at `path`, read by position (the streams a walk needs, see the core's `parsePdb`), now or before; errors name the file. */
  pdb(path: string): SymbolFile {
    return this.kept(`pdb ${path}`, path, () => readBySource(path, (source) => pdbSymbolFile(source, { name: path })));
  }

  private kept(key: string, path: string, read: () => { file: SymbolFile; close?: () => void }): SymbolFile {
    const st = statSync(path, { throwIfNoEntry: false });
    if (st === undefined) return read().file;
    const stamp = `${st.size}:${st.mtimeMs}:${st.ino}`;
    const hit = this.files.get(key);
    if (hit !== undefined && hit.stamp === stamp) {
      this.files.delete(key);
      this.files.set(key, hit);
      this.hits++;
      return hit.file;
    }
    hit?.close?.();
    this.files.delete(key);
    this.reads++;
    const entry = read();
    this.files.set(key, { stamp, ...entry });
    if (this.files.size > this.maxFiles) {
      const [oldest, dropped] = this.files.entries().next().value!;
      dropped.close?.();
      this.files.delete(oldest);
    }
    return entry.file;
  }

  /**
   * What `look` finds for `key`, found the first time and remembered for the cache's life (with
   * `again`, looked for anew): where a symbol search looked, the directories of a symbol path that
   * exist and the candidate files of each module identity under them, so that a batch searches
   * the folders once per module, not once per dump.
   */
  located<T>(key: string, look: () => T, again = false): T {
    if (!again && this.places.has(key)) return this.places.get(key) as T;
    if (this.places.size >= MAX_LOCATED && !this.places.has(key)) this.places.clear();
    const found = look();
    this.places.set(key, found);
    return found;
  }

  /** Releases the handles of the files kept (a `.sym` file read after this opens its file again). */
  close(): void {
    for (const entry of this.files.values()) entry.close?.();
  }
}

/** A file parsed from a source over `path` that stays open for it (closed should the parse fail). */
function readBySource(path: string, parse: (source: ByteSource) => SymbolFile): { file: SymbolFile; close: () => void } {
  const source = reopeningFileSource(path);
  try {
    return { file: parse(source), close: () => source.close() };
  } catch (e) {
    source.close();
    throw e;
  }
}

/** Whether `path` is a file (not a folder, not missing). */
export function isFile(path: string): boolean {
  return statSync(path, { throwIfNoEntry: false })?.isFile() === true;
}

/** Reads a whole file; a missing or unreadable file is an {@link InputError} naming it. */
export function readInputFile(file: string): Uint8Array {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new InputError("io", `cannot read: ${ioReason(e)}`, { file });
  }
}

/**
 * Reads and parses a `.sym` file, a PDB or a PE image from disk (see the core's
 * `parseSymbolFile`); errors name the file.
 */
export function readSymbolFile(path: string, options: Omit<ParseSymbolFileOptions, "name"> = {}): SymbolFile {
  return parseSymbolFile(readInputFile(path), { ...options, name: path });
}

/** Options of {@link attachSymbolDirectories}. */
export interface SymbolDirectoryOptions {
  /** Symbol files read before, kept for the walks of other dumps (each file is read whole and parsed each time without one). */
  cache?: SymbolFileCache;
}

/**
 * Fills in unwind records (and names) for the modules of `target` that have none, from PDBs and
 * Breakpad files under `dirs` and then `besideDir`. Returns a note per module looked at.
 */
export function attachSymbolDirectories(target: SymbolTarget, dirs: readonly string[], besideDir?: string, options: SymbolDirectoryOptions = {}): SymbolNote[] {
  const cache = options.cache;
  const notes: SymbolNote[] = [];
  const roots = besideDir === undefined ? [...dirs] : [...dirs, besideDir];
  // The files found, attached together at the end (attachEachSymbolFile is linear in the modules
  // and the files), each with the note it completes; a file attaches to every module of its debug
  // id, so a module whose debug id already has a file is not looked for again.
  const found: FoundSymbolFile[] = [];
  const claimed = new Set<string>();
  for (const module of target.modules) {
    if (module.unwind !== undefined) continue;
    const id = moduleIdentity(module, target.memory);
    if (id.debugFile === undefined || id.debugId === undefined) {
      notes.push({ module: module.name, detail: "no CodeView record (in the module list or the mapped image), so its PDB cannot be identified" });
      continue;
    }
    if (claimed.has(id.debugId.toUpperCase())) continue;
    const pdbName = basename(id.debugFile.replace(/\\/g, "/"));
    // A debug file or id that cannot name a file in a symbol store (empty, "..", odd characters):
    // the module stays without symbols and the walk goes on.
    let storePath: string;
    try {
      storePath = symbolStorePath(pdbName, id.debugId);
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      notes.push({ module: module.name, detail: `${e.reason}: no symbol file is looked for, the module stays without symbols`, unusable: true });
      continue;
    }
    const look = (): readonly StoreCandidate[] => storeCandidates(roots, pdbName, id.debugId!, storePath);
    const passedOver: string[] = [];
    let used: { file: SymbolFile; path: string } | undefined;
    // Reads the candidates until one is this module's build; false when one is gone (read through the cache).
    const choose = (candidates: readonly StoreCandidate[], read: (c: StoreCandidate) => SymbolFile | undefined): boolean => {
      passedOver.length = 0;
      for (const c of candidates) {
        const file = read(c);
        if (file === undefined) return false;
        const why = symbolFileMismatch(module, target.memory, file);
        if (why === undefined) {
          used = { file, path: c.path };
          return true;
        }
        passedOver.push(why);
      }
      return true;
    };
    if (cache === undefined) {
      choose(look(), ({ path, kind }) => (kind === "pdb" ? pdbSymbolFile(readInputFile(path), { name: path }) : breakpadSymbolFile(readInputFile(path), { name: path, skipMalformed: true })));
    } else {
      const key = `files\0${roots.join("\0")}\0${pdbName}\0${storePath}`;
      // A file found before and gone since is undefined.
      const read = ({ path, kind }: StoreCandidate): SymbolFile | undefined => {
        try {
          return kind === "pdb" ? cache.pdb(path) : cache.breakpad(path, { skipMalformed: true });
        } catch (e) {
          if (e instanceof InputError && !isFile(path)) return undefined;
          throw e;
        }
      };
      // Where an earlier dump found this module's files, unless one is gone since: then the folders
      // are searched again (and a file gone in between leaves the module without symbols).
      if (!choose(cache.located(key, look), read)) choose(cache.located(key, look, true), read);
    }
    const note: SymbolNote = { module: module.name, detail: passedOver.length > 0 ? passedOver.join("; ") : `no ${pdbName} or .sym for debug id ${id.debugId} under ${roots.join(", ")}` };
    notes.push(note);
    if (used !== undefined) {
      claimed.add(id.debugId.toUpperCase());
      note.file = used.path;
      found.push({ file: used.file, note, detail: `unwind records from ${used.path}` });
    } else if (passedOver.length > 0) note.passedOver = passedOver;
  }
  attachFound(target, found);
  return notes;
}

/** A file a symbol store may hold for a module: a PDB, or a Breakpad `.sym` file. */
interface StoreCandidate {
  path: string;
  kind: "pdb" | "sym";
}

/**
 * The files under `roots` that may be a module's symbols, in the order they are tried: under
 * each root, ROOT/<pdb> (a PDB file), ROOT/<pdb>/<id>/<pdb> and ROOT/`storePath` (its `.sym`).
 */
function storeCandidates(roots: readonly string[], pdbName: string, debugId: string, storePath: string): StoreCandidate[] {
  const out: StoreCandidate[] = [];
  for (const root of roots) {
    // Every candidate lies at or under ROOT/<pdb>: one look tells whether any can be there.
    const top = statSync(join(root, pdbName), { throwIfNoEntry: false });
    if (top === undefined) continue;
    if (top.isFile()) out.push({ path: join(root, pdbName), kind: "pdb" });
    if (!top.isDirectory()) continue;
    for (const [path, kind] of [
      [join(root, pdbName, debugId, pdbName), "pdb"],
      [join(root, storePath), "sym"],
    ] as const) {
      if (isFile(path)) out.push({ path, kind });
    }
  }
  return out;
}

/** A symbol file found for a module, the module's note, and what the note is to say of the file. */
export interface FoundSymbolFile {
  file: SymbolFile;
  note: SymbolNote;
  detail: string;
}

/**
 * Attaches the files found for a target's modules together (linear in the modules and the files:
 * {@link attachEachSymbolFile}) and completes each note with what attaching its file said.
 */
export function attachFound(target: SymbolTarget, found: readonly FoundSymbolFile[]): void {
  const attached = attachEachSymbolFile(
    target,
    found.map((f) => f.file),
    { names: "keep" },
  );
  found.forEach(({ note, detail }, i) => {
    const warnings = attached[i]!.flatMap((a) => a.warnings);
    note.detail = [detail, ...warnings].join("; ");
    if (warnings.length > 0) note.corrupt = true;
  });
}

/** The directory of an input file, where images and their PDBs may lie beside it. */
export function besideInput(file: string): string {
  return dirname(file);
}
