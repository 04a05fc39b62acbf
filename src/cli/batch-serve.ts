/**
 * What a worker thread of a `walk` batch (batch.ts) does: walks each input the main thread sends
 * and posts back its result. A JSON Lines record is written, as it is made, to a file of its own,
 * which the main thread copies out in input order: a record of a deep dump is never one string.
 * Started by batch-worker.ts (tsc's output and the sources), and in the bundled bin by
 * walk-worker.cjs, which takes it from commands.cjs instead of bundling the walker a second time.
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { parentPort, workerData } from "node:worker_threads";
import { SymbolFileCache } from "../node/symbol-store.js";
import { walkOne, type BatchOptions } from "./batch.js";

/** Serves the batch from this worker thread until the main thread ends it. */
export function serveBatch(): void {
  const options = workerData as BatchOptions;
  const dir = options.format === "jsonl" ? options.scratch : undefined;
  // Every input this worker walks shares the symbol files it has read.
  const symbols = new SymbolFileCache();
  let count = 0;
  parentPort!.on("message", (message: { file: string }) => {
    if (dir === undefined) {
      void walkOne(message.file, options, undefined, symbols).then((result) => parentPort!.postMessage(result));
      return;
    }
    const path = join(dir, `${options.worker ?? 0}-${count++}.jsonl`);
    const fd = openSync(path, "w");
    void walkOne(message.file, options, (text) => void writeSync(fd, text), symbols).then((result) => {
      closeSync(fd);
      if (!result.ok) rmSync(path, { force: true });
      parentPort!.postMessage(result.ok ? { ...result, lineFile: path } : { ...result, wrote: false });
    });
  });
}
