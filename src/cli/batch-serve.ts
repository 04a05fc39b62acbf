/**
 * What a worker thread of a `walk` batch (batch.ts) does: walks each input the main thread sends
 * and posts back its result. A JSON Lines record is posted with it, or, once it passes 4 Mi
 * characters, written as it is made to a file of its own, which the main thread copies out in
 * input order: a record of a deep dump is never one string.
 * Started by batch-worker.ts (tsc's output and the sources), and in the bundled bin by
 * walk-worker.cjs, which takes it from commands.cjs instead of bundling the walker a second time.
 */
import { closeSync, openSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import { OUTPUT_FORMATS } from "../render/output-formats.js";
import { SymbolFileCache } from "../node/symbol-store.js";
import { walkOne, type BatchOptions } from "./batch.js";

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
  parentPort!.on("message", (message: { file: string }) => {
    if (dir === undefined) {
      void walkOne(message.file, options, undefined, symbols).then((result) => parentPort!.postMessage(result));
      return;
    }
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
    void walkOne(message.file, options, write, symbols).then((result) => {
      if (fd !== undefined) closeSync(fd);
      if (!result.ok) {
        if (fd !== undefined) rmSync(path, { force: true });
        parentPort!.postMessage({ ...result, wrote: false });
      } else parentPort!.postMessage(fd !== undefined ? { ...result, lineFile: path } : { ...result, line: held.join("") });
    });
  });
}
