/**
 * The playground's Web Worker: it opens the files the page hands over and walks them (src/site/
 * session.ts), so that the page stays responsive while a large dump is read and walked. A file
 * is read where a reader asks, a slice at a time (`File.slice` and `FileReaderSync`, which a
 * worker may use), through a small cache of 64 KiB blocks: a minidump's memory is read when a
 * walk reads it, never the whole file. JSON inputs, symbol files and images are parsed whole,
 * read once. Nothing is sent anywhere: the worker answers the page and nothing else.
 */
import { InputError } from "../errors.js";
import type { ByteSource } from "../memory/byte-source.js";
import type { FileLike, Reply, Request } from "./protocol.js";
import { compareText, Session, type Progress, type SiteFile } from "./session.js";

/** What a worker has that this file uses (declared here: the project compiles without the DOM's and workers' libraries). */
declare const FileReaderSync: new () => { readAsArrayBuffer(blob: unknown): ArrayBuffer };
declare const self: { onmessage: ((event: { data: Request }) => void) | null; postMessage(reply: Reply): void };

/** The size of a cached block, and how many are kept. */
const BLOCK = 64 * 1024;
const BLOCKS = 64;

/** Bytes read from the files so far. */
let read = 0;

/** A file read by position through `FileReaderSync`, 64 KiB blocks at a time, the last {@link BLOCKS} kept. */
export function fileSource(file: FileLike): ByteSource {
  const reader = new FileReaderSync();
  const cache = new Map<number, Uint8Array>();
  const block = (n: number): Uint8Array => {
    let bytes = cache.get(n);
    if (bytes !== undefined) {
      // Most recently used last.
      cache.delete(n);
      cache.set(n, bytes);
      return bytes;
    }
    const start = n * BLOCK;
    bytes = new Uint8Array(reader.readAsArrayBuffer(file.slice(start, Math.min(file.size, start + BLOCK))));
    read += bytes.length;
    cache.set(n, bytes);
    if (cache.size > BLOCKS) cache.delete(cache.keys().next().value!);
    return bytes;
  };
  return {
    size: file.size,
    read(offset: number, length: number): Uint8Array | undefined {
      if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) return undefined;
      if (offset > file.size || length > file.size - offset) return undefined;
      // A large read (a whole symbol file or JSON input) is one slice, not blocks.
      if (length > BLOCK * 4) {
        read += length;
        return new Uint8Array(reader.readAsArrayBuffer(file.slice(offset, offset + length)));
      }
      const first = Math.floor(offset / BLOCK);
      const last = Math.floor((offset + Math.max(length, 1) - 1) / BLOCK);
      if (first === last) {
        const b = block(first);
        return b.subarray(offset - first * BLOCK, offset - first * BLOCK + length);
      }
      const out = new Uint8Array(length);
      for (let n = first; n <= last; n++) {
        const b = block(n);
        const from = Math.max(offset, n * BLOCK);
        const to = Math.min(offset + length, n * BLOCK + b.length);
        out.set(b.subarray(from - n * BLOCK, to - n * BLOCK), from - offset);
      }
      return out;
    },
  };
}

let session: Session | undefined;

/** An error in the words the command line would print (file, offset or JSON path, and why). */
function message(e: unknown): string {
  if (e instanceof InputError) return e.message;
  return `internal error: ${e instanceof Error ? e.message : String(e)}`;
}

async function handle(request: Request): Promise<Reply> {
  const { id } = request;
  // Progress at most every 50 ms of the worker's own time, so that messages do not outnumber work.
  let last = 0;
  const progress: Progress = (phase, done, total) => {
    const now = Date.now();
    if (now - last < 50 && done !== undefined) return;
    last = now;
    self.postMessage({ id, type: "progress", phase, ...(done !== undefined ? { done } : {}), ...(total !== undefined ? { total } : {}) });
  };
  switch (request.type) {
    case "open": {
      session = undefined;
      read = 0;
      const files: SiteFile[] = request.files.map((f) => ({ name: f.name, source: fileSource(f) }));
      session = Session.open(files, progress);
      return { id, type: "opened", summary: session.summary, read };
    }
    case "view": {
      if (session === undefined) throw new InputError("bad-value", "no input is open");
      return { id, type: "view", ...session.view(request.choice, progress), read };
    }
    case "output": {
      if (session === undefined) throw new InputError("bad-value", "no input is open");
      const text = await session.output(request.format, request.choice, progress);
      return { id, type: "text", text, read };
    }
    case "compare":
      return { id, type: "text", text: compareText(request.example, new Map(request.files)), read };
  }
}

// One request at a time, in order: each waits for the one before it.
let queue: Promise<void> = Promise.resolve();
self.onmessage = (event) => {
  const request = event.data;
  queue = queue.then(async () => {
    let reply: Reply;
    try {
      reply = await handle(request);
    } catch (e) {
      reply = { id: request.id, type: "error", message: message(e) };
    }
    self.postMessage(reply);
  });
};
