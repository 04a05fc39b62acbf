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
  };
}
