/** A worker thread of a `walk` batch (batch.ts): serves the batch (batch-serve.ts). */
import { serveBatch } from "./batch-serve.js";

void serveBatch();
