/**
 * Breakpad's `minidump_stackwalk` output for a minidump, human (§6.1) and machine-readable `-m`
 * (§6.2), from a report gathered by src/analysis/breakpad-report.ts (minidump.md §4–§6). Where the
 * project's walk finds Breakpad's frames the output is Breakpad's byte for byte. Trust levels and
 * rules map to Breakpad's "Found by:" texts (§5.4) with {@link breakpadTrust}.
 */
import type { BreakpadCpu, BreakpadReport, BreakpadThread } from "../analysis/breakpad-report.js";
import { locateAddress, sourceOf, type Location } from "../analysis/location.js";
import type { InlineFrame } from "../model/inline.js";
import type { Module } from "../model/snapshot.js";
import { breakpadPacMask, breakpadStripPac } from "../arch/arm64/index.js";
import type { Frame } from "../walk/frame.js";
import { hex, hexPadded } from "../hex.js";
import { chunked, collect } from "./chunks.js";
import { fileNameOf } from "../path-name.js";

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
/** ARM64 as Breakpad prints it (arm64.md Part 5): x0-x28, fp, lr, sp, pc. */
const ARM64_REGISTERS = [...Array.from({ length: 29 }, (_, i) => `x${i}`), "fp", "lr", "sp", "pc"];
/** ARM as Breakpad prints it (stackwalk_common.cc): r0-r10, r12, then fp (r11), sp, lr, pc. */
const ARM_REGISTERS: readonly (readonly [string, string])[] = [
  ...Array.from({ length: 11 }, (_, i): [string, string] => [`r${i}`, `r${i}`]),
  ["r12", "r12"],
  ["fp", "r11"],
  ["sp", "sp"],
  ["lr", "lr"],
  ["pc", "pc"],
];
const AMD64_REGISTERS = ["rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip"];

/**
 * The registers Breakpad prints for a frame, in its order: `[printed name, value]`. The context
 * frame prints all of them; a caller frame the ones its rule recovered (`frame.registers`).
 * Every x86 caller frame of Breakpad's has EIP, ESP and EBP valid (its STACK WIN, CFI, EBP-chain
 * and scanning paths all set them, EBP carried over when the rule leaves it alone), so EBP is
 * printed from the carried-over registers when the rule did not recover it.
 */
export function breakpadRegisters(cpu: string, frame: Frame, modules: readonly Module[] = []): [string, bigint][] {
  return registerPrinter(cpu, modules)(frame);
}

/** {@link breakpadRegisters} for the frames of one report: what depends on the module list alone (ARM64's PtrauthStrip mask) is worked out once. */
function registerPrinter(cpu: string, modules: readonly Module[]): (frame: Frame) => [string, bigint][] {
  const facts = breakpadCpu(cpu);
  if (facts === undefined) return () => [];
  let mask: bigint | undefined;
  const strip = (p: bigint): bigint => breakpadStripPac(modules, (mask ??= breakpadPacMask(modules)), p);
  return (frame) => facts.registers(frame, strip);
}

/** What Breakpad's printing knows of a CPU it walks. */
export interface BreakpadCpuFacts {
  /** The registers it prints for a frame, in its order; `strip` is Breakpad's PtrauthStrip of the report's modules. */
  registers: (frame: Frame, strip: (p: bigint) => bigint) => [string, bigint][];
  /** The register block's name of the stack pointer. */
  stackPointer: string;
  /** The word size in bytes: addresses print with twice as many digits. */
  wordSize: 4 | 8;
  /**
   * How far before a caller frame's return address Breakpad puts the frame's instruction, which
   * it prints and looks symbols up at (its `ReturnAddress()`): 0 where it prints the return
   * address itself and looks up at return address − 1 (x86, amd64), 4 on ARM64, where the
   * instruction is the call (`pc − 4`, stackwalker_arm64.cc), 2 on ARM (`pc − 2`, stackwalker_arm.cc).
   */
  callerBack: 0 | 2 | 4;
}

/** The facts of Breakpad's CPU named `cpu` (the report's {@link BreakpadReport.cpu}), or undefined for a CPU it has no walker for. */
export function breakpadCpu(cpu: string): BreakpadCpuFacts | undefined {
  return Object.hasOwn(BREAKPAD_CPUS, cpu) ? BREAKPAD_CPUS[cpu as BreakpadCpu] : undefined;
}

/** The registers Breakpad prints, its stack pointer and its word size, by its CPU name. */
const BREAKPAD_CPUS: Readonly<Record<BreakpadCpu, BreakpadCpuFacts>> = {
  x86: { registers: x86Registers, stackPointer: "esp", wordSize: 4, callerBack: 0 },
  amd64: { registers: (frame) => present(frame, AMD64_REGISTERS), stackPointer: "rsp", wordSize: 8, callerBack: 0 },
  arm64: { registers: arm64Registers, stackPointer: "sp", wordSize: 8, callerBack: 4 },
  arm: { registers: armRegisters, stackPointer: "sp", wordSize: 4, callerBack: 2 },
};

