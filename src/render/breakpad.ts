/**
 * Breakpad's `minidump_stackwalk` output for a minidump, human (§6.1) and machine-readable `-m`
 * (§6.2), from the project's own walk (minidump.md §4–§6). {@link breakpadReport} gathers what
 * Breakpad's processor would: OS and CPU from SystemInfo, the crash reason and address from the
 * Exception stream, the process uptime from MiscInfo, and one walk per thread in dump order with
 * Breakpad's dump-writer thread skipped; {@link renderBreakpad} and
 * {@link renderBreakpadMachineReadable} print it.
 *
 * The frames are the project's `auto` walk, not Breakpad's walker; where the two find the same
 * frames the output is Breakpad's byte for byte. Trust levels map to Breakpad's "Found by:" texts
 * (§5.4) with {@link breakpadTrust}.
 */
import type { Minidump, MinidumpAssertion } from "../formats/minidump.js";
import { InputError } from "../errors.js";
import { moduleAt, type Module, type Snapshot, type ThreadSnapshot } from "../model/snapshot.js";
import type { Frame, Walk } from "../walk/frame.js";
import { lookupAddress } from "../walk/lookup-address.js";
import { walkThread, type WalkOptions } from "../walk/walk.js";
import { crashReason } from "./breakpad-crash.js";
import { chunked, collect } from "./chunks.js";
import { locate, type Location } from "./location.js";

export { crashReason, WINDOWS_EXCEPTION_NAMES } from "./breakpad-crash.js";

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
}

// Breakpad's MD_OS_* platform ids and their names (minidump_processor.cc GetOSInfo).
const OS_NAMES: Readonly<Record<number, string>> = {
  1: "Windows",
  2: "Windows NT",
  0x8101: "Mac OS X",
  0x8102: "iOS",
  0x8201: "Linux",
  0x8202: "Solaris",
  0x8203: "Android",
  0x8204: "PS3",
  0x8205: "NaCl",
  0x8206: "Fuchsia",
};

// ProcessorArchitecture → Breakpad's CPU name (GetCPUInfo); others print as 0x%04x.
const CPU_NAMES: Readonly<Record<number, string>> = {
  0: "x86",
  9: "amd64",
  3: "ppc",
  0x8002: "ppc64",
  0x8001: "sparc",
  5: "arm",
  12: "arm64",
  0x8003: "arm64",
  1: "mips",
  0x8004: "mips64",
};

const hex8 = (n: number): string => `0x${(n >>> 0).toString(16).padStart(8, "0")}`;
const hex = (v: bigint): string => v.toString(16);

/** Breakpad's "Found by:" text for a frame (minidump.md §5.4), from its trust and its rule's kind. */
export function breakpadTrust(frame: Frame): string {
  switch (frame.trust) {
    case "context":
      return "given as instruction pointer in context";
    case "frame-pointer":
      return "previous frame's frame pointer";
    case "scan":
      // The leaf simulation; a STACK WIN (FrameData / FPO_DATA) rule whose result was repaired
      // by scanning (the call-site check) is Breakpad's CFI_SCAN; any other scan is plain scanning.
      if (frame.rule.kind === "leaf") return "simulating a return from leaf function";
      return frame.rule.kind === "site-check" ? "call frame info with scanning" : "stack scanning";
    default:
      // STACK CFI, and STACK WIN records (FrameData, FPO_DATA), are call frame info in Breakpad;
      // unwind tables are the nearest thing to its STACK CFI.
      return "call frame info";
  }
}

/** The x86 registers Breakpad prints, in order, with the CONTEXT names they come from. */
const X86_REGISTERS: readonly (readonly [string, string])[] = [
  ["eip", "eip"], ["esp", "esp"], ["ebp", "ebp"], ["ebx", "ebx"], ["esi", "esi"], ["edi", "edi"],
];
/** Printed for the context frame only (validity ALL). */
const X86_CONTEXT_ONLY: readonly (readonly [string, string])[] = [["eax", "eax"], ["ecx", "ecx"], ["edx", "edx"], ["efl", "eflags"]];
const AMD64_REGISTERS = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"];

/**
 * The registers Breakpad prints for a frame, in its order: `[printed name, value]`. The context
 * frame prints all of them; a caller frame the ones its rule recovered (`frame.registers`).
 * Every x86 caller frame of Breakpad's has EIP, ESP and EBP valid (its STACK WIN, CFI, EBP-chain
 * and scanning paths all set them, EBP carried over when the rule leaves it alone), so EBP is
 * printed from the carried-over registers when the rule did not recover it.
 */
