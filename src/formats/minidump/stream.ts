/**
 * The shape every stream reader has (rust-minidump's `MinidumpStream`): the stream type number
 * it reads, how it reads itself from the part of the file the directory points at, and where
 * its value goes in the {@link Minidump}. read.ts keeps the registry, the list of readers in the
 * order they run.
 *
 * Damage is handled at two levels. A reader that can keep going repairs or passes over what is
 * wrong and says so with `input.note(offset, text)`, naming the file offset of the field at
 * fault (a count cut to the entries the file holds, a module without its name). Damage that
 * loses the whole stream is thrown as an {@link InputError} naming the offset; the container
 * turns it into the note "<stream> stream passed over: <reason>" and reads the other streams.
 */
import type { MinidumpInput } from "./input.js";
import type { Minidump, MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/** One stream the reader decodes. */
export interface MinidumpStream<T> {
  /** The MINIDUMP_STREAM type number (minidump.md §1.3). */
  readonly type: number;
  /**
   * A stream type this one gives way to when the directory has both (ThreadList gives way to
   * ThreadExList), with the note that says so once the other was read.
   */
  readonly givesWayTo?: { type: number; note: string };
  /**
   * Reads the stream. `entry` is its directory entry as declared, `held` the part of it the file
   * holds (the container has already noted what is cut off); `dump` holds what the streams read
   * before this one stored (SystemInfo comes first: CONTEXT layouts depend on it).
   */
  read(input: MinidumpInput, entry: MinidumpStreamEntry, held: MinidumpLocation, dump: Readonly<Minidump>): T;
  /** Puts what was read into the dump. */
  store(dump: Minidump, value: T): void;
}
