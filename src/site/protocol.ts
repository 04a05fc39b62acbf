/** The messages between the playground's page (src/site/app.ts) and its Web Worker (src/site/worker.ts). */
import type { CompareExample, OutputFormat, SessionSummary, WalkChoice } from "./session.js";

/** A file as the page hands it over: a `File` (a `Blob` with a name), read by the worker where the readers ask. */
export interface FileLike {
  readonly name: string;
  readonly size: number;
  slice(start: number, end: number): unknown;
}

/** What the page asks; `id` pairs each answer with its question. */
export type Request =
  | { id: number; type: "open"; files: FileLike[] }
  | { id: number; type: "view"; choice: WalkChoice }
  | { id: number; type: "output"; format: OutputFormat; choice: WalkChoice }
  | { id: number; type: "compare"; example: CompareExample; files: [string, string][] };

/**
 * What the worker answers: progress while it works, then one result or an error in words. Each
 * result says how many bytes of the dropped files the worker has read so far (`read`).
 */
export type Reply =
  | { id: number; type: "progress"; phase: string; done?: number; total?: number }
  | { id: number; type: "opened"; summary: SessionSummary; read: number }
  | { id: number; type: "view"; html: string; threads: number; frames: number; read: number }
  | { id: number; type: "text"; text: string; read: number }
  | { id: number; type: "error"; message: string };
