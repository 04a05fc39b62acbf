/**
 * Files written as they are made: a {@link ByteSink} over a file, and a minidump written to one
 * stream by stream, so that a dump of gigabytes is never held in memory.
 */
import { closeSync, openSync, writeSync } from "node:fs";
import { writeMinidump, type ByteSink, type MinidumpWriteOptions, type MinidumpWriteResult } from "../formats/minidump-write.js";
import type { Snapshot } from "../model/snapshot.js";

/**
 * A {@link ByteSink} writing to a file, buffered: small chunks are gathered into 1 MiB writes,
 * large ones go straight through. `close()` flushes and closes the file.
 */
export function fileSink(path: string): ByteSink & { close(): void } {
  const fd = openSync(path, "w");
  const buffer = new Uint8Array(1 << 20);
  let held = 0;
  const writeAll = (bytes: Uint8Array): void => {
    let done = 0;
    while (done < bytes.byteLength) done += writeSync(fd, bytes, done, bytes.byteLength - done);
  };
  const flush = (): void => {
    if (held > 0) writeAll(buffer.subarray(0, held));
    held = 0;
  };
  return {
    write(chunk: Uint8Array): void {
      if (held + chunk.byteLength > buffer.byteLength) flush();
      if (chunk.byteLength >= buffer.byteLength) writeAll(chunk);
      else {
        buffer.set(chunk, held);
        held += chunk.byteLength;
      }
    },
    close(): void {
      try {
        flush();
      } finally {
        closeSync(fd);
      }
    },
  };
}

/** Writes `snapshot` as a minidump to the file at `path` (see {@link writeMinidump}). */
export function writeMinidumpFile(path: string, snapshot: Snapshot, options: MinidumpWriteOptions = {}): MinidumpWriteResult {
  const sink = fileSink(path);
  try {
    return writeMinidump(snapshot, sink, options);
  } finally {
    sink.close();
  }
}
