/**
 * What Breakpad's `minidump_stackwalk` prints for a minidump, gathered (minidump.md §4–§6): OS and
 * CPU from SystemInfo, the crash reason and address from the Exception stream, the process uptime
 * from MiscInfo, and one walk per thread in dump order with Breakpad's dump-writer thread skipped.
 * The frames are Breakpad's walk (`--walker breakpad`: its strategies, checks and rules for
 * ending a walk, per CPU) unless the options name another walker; render/breakpad.ts prints the
 * report, human (§6.1) and machine-readable `-m` (§6.2).
 */
import { InputError } from "../errors.js";
import { BREAKPAD_ARM_CONTEXT_SIZE, MINIDUMP_STREAM, type Minidump, type MinidumpAssertion, type MinidumpThread } from "../formats/minidump.js";
import { hexPadded } from "../hex.js";
import { machineInfo, type Machine, type MachineNames } from "../model/machine.js";
import { hasSymbols as hasModuleSymbols, moduleAt, type Module, type Snapshot, type ThreadSnapshot } from "../model/snapshot.js";
import { UnwindCache } from "../unwind/cache.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import type { Walk } from "../walk/frame.js";
import { frameBudgetOf, walkThread, workBudgetOf, type WalkOptions } from "../walk/walk.js";
import { crashReason } from "./breakpad-crash.js";
import { dumpSystemInfo } from "./system-info.js";

/** Breakpad's name of a CPU its processor walks, as `minidump_stackwalk` prints it. */
export type BreakpadCpu = NonNullable<MachineNames["breakpadCpu"]>;

/** Why Breakpad's processor cannot walk a dump of `machine` read from `file`, or undefined when it can. */
export function breakpadRefusal(machine: Machine, file: string): string | undefined {
  const info = machineInfo(machine);
  if (info.names.breakpadCpu !== null) return undefined;
  const name = info.names.prose;
  return `Breakpad's processor has no ${name} stack walker; ${file} is an ${name} dump`;
}

/** One walked thread, numbered as Breakpad numbers it. */
export interface BreakpadThread {
  /** Position among the threads Breakpad processes (dump order, the dump-writer thread skipped). */
  index: number;
  thread: ThreadSnapshot;
  walk: Walk;
}

/** What `minidump_stackwalk` prints, gathered from a dump and its walks. */
export interface BreakpadReport {
  os: string;
  osVersion: string;
  /** `x86`, `amd64`, …, or the ProcessorArchitecture as `0x%04x`. */
  cpu: string;
  cpuInfo: string;
  cpuCount: number;
  /** The dump has an Exception stream. */
  crashed: boolean;
  crashReason: string;
  crashAddress: bigint;
  /** ExceptionInformation[0 .. min(NumberParameters, 15)). */
  crashParameters: bigint[];
  /** Breakpad's assertion text from its assertion stream (0x47670002), when the dump has one. */
  assertion?: string;
  /** Seconds from process creation to the dump, when MiscInfo gives it (minidump.md §2.7). */
  uptime?: number;
  /** The requesting (crashed) thread's {@link BreakpadThread.index}, or -1. */
  requestingThread: number;
  /** The walked threads in index order. */
  threads: BreakpadThread[];
  /** The module list in dump order; the first is the main module (minidump.md §2.3). */
  modules: readonly Module[];
  /** The dump has a ModuleList stream: without one Breakpad prints no module section at all. */
  moduleList: boolean;
  /** Modules some frame lies in whose symbols could not be loaded; only when a symbol path was given. */
  modulesWithoutSymbols: Set<Module>;
}

/** Options of {@link breakpadReport}. */
export interface BreakpadOptions {
  walk?: WalkOptions;
  /** One thread by id, or all (default). */
  thread?: number | "all";
  /** A symbol path was given (`--symbols`): modules on a stack without symbols get a warning. */
  symbolPathGiven?: boolean;
  /**
   * `false`: each thread is walked when its `walk` is read, and the walk is not kept, so that a
   * report written as it is made holds one thread's frames at a time (a reader must then read a
   * thread's `walk` once; `modulesWithoutSymbols` fills as the threads are walked). Default `true`:
   * every thread is walked now and kept.
   */
  keepWalks?: boolean;
}

const hex8 = (n: number): string => hexPadded(n >>> 0, 8);

/** Whether symbols were loaded for a module (a symbol file gave it records or names). */
function hasSymbols(m: Module): boolean {
  return m.unwind !== undefined || hasModuleSymbols(m);
}

/**
 * Gathers a Breakpad report: walks every thread except Breakpad's dump-writer thread (in dump
 * order; the requesting thread is the crashed one, else BreakpadInfo's), with the same walk
 * options as `walk`, each through its own stack memory only (ThreadSnapshot.stackRanges), as
 * Breakpad's processor walks it. The snapshot must come from `dump` (minidumpSnapshot) with symbols attached.
 */