/** x86: the frame's registers, EBP carried over; the context frame adds the ones only it has. */
function x86Registers(frame: Frame): [string, bigint][] {
  const regs = frame.registers;
  const out: [string, bigint][] = [];
  const ebp = regs["ebp"] ?? (frame.trust === "context" ? undefined : frame.unwindRegisters?.["ebp"]);
  // Pairs read by index, here and below: destructuring runs the iteration protocol, objects for each register in code not yet optimised.
  for (let i = 0; i < X86_REGISTERS.length; i++) {
    const key = X86_REGISTERS[i]![1];
    const value = key === "ebp" ? ebp : regs[key];
    if (value !== undefined) out.push([X86_REGISTERS[i]![0], value]);
  }
  if (frame.trust === "context") for (let i = 0; i < X86_CONTEXT_ONLY.length; i++) out.push([X86_CONTEXT_ONLY[i]![0], regs[X86_CONTEXT_ONLY[i]![1]] ?? 0n]);
  return out;
}

/**
 * ARM64: the context frame prints every register, lr through Breakpad's PtrauthStrip as it makes
 * the frame; a caller frame the ones its rule recovered (Breakpad's validity: CFI's registers
 * with x19-x29 carried, the frame-pointer step's pc, lr, fp and sp, a scan's pc and sp).
 */
function arm64Registers(frame: Frame, strip: (p: bigint) => bigint): [string, bigint][] {
  if (frame.trust !== "context") return present(frame, ARM64_REGISTERS);
  // A frame's registers may be a view made on each read: read them once.
  const regs = frame.registers;
  return ARM64_REGISTERS.map((name): [string, bigint] => {
    const value = regs[name] ?? 0n;
    return [name, name === "lr" ? strip(value) : value];
  });
}

/** ARM: the context frame prints every register; a caller frame the ones its rule recovered. */
function armRegisters(frame: Frame): [string, bigint][] {
  const regs = frame.registers;
  const out: [string, bigint][] = [];
  const all = frame.trust === "context";
  for (let i = 0; i < ARM_REGISTERS.length; i++) {
    const value = regs[ARM_REGISTERS[i]![1]];
    if (value !== undefined || all) out.push([ARM_REGISTERS[i]![0], value ?? 0n]);
  }
  return out;
}

