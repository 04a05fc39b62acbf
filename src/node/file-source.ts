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

/** Reads `into.length` bytes at `offset` of the file of `size` bytes open as `fd`; false when any is outside it or cannot be read. */
function readFully(fd: number, size: number, offset: number, into: Uint8Array): boolean {
  const length = into.length;
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > size || length > size - offset) return false;
  let done = 0;
  try {
    while (done < length) {
      const n = readSync(fd, into, done, length - done, offset + done);
      if (n <= 0) return false;
      done += n;
    }
  } catch {
    return false;
  }
  return true;
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
      if (fd === undefined || !Number.isSafeInteger(length) || length < 0) return undefined;
      const out = new Uint8Array(length);
      return readFully(fd, size, offset, out) ? out : undefined;
    },
    readInto(offset: number, into: Uint8Array): boolean {
      return fd !== undefined && readFully(fd, size, offset, into);
    },
    close(): void {
      if (fd !== undefined) {
        closeSync(fd);
        fd = undefined;
      }
    },
  };
}

/** Closes the handles of sources that were dropped without being closed. */
const dropped = new FinalizationRegistry<{ fd: number | undefined }>((held) => {
  if (held.fd !== undefined) closeSync(held.fd);
});

/**
 * A {@link ByteSource} over a file on disk whose handle is opened when it is read and may be
 * closed at any time: the next read opens it again. For files kept and read for a long time (the
 * symbol files of a batch), so that many of them do not hold a handle each. A read gives
 * `undefined` once the file is no longer the one first opened (its size, time or inode changed).
 */
export function reopeningFileSource(path: string): ByteSource & { close(): void } {
  const held: { fd: number | undefined } = { fd: undefined };
  let stamp: string | undefined;
  let size: number;
  const open = (): number | undefined => {
    try {
      const fd = openSync(path, "r");
      const st = fstatSync(fd);
      const now = `${st.size}:${st.mtimeMs}:${st.ino}`;
      if (stamp !== undefined && now !== stamp) {
        closeSync(fd);
        return undefined;
      }
      stamp = now;
      size = st.size;
      held.fd = fd;
      return fd;
    } catch (e) {
      if (stamp === undefined) throw new InputError("io", `cannot read: ${ioReason(e)}`, { file: path });
      return undefined;
    }
  };
  open();
  const source = {
    get size(): number {
      return size;
    },
    read(offset: number, length: number): Uint8Array | undefined {
      if (!Number.isSafeInteger(length) || length < 0 || length > size) return undefined;
      const out = new Uint8Array(length);
      return source.readInto(offset, out) ? out : undefined;
    },
    readInto(offset: number, into: Uint8Array): boolean {
      if (!Number.isSafeInteger(offset) || offset < 0 || offset > size || into.length > size - offset) return false;
      const fd = held.fd ?? open();
      return fd !== undefined && readFully(fd, size, offset, into);
    },
    close(): void {
      if (held.fd !== undefined) {
        closeSync(held.fd);
        held.fd = undefined;
      }
    },
  };
  dropped.register(source, held);
  return source;
}
