/**
 * What a worker thread of a `walk` batch (batch.ts) does: walks each run of inputs the main thread
 * sends and posts back their results together. A JSON Lines record is posted with its result, or,
 * once it passes 4 Mi characters, written as it is made to a file of its own, which the main
 * thread copies out in input order: a record of a deep dump is never one string.
 * Started by batch-worker.ts (tsc's output and the sources), and in the bundled bin by
 * walk-worker.cjs, which takes it from commands.cjs instead of bundling the walker a second time.
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { OUTPUT_FORMATS } from "../render/output-formats.js";
import { SymbolFileCache } from "../node/symbol-store.js";
import { walkOne, type BatchOptions, type BatchResult } from "./batch.js";

/** A record up to this many characters is posted to the main thread; a longer one goes through a file. */
const POSTED = 1 << 22;

/** Serves the batch from this worker thread until the main thread ends it. */
export async function serveBatch(): Promise<void> {
  // Loaded here, not with the module: the walk command's file holds this loop but runs it only in a worker.
  const { parentPort, workerData } = await import("node:worker_threads");
  const options = workerData as BatchOptions;
  const dir = OUTPUT_FORMATS[options.format].records === true ? options.scratch : undefined;
  // Every input this worker walks shares the symbol files it has read.
  const symbols = new SymbolFileCache();
  let count = 0;
  /** Walks one input: its result, its record posted with it or in a file of its own. */
  const walk = async (file: string): Promise<BatchResult> => {
    if (dir === undefined) return walkOne(file, options, undefined, symbols);
    // The record is kept as it is made, and moved to a file of its own once it is long.
    let held: string[] = [];
    let length = 0;
    let fd: number | undefined;
    const path = join(dir, `${options.worker ?? 0}-${count++}.jsonl`);
    const write = (text: string): void => {
      if (fd !== undefined) {
        writeSync(fd, text);
        return;
      }
      held.push(text);
      length += text.length;
      if (length <= POSTED) return;
      fd = openSync(path, "w");
      for (const t of held) writeSync(fd, t);
      held = [];
    };
    const result = await walkOne(file, options, write, symbols);
    if (fd !== undefined) closeSync(fd);
    if (!result.ok) {
      if (fd !== undefined) rmSync(path, { force: true });
      return { ...result, wrote: false };
    }
    return fd !== undefined ? { ...result, lineFile: path } : { ...result, line: held.join("") };
  };
  // A run of inputs is walked in order and its results posted together, in one message (in more
  // than one when their records pass 4 Mi characters together); `end` marks a run's last.
  let queue = Promise.resolve();
  parentPort!.on("message", (message: { files: string[] }) => {
    queue = queue.then(async () => {
      let results: BatchResult[] = [];
      let length = 0;
      for (let k = 0; k < message.files.length; k++) {
        const result = await walk(message.files[k]!);
        results.push(result);
        length += result.ok ? (result.line?.length ?? 0) : 0;
        if (length > POSTED && k < message.files.length - 1) {
          parentPort!.postMessage({ results, end: false });
          results = [];
          length = 0;
        }
      }
      parentPort!.postMessage({ results, end: true });
    });
  });
}