export function breakpadRegisters(cpu: string, frame: Frame): [string, bigint][] {
  const regs = frame.registers;
  const out: [string, bigint][] = [];
  if (cpu === "x86") {
    const ebp = regs["ebp"] ?? (frame.trust === "context" ? undefined : frame.unwindRegisters?.["ebp"]);
    for (const [name, key] of X86_REGISTERS) {
      const value = key === "ebp" ? ebp : regs[key];
      if (value !== undefined) out.push([name, value]);
    }
    if (frame.trust === "context") for (const [name, key] of X86_CONTEXT_ONLY) out.push([name, regs[key] ?? 0n]);
  } else if (cpu === "amd64") {
    for (const name of AMD64_REGISTERS) if (regs[name] !== undefined) out.push([name, regs[name]]);
  }
  return out;
}

/** Breakpad's `kMaxWidth`: a register that would pass this column starts a new line. */
const MAX_WIDTH = 80;

/**
 * The register block of a frame as Breakpad prints it (PrintRegister): ` %5s = 0x%08x` per
 * register (`%016x` when `digits` is 16), a new line starting with one space whenever the next
 * register would take the running width past 80 columns. The caller has already printed the
 * first line's leading space.
 */
export function formatRegisterLines(registers: readonly (readonly [string, bigint])[], digits: 8 | 16): string {
  let out = "";
  let column = 0;
  for (const [name, value] of registers) {
    const text = ` ${name.padStart(5)} = 0x${hex(value).padStart(digits, "0")}`;
    if (column + text.length > MAX_WIDTH) {
      column = 0;
      out += "\n ";
    }
    out += text;
    column += text.length;
  }
  return out;
}

/** PathnameStripper::File: the part after the last `/` or `\`. */
function fileName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
}

/** StripSeparator: `|` and newlines removed. */
function strip(text: string): string {
  return text.replace(/[|\n]/g, "");
}

const codeFile = (m: Module): string => fileName(m.path ?? m.name);

/** Whether symbols were loaded for a module (a symbol file gave it records or names). */
function hasSymbols(m: Module): boolean {
  return m.unwind !== undefined || m.symbols.length > 0;
}

/**
 * Gathers a Breakpad report: walks every thread except Breakpad's dump-writer thread (in dump
 * order; the requesting thread is the crashed one, else BreakpadInfo's), with the same walk
 * options as `walk`, each through its own stack memory only (ThreadSnapshot.stackRanges), as
 * Breakpad's processor walks it. The snapshot must come from `dump` (minidumpSnapshot) with symbols attached.
 */
