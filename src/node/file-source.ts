/**
 * A {@link ByteSource} over a file on disk, read by position with `fs.readSync`: only the bytes
 * asked for are read, so a multi-gigabyte dump is never held in memory.
 */
import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import { InputError } from "../errors.js";
import type { ByteSource } from "../memory/byte-source.js";

/** Why a file operation failed, in words ("no such file", ...). */
export function ioReason(e: unknown): string {
  const code = (e as { code?: string }).code;
  return code === "ENOENT" ? "no such file" : code === "EISDIR" ? "is a directory" : code === "EACCES" ? "permission denied" : e instanceof Error ? e.message : String(e);
}

/** Opens `path` for positional reads; `close()` releases the handle. Reads after `close()` return `undefined`. */
export function fileSource(path: string): ByteSource & { close(): void } {
  let fd: number | undefined;
  let size: number;
  try {
    fd = openSync(path, "r");
    size = fstatSync(fd).size;
  } catch (e) {
    if (fd !== undefined) closeSync(fd);
    throw new InputError("io", `cannot read: ${ioReason(e)}`, { file: path });
  }
  return {
    size,
    read(offset: number, length: number): Uint8Array | undefined {
      if (fd === undefined || !Number.isSafeInteger(offset) || !Number.isSafeInteger(length) || offset < 0 || length < 0) return undefined;
      if (offset > size || length > size - offset) return undefined;
      const out = new Uint8Array(length);
      let done = 0;
      try {
        while (done < length) {
          const n = readSync(fd, out, done, length - done, offset + done);
          if (n <= 0) return undefined;
          done += n;
        }
      } catch {
        return undefined;
      }
      return out;
    },
    close(): void {
      if (fd !== undefined) {
        closeSync(fd);
        fd = undefined;
      }
    },
  };
}
