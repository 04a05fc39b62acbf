/**
 * What a worker thread of a `walk` batch (batch.ts) does: walks each run of inputs the main thread
 * sends and posts back their results together, each record held as batch.ts `walkHeld` keeps it.
 * Started by batch-worker.ts (tsc's output and the sources), and in the bundled bin by
 * walk-worker.cjs, which takes it from commands.cjs instead of bundling the walker a second time.
 */
import { join } from "node:path";
import { OUTPUT_FORMATS } from "../render/output-formats.js";
import { SymbolFileCache } from "../node/symbol-store.js";
import { POSTED, walkHeld, type BatchOptions, type BatchResult } from "./batch.js";

/** Serves the batch from this worker thread until the main thread ends it. */
export async function serveBatch(): Promise<void> {
  // Loaded here, not with the module: the walk command's file holds this loop but runs it only in a worker.
  const { parentPort, workerData } = await import("node:worker_threads");
  const options = workerData as BatchOptions;
  const dir = OUTPUT_FORMATS[options.format].records === true ? options.scratch : undefined;
  // Every input this worker walks shares the symbol files it has read.
  const symbols = new SymbolFileCache();
  let count = 0;
  const walk = (file: string): Promise<BatchResult> => walkHeld(file, options, symbols, dir === undefined ? undefined : () => join(dir, `${options.worker ?? 0}-${count++}.jsonl`));
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
