/**
 * `stackwalk walk` over many inputs: files and folders (searched for minidumps), walked N at a
 * time (`--jobs N`, default the core count: the main thread and N − 1 worker threads), written
 * as JSON Lines (one walk document per input, in input order) or as a summary table, with a progress bar on stderr when it is a
 * terminal. An input that cannot be walked is one error line (and in JSON Lines one error record)
 * and the batch goes on; the exit status is then 2.
 */
import { closeSync, mkdtempSync, openSync, readdirSync, readFileSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { availableParallelism, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { Worker } from "node:worker_threads";
import { fileURLToPath, pathToFileURL } from "node:url";
import { OUTPUT_FORMATS } from "../render/output-formats.js";
import { InputError } from "../errors.js";
import { walkDocument } from "../analysis/walk-document.js";
import { summaryRow, type SummaryEntry, type SummaryRow } from "../render/summary.js";
import type { WalkerName } from "../walk/registry.js";
import { EXIT, UsageError, type Io, type SymbolSpec } from "./common.js";
import { loadSnapshot, resolveThread } from "./load.js";
import { loadInstructionDecoder } from "../node/disassembler.js";
import { SymbolFileCache } from "../node/symbol-store.js";
import { UnwindCache } from "../unwind/cache.js";

/** How every input of a batch is walked. */
export interface BatchOptions {
  format: "jsonl" | "summary";
  walker: WalkerName;
  maxFrames: number;
  /** ARM64: the virtual-address size pointer authentication codes are stripped at (default 48). */
  pacVaBits?: number | undefined;
  /** The most frames of one input's threads together. */
  frameBudget: number;
  /** The most work of one input's threads together. */
  workBudget?: number;
  thread: number | "all" | "crashed";
  /** The symbol path, parsed once for every input (see `symbolSpec`). */
  symbols: SymbolSpec;
  images: string[];
  /** Workers: where JSON Lines records are written before they are copied out, and which worker this is. */
  scratch?: string;
  worker?: number;
}

/**
 * What walking one input gave: its summary row (made for a format that ends with the table of
 * them), or why it failed. Its JSON Lines record went to the writer {@link walkOne} was given; a
 * worker posts it as `line`, or, when it is long, writes it to `lineFile` (the main thread copies
 * it out in input order and removes it).
 */
export type BatchResult = { ok: true; row?: SummaryRow; line?: string; lineFile?: string } | { ok: false; error: string; wrote?: boolean };

/** An input's entry in the table a format ends with: {@link walkOne} made its row for such a format. */
function summaryEntry({ file, result }: { file: string; result: BatchResult }): SummaryEntry {
  if (!result.ok) return { file, result };
  if (result.row === undefined) throw new Error(`${file}: walked without its summary row`);
  return { file, result: { ok: true, row: result.row } };
}

/** Every minidump under a folder (`.dmp`, `.mdmp`; recursively, sorted), files as given. */
export function expandDumps(paths: readonly string[]): string[] {
  const out: string[] = [];
  const visit = (p: string, top: boolean): void => {
    let dir = false;
    try {
      dir = statSync(p).isDirectory();
    } catch {
      if (top) out.push(p);
      return;
    }
    if (!dir) {
      if (top || /\.m?dmp$/i.test(p)) out.push(p);
      return;
    }
    // The entry types come with the listing: a plain file needs no stat of its own (a batch folder holds thousands).
    const entries = readdirSync(p, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const e of entries) {
      if (e.isFile()) {
        if (/\.m?dmp$/i.test(e.name)) out.push(join(p, e.name));
      } else visit(join(p, e.name), false);
    }
  };
  for (const p of paths) visit(p, true);
  return out;
}

/**
 * What the inputs walked on one thread share: the symbol files read (each read once for all of
 * them), and what the walkers worked out from those files (walk-document.ts `WalkRequest.cache`).
 */
export interface BatchCaches {
  readonly symbols: SymbolFileCache;
  readonly unwind: UnwindCache;
}

/** New, empty {@link BatchCaches}. */
export function batchCaches(): BatchCaches {
  return { symbols: new SymbolFileCache(), unwind: new UnwindCache() };
}

/**
 * Walks one input: its JSON Lines record (the walk document on one line, `file` first) goes to
 * `write` as it is made, one thread walked at a time, and its summary row is returned. The inputs
 * of one thread share `caches`.
 */
export async function walkOne(file: string, options: BatchOptions, write: (text: string) => void = () => undefined, caches?: BatchCaches): Promise<BatchResult> {
  let wrote = false;
  let close: (() => void) | undefined;
  try {
    const quiet: Io = { out: () => undefined, err: () => undefined };
    const load = { symbols: options.symbols, images: options.images, walker: options.walker, ...(caches === undefined ? {} : { symbolCache: caches.symbols }) };
    const loaded = await loadSnapshot(file, load, quiet);
    close = loaded.close;
    const { snapshot, dump, symbolNotes } = loaded;
    const request = { walker: options.walker, walkerGiven: true, maxFrames: options.maxFrames, frameBudget: options.frameBudget, workBudget: options.workBudget, pacVaBits: options.pacVaBits, thread: resolveThread(snapshot, options.thread, file), cache: caches?.unwind };
    const document = walkDocument({ file, snapshot, dump, symbolNotes, symbolsGiven: false, disassembler: loadInstructionDecoder }, request);
    // The JSON Lines record goes out as it is made; the summary row needs only the first thread's walk.
    await OUTPUT_FORMATS[options.format].write(document, (text) => {
      wrote = true;
      write(text);
    });
    // The row only for a format that writes the table of them at the end (a record says more).
    return OUTPUT_FORMATS[options.format].end === undefined ? { ok: true } : { ok: true, row: summaryRow(document) };
  } catch (e) {
    // The message names the file first; the record and the error line name it once.
    if (e instanceof InputError || e instanceof UsageError) return { ok: false, wrote, error: e.message.startsWith(`${file}: `) ? e.message.slice(file.length + 2) : e.message };
    return { ok: false, wrote, error: `internal error (a bug; STACKWALK_DEBUG=1 prints where): ${e instanceof Error ? e.message : String(e)}${process.env["STACKWALK_DEBUG"] !== undefined && e instanceof Error ? `\n${e.stack}` : ""}` };
  } finally {
    // The dump's file: a batch opens thousands.
    close?.();
  }
}

/** A record up to this many characters is held as a string for its turn; a longer one goes through a file. */
export const POSTED = 1 << 22;

/**
 * Walks one input of a batch run off the output's order (on a worker, or on the main thread
 * beside workers): its JSON Lines record is held with the result as `line`, or, once it passes
 * {@link POSTED} characters, written as it is made to a file of its own (`lineFile`, at the path
 * `scratch` names), which the main thread copies out in input order: a record of a deep dump is
 * never one string. `scratch` is undefined for a format without records.
 */
export async function walkHeld(file: string, options: BatchOptions, caches: BatchCaches, scratch: (() => string) | undefined): Promise<BatchResult> {
  if (scratch === undefined) return walkOne(file, options, undefined, caches);
  let held: string[] = [];
  let length = 0;
  let fd: number | undefined;
  let path: string | undefined;
  const write = (text: string): void => {
    if (fd !== undefined) {
      writeSync(fd, text);
      return;
    }
    held.push(text);
    length += text.length;
    if (length <= POSTED) return;
    path = scratch();
    fd = openSync(path, "w");
    for (const t of held) writeSync(fd, t);
    held = [];
  };
  const result = await walkOne(file, options, write, caches);
  if (fd !== undefined) closeSync(fd);
  if (!result.ok) {
    if (path !== undefined) rmSync(path, { force: true });
    return { ...result, wrote: false };
  }
  return path !== undefined ? { ...result, lineFile: path } : { ...result, line: held.join("") };
}

/**
 * A worker running the worker script beside this module: the bundle's own (walk-worker.cjs),
 * tsc's output, or, when this runs from its TypeScript source, the source with tsx's loader
 * registered in the worker first.
 */
async function startWorker(options: BatchOptions): Promise<Worker> {
  // Loaded here, not with the module: a walk of one input never starts a thread.
  const { Worker } = await import("node:worker_threads");
  const here = import.meta.url;
  if (here.endsWith(".cjs")) return new Worker(fileURLToPath(new URL("./walk-worker.cjs", here)), { workerData: options });
  if (!here.endsWith(".ts")) return new Worker(fileURLToPath(new URL("./batch-worker.js", here)), { workerData: options });
  // tsx's ESM API (its module hooks), found through its package.json: development only.
  const pkg = createRequire(here).resolve("tsx/package.json");
  const api = (JSON.parse(readFileSync(pkg, "utf8")) as { exports: Record<string, { import: { default: string } }> }).exports["./esm/api"]!.import.default;
  const tsx = pathToFileURL(join(dirname(pkg), api)).href;
  const source = new URL("./batch-worker.ts", here).href;
  return new Worker(`import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(source)}); });`, { eval: true, workerData: options });
}

/** A progress bar on stderr, redrawn at most every 100 ms, cleared at the end. */
function progressBar(io: Io, total: number): { update(done: number, failed: number): void; end(): void } {
  let last = 0;
  const draw = (done: number, failed: number): void => {
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    io.err(`\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} inputs${failed > 0 ? `, ${failed} failed` : ""}`);
  };
  return {
    update(done, failed) {
      const now = performance.now();
      if (done < total && now - last < 100) return;
      last = now;
      draw(done, failed);
    },
    end() {
      io.err("\r\u001b[K");
    },
  };
}

/**
 * When a batch's worker threads start: at once, or once a judge says so, told after each input
 * the main thread walks how long it has walked, how many inputs and how many are not yet handed
 * out ({@link workersWorthStarting}: a small batch is walked on the main thread alone).
 */
export type WorkerStart = "now" | ((elapsedMs: number, done: number, left: number) => boolean);

/** How long the main thread walks before it judges whether workers are worth starting, ms. */
export const WORKERS_AFTER_MS = 100;
/** The work left, at the main thread's pace so far, that makes workers worth starting, ms. */
export const WORKERS_WORTH_MS = 300;

/**
 * Whether a batch's workers are worth starting, the main thread having walked `done` inputs in
 * `elapsedMs` with `left` not yet handed out: a worker costs about a tenth of a second of CPU to
 * start (Node's own start-up in the thread, the command file, the warm-up of its compiled code)
 * before it walks anything, so it pays only for work that would take this thread a few times that.
 */
export function workersWorthStarting(elapsedMs: number, done: number, left: number): boolean {
  return elapsedMs >= WORKERS_AFTER_MS && done > 0 && (elapsedMs / done) * left >= WORKERS_WORTH_MS;
}

/**
 * Walks `files` with `jobs` walkers at once, this thread and `jobs` − 1 workers started as `start`
 * says (this thread alone when `jobs` is 1), and writes their records or the summary to `io.out`
 * in input order. Returns the exit status: 0, or 2 when an input failed.
 */
export async function walkBatch(files: readonly string[], options: BatchOptions, jobs: number, io: Io & { errIsTty?: boolean }, start: WorkerStart = "now"): Promise<number> {
  const results: ({ file: string; result: BatchResult } | undefined)[] = new Array(files.length);
  let written = 0;
  let done = 0;
  let failed = 0;
  const bar = io.errIsTty === true ? progressBar(io, files.length) : undefined;
  let reported = 0;
  const finish = (i: number, result: BatchResult): void => {
    results[i] = { file: files[i]!, result };
    done++;
    if (!result.ok) failed++;
    // A failed input's stderr line goes out in input order too, whichever worker finishes first.
    while (reported < files.length && results[reported] !== undefined) {
      const r = results[reported]!.result;
      if (!r.ok) {
        if (bar !== undefined) io.err("\r\u001b[K");
        io.err(`stackwalk walk: ${files[reported]}: ${r.error}\n`);
      }
      reported++;
    }
    // JSON Lines go out in input order as soon as the inputs before them are done: a worker's
    // record is copied from the file it wrote, piece by piece; the main thread's went out as made.
    if (OUTPUT_FORMATS[options.format].records === true) {
      while (written < files.length && results[written] !== undefined) {
        const r = results[written]!.result;
        if (r.ok && r.line !== undefined) io.out(r.line);
        if (r.ok && r.lineFile !== undefined) copyOut(r.lineFile, io);
        if (!r.ok) io.out((r.wrote === true ? "\n" : "") + JSON.stringify({ file: files[written], error: r.error }) + "\n");
        written++;
      }
    }
    bar?.update(done, failed);
  };
  const workers = Math.max(1, Math.min(jobs, files.length));
  if (workers === 1) {
    const caches = batchCaches();
    try {
      for (let i = 0; i < files.length; i++) finish(i, await walkOne(files[i]!, options, io.out, caches));
    } finally {
      caches.symbols.close();
    }
  } else {
    // `workers` walk at once: worker threads, and this thread as the last of them, which also
    // writes the output (a batch on N cores starts N − 1 threads), first or alone.
    let next = 0;
    const began = performance.now();
    let walkedHere = 0;
    let workersStarted = false;
    // Where long records are written, made when the first is, or when workers start.
    let scratchMade: string | undefined;
    const scratch = OUTPUT_FORMATS[options.format].records === true ? (): string => (scratchMade ??= mkdtempSync(join(tmpdir(), "stackwalk-jsonl-"))) : undefined;
    const started: Worker[] = [];
    const runners: Promise<void>[] = [];
    // Set once the batch fails: this thread's runner walks no more of what it was sent.
    let halted = false;
    const localCaches = batchCaches();
    try {
      const startRunner = (k: number): Promise<void> =>
        new Promise<void>((resolve, reject) => {
          let runner: Runner | undefined;
          // The batch ends at its first failure: a worker's error, or output that could not be
          // written (its reader went away).
          const fail = (e: unknown): void => {
            halted = true;
            for (const w of started) void w.terminate();
            reject(e);
          };
          // Two runs of inputs in flight per runner, so that it never waits for the next one; a
          // run is a few inputs, so that each message carries more than one walk.
          const current: number[] = [];
          const feed = (): void => {
            if (next >= files.length) {
              if (current.length === 0) void runner!.end().then(() => resolve());
              return;
            }
            const count = runLength(files.length - next, workers);
            const run = files.slice(next, next + count);
            for (let i = 0; i < count; i++) current.push(next++);
            runner!.post(run);
          };
          const receive = (message: RunResults): void => {
            try {
              for (const result of message.results) finish(current.shift()!, result);
              if (!message.end) return;
            } catch (e) {
              fail(e);
              return;
            }
            feed();
          };
          const begin = (r: Runner): void => {
            runner = r;
            feed();
            feed();
          };
          if (k === workers - 1) {
            begin(localRunner(options, localCaches, scratch, k, receive, fail, () => halted, walkedOne));
            return;
          }
          startWorker({ ...options, ...(scratch === undefined ? {} : { scratch: scratch() }), worker: k }).then((worker) => {
            started.push(worker);
            worker.on("message", receive);
            worker.on("online", () => begin({ post: (run) => worker.postMessage({ files: run }), end: () => worker.terminate().then(() => undefined) }));
            worker.on("error", fail);
          }, fail);
        });
      const startWorkers = (): void => {
        workersStarted = true;
        for (let k = 0; k < workers - 1; k++) runners.push(startRunner(k));
      };
      // After each input this thread walks, until the workers have started.
      const walkedOne = (): void => {
        walkedHere++;
        if (!workersStarted && !halted && start !== "now" && start(performance.now() - began, walkedHere, files.length - next)) startWorkers();
      };
      runners.push(startRunner(workers - 1));
      if (start === "now") startWorkers();
      // Every runner, those started meanwhile included.
      for (let awaited = 0; awaited < runners.length; ) {
        awaited = runners.length;
        await Promise.all(runners);
      }
    } finally {
      for (const w of started) void w.terminate();
      localCaches.symbols.close();
      if (scratchMade !== undefined) rmSync(scratchMade, { recursive: true, force: true });
    }
  }
  bar?.end();
  OUTPUT_FORMATS[options.format].end?.(results.map((r) => summaryEntry(r!)), io.out);
  return failed > 0 ? EXIT.badInput : EXIT.ok;
}

/** A run's results, in input order; `end` marks the last message of a run. */
export interface RunResults {
  results: BatchResult[];
  end: boolean;
}

/** What walks a batch's runs: a worker thread, or this thread. */
interface Runner {
  post(run: string[]): void;
  end(): Promise<void>;
}

/**
 * This thread as one of a batch's runners: each run is walked after the event loop has taken the
 * workers' messages that came meanwhile, so that they are written and sent more inputs first;
 * once the batch has `halted`, nothing more is walked. `walked` is told of each input walked.
 */
function localRunner(options: BatchOptions, caches: BatchCaches, scratch: (() => string) | undefined, index: number, receive: (message: RunResults) => void, fail: (e: unknown) => void, halted: () => boolean, walked: () => void): Runner {
  let count = 0;
  const walk = async (file: string): Promise<BatchResult> => {
    const result = await walkHeld(file, options, caches, scratch === undefined ? undefined : () => join(scratch(), `${index}-${count++}.jsonl`));
    walked();
    return result;
  };
  let queue = Promise.resolve();
  return {
    post(run) {
      queue = queue
        .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
        .then(() => walkRun(run, walk, receive, halted))
        .catch(fail);
    },
    end: () => Promise.resolve(),
  };
}

/**
 * Walks a run of inputs in order and hands their results to `deliver` together: in parts, each
 * as soon as their records pass {@link POSTED} characters together, `end` marking the run's last.
 * Stops, delivering nothing more, once `halted` says so.
 */
export async function walkRun(files: readonly string[], walk: (file: string) => Promise<BatchResult>, deliver: (message: RunResults) => void, halted: () => boolean = () => false): Promise<void> {
  let results: BatchResult[] = [];
  let length = 0;
  for (let k = 0; k < files.length; k++) {
    if (halted()) return;
    const result = await walk(files[k]!);
    results.push(result);
    length += result.ok ? (result.line?.length ?? 0) : 0;
    if (length > POSTED && k < files.length - 1) {
      deliver({ results, end: false });
      results = [];
      length = 0;
    }
  }
  if (!halted()) deliver({ results, end: true });
}

/** The most inputs a worker is sent at once. */
export const MAX_RUN = 8;

/**
 * How many of the `left` inputs a worker is sent at once: up to {@link MAX_RUN}, fewer as the
 * batch nears its end so that every worker still has some (two runs in flight each).
 */
export function runLength(left: number, workers: number): number {
  return Math.max(1, Math.min(MAX_RUN, Math.floor(left / (2 * workers))));
}

/** Writes a worker's record file to `io.out` in pieces, then removes it. */
function copyOut(path: string, io: Io): void {
  const fd = openSync(path, "r");
  try {
    const buffer = Buffer.alloc(1 << 16);
    const decoder = new TextDecoder();
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      io.out(decoder.decode(buffer.subarray(0, n), { stream: true }));
    }
    const rest = decoder.decode();
    if (rest !== "") io.out(rest);
  } finally {
    closeSync(fd);
    rmSync(path, { force: true });
  }
}

/** `--jobs`: a whole number ≥ 1; the core count when not given. */
export function jobsOption(value: string | undefined): number {
  if (value === undefined) return availableParallelism();
  if (!/^[1-9]\d*$/.test(value)) throw new UsageError(`--jobs takes a whole number ≥ 1, not "${value}"`);
  return Number(value);
}