export function breakpadReport(dump: Minidump, snapshot: Snapshot, options: BreakpadOptions = {}): BreakpadReport {
  const sys = dump.systemInfo;
  const os = sys === undefined ? "" : OS_NAMES[sys.platformId] ?? hex8(sys.platformId);
  const osVersion = sys === undefined ? "" : `${sys.majorVersion >>> 0}.${sys.minorVersion >>> 0}.${sys.buildNumber >>> 0}${sys.csdVersion !== undefined ? ` ${sys.csdVersion}` : ""}`;
  let cpu = "";
  let cpuInfo = "";
  if (sys !== undefined) {
    const arch = sys.processorArchitecture;
    cpu = CPU_NAMES[arch] ?? `0x${arch.toString(16).padStart(4, "0")}`;
    if (arch === 0 || arch === 9) {
      const vendor = sys.cpu.kind === "x86" && arch === 0 ? `${sys.cpu.vendorId} ` : "";
      cpuInfo = `${vendor}family ${sys.processorLevel} model ${sys.processorRevision >> 8} stepping ${sys.processorRevision & 0xff}`;
    }
  }
  const crash = crashReason(dump);
  const misc = dump.miscInfo;
  const created = misc !== undefined && (misc.flags1 & 0x2) !== 0 ? misc.processCreateTime >>> 0 : 0;
  const stamp = dump.header.timeDateStamp >>> 0;
  const report: BreakpadReport = {
    os,
    osVersion,
    cpu,
    cpuInfo,
    cpuCount: sys?.numberOfProcessors ?? 0,
    crashed: crash !== undefined,
    crashReason: crash?.reason ?? "",
    crashAddress: crash?.address ?? 0n,
    crashParameters: dump.exception?.parameters ?? [],
    requestingThread: -1,
    threads: [],
    modules: snapshot.modules,
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
  let index = 0;
  for (const t of dump.threads) {
    if (info?.dumpThreadId !== undefined && t.id === info.dumpThreadId) continue;
    const at = unused.findIndex((s) => s.id === t.id);
    const thread = at < 0 ? undefined : unused.splice(at, 1)[0]!;
    const i = index++;
    if (requestingId !== undefined && t.id === requestingId && report.requestingThread < 0) report.requestingThread = i;
    if (choice !== "all" && t.id !== choice) continue;
    if (thread === undefined) {
      // A thread without a usable context: Breakpad lists it with no frames.
      const walk: Walk = { frames: [], stop: { reason: "unsupported", detail: "the thread has no usable context" } };
      report.threads.push({ index: i, thread: { id: t.id, crashed: false, registers: {} }, walk });
      continue;
    }
    // The walk reads the stack through the thread's own stack region (ThreadSnapshot.stackRanges),
    // the only memory Breakpad's walker sees (minidump.md §4).
    report.threads.push({ index: i, thread, walk: walkThread(snapshot, thread, options.walk ?? {}) });
  }
  if (options.symbolPathGiven === true) {
    for (const { walk } of report.threads) {
      for (const f of walk.frames) {
        const m = moduleAt(snapshot.modules, lookupAddress(f.addrPC, f.index > 0));
        if (m !== undefined && !hasSymbols(m)) report.modulesWithoutSymbols.add(m);
      }
    }
  }
  return report;
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

/** The human frame text after the index: `module!function [file : line + 0xoff]` and the shorter forms (§6.1). */
function frameText(loc: Location, pc: bigint): string {
  if (loc.module === undefined) return `0x${hex(pc)}`;
  const name = codeFile(loc.module);
  if (loc.function === undefined) return `${name} + 0x${hex(loc.moduleOffset!)}`;
  if (loc.line?.file !== undefined) return `${name}!${loc.function} [${fileName(loc.line.file)} : ${loc.line.line} + 0x${hex(loc.lineOffset!)}]`;
  return `${name}!${loc.function} + 0x${hex(loc.functionOffset!)}`;
}

/**
 * The location of each frame, worked out once per PC and kind of frame: the frames of a deep
 * recursion share a handful of return addresses.
 */
function locations(modules: readonly Module[]): (frame: Frame) => Location {
  const context = new Map<bigint, Location>();
  const callers = new Map<bigint, Location>();
  return (frame) => {
    const byPc = frame.index > 0 ? callers : context;
    let loc = byPc.get(frame.addrPC);
    if (loc === undefined) {
      loc = locate(modules, frame);
      byPc.set(frame.addrPC, loc);
    }
    return loc;
  };
}

/** The threads in print order: the requesting thread first, then the others by index. */
function printOrder(report: BreakpadReport): BreakpadThread[] {
  const first = report.threads.filter((t) => t.index === report.requestingThread);
  return [...first, ...report.threads.filter((t) => t.index !== report.requestingThread)];
}

/**
 * Modules sorted by base address (GetModuleAtSequence), each once: Breakpad drops a later entry
 * that repeats an earlier one's base, size, code file and code id (MinidumpModuleList::Read).
 */
function sortedModules(report: BreakpadReport): Module[] {
  const seen = new Set<string>();
  const once = report.modules.filter((m) => {
    const key = `${m.base}:${m.size}:${m.path ?? m.name}:${m.codeId ?? ""}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return once.sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
}

/** `minidump_stackwalk <dump> [symbol-path]` output (minidump.md §6.1). */
export function renderBreakpad(report: BreakpadReport): string {
  return collect((write) => writeBreakpad(report, write));
}

/** {@link renderBreakpad}'s text, handed to `write` piece by piece as it is made (a 100,000-frame report is never held whole). */
export function writeBreakpad(report: BreakpadReport, write: (text: string) => void): void {
  const out = chunked(write);
  out.push(`Operating system: ${report.os}\n`);
  out.push(`                  ${report.osVersion}\n`);
  out.push(`CPU: ${report.cpu}\n`);
  if (report.cpuInfo !== "") out.push(`     ${report.cpuInfo}\n`);
  out.push(`     ${report.cpuCount} CPU${report.cpuCount !== 1 ? "s" : ""}\n`);
  out.push("\n");
  out.push("GPU: UNKNOWN\n");
  out.push("\n");
  if (report.crashed) {
    out.push(`Crash reason:  ${report.crashReason}\n`);
    out.push(`Crash address: 0x${hex(report.crashAddress)}\n`);
    if (report.crashParameters.length > 0) {
      out.push("Crash parameters:\n");
      for (const p of report.crashParameters) out.push(`    value: 0x${hex(p).padStart(16, "0")}  description: \n`);
    }
  } else out.push("No crash\n");
  if (report.assertion !== undefined && report.assertion !== "") out.push(`Assertion: ${report.assertion}\n`);
  out.push(report.uptime !== undefined ? `Process uptime: ${report.uptime} seconds\n` : "Process uptime: not available\n");
  const digits = report.cpu === "amd64" || report.cpu === "arm64" ? 16 : 8;
  const locationOf = locations(report.modules);
  const texts = new Map<Location, string>();
  for (const t of printOrder(report)) {
    out.push("\n");
    const label = t.index !== report.requestingThread ? "" : report.crashed ? " (crashed)" : " (requested dump, did not crash)";
    out.push(`Thread ${t.index}${label}\n`);
    if (t.walk.frames.length === 0) out.push(" <no frames>\n");
    for (const f of t.walk.frames) {
      const loc = locationOf(f);
      let text = texts.get(loc);
      if (text === undefined) {
        text = frameText(loc, f.addrPC);
        texts.set(loc, text);
      }
      out.push(`${String(f.index).padStart(2)}  ${text}\n ${formatRegisterLines(breakpadRegisters(report.cpu, f), digits)}\n    Found by: ${breakpadTrust(f)}\n`);
    }
  }
  out.push("\n");
  out.push("Loaded modules:\n");
  const main = report.modules[0];
  for (const m of sortedModules(report)) {
    const end = m.base + m.size - 1n;
    const isMain = main !== undefined && main.base !== 0n && m.base === main.base ? "  (main)" : "";
    const warning = report.modulesWithoutSymbols.has(m) ? `  (WARNING: No symbols, ${fileName(m.debugFile ?? "")}, ${m.debugId ?? ""})` : "";
    out.push(`0x${hex(m.base).padStart(8, "0")} - 0x${hex(end).padStart(8, "0")}  ${codeFile(m)}  ${m.version ?? "???"}${isMain}${warning}\n`);
  }
  out.end();
}

/** `minidump_stackwalk -m` output (minidump.md §6.2). */
export function renderBreakpadMachineReadable(report: BreakpadReport): string {
  return collect((write) => writeBreakpadMachineReadable(report, write));
}

/** {@link renderBreakpadMachineReadable}'s text, handed to `write` piece by piece as it is made. */
export function writeBreakpadMachineReadable(report: BreakpadReport, write: (text: string) => void): void {
  const out = chunked(write);
  out.push(`OS|${strip(report.os)}|${strip(report.osVersion)}\n`);
  out.push(`CPU|${strip(report.cpu)}|${strip(report.cpuInfo)}|${report.cpuCount}\n`);
  out.push("GPU|||\n");
  // Without a crash, an assertion takes the place of "No crash".
  const noCrash = report.assertion !== undefined && report.assertion !== "" ? strip(report.assertion) : "No crash";
  out.push(`Crash|${report.crashed ? `${strip(report.crashReason)}|0x${hex(report.crashAddress)}|` : `${noCrash}||`}${report.requestingThread >= 0 ? report.requestingThread : ""}\n`);
  const main = report.modules[0];
  for (const m of sortedModules(report)) {
    const end = m.base + m.size - 1n;
    out.push(
      `Module|${strip(codeFile(m))}|${strip(m.version ?? "")}|${strip(fileName(m.debugFile ?? ""))}|${strip(m.debugId ?? "")}|0x${hex(m.base).padStart(8, "0")}|0x${hex(end).padStart(8, "0")}|${main !== undefined && m.base === main.base ? 1 : 0}\n`,
    );
  }
  out.push("\n");
  const locationOf = locations(report.modules);
  for (const t of printOrder(report)) {
    for (const f of t.walk.frames) {
      const loc = locationOf(f);
      let fields: string;
      if (loc.module === undefined) fields = `||||0x${hex(f.addrPC)}`;
      else if (loc.function === undefined) fields = `${strip(codeFile(loc.module))}||||0x${hex(loc.moduleOffset!)}`;
      else if (loc.line?.file !== undefined) fields = `${strip(codeFile(loc.module))}|${strip(loc.function)}|${strip(loc.line.file)}|${loc.line.line}|0x${hex(loc.lineOffset!)}`;
      else fields = `${strip(codeFile(loc.module))}|${strip(loc.function)}|||0x${hex(loc.functionOffset!)}`;
      out.push(`${t.index}|${f.index}|${fields}\n`);
    }
  }
  out.end();
}
