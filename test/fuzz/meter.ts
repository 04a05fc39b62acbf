/**
 * The work a fuzz input makes, counted: what a slow path multiplies. A test that guards against a
 * slow path coming back runs the input with a meter and limits (test/fuzz/findings.test.ts);
 * a count past its limit stops the run at once with a {@link WorkLimitError}, so the slow path
 * shows as a failed test, not a long one, and the verdict does not depend on the machine's load.
 * Without a meter (the fuzz campaign) nothing is counted or wrapped.
 */
import type { ByteSource } from "../../src/formats/minidump.js";
import type { MemoryReader } from "../../src/memory/reader.js";
import { WindowMemory } from "../../src/memory/window-memory.js";
import type { Snapshot } from "../../src/model/snapshot.js";

/** The counts. */
export interface Work {
  /** Reads of the input file through its ByteSource (a minidump's directory, entries, strings, contexts). */
  sourceReads: number;
  /**
   * Reads of the snapshot's memory (a stack word, a code byte run, a byte of stack contents),
   * and reads through a window over it (a thread's stack), answered or refused.
   */
  memoryReads: number;
  /** Entries of the snapshot's module list looked at (a search for the module holding an address). */
  moduleReads: number;
  /** Frames the walks found. */
  frames: number;
  /** Characters the renderers wrote. */
  written: number;
}

/** A count went past its limit. */
export class WorkLimitError extends Error {
  constructor(kind: keyof Work, limit: number) {
    super(`work limit: more than ${limit} ${kind}`);
    this.name = "WorkLimitError";
  }
}

export class Meter {
  readonly work: Work = { sourceReads: 0, memoryReads: 0, moduleReads: 0, frames: 0, written: 0 };
  constructor(readonly limits: Partial<Work> = {}) {}

  add(kind: keyof Work, n = 1): void {
    const v = (this.work[kind] += n);
    const limit = this.limits[kind];
    if (limit !== undefined && v > limit) throw new WorkLimitError(kind, limit);
  }
}

let current: Meter | undefined;

/** The meter of the input being run, if any. */
export function activeMeter(): Meter | undefined {
  return current;
}

/** The read methods of a window over memory, which the code makes for itself (a thread's stack). */
const WINDOW_READS = ["read", "u32", "u32n", "u64n"] as const;

/** Runs `f` with `meter` counting (none: nothing counted). */
export async function withMeter<T>(meter: Meter | undefined, f: () => T | Promise<T>): Promise<T> {
  const before = current;
  current = meter;
  const proto = WindowMemory.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
  const originals = WINDOW_READS.map((name) => proto[name]!);
  if (meter !== undefined) {
    WINDOW_READS.forEach((name, i) => {
      const original = originals[i]!;
      proto[name] = function (this: unknown, ...args: unknown[]) {
        meter.add("memoryReads");
        return original.apply(this, args);
      };
    });
  }
  try {
    return await f();
  } finally {
    current = before;
    WINDOW_READS.forEach((name, i) => (proto[name] = originals[i]!));
  }
}

/** `source`, its reads counted when a meter is running. */
export function meteredSource(source: ByteSource): ByteSource {
  const meter = current;
  if (meter === undefined) return source;
  return {
    size: source.size,
    read(offset, length) {
      meter.add("sourceReads");
      return source.read(offset, length);
    },
  };
}

/** A reader over `memory` that counts every read, with the same fast paths as `memory`. */
function meteredMemory(memory: MemoryReader, meter: Meter): MemoryReader {
  const out: MemoryReader = {
    read(address, size) {
      meter.add("memoryReads");
      return memory.read(address, size);
    },
  };
  const { u32, u32n, u64n } = memory;
  if (u32 !== undefined) out.u32 = (address) => (meter.add("memoryReads"), u32.call(memory, address));
  if (u32n !== undefined) out.u32n = (address) => (meter.add("memoryReads"), u32n.call(memory, address));
  if (u64n !== undefined) out.u64n = (address, into) => (meter.add("memoryReads"), u64n.call(memory, address, into));
  return out;
}

/** `snapshot` with its memory reads and module-list entries counted when a meter is running. */
export function meteredSnapshot(snapshot: Snapshot): Snapshot {
  const meter = current;
  if (meter === undefined) return snapshot;
  const modules = new Proxy(snapshot.modules, {
    get(target, key, receiver) {
      if (typeof key === "string" && /^\d+$/.test(key)) meter.add("moduleReads");
      return Reflect.get(target, key, receiver);
    },
  });
  return { ...snapshot, memory: meteredMemory(snapshot.memory, meter), modules };
}

/** Counts `n` units of `kind` when a meter is running. */
export function count(kind: keyof Work, n = 1): void {
  current?.add(kind, n);
}
