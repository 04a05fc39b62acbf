/**
 * Downloads from symbol servers, as {@link downloadSymbols} (symbol-path.ts) and
 * {@link downloadImages} (images.ts) make them: one file at a time per task, a few tasks at once,
 * within limits a hostile or broken server cannot stretch (a time without data, a time per
 * download, a time for the whole run, a byte cap counted as the bytes arrive, a bound on the
 * bytes held in memory), redirects followed by a fixed policy, and a server that fails given up
 * once per run. Files are written to caches whole or not at all.
 */
import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import type { SymbolServer } from "./symbol-path.js";

/** Limits of the downloads; each has the default of {@link DOWNLOAD_LIMITS}. */
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
 * With the defaults, 5 × 32 MiB + 2 × 512 MiB = 1,184 MiB. With `images`, a compressed image
 * being checked is extracted into one more copy of at most `maxBytes`: 1,696 MiB.
 */
export function downloadMemoryBound(limits: Pick<DownloadOptions, "concurrency" | "maxBytes" | "shareBytes"> & { images?: boolean } = {}): number {
  const concurrency = limits.concurrency ?? DOWNLOAD_LIMITS.concurrency;
  const maxBytes = limits.maxBytes ?? DOWNLOAD_LIMITS.maxBytes;
  const share = Math.min(limits.shareBytes ?? DOWNLOAD_LIMITS.shareBytes, maxBytes);
  return (Math.max(1, concurrency) - 1) * share + (limits.images === true ? 3 : 2) * maxBytes;
}

/** How one file's download ended: used (by the callback), missed (a note for the module), or the server is given up on. */
export type Fetched = { ok: true } | { ok: false; status?: number; reason: string } | { ok: false; givenUp: string };

/** Why a download was aborted. */
type AbortWhy = "idle" | "deadline" | "server" | "run";

/** The one large download at a time: a queue of waiters. */
export class Turn {
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

/** State shared by the downloads of one the downloads call. */
export interface Session {
  limits: Required<DownloadOptions>;
  /** Servers given up on, with why. */
  givenUp: Map<string, string>;
  /** Downloads in flight: their server and how to abort them. */
  active: Set<{ server: string; abort: (why: AbortWhy) => void }>;
  turn: Turn;
  runOver: boolean;
}

export const seconds = (ms: number): string => `${ms / 1000} s`;

/**
 * Fetches `url` of `server`, following redirects by the policy of the downloads, and
 * hands the bytes to `use` synchronously (so at most one downloaded file is joined and checked at
 * a time). Never throws (but what `use` throws).
 */
export async function fetchFile(url: string, server: string, session: Session, use: (bytes: Uint8Array, from: string) => Fetched): Promise<Fetched> {
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
export function writeAtomically(path: string, bytes: Uint8Array): void {
  mkdirSync(dirname(path), { recursive: true });
  const tmp = `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  try {
    writeFileSync(tmp, bytes);
    renameSync(tmp, path);
  } finally {
    rmSync(tmp, { force: true });
  }
}

/** Runs `tasks` with at most `limit` at once. */
export async function pool<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) await task(items[next++]!);
  });
  await Promise.all(workers);
}

/** What {@link DownloadRun.ask} found: whether `use` took a file, what each server answered otherwise, and whether the run's deadline stopped it. */
export interface Asked {
  found: boolean;
  /** `URL: why` for each file a server did not have or sent unusable. */
  misses: string[];
  /** The run's deadline passed before every server was asked. */
  stopped: boolean;
}

/**
 * One run of downloads (one call of `downloadSymbols` or `downloadImages`): its limits, the
 * servers given up on (one warning each, shared by every kind of file the run asks for), the
 * deadline of the run, and the modules it left without an answer.
 */
export class DownloadRun {
  readonly limits: Required<DownloadOptions>;
  readonly warnings: string[] = [];
  private readonly session: Session;
  private readonly noAnswer = new Set<string>();
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: DownloadOptions) {
    const limits: Required<DownloadOptions> = { ...DOWNLOAD_LIMITS };
    for (const [k, v] of Object.entries(options)) if (v !== undefined && k in DOWNLOAD_LIMITS) (limits as Record<string, number>)[k] = v as number;
    this.limits = limits;
    this.session = { limits, givenUp: new Map(), active: new Set(), turn: new Turn(), runOver: false };
  }

  /** Runs `task` for each item, a few at once, until all are done or the run's deadline passes; then says so in one warning. */
  async run<T>(items: readonly T[], task: (item: T) => Promise<void>): Promise<void> {
    this.timer = setTimeout(() => {
      this.session.runOver = true;
      for (const d of this.session.active) d.abort("run");
    }, this.limits.runDeadlineMs);
    try {
      await pool(items, this.limits.concurrency, task);
    } finally {
      clearTimeout(this.timer);
    }
    if (this.session.runOver) this.warnings.push(`symbol downloads stopped at the run's deadline of ${seconds(this.limits.runDeadlineMs)}; ${this.noAnswer.size} module(s) got no answer`);
  }

  /** Whether `server` is given up on in this run. */
  givenUp(server: string): boolean {
    return this.session.givenUp.has(server);
  }

  private giveUp(server: string, why: string): void {
    if (this.session.givenUp.has(server)) return;
    this.session.givenUp.set(server, why);
    this.warnings.push(`symbol server ${server} is given up on (${why}); it is not asked again in this run`);
    for (const d of this.session.active) if (d.server === server) d.abort("server");
  }

  /** One download, as {@link fetchFile} makes it, of `url` on behalf of `server` (what is aborted when it is given up on). */
  fetch(url: string, server: string, use: (bytes: Uint8Array, from: string) => Fetched): Promise<Fetched> {
    return fetchFile(url, server, this.session, use);
  }

  /**
   * Asks each server in turn (skipping those given up on) for each file of `rels`, store-relative,
   * until `use` takes one. A server that fails is given up on (one warning); `module` names the
   * module in the count of those the run's deadline left without an answer.
   */
  async ask(module: string, servers: readonly SymbolServer[], rels: readonly string[], use: (bytes: Uint8Array, url: string, from: string, server: SymbolServer, rel: string) => Fetched): Promise<Asked> {
    const asked: Asked = { found: false, misses: [], stopped: false };
    const stop = (): Asked => {
      if (asked.misses.length === 0) this.noAnswer.add(module);
      asked.stopped = true;
      return asked;
    };
    for (const server of servers) {
      for (const rel of rels) {
        if (this.session.runOver) return stop();
        if (this.session.givenUp.has(server.url)) break;
        const url = `${server.url}/${rel}`;
        const got = await fetchFile(url, server.url, this.session, (bytes, from) => use(bytes, url, from, server, rel));
        if (got.ok) {
          asked.found = true;
          return asked;
        }
        if ("givenUp" in got) {
          if (this.session.runOver) return stop();
          if (got.givenUp !== "") this.giveUp(server.url, got.givenUp);
          break;
        }
        asked.misses.push(`${url}: ${got.status === 404 ? "not there (404)" : got.reason}`);
      }
    }
    return asked;
  }
}
