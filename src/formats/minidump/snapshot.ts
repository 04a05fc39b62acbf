/**
 * A parsed minidump as a {@link Snapshot} (minidump.md §2.5, §3.3, §4): its threads, the crashed
 * one first, its modules, and memory read lazily from the dump's source.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { AddressRange } from "../../memory/window-memory.js";
import type { Module, OperatingSystem, Snapshot, ThreadSnapshot } from "../../model/snapshot.js";
import { MACHINES, machineInfo } from "../../model/machine.js";
import { MINIDUMP_LIMITS, MINIDUMP_STREAM, streamTypeName } from "./constants.js";
import { MinidumpMemory, snapshotMemoryRanges } from "./memory.js";
import type { MinidumpThread } from "./thread-list.js";
import type { Minidump, MinidumpMemoryRange } from "./types.js";


/** The machines the walker models, in prose: "x86, x64, IA-64, ARM64, ARM". */
function modelledArchitectures(): string {
  return MACHINES.map((m) => machineInfo(m).names.prose).join(", ");
}

/**
 * Why a dump has no thread to walk, naming the field to blame: the directory that lacks a thread
 * list, or the list's Rva outside the file, its DataSize too small or cut, or its count of 0.
 * Undefined when the dump has threads.
 */
function noThreadError(dump: Minidump): InputError | undefined {
  if (dump.threads.length > 0) return undefined;
  const list = dump.streams.find((s) => s.streamType === MINIDUMP_STREAM.ThreadList || s.streamType === MINIDUMP_STREAM.ThreadExList);
  if (list === undefined) return new InputError("missing-field", "the dump has no ThreadList stream: there is no thread to walk", { offset: dump.header.directoryRva });
  const { rva, dataSize } = list.location;
  const size = dump.source.size;
  const offset = rva >= size ? list.offset + 8 : dataSize < 4 || rva + 4 > size ? list.offset + 4 : rva;
  return new InputError("truncated", `the ${streamTypeName(list.streamType)} stream holds no thread to walk`, { offset });
}

/**
 * A {@link Snapshot} of a parsed dump: every thread, the crashed one (the Exception stream's
 * thread) first with `crashed: true` and the exception's context when it was accepted
 * (minidump.md §2.5, §3.3); modules with their path, debug file and ids, version; memory read
 * lazily from the dump's source. A thread whose context was rejected, or whose machine differs
 * from the dump's, is left out with a note in `dump.notes`; when no thread is left, that is an
 * {@link InputError} naming the offset of the first thread's problem.
 */