export function breakpadReport(dump: Minidump, snapshot: Snapshot, options: BreakpadOptions = {}): BreakpadReport {
  const { os, osVersion, cpu, cpuInfo, cpuCount } = dumpSystemInfo(dump);
  const crash = crashReason(dump);
  const misc = dump.miscInfo;
  const created = misc !== undefined && (misc.flags1 & 0x2) !== 0 ? misc.processCreateTime >>> 0 : 0;
  const stamp = dump.header.timeDateStamp >>> 0;
  const report: BreakpadReport = {
    os,
    osVersion,
    cpu,
    cpuInfo,
    cpuCount,
    crashed: crash !== undefined,
    crashReason: crash?.reason ?? "",
    crashAddress: crash?.address ?? 0n,
    crashParameters: dump.exception?.parameters ?? [],
    requestingThread: -1,
    threads: [],
    modules: snapshot.modules,
    moduleList: dump.streams.some((e) => e.streamType === MINIDUMP_STREAM.ModuleList),
    modulesWithoutSymbols: new Set(),
  };
  if (stamp !== 0 && created !== 0 && stamp >= created) report.uptime = stamp - created;
  if (dump.assertion !== undefined) report.assertion = assertionText(dump.assertion);

  const info = dump.breakpadInfo;
  const requestingId = dump.exception !== undefined ? dump.exception.threadId : info?.requestingThreadId;
  const choice = options.thread ?? "all";
  if (choice !== "all" && !dump.threads.some((t) => t.id === choice)) {
    throw new InputError("bad-value", `no thread with id ${choice} (threads: ${dump.threads.map((t) => t.id).join(", ")})`);
  }
  if (choice !== "all" && info?.dumpThreadId === choice) {
    throw new InputError("bad-value", `thread ${choice} is Breakpad's dump-writer thread (BreakpadInfo DumpThreadId), which Breakpad does not walk`);
  }
  const unused = [...snapshot.threads];
  // The threads of one dump share what their walks learn.
  // Breakpad's own walker unless another is named.
  const walkOptions: WalkOptions = { walker: "breakpad", ...options.walk, cache: options.walk?.cache ?? new UnwindCache(), frameBudget: frameBudgetOf(options.walk ?? {}), workBudget: workBudgetOf(options.walk ?? {}) };
  if (walkOptions.walker === undefined) walkOptions.walker = "breakpad";
  const keep = options.keepWalks !== false;
  const walked = (walk: Walk): Walk => {
    if (options.symbolPathGiven === true) {
      for (const f of walk.frames) {
        const m = moduleAt(snapshot.modules, lookupAddress(f.addrPC, f.index > 0, snapshot.machine));
        if (m !== undefined && !hasSymbols(m)) report.modulesWithoutSymbols.add(m);
      }
    }
    return walk;
  };
  let index = 0;
  for (const t of dump.threads) {
    if (info?.dumpThreadId !== undefined && t.id === info.dumpThreadId) continue;
    const at = unused.findIndex((s) => s.id === t.id);
    const thread = at < 0 ? undefined : unused.splice(at, 1)[0]!;
    const i = index++;
    if (requestingId !== undefined && t.id === requestingId && report.requestingThread < 0) report.requestingThread = i;
    if (choice !== "all" && t.id !== choice) continue;
    if (thread === undefined || !breakpadReadsContext(t)) {
      // A thread without a usable context: Breakpad lists it with no frames.
      const walk: Walk = { frames: [], stop: { reason: "unsupported", detail: "the thread has no usable context" } };
      report.threads.push({ index: i, thread: { id: t.id, crashed: false, registers: {} }, walk });
      continue;
    }
    // The walk reads the stack through the thread's own stack region (ThreadSnapshot.stackRanges),
    // the only memory Breakpad's walker sees (minidump.md §4).
    if (keep) report.threads.push({ index: i, thread, walk: walked(walkThread(snapshot, thread, walkOptions)) });
    else report.threads.push({ index: i, thread, get walk() { return walked(walkThread(snapshot, thread, walkOptions)); } });
  }
  return report;
}

/**
 * Whether Breakpad's processor reads a thread's context: not a Windows ARM CONTEXT (0x1A0 bytes,
 * CPU bit 0x00200000), which this project reads but Breakpad's knows only in its own 368-byte
 * form (minidump_cpu_arm.h), so it lists the thread with no frames.
 */
function breakpadReadsContext(t: MinidumpThread): boolean {
  const c = t.context;
  return c === undefined || c.machine !== "arm" || c.location.dataSize === BREAKPAD_ARM_CONTEXT_SIZE;
}

/**
 * Breakpad's assertion line (MinidumpProcessor::GetAssertion): the kind, then the expression,
 * ` in function F`, `, in file F` and ` at line N` for those present.
 */
export function assertionText(a: MinidumpAssertion): string {
  let text = a.type === 1 ? "Invalid parameter passed to library function" : a.type === 2 ? "Pure virtual function called" : `Unknown assertion type ${hex8(a.type)}`;
  if (a.expression !== "") text += ` ${a.expression}`;
  if (a.function !== "") text += ` in function ${a.function}`;
  if (a.file !== "") text += `, in file ${a.file}`;
  if (a.line !== 0) text += ` at line ${a.line >>> 0}`;
  return text;
}
