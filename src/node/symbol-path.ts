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
 * asked again in that run.
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

/** Limits of {@link downloadSymbols}; each has the default of {@link DOWNLOAD_LIMITS}. */
export interface DownloadOptions {
  /** A download that receives nothing for this long is given up, in milliseconds (default 30 s): the server is not asked again. */
  timeoutMs?: number;
  /** The longest one download may take, redirects included, in milliseconds (default 300 s): a server that is slower is not asked again. */
  downloadDeadlineMs?: number;
  /** The longest all the downloads of one call may take together, in milliseconds (default 600 s). */
  runDeadlineMs?: number;
  /** Downloads at once (default 6). */
  concurrency?: number;
  /** The largest file taken, in bytes as decoded (default 512 MiB), counted as they arrive whatever the headers say; a larger one is a note. */
  maxBytes?: number;
  /** What each download may hold in memory before it must wait for its turn to be the one large download (default 32 MiB). */
  shareBytes?: number;
  /** Redirects followed per file (default 5). */
  maxRedirects?: number;
}

/** The defaults of {@link DownloadOptions}. */
export const DOWNLOAD_LIMITS = {
  timeoutMs: 30_000,
  downloadDeadlineMs: 300_000,
  runDeadlineMs: 600_000,
  concurrency: 6,
  maxBytes: 512 * 2 ** 20,
  shareBytes: 32 * 2 ** 20,
  maxRedirects: 5,
} as const satisfies Required<DownloadOptions>;

/**
 * The most downloaded bytes held in memory at once under `limits`: every download but one holds
 * at most its share, the one large download at most `maxBytes`, and the file being checked is
 * joined into one more copy of at most `maxBytes` (one at a time: the check is synchronous).
 * With the defaults, 5 × 32 MiB + 2 × 512 MiB = 1,184 MiB.
 */
export function downloadMemoryBound(limits: Pick<DownloadOptions, "concurrency" | "maxBytes" | "shareBytes"> = {}): number {
  const concurrency = limits.concurrency ?? DOWNLOAD_LIMITS.concurrency;
  const maxBytes = limits.maxBytes ?? DOWNLOAD_LIMITS.maxBytes;
  const share = Math.min(limits.shareBytes ?? DOWNLOAD_LIMITS.shareBytes, maxBytes);
  return (Math.max(1, concurrency) - 1) * share + 2 * maxBytes;
}

/** What {@link downloadSymbols} did: a note per module it asked about, and a warning per server it gave up on (and one if the run's deadline passed). */
export interface DownloadResult {
  notes: SymbolNote[];
  warnings: string[];
}

/** How one file's download ended: used (by the callback), missed (a note for the module), or the server is given up on. */
type Fetched = { ok: true } | { ok: false; status?: number; reason: string } | { ok: false; givenUp: string };

/** Why a download was aborted. */
type AbortWhy = "idle" | "deadline" | "server" | "run";

/** The one large download at a time: a queue of waiters. */
class Turn {
  private held = false;
  private readonly waiting: (() => void)[] = [];
  /** Resolves with a release function once the turn is this caller's; `abort` ends the wait (resolves undefined). */
  take(onAbort: (cancel: () => void) => void): Promise<(() => void) | undefined> {
    const release = (): void => {
      const next = this.waiting.shift();
      if (next !== undefined) next();
      else this.held = false;
    };
    if (!this.held) {
      this.held = true;
      return Promise.resolve(release);
    }
    return new Promise((resolve) => {
      const wake = (): void => resolve(release);
      this.waiting.push(wake);
      onAbort(() => {
        const i = this.waiting.indexOf(wake);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(undefined);
      });
    });
  }
}

/** State shared by the downloads of one {@link downloadSymbols} call. */
interface Session {
  limits: Required<DownloadOptions>;
  /** Servers given up on, with why. */
  givenUp: Map<string, string>;
  /** Downloads in flight: their server and how to abort them. */
  active: Set<{ server: string; abort: (why: AbortWhy) => void }>;
  turn: Turn;
  runOver: boolean;
}

const seconds = (ms: number): string => `${ms / 1000} s`;

/**
 * Fetches `url` of `server`, following redirects by the policy of {@link downloadSymbols}, and
 * hands the bytes to `use` synchronously (so at most one downloaded file is joined and checked at
 * a time). Never throws (but what `use` throws).
 */
