/**
 * The ThreadNames stream (type 24): MINIDUMP_THREAD_NAME_LIST, a u32 count of 12-byte
 * MINIDUMP_THREAD_NAME entries (ThreadId u32, then RvaOfThreadName, a 64-bit RVA of a
 * MINIDUMP_STRING). A name that cannot be read is passed over with a note; the others are kept.
 */
import { hex } from "../../hex.js";
import { MINIDUMP_STREAM } from "./constants.js";
import { listEntries, type MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/** sizeof(MINIDUMP_THREAD_NAME) on disk. */
const THREAD_NAME_SIZE = 12;

/** Thread names by thread id (the first name a thread is given wins). */
export type MinidumpThreadNames = ReadonlyMap<number, string>;

function readThreadNames(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): Map<number, string> {
  const names = new Map<number, string>();
  const { count, first } = listEntries(input, s, held, THREAD_NAME_SIZE);
  if (count === 0) return names;
  const c = input.cursor(first, count * THREAD_NAME_SIZE, "ThreadNames entries");
  for (let i = 0; i < count; i++) {
    const at = c.offset;
    const id = c.u32();
    const rva = c.u64();
    if (rva >= BigInt(input.size)) {
      input.note(at + 4, `thread name ${i} (thread ${id}): RVA ${hex(rva)} lies outside the file; the name is passed over`);
      continue;
    }
    const name = input.optionalString(Number(rva), at + 4, `thread name ${i} RvaOfThreadName`, `thread name ${i} (thread ${id})`);
    if (name !== undefined && !names.has(id)) names.set(id, name);
  }
  return names;
}

/** The ThreadNames stream's reader. */
export const threadNamesStream: MinidumpStream<Map<number, string>> = {
  type: MINIDUMP_STREAM.ThreadNames,
  read: (input, entry, held) => readThreadNames(input, entry, held),
  store(dump, names) {
    dump.threadNames = names;
  },
};
