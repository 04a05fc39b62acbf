/**
 * Bytes read by position, the way the file formats read a large input: a whole file in memory
 * ({@link bytesSource}) or a file handle read on demand (`fileSource` in src/node/file-source.ts).
 */

/**
 * Bytes read by position: a whole file in memory ({@link bytesSource}) or a file handle read on
 * demand (`fileSource` in src/node/file-source.ts). `read` returns exactly `length` bytes, or
 * `undefined` when any of them lies outside `[0, size)` or cannot be read. The returned bytes
 * may be a view into the source's own storage: callers must not modify them.
 */
export interface ByteSource {
  readonly size: number;
  read(offset: number, length: number): Uint8Array | undefined;
  /**
   * Copies the bytes at `offset` into `into` (all of them: false, and `into` unspecified, when any
   * lies outside the source or cannot be read). For a reader that goes through a large file a
   * chunk at a time into one buffer, where `read` would make a new array for each chunk.
   */
  readInto?(offset: number, into: Uint8Array): boolean;
}

/** A {@link ByteSource} over bytes already in memory (views, no copies). */
export function bytesSource(bytes: Uint8Array): ByteSource {
  return {
    size: bytes.byteLength,
    read(offset: number, length: number): Uint8Array | undefined {
      if (!Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) return undefined;
      if (offset > bytes.byteLength || length > bytes.byteLength - offset) return undefined;
      return bytes.subarray(offset, offset + length);
    },
    readInto(offset: number, into: Uint8Array): boolean {
      const view = this.read(offset, into.length);
      if (view !== undefined) into.set(view);
      return view !== undefined;
    },
  };
}