export function minidumpSnapshot(dump: Minidump): Snapshot {
  const wrap = (e: InputError): InputError => (dump.file !== undefined && e.file === undefined ? e.inFile(dump.file) : e);
  const machine = dump.machine;
  if (machine === undefined) {
    const arch = dump.systemInfo?.processorArchitecture;
    const sys = dump.streams.find((s) => s.streamType === MINIDUMP_STREAM.SystemInfo);
    if (arch !== undefined && sys !== undefined) {
      throw wrap(new InputError("unsupported", `ProcessorArchitecture ${arch} is not a machine the walker models (${modelledArchitectures()})`, { offset: sys.location.rva }));
    }
    // Nothing names the machine: say why no thread context could.
    throw wrap(dump.threads.find((t) => t.contextError !== undefined)?.contextError ?? noThreadError(dump) ?? new InputError("unsupported", "no SystemInfo stream and no thread context name the machine", { offset: dump.threads[0] !== undefined ? dump.threads[0].offset + 40 : dump.header.directoryRva }));
  }
  const crashedId = dump.exception?.threadId;
  const crashedIndex = crashedId === undefined ? -1 : dump.threads.findIndex((t) => t.id === crashedId);
  const order = crashedIndex < 0 ? dump.threads : [dump.threads[crashedIndex]!, ...dump.threads.filter((_, i) => i !== crashedIndex)];
  // A thread whose context cannot be used is left out, with a note; a dump none of whose threads
  // can be walked is an error naming the first one's problem.
  const threads: ThreadSnapshot[] = [];
  let firstProblem: InputError | undefined;
  // Notes already made (a damaged thread list may repeat one problem for thousands of entries),
  // and the threads not walked past the notes kept for them.
  const noted = new Set(dump.notes);
  let threadNotes = 0;
  let leftOut = 0;
  order.forEach((t, i) => {
    const crashed = i === 0 && crashedIndex >= 0;
    const context = (crashed ? dump.exception?.context : undefined) ?? t.context;
    // Why the thread is not walked; an error is made for the first such thread only.
    let offset: number | undefined = t.offset + 40;
    let reason: string;
    if (context === undefined && t.contextError !== undefined) {
      firstProblem ??= t.contextError;
      offset = t.contextError.offset;
      reason = t.contextError.reason;
    } else if (context === undefined) {
      reason = `thread ${t.id} has no usable context`;
      firstProblem ??= new InputError("bad-value", reason, { offset });
    } else if (context.machine !== machine) {
      reason = `thread ${t.id} has an ${context.machine} context in an ${machine} dump`;
      firstProblem ??= new InputError("unsupported", reason, { offset });
    } else {
      threads.push({ id: t.id, crashed, registers: { ...context.registers }, stackRanges: threadStackRanges(dump, t) });
      return;
    }
    const note = `${offset === undefined ? "" : `offset ${hex(offset)}: `}thread ${t.id} is not walked: ${reason}`;
    if (noted.has(note)) return;
    if (threadNotes >= MINIDUMP_LIMITS.maxNotes) {
      leftOut++;
      return;
    }
    threadNotes++;
    noted.add(note);
    dump.notes.push(note);
  });
  const more = `${leftOut} more thread(s) are not walked: the notes of the first ${MINIDUMP_LIMITS.maxNotes} are kept`;
  if (leftOut > 0 && !noted.has(more)) dump.notes.push(more);
  if (threads.length === 0) throw wrap(firstProblem ?? noThreadError(dump)!);
  const modules: Module[] = dump.modules.map((m) => {
    const module: Module = { name: m.name, base: m.base, size: BigInt(m.size), symbols: [], path: m.path, codeId: m.codeId };
    if (m.debugFile !== undefined) module.debugFile = m.debugFile;
    if (m.debugId !== undefined) module.debugId = m.debugId;
    if (m.version !== undefined) module.version = m.version;
    return module;
  });
  let memory: MinidumpMemory;
  try {
    memory = new MinidumpMemory(dump.source, snapshotMemoryRanges(dump));
  } catch (e) {
    throw e instanceof InputError ? wrap(e) : e;
  }
  const snapshot: Snapshot = { machine, threads, memory, modules, description: dump.file ?? "minidump" };
  const os = dump.systemInfo === undefined ? undefined : operatingSystem(dump.systemInfo.platformId);
  if (os !== undefined) snapshot.os = os;
  return snapshot;
}

/** Breakpad's MD_OS_* platform ids (minidump.md §2.6) by the operating system they name. */
const PLATFORM_OS: Readonly<Record<number, OperatingSystem>> = {
  0: "windows", 1: "windows", 2: "windows", 3: "windows",
  0x8000: "unix", 0x8101: "macos", 0x8102: "ios", 0x8201: "linux", 0x8202: "solaris", 0x8203: "android",
  0x8204: "ps3", 0x8205: "nacl", 0x8206: "fuchsia",
};

/** The operating system a SystemInfo PlatformId names ("unknown" for any other id). */
export function operatingSystem(platformId: number): OperatingSystem {
  return PLATFORM_OS[platformId] ?? "unknown";
}

/**
 * The memory a walk of thread `t` may read (minidump.md §4): its Stack range (and IA-64
 * BackingStore), or, when the thread lists no stack bytes, the MemoryList range holding the
 * stack's start, as Breakpad falls back to it.
 */
function threadStackRanges(dump: Minidump, t: MinidumpThread): AddressRange[] {
  const out: AddressRange[] = [];
  const own = [t.stack, ...(t.backingStore === undefined ? [] : [t.backingStore])];
  for (const r of own) {
    if (r.size > 0n) {
      out.push({ start: r.start, end: r.start + r.size });
      continue;
    }
    const listed = listedRangeAt(dump, r.start);
    if (listed !== undefined) out.push({ start: listed.start, end: listed.start + listed.size });
  }
  return out;
}

/**
 * The range of the dump's memory list holding `address`, found by halving: the list is sorted
 * and disjoint (sortRanges), and a damaged dump can list many thousand threads and ranges.
 */
function listedRangeAt(dump: Minidump, address: bigint): MinidumpMemoryRange | undefined {
  const ranges = dump.memory;
  let lo = 0;
  let hi = ranges.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const m = ranges[mid]!;
    if (address < m.start) hi = mid - 1;
    else if (address - m.start >= m.size) lo = mid + 1;
    else return m;
  }
  return undefined;
}
