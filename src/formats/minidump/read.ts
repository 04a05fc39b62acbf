/**
 * The minidump container (minidump.md §1): the header, the stream directory and the registry of
 * stream readers, run over a {@link ByteSource}. Captured memory is not read here: the snapshot
 * reads it lazily (memory.ts). No Node APIs: it runs in a browser.
 *
 * Every stream the directory declares is checked against the file; a stream that is cut off is
 * read as far as the file holds it, with a note. A stream a reader cannot read at all is passed
 * over with a note, and so is a second stream of a type already read. Notes name the absolute
 * file offset of the field at fault (stream.ts). Only a dump whose header or directory cannot be
 * read is an {@link InputError}.
 */
import { InputError, readingFile } from "../../errors.js";
import { hex } from "../../hex.js";
import type { ByteSource } from "../../memory/byte-source.js";
import { breakpadInfoStream, assertionStream } from "./breakpad-info.js";
import { threadNamesStream } from "./thread-names.js";
import { unloadedModuleListStream } from "./unloaded-modules.js";
import { linuxCpuInfoStream, linuxLsbReleaseStream, linuxMapsStream } from "./linux-text.js";
import { handleDataStream } from "./handle-data.js";
import { memoryInfoListStream } from "./memory-info.js";
import { linuxLimitsStream, macBootArgsStream, macCrashInfoStream, softErrorsStream } from "./mozilla.js";
import { DIRECTORY_ENTRY_SIZE, HEADER_SIZE, MINIDUMP_SIGNATURE, MINIDUMP_STREAM, MINIDUMP_VERSION, streamTypeName } from "./constants.js";
import { exceptionStream } from "./exception.js";
import { functionTableStream } from "./function-table.js";
import { MinidumpInput } from "./input.js";
import { memory64ListStream, memoryListStream } from "./memory-list.js";
import { sortRanges } from "./memory.js";
import { miscInfoStream } from "./misc-info.js";
import { moduleListStream } from "./module-list.js";
import type { MinidumpStream } from "./stream.js";
import { systemInfoStream } from "./system-info.js";
import { threadExListStream, threadListStream } from "./thread-list.js";
import type { Minidump, MinidumpHeader, MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/**
 * The stream readers, in the order they run: SystemInfo first, since the CONTEXT layouts of the
 * thread and exception streams depend on it (minidump.md §3.3) and stream order varies between
 * writers. Any stream type not listed is skipped.
 */
export const MINIDUMP_STREAMS: readonly MinidumpStream<unknown>[] = [
  systemInfoStream,
  threadExListStream,
  threadListStream,
  moduleListStream,
  memoryListStream,
  memory64ListStream,
  exceptionStream,
  miscInfoStream,
  functionTableStream,
  breakpadInfoStream,
  assertionStream,
  threadNamesStream,
  unloadedModuleListStream,
  linuxCpuInfoStream,
  linuxLsbReleaseStream,
  linuxMapsStream,
  handleDataStream,
  memoryInfoListStream,
  macCrashInfoStream,
  macBootArgsStream,
  linuxLimitsStream,
  softErrorsStream,
];

const MINIDUMP_SIGNATURE_SWAPPED = 0x4d444d50;

function readHeader(input: MinidumpInput): MinidumpHeader {
  const c = input.cursor(0, Math.min(HEADER_SIZE, input.size), "MINIDUMP_HEADER");
  const signature = c.u32("MINIDUMP_HEADER.Signature");
  if (signature === MINIDUMP_SIGNATURE_SWAPPED) {
    throw new InputError("unsupported", `big-endian minidump (signature "PMDM"): only little-endian dumps are read`, { offset: 0 });
  }
  if (signature !== MINIDUMP_SIGNATURE) {
    throw new InputError("bad-magic", `not a minidump: signature is ${hex(signature)}, expected "MDMP" (${hex(MINIDUMP_SIGNATURE)})`, { offset: 0 });
  }
  const version = c.u32("MINIDUMP_HEADER.Version");
  if ((version & 0xffff) !== MINIDUMP_VERSION) {
    throw new InputError("bad-magic", `minidump version ${hex(version)}: the low 16 bits must be ${hex(MINIDUMP_VERSION)}`, { offset: 4 });
  }
  const streamCount = c.u32("MINIDUMP_HEADER.NumberOfStreams");
  const directoryRva = c.u32("MINIDUMP_HEADER.StreamDirectoryRva");
  const checksum = c.u32("MINIDUMP_HEADER.CheckSum");
  const timeDateStamp = c.u32("MINIDUMP_HEADER.TimeDateStamp");
  const flags = c.u64("MINIDUMP_HEADER.Flags");
  return { signature, version, streamCount, directoryRva, checksum, timeDateStamp, flags };
}

function readDirectory(input: MinidumpInput, header: MinidumpHeader): MinidumpStreamEntry[] {
  const { directoryRva, streamCount } = header;
  if (directoryRva > input.size) {
    throw new InputError("bad-value", `StreamDirectoryRva ${hex(directoryRva)} lies outside the file (${hex(input.size)} bytes)`, { offset: 12 });
  }
  let count = streamCount;
  if (streamCount * DIRECTORY_ENTRY_SIZE > input.size - directoryRva) {
    count = Math.floor((input.size - directoryRva) / DIRECTORY_ENTRY_SIZE);
    const why = `NumberOfStreams ${streamCount} needs ${streamCount * DIRECTORY_ENTRY_SIZE} bytes of directory at ${hex(directoryRva)}, but the file ends at ${hex(input.size)}`;
    if (count === 0) throw new InputError("bad-value", why, { offset: 8 });
    input.note(8, `${why}: the first ${count} entr${count === 1 ? "y is" : "ies are"} read`);
  }
  const c = input.cursor(directoryRva, count * DIRECTORY_ENTRY_SIZE, "stream directory");
  const out: MinidumpStreamEntry[] = [];
  for (let index = 0; index < count; index++) {
    const offset = c.offset;
    const streamType = c.u32();
    const dataSize = c.u32();
    const rva = c.u32();
    out.push({ index, streamType, location: { dataSize, rva }, offset });
  }
  return out;
}

/**
 * Parses a minidump: header, directory and the streams the registry reads (minidump.md §1–§3).
 * Captured memory is not read. Errors are {@link InputError}s naming `file` when it is given.
 */
export function readMinidump(source: ByteSource, file?: string): Minidump {
  return readingFile(file, () => parse(source, file));
}

function parse(source: ByteSource, file: string | undefined): Minidump {
  const input = new MinidumpInput(source);
  const header = readHeader(input);
  const streams = readDirectory(input, header);
  const dump: Minidump = { source, header, streams, threads: [], modules: [], memory: [], notes: input.notes };
  if (file !== undefined) dump.file = file;

  // Every stream the directory declares is checked against the file, read or not: a dump cut
  // short says so. The streams read keep what the file holds of them.
  const readers = new Map(MINIDUMP_STREAMS.map((r) => [r.type, r]));
  const found = new Map<number, { entry: MinidumpStreamEntry; held: MinidumpLocation }>();
  for (const s of streams) {
    if (s.streamType === MINIDUMP_STREAM.Unused) continue;
    const held = input.clip(s.location, s.offset + 4, `${streamTypeName(s.streamType)} stream`);
    if (!readers.has(s.streamType)) continue;
    const earlier = found.get(s.streamType);
    if (earlier !== undefined) {
      input.note(s.offset, `a second ${streamTypeName(s.streamType)} stream (directory entry ${s.index}) is passed over; the first (entry ${earlier.entry.index}) is read`);
      continue;
    }
    found.set(s.streamType, { entry: s, held });
  }

  const read = new Set<number>();
  for (const reader of MINIDUMP_STREAMS) {
    const stream = found.get(reader.type);
    if (stream === undefined) continue;
    const other = reader.givesWayTo;
    if (other !== undefined && found.has(other.type)) {
      if (read.has(other.type)) dump.notes.push(other.note);
      continue;
    }
    // A stream that cannot be read is noted and passed over.
    const name = `${streamTypeName(reader.type)} stream`;
    const value = input.lenient(name, () => reader.read(input, stream.entry, stream.held, dump));
    if (value === undefined) continue;
    reader.store(dump, value);
    read.add(reader.type);
  }
  dump.memory = sortRanges(dump.memory, (offset, text) => input.note(offset, text));

  // The contexts say what ran (a 32-bit process on a 64-bit system has x86 contexts); SystemInfo otherwise.
  const machine = dump.exception?.context?.machine ?? dump.threads.find((t) => t.context !== undefined)?.context?.machine ?? dump.systemInfo?.machine;
  if (machine !== undefined) dump.machine = machine;
  input.closeNotes();
  return dump;
}
