/**
 * Symbol paths as debuggers take them, and HTTP(S) symbol servers.
 *
 * A symbol path is a list of elements separated by `;` (WinDbg's and dbghelp's syntax, also read
 * from `_NT_SYMBOL_PATH`):
 *
 *     DIR                          a directory: flat PDBs, or a symbol store (x.pdb/<id>/x.pdb, .sym)
 *     srv*CACHE*URL                a symbol server; what it sends is kept in CACHE
 *     srv*URL                      the same with the default cache
 *     srv*CACHE1*CACHE2*URL        several downstream stores: all are searched, downloads go to the first
 *     symsrv*symsrv.dll*CACHE*URL  the long form of srv*
 *     cache*DIR                    servers named after it (with no cache of their own) cache in DIR
 *     https://host/path            a server with the default cache (as rust-minidump's --symbols-url)
 *
 * A server is asked for `URL/<debug file>/<debug id>/<file>`, the layout Microsoft's symbol
 * servers and Breakpad's (Mozilla's, Chromium's) share (minidump.md §8): first the Breakpad
 * `.sym` file (`test_app.pdb/<id>/test_app.sym`), then, for a PDB, the PDB itself
 * (`test_app.pdb/<id>/test_app.pdb`). A download is kept in the cache in the same layout, so the
 * cache is itself a symbol store, searched before any server: the second walk of a dump reads its
 * symbols from disk. A download is used (and cached) only when it parses and carries the module's
 * debug id; an answer that is not a symbol file is a note, not an error.
 *
 * Downloads run concurrently (a few at a time) within the limits of {@link downloadSymbols}; a
 * server that cannot be reached, stalls, is too slow or fails is named in one warning and not
 * asked again in that run. With `images: true`, the same run asks for the images of modules
 * whose code the snapshot lacks (images.ts).
 */
import { existsSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { InputError } from "../errors.js";
import { symbolStorePath } from "../formats/breakpad-sym.js";
import { moduleIdentity, parseSymbolFile, symbolFileMismatch, type SymbolFile, type SymbolTarget } from "../formats/symbol-file.js";
import { hasSymbols } from "../model/snapshot.js";
import { attachFound, attachSymbolDirectories, type FoundSymbolFile, type SymbolDirectoryOptions, type SymbolNote } from "./symbol-store.js";
import { DownloadRun, writeAtomically, type DownloadOptions } from "./download.js";
import { cachedFrom, imageDownloader, type ImageNote } from "./images.js";

export { DOWNLOAD_LIMITS, downloadMemoryBound, type DownloadOptions } from "./download.js";

/** One HTTP(S) symbol server and the cache its downloads go to. */
export interface SymbolServer {
  /** The server's base URL, without a trailing `/`. */
  url: string;
  /** The directory downloads are kept in (a symbol store). */
  cache: string;
}

/** A parsed symbol path: the directories searched on disk (server caches among them, in order) and the servers. */
export interface SymbolPath {
  directories: string[];
  servers: SymbolServer[];
  /** Elements that could not be used as written, in words (a Windows drive path on another system). */
  warnings: string[];
}

/** Options of {@link parseSymbolPath}. */
export interface SymbolPathOptions {
  /** Where a server's downloads go when its element names no cache (default: {@link defaultSymbolCache}). */
  defaultCache?: string;
  /** The platform whose paths the elements are (default: this process's). */
  platform?: NodeJS.Platform;
}

/** The cache of servers that name none: `$XDG_CACHE_HOME/stackwalk-emu/symbols`, else `~/.cache/stackwalk-emu/symbols`. */
export function defaultSymbolCache(env: NodeJS.ProcessEnv = process.env): string {
  const base = env["XDG_CACHE_HOME"] !== undefined && env["XDG_CACHE_HOME"] !== "" ? env["XDG_CACHE_HOME"] : join(homedir(), ".cache");
  return join(base, "stackwalk-emu", "symbols");
}

const isUrl = (text: string): boolean => /^https?:\/\//i.test(text);

/**
 * Parses symbol path elements (each may itself be a `;`-separated list) into directories and
 * servers, in order. Empty elements are skipped.
 */
export function parseSymbolPath(entries: readonly string[], options: SymbolPathOptions = {}): SymbolPath {
  const platform = options.platform ?? process.platform;
  const fallback = options.defaultCache ?? defaultSymbolCache();
  const out: SymbolPath = { directories: [], servers: [], warnings: [] };
  const addDirectory = (dir: string): void => {
    if (!out.directories.includes(dir)) out.directories.push(dir);
  };
  /** A directory as written, or undefined (with a warning) when it is a Windows drive path and this is not Windows. */
  const local = (dir: string, element: string): string | undefined => {
    if (platform !== "win32" && /^[A-Za-z]:[\\/]?/.test(dir)) {
      out.warnings.push(`${element}: ${dir} is a Windows path, not a directory on this system`);
      return undefined;
    }
    return dir;
  };
  let sessionCache: string | undefined;
  for (const element of entries.flatMap((e) => e.split(";")).map((e) => e.trim())) {
    if (element === "") continue;
    const parts = element.split("*");
    const head = parts[0]!.toLowerCase();
    if (head === "cache" && parts.length >= 1) {
      const dir = parts.slice(1).join("*");
      sessionCache = dir === "" ? fallback : (local(dir, element) ?? fallback);
      addDirectory(sessionCache);
      continue;
    }
    if (head === "srv" || head === "symsrv") {
      // symsrv*symsrv.dll*...: the DLL that serves the request is this code.
      const rest = head === "symsrv" ? parts.slice(2) : parts.slice(1);
      const last = rest.at(-1) ?? "";
      const stores = rest.slice(0, -1).filter((s) => s !== "").map((s) => local(s, element)).filter((s): s is string => s !== undefined);
      if (isUrl(last)) {
        const cache = stores[0] ?? sessionCache ?? fallback;
        for (const s of [cache, ...stores]) addDirectory(s);
        out.servers.push({ url: last.replace(/\/+$/, ""), cache });
      } else {
        // A server that is a share or a directory: every store of the element is searched as one.
        for (const s of [...stores, ...(last === "" ? [] : [local(last, element)].filter((s): s is string => s !== undefined))]) addDirectory(s);
      }
      continue;
    }
    if (isUrl(element)) {
      const cache = sessionCache ?? fallback;
      addDirectory(cache);
      out.servers.push({ url: element.replace(/\/+$/, ""), cache });
      continue;
    }
    const dir = local(element, element);
    if (dir !== undefined) addDirectory(dir);
  }
  return out;
}

/** The directories of a symbol path that do not exist (caches excluded: they are made when first written). */
export function missingDirectories(path: SymbolPath): string[] {
  const caches = new Set(path.servers.map((s) => s.cache));
  return path.directories.filter((d) => {
    if (caches.has(d)) return false;
    try {
      return !statSync(d).isDirectory();
    } catch {
      return true;
    }
  });
}

/**
 * Fills in symbols for the modules of `target` from the directories of `path` (servers' caches
 * included), then `besideDir`, as {@link attachSymbolDirectories} does (with its options: a cache
 * of files read before); directories that do not exist are left out.
 */
export function attachSymbolPath(target: SymbolTarget, path: SymbolPath, besideDir?: string, options: SymbolDirectoryOptions = {}): SymbolNote[] {
  const look = (): string[] => {
    const missing = new Set(missingDirectories(path));
    return path.directories.filter((d) => !missing.has(d) && existsSync(d));
  };
  const dirs = options.cache === undefined ? look() : options.cache.located(`directories\0${path.directories.join("\0")}\0${path.servers.map((s) => s.cache).join("\0")}`, look);
  const notes = attachSymbolDirectories(target, dirs, besideDir, options);
  for (const note of notes) {
    const url = note.file === undefined ? undefined : cachedFrom(path, note.file);
    if (url !== undefined) {
      note.url = url;
      note.detail += ` (cached from ${url})`;
    }
  }
  return notes;
}

/** What {@link downloadSymbols} did: a note per module it asked about, and a warning per server it gave up on (and one if the run's deadline passed). */
export interface DownloadResult {
  notes: SymbolNote[];
  warnings: string[];
  /** With `images: true`: a note per module whose image was looked for on the servers. */
  images?: ImageNote[];
}

/** The files a server may hold for a module, store-relative: the Breakpad .sym, then (for a PDB) the PDB. */
function candidates(debugFile: string, debugId: string): string[] {
  const sym = symbolStorePath(debugFile, debugId);
  const base = sym.slice(0, sym.indexOf("/"));
  return /\.pdb$/i.test(base) ? [sym, `${base}/${debugId}/${base}`] : [sym];
}

/**
 * Asks the servers of `path`, in order, for the symbols of each module of `target` that has no
 * unwind records or names yet, and attaches the first file that parses and matches the module's
 * debug id; it is kept in that server's cache, under the name the module's identity gives (never
 * one a server or a redirect gives). Returns a note per module asked about.
 *
 * Limits ({@link DOWNLOAD_LIMITS}): a download is given up after a time without data and after a
 * total time; a file's bytes are counted as they arrive, decoded, whatever Content-Length says,
 * and one over the cap is a note; the downloads of the call together end at the run's deadline
 * (one warning). A server that cannot be reached, sends nothing for the idle time, is slower than
 * the download deadline, or answers 5xx or 429 is given up on: one warning, the downloads in
 * flight to it are ended, and it is not asked again. Redirects are followed (up to 5, http and
 * https only, never from https to http), to any host: Mozilla's server, for one, answers with a
 * redirect to its storage. At most {@link downloadMemoryBound} downloaded bytes are in memory.
 * With `images: true`, each module whose code the snapshot lacks is first asked for its image
 * (the rules of `downloadImages`, images.ts), in the same run: a server given up on is given up on for both.
 */
export async function downloadSymbols(target: SymbolTarget, path: SymbolPath, options: DownloadOptions & { images?: boolean } = {}): Promise<DownloadResult> {
  const result: DownloadResult = { notes: [], warnings: [] };
  if (options.images === true) result.images = [];
  if (path.servers.length === 0) return result;
  const run = new DownloadRun(options);
  const images = options.images === true ? imageDownloader(target, path, run) : undefined;
  // Modules by their place in the list (nothing is attached before the run ends; two modules may share a base).
  const wanted: number[] = [];
  target.modules.forEach((m, i) => {
    if ((m.unwind === undefined && !hasSymbols(m)) || images?.wants(m) === true) wanted.push(i);
  });
  // The files downloaded, attached together at the end (linear in the modules and the files).
  const downloaded: FoundSymbolFile[] = [];
  await run.run(wanted, async (index) => {
    if (images !== undefined) await images.fetch(index);
    const module = target.modules[index]!;
    if (module.unwind !== undefined || hasSymbols(module)) return;
    const id = moduleIdentity(module, target.memory);
    if (id.debugFile === undefined || id.debugId === undefined) return;
    let files: string[];
    try {
      files = candidates(id.debugFile, id.debugId);
    } catch (e) {
      if (e instanceof InputError) return;
      throw e;
    }
    const asked = await run.ask(module.name, path.servers, files, (bytes, url, from, server, rel) => {
      const via = from === url ? "" : ` (redirected to ${from})`;
      let file: SymbolFile;
      try {
        file = parseSymbolFile(bytes, { name: url, skipMalformed: true });
      } catch (e) {
        if (!(e instanceof InputError)) throw e;
        return { ok: false, reason: `not a symbol file${via} (${e.reason})` };
      }
      const why = symbolFileMismatch(module, target.memory, file);
      if (why !== undefined) return { ok: false, reason: `${why}${via}` };
      const cached = join(server.cache, ...rel.split("/"));
      writeAtomically(cached, bytes);
      const detail = `unwind records from ${url}${via} (cached as ${cached})`;
      const note: SymbolNote = { module: module.name, file: cached, url, detail };
      result.notes.push(note);
      downloaded.push({ file, note, detail });
      return { ok: true };
    });
    // A module only given-up servers were asked about is left to the warning that names them.
    if (!asked.found && asked.misses.length > 0) result.notes.push({ module: module.name, detail: `no symbols on the servers for ${id.debugFile} ${id.debugId}: ${asked.misses.join("; ")}`, misses: asked.misses });
  });
  if (images !== undefined) result.images = images.finish();
  attachFound(target, downloaded);
  result.warnings.push(...run.warnings);
  // Notes in module order, whatever order the downloads finished in.
  const order = new Map(target.modules.map((m, i) => [m.name, i]));
  result.notes.sort((a, b) => (order.get(a.module) ?? 0) - (order.get(b.module) ?? 0));
  return result;
}
