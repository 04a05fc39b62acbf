/**
 * Where the minidump writer puts a dump, front to back: any {@link ByteSink} (a file, a stream),
 * or {@link bytesSink}, which collects it in memory.
 */

/**
 * Where a dump is written, front to back. `write` must use or copy `chunk` before it returns:
 * the writer hands out views of the snapshot's memory and of its own buffers.
 */
export interface ByteSink {
  write(chunk: Uint8Array): void;
}

/** A {@link ByteSink} that keeps everything in memory (small dumps, tests). */
export interface BytesSink extends ByteSink {
  /** Bytes written so far. */
  readonly size: number;
  /** Everything written, as one array. */
  bytes(): Uint8Array;
}

/** A sink collecting the dump in memory. */
export function bytesSink(): BytesSink {
  const chunks: Uint8Array[] = [];
  let size = 0;
  return {
    get size() {
      return size;
    },
    write(chunk: Uint8Array): void {
      chunks.push(chunk.slice());
      size += chunk.byteLength;
    },
    bytes(): Uint8Array {
      const out = new Uint8Array(size);
      let at = 0;
      for (const c of chunks) {
        out.set(c, at);
        at += c.byteLength;
      }
      return out;
    },
  };
}
