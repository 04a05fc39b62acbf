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
 * Downloads run concurrently (a few at a time), each ended after a time without data; a server
 * that cannot be reached (refused, timed out, not resolved) is named in one warning and not asked
 * again in that run.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { InputError } from "../errors.js";
import { symbolStorePath } from "../formats/breakpad-sym.js";
import { attachSymbolFile, moduleIdentity, parseSymbolFile, symbolFileMismatch, type SymbolFile, type SymbolTarget } from "../formats/symbol-file.js";
import { attachSymbolDirectories, type SymbolNote } from "./symbol-store.js";

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
 * included), then `besideDir`, as {@link attachSymbolDirectories} does; directories that do not
 * exist are left out.
 */
export function attachSymbolPath(target: SymbolTarget, path: SymbolPath, besideDir?: string): SymbolNote[] {
  const missing = new Set(missingDirectories(path));
  const dirs = path.directories.filter((d) => !missing.has(d) && existsSync(d));
  const notes = attachSymbolDirectories(target, dirs, besideDir);
  for (const note of notes) {
    const server = note.file === undefined ? undefined : path.servers.find((s) => note.file!.startsWith(s.cache + "/") || note.file!.startsWith(s.cache + "\\"));
    if (server !== undefined) {
      note.url = `${server.url}/${note.file!.slice(server.cache.length + 1).replaceAll("\\", "/")}`;
      note.detail += ` (cached from ${note.url})`;
    }
  }
  return notes;
}

/** Options of {@link downloadSymbols}. */
export interface DownloadOptions {
  /** A download that receives nothing for this long is given up, in milliseconds (default 30,000). */
  timeoutMs?: number;
  /** Downloads at once (default 6). */
  concurrency?: number;
  /** The largest file taken, in bytes (default 1 GiB); a larger one is a note. */
  maxBytes?: number;
}

/** What {@link downloadSymbols} did: a note per module it asked about, and a warning per server it could not reach. */
export interface DownloadResult {
  notes: SymbolNote[];
  warnings: string[];
}

type Fetched = { ok: true; bytes: Uint8Array } | { ok: false; status?: number; unreachable?: string; reason: string };

/** Fetches one URL; no data for `timeoutMs` ends it. Never throws. */
async function fetchBytes(url: string, timeoutMs: number, maxBytes: number): Promise<Fetched> {
  const controller = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  let timedOut = false;
  const arm = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeoutMs);
  };
  const seconds = `${timeoutMs / 1000} s`;
  arm();
  try {
    const response = await fetch(url, { signal: controller.signal, redirect: "follow" });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, status: response.status, reason: `HTTP ${response.status}` };
    }
    const length = Number(response.headers.get("content-length") ?? "NaN");
    if (Number.isFinite(length) && length > maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, reason: `${length} bytes, more than the ${maxBytes}-byte limit` };
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    if (response.body !== null) {
      const reader = response.body.getReader();
      for (;;) {
        arm();
        const { done, value } = await reader.read();
        if (done) break;
        size += value.length;
        if (size > maxBytes) {
          await reader.cancel().catch(() => undefined);
          return { ok: false, reason: `more than the ${maxBytes}-byte limit` };
        }
        chunks.push(value);
      }
    }
    const bytes = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      bytes.set(c, at);
      at += c.length;
    }
    return { ok: true, bytes };
  } catch (e) {
    if (timedOut) return { ok: false, unreachable: `no answer within ${seconds}`, reason: `no data for ${seconds}` };
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const why = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
    return { ok: false, unreachable: why, reason: why };
  } finally {
    if (timer !== undefined) clearTimeout(timer);
  }
}

/** Writes `bytes` to `path` whole or not at all (a temporary file renamed into place), making its directories. */
function writeAtomically(path: string, bytes: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** The files a server may hold for a module, store-relative: the Breakpad .sym, then (for a PDB) the PDB. */
function candidates(debugFile: string, debugId: string): string[] {
  const sym = symbolStorePath(debugFile, debugId);
  const base = sym.slice(0, sym.indexOf("/"));
  return /\.pdb$/i.test(base) ? [sym, `${base}/${debugId}/${base}`] : [sym];
}

/** Runs `tasks` with at most `limit` at once. */
async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await task(items[next++]!);
  });
  await Promise.all(workers);
}

/**
 * Asks the servers of `path`, in order, for the symbols of each module of `target` that has no
 * unwind records or names yet, and attaches the first file that parses and matches the module's
 * debug id; it is kept in that server's cache. Returns a note per module asked about.
 */
export async function downloadSymbols(target: SymbolTarget, path: SymbolPath, options: DownloadOptions = {}): Promise<DownloadResult> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxBytes = options.maxBytes ?? 2 ** 30;
  const result: DownloadResult = { notes: [], warnings: [] };
  if (path.servers.length === 0) return result;
  const unreachable = new Map<string, string>();
  const wanted = target.modules.filter((m) => m.unwind === undefined && m.symbols.length === 0).map((m) => m.base);
  await pool(wanted, options.concurrency ?? 6, async (base) => {
    const module = target.modules.find((m) => m.base === base)!;
    const id = moduleIdentity(module, target.memory);
    if (id.debugFile === undefined || id.debugId === undefined) return;
    let files: string[];
    try {
      files = candidates(id.debugFile, id.debugId);
    } catch (e) {
      if (e instanceof InputError) return;
      throw e;
    }
    const misses: string[] = [];
    for (const server of path.servers) {
      for (const rel of files) {
        if (unreachable.has(server.url)) break;
        const url = `${server.url}/${rel}`;
        const got = await fetchBytes(url, timeoutMs, maxBytes);
        if (!got.ok) {
          if (got.unreachable !== undefined) {
            if (!unreachable.has(server.url)) {
              unreachable.set(server.url, got.unreachable);
              result.warnings.push(`symbol server ${server.url} cannot be reached (${got.unreachable}); it is not asked again`);
            }
            break;
          }
          misses.push(`${url}: ${got.status === 404 ? "not there (404)" : got.reason}`);
          continue;
        }
        const cached = join(server.cache, ...rel.split("/"));
        let file: SymbolFile;
        try {
          file = parseSymbolFile(got.bytes, { name: url, skipMalformed: true });
        } catch (e) {
          if (!(e instanceof InputError)) throw e;
          misses.push(`${url}: not a symbol file (${e.reason})`);
          continue;
        }
        const current = target.modules.find((m) => m.base === base)!;
        const why = symbolFileMismatch(current, target.memory, file);
        if (why !== undefined) {
          misses.push(`${url}: ${why}`);
          continue;
        }
        const warnings = attachSymbolFile(target, file, { names: "keep" }).flatMap((a) => a.warnings);
        writeAtomically(cached, got.bytes);
        const note: SymbolNote = { module: module.name, file: cached, url, detail: [`unwind records from ${url} (cached as ${cached})`, ...warnings].join("; ") };
        if (warnings.length > 0) note.corrupt = true;
        result.notes.push(note);
        return;
      }
    }
    // A module only unreachable servers were asked about is left to the warning that names them.
    if (misses.length > 0) result.notes.push({ module: module.name, detail: `no symbols on the servers for ${id.debugFile} ${id.debugId}: ${misses.join("; ")}`, misses });
  });
  // Notes in module order, whatever order the downloads finished in.
  const order = new Map(target.modules.map((m, i) => [m.name, i]));
  result.notes.sort((a, b) => (order.get(a.module) ?? 0) - (order.get(b.module) ?? 0));
  return result;
}