/** The registers of `names` a frame has, in that order. */
function present(frame: Frame, names: readonly string[]): [string, bigint][] {
  const out: [string, bigint][] = [];
  const regs = frame.registers;
  for (let i = 0; i < names.length; i++) {
    const value = regs[names[i]!];
    if (value !== undefined) out.push([names[i]!, value]);
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
  for (let i = 0; i < registers.length; i++) {
    const register = registers[i]!;
    const text = ` ${register[0].padStart(5)} = ${hexPadded(register[1], digits)}`;
    if (column + text.length > MAX_WIDTH) {
      column = 0;
      out += "\n ";
    }
    out += text;
    column += text.length;
  }
  return out;
}

/** StripSeparator: `|` and newlines removed. */
function strip(text: string): string {
  return text.replace(/[|\n]/g, "");
}

const codeFile = (m: Module): string => fileNameOf(m.path ?? m.name);

/**
 * The human frame text after the index: `module!function [file : line + 0xoff]` and the shorter
 * forms (§6.1). A frame with inline frames shows the outermost inlined call's site; the offset is
 * from the line record's start (from 0 when there is none, as Breakpad's unset line base is).
 */
export function frameText(loc: Location, pc: bigint): string {
  if (loc.module === undefined) return hex(pc);
  const name = codeFile(loc.module);
  if (loc.function === undefined) return `${name} + ${hex(loc.moduleOffset!)}`;
  const source = sourceOf(loc);
  if (source?.file !== undefined) return `${name}!${loc.function} [${fileNameOf(source.file)} : ${source.line} + ${hex(loc.lineOffset ?? pc)}]`;
  return `${name}!${loc.function} + ${hex(loc.functionOffset!)}`;
}

/** The address Breakpad prints for a frame of CPU `cpu` (its instruction where that is not the return address: {@link BreakpadCpuFacts.callerBack}). */
export function printedAddress(cpu: string, frame: Frame): bigint {
  const back = frame.index > 0 ? (breakpadCpu(cpu)?.callerBack ?? 0) : 0;
  return back === 0 ? frame.addrPC : frame.addrPC - BigInt(back);
}

/**
 * The address Breakpad works an inline frame's offsets from: the frame's instruction, which is
 * the return address − 1 for a caller frame on x86 and amd64, − 4 on ARM64 (Breakpad's inline
 * frames are copies of the frame without its CPU context, so they print the instruction rather
 * than the return address).
 */
export function instructionOf(cpu: string, frame: Frame): bigint {
  if (frame.index === 0) return frame.addrPC;
  const back = breakpadCpu(cpu)?.callerBack ?? 0;
  return frame.addrPC - BigInt(back === 0 ? 1 : back);
}

/** The human text of an inline frame of the frame at `loc` (Breakpad's "Found by: inline record" frames). */
export function inlineFrameText(loc: Location, frame: InlineFrame, at: bigint): string {
  const name = codeFile(loc.module!);
  if (frame.file !== undefined) return `${name}!${frame.function} [${fileNameOf(frame.file)} : ${frame.line ?? 0} + ${hex(at - (loc.line === undefined ? 0n : loc.module!.base + loc.line.rva))}]`;
  return `${name}!${frame.function} + ${hex(at - loc.module!.base - frame.base)}`;
}

/** The `-m` fields of an inline frame after the thread and frame numbers. */
function inlineFrameFields(loc: Location, frame: InlineFrame, at: bigint): string {
  const name = strip(codeFile(loc.module!));
  if (frame.file !== undefined) return `${name}|${strip(frame.function)}|${strip(frame.file)}|${frame.line ?? 0}|${hex(at - (loc.line === undefined ? 0n : loc.module!.base + loc.line.rva))}`;
  return `${name}|${strip(frame.function)}|||${hex(at - loc.module!.base - frame.base)}`;
}

/**
 * The location of each frame as Breakpad prints it, worked out once per PC and kind of frame:
 * the frames of a deep recursion share a handful of return addresses.
 */
export function locations(modules: readonly Module[], cpu: string): (frame: Frame) => Location {
  const context = new Map<bigint, Location>();
  const callers = new Map<bigint, Location>();
  const back = BigInt(breakpadCpu(cpu)?.callerBack ?? 0);
  return (frame) => {
    const byPc = frame.index > 0 ? callers : context;
    let loc = byPc.get(frame.addrPC);
    if (loc === undefined) {
      // A caller's instruction before its return address is looked up where it is.
      loc = frame.index > 0 && back !== 0n ? locateAddress(modules, frame.addrPC - back, false) : locateAddress(modules, frame.addrPC, frame.index > 0);
      byPc.set(frame.addrPC, loc);
    }
    return loc;
  };
}

/**
 * The modules the module list warns about: those whose symbols could not be loaded, and every
 * module with the same debug file and debug id as one of them (Breakpad's `ContainsModule`
 * compares those two alone, so modules that share an empty id share the warning).
 */
function warnedModules(report: BreakpadReport): (m: Module) => boolean {
  const keys = new Set<string>();
  for (const m of report.modulesWithoutSymbols) keys.add(`${m.debugFile ?? ""}\n${m.debugId ?? ""}`);
  return (m) => keys.size > 0 && keys.has(`${m.debugFile ?? ""}\n${m.debugId ?? ""}`);
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
  // Modules by base, size and code id, then compared by path (a damaged dump's path can be a
  // megabyte long: it is not copied into a key).
  const seen = new Map<string, Module[]>();
  const once = report.modules.filter((m) => {
    const key = `${m.base}:${m.size}:${m.codeId ?? ""}`;
    const same = seen.get(key);
    if (same === undefined) seen.set(key, [m]);
    else if (same.some((s) => (s.path ?? s.name) === (m.path ?? m.name))) return false;
    else same.push(m);
    return true;
  });
  return once.sort((a, b) => (a.base < b.base ? -1 : a.base > b.base ? 1 : 0));
}

/** What `minidump_stackwalk`'s options add to or take from the human report. */
export interface BreakpadPrintOptions {
  /** `-c`: print the requesting (crashed) thread only. */
  requestingThreadOnly?: boolean;
  /** Text printed after a frame's "Found by:" line (`-s`: the stack contents; breakpad-stack.ts). */
  afterFrame?: (thread: BreakpadThread, frameIndex: number) => string;
}

/** `minidump_stackwalk <dump> [symbol-path]` output (minidump.md §6.1). */
export function renderBreakpad(report: BreakpadReport, options: BreakpadPrintOptions = {}): string {
  return collect((write) => writeBreakpad(report, write, options));
}

/** {@link renderBreakpad}'s text, handed to `write` piece by piece as it is made (a 100,000-frame report is never held whole). */
export function writeBreakpad(report: BreakpadReport, write: (text: string) => void, options: BreakpadPrintOptions = {}): void {
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
    out.push(`Crash address: ${hex(report.crashAddress)}\n`);
    if (report.crashParameters.length > 0) {
      out.push("Crash parameters:\n");
      for (const p of report.crashParameters) out.push(`    value: ${hexPadded(p, 16)}  description: \n`);
    }
  } else out.push("No crash\n");
  if (report.assertion !== undefined && report.assertion !== "") out.push(`Assertion: ${report.assertion}\n`);
  out.push(report.uptime !== undefined ? `Process uptime: ${report.uptime} seconds\n` : "Process uptime: not available\n");
  const digits = (breakpadCpu(report.cpu)?.wordSize ?? 4) === 8 ? 16 : 8;
  const locationOf = locations(report.modules, report.cpu);
  const texts = new Map<Location, string>();
  let registersOf: ((frame: Frame) => [string, bigint][]) | undefined;
  for (const t of printOrder(report)) {
    if (options.requestingThreadOnly === true && t.index !== report.requestingThread) continue;
    out.push("\n");
    const label = t.index !== report.requestingThread ? "" : report.crashed ? " (crashed)" : " (requested dump, did not crash)";
    out.push(`Thread ${t.index}${label}\n`);
    const frames = t.walk.frames;
    if (frames.length === 0) out.push(" <no frames>\n");
    // Breakpad numbers its inline frames with the others: each comes before its frame.
    let number = 0;
    registersOf ??= registerPrinter(report.cpu, report.modules);
    for (const f of frames) {
      const loc = locationOf(f);
      if (loc.inlines !== undefined) {
        for (const inline of loc.inlines) out.push(`${String(number++).padStart(2)}  ${inlineFrameText(loc, inline, instructionOf(report.cpu, f))}\n \n    Found by: inline record\n`);
      }
      let text = texts.get(loc);
      if (text === undefined) {
        text = frameText(loc, printedAddress(report.cpu, f));
        texts.set(loc, text);
      }
      out.push(`${String(number++).padStart(2)}  ${text}\n ${formatRegisterLines(registersOf(f), digits)}\n    Found by: ${breakpadTrust(f)}\n`);
      if (options.afterFrame !== undefined) out.push(options.afterFrame(t, f.index));
    }
  }
  // Without a ModuleList stream Breakpad has no module list to print, not even its heading.
  if (!report.moduleList) {
    out.end();
    return;
  }
  out.push("\n");
  out.push("Loaded modules:\n");
  const main = report.modules[0];
  const warned = warnedModules(report);
  for (const m of sortedModules(report)) {
    const end = m.base + m.size - 1n;
    const isMain = main !== undefined && main.base !== 0n && m.base === main.base ? "  (main)" : "";
    const warning = warned(m) ? `  (WARNING: No symbols, ${fileNameOf(m.debugFile ?? "")}, ${m.debugId ?? ""})` : "";
    out.push(`${hexPadded(m.base, 8)} - ${hexPadded(end, 8)}  ${codeFile(m)}  ${m.version ?? "???"}${isMain}${warning}\n`);
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
  out.push(`Crash|${report.crashed ? `${strip(report.crashReason)}|${hex(report.crashAddress)}|` : `${noCrash}||`}${report.requestingThread >= 0 ? report.requestingThread : ""}\n`);
  const main = report.modules[0];
  for (const m of sortedModules(report)) {
    const end = m.base + m.size - 1n;
    out.push(
      `Module|${strip(codeFile(m))}|${strip(m.version ?? "")}|${strip(fileNameOf(m.debugFile ?? ""))}|${strip(m.debugId ?? "")}|${hexPadded(m.base, 8)}|${hexPadded(end, 8)}|${main !== undefined && m.base === main.base ? 1 : 0}\n`,
    );
  }
  out.push("\n");
  const locationOf = locations(report.modules, report.cpu);
  for (const t of printOrder(report)) {
    let number = 0;
    for (const f of t.walk.frames) {
      const loc = locationOf(f);
      if (loc.inlines !== undefined) for (const inline of loc.inlines) out.push(`${t.index}|${number++}|${inlineFrameFields(loc, inline, instructionOf(report.cpu, f))}\n`);
      const source = sourceOf(loc);
      let fields: string;
      if (loc.module === undefined) fields = `||||${hex(printedAddress(report.cpu, f))}`;
      else if (loc.function === undefined) fields = `${strip(codeFile(loc.module))}||||${hex(loc.moduleOffset!)}`;
      else if (source?.file !== undefined) fields = `${strip(codeFile(loc.module))}|${strip(loc.function)}|${strip(source.file)}|${source.line}|${hex(loc.lineOffset ?? f.addrPC)}`;
      else fields = `${strip(codeFile(loc.module))}|${strip(loc.function)}|||${hex(loc.functionOffset!)}`;
      out.push(`${t.index}|${number++}|${fields}\n`);
    }
  }
  out.end();
}
