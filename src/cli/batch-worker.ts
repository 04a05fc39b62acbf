/** A worker thread of a `walk` batch (batch.ts): walks each input the main thread sends and posts back its result. */
import { parentPort, workerData } from "node:worker_threads";
import { walkOne, type BatchOptions } from "./batch.js";

const options = workerData as BatchOptions;
parentPort!.on("message", (message: { file: string }) => {
  void walkOne(message.file, options).then((result) => parentPort!.postMessage(result));
});
