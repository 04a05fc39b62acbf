/**
 * What a worker thread of a `walk` batch (batch.ts) does: walks each run of inputs the main thread
 * sends and posts back their results together, each record held as batch.ts `walkHeld` keeps it.
 * Started by batch-worker.ts (tsc's output and the sources), and in the bundled bin by
 * walk-worker.cjs, which takes it from commands.cjs instead of bundling the walker a second time.
 */
import { join } from "node:path";
import { OUTPUT_FORMATS } from "../render/output-formats.js";
import { batchCaches, walkHeld, walkRun, type BatchOptions, type BatchResult } from "./batch.js";

/** Serves the batch from this worker thread until the main thread ends it. */
export async function serveBatch(): Promise<void> {
  // Loaded here, not with the module: the walk command's file holds this loop but runs it only in a worker.
  const { parentPort, workerData } = await import("node:worker_threads");
  const options = workerData as BatchOptions;
  const dir = OUTPUT_FORMATS[options.format].records === true ? options.scratch : undefined;
  // Every input this worker walks shares the symbol files it has read, and what its walks made of them.
  const caches = batchCaches();
  let count = 0;
  const walk = (file: string): Promise<BatchResult> => walkHeld(file, options, caches, dir === undefined ? undefined : () => join(dir, `${options.worker ?? 0}-${count++}.jsonl`));
  // A run of inputs is walked in order, its results posted together (batch.ts walkRun).
  let queue = Promise.resolve();
  parentPort!.on("message", (message: { files: string[] }) => {
    queue = queue.then(() => walkRun(message.files, walk, (results) => parentPort!.postMessage(results)));
  });
}