async function fetchFile(url: string, server: string, session: Session, use: (bytes: Uint8Array, from: string) => Fetched): Promise<Fetched> {
  const { limits } = session;
  const controller = new AbortController();
  let why: AbortWhy | undefined;
  let onAbort: (() => void) | undefined;
  const abort = (w: AbortWhy): void => {
    if (why !== undefined) return;
    why = w;
    controller.abort();
    onAbort?.();
  };
  const entry = { server, abort };
  session.active.add(entry);
  let idle: ReturnType<typeof setTimeout> | undefined;
  let deadline: ReturnType<typeof setTimeout> | undefined;
  let left = limits.downloadDeadlineMs;
  let since = Date.now();
  const armIdle = (): void => {
    if (idle !== undefined) clearTimeout(idle);
    idle = setTimeout(() => abort("idle"), limits.timeoutMs);
  };
  const startClock = (): void => {
    since = Date.now();
    deadline = setTimeout(() => abort("deadline"), left);
    armIdle();
  };
  const stopClock = (): void => {
    if (idle !== undefined) clearTimeout(idle);
    if (deadline !== undefined) clearTimeout(deadline);
    idle = deadline = undefined;
    left = Math.max(1, left - (Date.now() - since));
  };
  let release: (() => void) | undefined;
  let using = false;
  startClock();
  try {
    let current = url;
    let response: Response;
    for (let hop = 0; ; hop++) {
      response = await fetch(current, { signal: controller.signal, redirect: "manual", headers: { "accept-encoding": "gzip" } });
      if (response.status < 300 || response.status > 399 || response.status === 304) break;
      await response.body?.cancel().catch(() => undefined);
      const location = response.headers.get("location");
      if (location === null) return { ok: false, status: response.status, reason: `HTTP ${response.status} without a Location` };
      if (hop >= limits.maxRedirects) return { ok: false, reason: `more than ${limits.maxRedirects} redirects` };
      let next: URL;
      try {
        next = new URL(location, current);
      } catch {
        return { ok: false, reason: `a redirect to ${JSON.stringify(location)}, not a URL` };
      }
      if (next.protocol !== "http:" && next.protocol !== "https:") return { ok: false, reason: `a redirect to ${next.protocol} (only http and https are followed)` };
      if (next.protocol === "http:" && new URL(current).protocol === "https:") return { ok: false, reason: `a redirect from https to ${next.href} (plain http is not followed from https)` };
      current = next.href;
    }
    if (response.status >= 500 || response.status === 429) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, givenUp: `it answered HTTP ${response.status}` };
    }
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, status: response.status, reason: `HTTP ${response.status}` };
    }
    const encoded = (response.headers.get("content-encoding") ?? "identity").toLowerCase() !== "identity";
    const length = Number(response.headers.get("content-length") ?? "NaN");
    if (!encoded && Number.isFinite(length) && length > limits.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      return { ok: false, reason: `${length} bytes, more than the ${limits.maxBytes}-byte limit` };
    }
    const chunks: Uint8Array[] = [];
    let size = 0;
    const share = Math.min(limits.shareBytes, limits.maxBytes);
    if (response.body !== null) {
      const reader = response.body.getReader();
      for (;;) {
        armIdle();
        const { done, value } = await reader.read();
        if (done) break;
        size += value.length;
        // Decoded bytes, counted as they come: neither Content-Length nor compression changes the cap.
        if (size > limits.maxBytes) {
          await reader.cancel().catch(() => undefined);
          return { ok: false, reason: `more than the ${limits.maxBytes}-byte limit${encoded ? " once decoded" : ""}` };
        }
        chunks.push(value);
        if (size > share && release === undefined) {
          // Past its share, a download waits for its turn to be the one large download; the
          // wait counts against the run's deadline only.
          stopClock();
          release = await session.turn.take((cancel) => (onAbort = cancel));
          onAbort = undefined;
          if (release === undefined || why !== undefined) throw new Error("aborted");
          startClock();
        }
      }
    }
    stopClock();
    const bytes = new Uint8Array(size);
    let at = 0;
    for (let i = 0; i < chunks.length; i++) {
      bytes.set(chunks[i]!, at);
      at += chunks[i]!.length;
    }
    chunks.length = 0;
    using = true;
    return use(bytes, current);
  } catch (e) {
    if (using) throw e;
    if (why === "idle") return { ok: false, givenUp: `no data for ${seconds(limits.timeoutMs)}` };
    if (why === "deadline") return { ok: false, givenUp: `a download took more than ${seconds(limits.downloadDeadlineMs)}` };
    if (why === "server" || why === "run") return { ok: false, givenUp: "" };
    const cause = (e as { cause?: { code?: string; message?: string } }).cause;
    const reason = cause?.code ?? cause?.message ?? (e instanceof Error ? e.message : String(e));
    return { ok: false, givenUp: reason };
  } finally {
    stopClock();
    release?.();
    session.active.delete(entry);
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
 */
export async function downloadSymbols(target: SymbolTarget, path: SymbolPath, options: DownloadOptions = {}): Promise<DownloadResult> {
  const limits: Required<DownloadOptions> = { ...DOWNLOAD_LIMITS };
  for (const [k, v] of Object.entries(options)) if (v !== undefined) (limits as Record<string, number>)[k] = v;
  const result: DownloadResult = { notes: [], warnings: [] };
  if (path.servers.length === 0) return result;
  const session: Session = { limits, givenUp: new Map(), active: new Set(), turn: new Turn(), runOver: false };
  const giveUp = (server: string, why: string): void => {
    if (session.givenUp.has(server)) return;
    session.givenUp.set(server, why);
    result.warnings.push(`symbol server ${server} is given up on (${why}); it is not asked again in this run`);
    for (const d of session.active) if (d.server === server) d.abort("server");
  };
  let notAsked = 0;
  const runTimer = setTimeout(() => {
    session.runOver = true;
    for (const d of session.active) d.abort("run");
  }, limits.runDeadlineMs);
  const wanted = target.modules.filter((m) => m.unwind === undefined && m.symbols.length === 0).map((m) => m.base);
  try {
    await pool(wanted, limits.concurrency, async (base) => {
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
          if (session.runOver) {
            if (misses.length === 0) notAsked++;
            return;
          }
          if (session.givenUp.has(server.url)) break;
          const url = `${server.url}/${rel}`;
          const got = await fetchFile(url, server.url, session, (bytes, from) => {
            const via = from === url ? "" : ` (redirected to ${from})`;
            let file: SymbolFile;
            try {
              file = parseSymbolFile(bytes, { name: url, skipMalformed: true });
            } catch (e) {
              if (!(e instanceof InputError)) throw e;
              return { ok: false, reason: `not a symbol file${via} (${e.reason})` };
            }
            const current = target.modules.find((m) => m.base === base)!;
            const why = symbolFileMismatch(current, target.memory, file);
            if (why !== undefined) return { ok: false, reason: `${why}${via}` };
            const warnings = attachSymbolFile(target, file, { names: "keep" }).flatMap((a) => a.warnings);
            const cached = join(server.cache, ...rel.split("/"));
            writeAtomically(cached, bytes);
            const note: SymbolNote = { module: module.name, file: cached, url, detail: [`unwind records from ${url}${via} (cached as ${cached})`, ...warnings].join("; ") };
            if (warnings.length > 0) note.corrupt = true;
            result.notes.push(note);
            return { ok: true };
          });
          if (got.ok) return;
          if ("givenUp" in got) {
            if (session.runOver) {
              if (misses.length === 0) notAsked++;
              return;
            }
            if (got.givenUp !== "") giveUp(server.url, got.givenUp);
            break;
          }
          misses.push(`${url}: ${got.status === 404 ? "not there (404)" : got.reason}`);
        }
      }
      // A module only given-up servers were asked about is left to the warning that names them.
      if (misses.length > 0) result.notes.push({ module: module.name, detail: `no symbols on the servers for ${id.debugFile} ${id.debugId}: ${misses.join("; ")}`, misses });
    });
  } finally {
    clearTimeout(runTimer);
  }
  if (session.runOver) result.warnings.push(`symbol downloads stopped at the run's deadline of ${seconds(limits.runDeadlineMs)}; ${notAsked} module(s) got no answer`);
  // Notes in module order, whatever order the downloads finished in.
  const order = new Map(target.modules.map((m, i) => [m.name, i]));
  result.notes.sort((a, b) => (order.get(a.module) ?? 0) - (order.get(b.module) ?? 0));
  return result;
}
