/**
 * Inputs from files: a stackwalk-vector/1 or stackwalk-sweep/1 JSON file, or a minidump read by
 * position, so that only the bytes a walk asks for are read from disk.
 */
import { InputError, readingFile } from "../errors.js";
import { parseJsonInput, type JsonInput } from "../formats/input.js";
import { minidumpSnapshot, readMinidump, type Minidump } from "../formats/minidump.js";
import type { Snapshot } from "../model/snapshot.js";
import { bytesSource, type ByteSource } from "../memory/byte-source.js";
import { fileSource } from "./file-source.js";
import { readInputFile } from "./symbol-store.js";

/** Dumps up to this size are read whole when opened; larger ones by position, as a walk asks. */
const WHOLE_DUMP_MAX = 4 << 20;

/** A minidump opened from a file: its memory is read from the file as a walk asks for it. */
export interface OpenedDump {
  dump: Minidump;
  snapshot: Snapshot;
  /** Releases the file; the snapshot's memory reads nothing after it. */
  close(): void;
}

/** A loaded input: a vector or sweep (JSON), or a minidump read lazily from its file. */
export type Input = JsonInput | ({ kind: "dump" } & OpenedDump);

/**
 * Opens a minidump file for positional reads: the headers, streams and module list are read now,
 * memory when a walk reads it (a dump of at most 4 MiB is read whole at once). Errors are
 * {@link InputError}s naming the file and byte offset.
 */
export function openDump(path: string): OpenedDump {
  return openedDump(path, fileSource(path));
}

/** {@link openDump} of the file already open as `file` (closed here should reading fail). */
function openedDump(path: string, file: ByteSource & { close(): void }): OpenedDump {
  let source: ByteSource & { close(): void } = file;
  if (file.size <= WHOLE_DUMP_MAX) {
    // A small dump is read at once: one read instead of one for each stream and memory range.
    const bytes = file.read(0, file.size);
    file.close();
    if (bytes === undefined) throw new InputError("io", "cannot read the file", { file: path });
    source = { ...bytesSource(bytes), close: () => undefined };
  }
  try {
    const dump = readMinidump(source, path);
    return { dump, snapshot: readingFile(path, () => minidumpSnapshot(dump)), close: () => source.close() };
  } catch (e) {
    source.close();
    throw e;
  }
}

/**
 * Loads an input file: a stackwalk-vector/1 or stackwalk-sweep/1 JSON file, or a minidump
 * (`MDMP`), which is read by position (see {@link openDump}).
 */
export function loadInput(file: string): Input {
  const head = fileSource(file);
  const magic = head.read(0, Math.min(4, head.size));
  // A minidump is read through the handle its first bytes were read from.
  if (magic !== undefined && magic.length === 4 && String.fromCharCode(...magic) === "MDMP") return { kind: "dump", ...openedDump(file, head) };
  head.close();
  const bytes = readInputFile(file);
  let first = 0;
  while (first < bytes.length && (bytes[first] === 0x20 || bytes[first] === 0x0a || bytes[first] === 0x0d || bytes[first] === 0x09)) first++;
  if (bytes[first] !== 0x7b) {
    throw new InputError("bad-magic", "not a stackwalk-vector/1 or stackwalk-sweep/1 JSON file, nor a minidump", { file, offset: first });
  }
  return parseJsonInput(new TextDecoder("utf-8").decode(bytes), file);
}
