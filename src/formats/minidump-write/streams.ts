/**
 * The streams the dump writer lays out, one function each, in the order they are placed:
 * SystemInfo, ThreadList with a CONTEXT per thread, ModuleList with its names and CodeView
 * records, Exception and MiscInfo (minidump.md §2). Each returns where its stream went; the
 * memory list is memory.ts's.
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { machineInfo, type Machine } from "../../model/machine.js";
import { CONTEXT_AMD64_CONTROL, CONTEXT_AMD64_INTEGER, CONTEXT_AMD64_SEGMENTS, CONTEXT_ARM64_FULL, CONTEXT_X86_FULL, contextRegisterNames, contextSize, encodeContext } from "../../model/context.js";
import type { Module, Registers, ThreadSnapshot } from "../../model/snapshot.js";
import { BREAKPAD_ARM_CONTEXT_SIZE, encodeBreakpadArmContext, MD_CONTEXT_ARM_FULL } from "../minidump/arm-context.js";
import { MINIDUMP_STREAM, PROCESSOR_ARCHITECTURE, VS_FFI_SIGNATURE } from "../minidump/constants.js";
import { EXCEPTION_MAXIMUM_PARAMETERS, EXCEPTION_STREAM_SIZE } from "../minidump/exception.js";
import { MISC_INFO_MIN_SIZE } from "../minidump/misc-info.js";
import { MODULE_SIZE } from "../minidump/module-list.js";
import { SYSTEM_INFO_SIZE } from "../minidump/system-info.js";
import { THREAD_SIZE } from "../minidump/thread-list.js";
import { encodeCodeView, moduleCodeView, moduleTimeDateStamp } from "./identity.js";
import type { MinidumpWriteException, MinidumpWriteSystem, WrittenStreamInfo } from "./options.js";
import type { Structures } from "./structures.js";

/** The machines the writer writes. */
export type WrittenMachine = "x86" | "x64" | "arm64" | "arm";

/** What the writer writes for a machine. */
interface WriterMachine {
  /** SystemInfo.ProcessorArchitecture. */
  processorArchitecture: number;
  /** SystemInfo's CPU union holds the x86 CPUID vendor and feature words (otherwise ProcessorFeatures, left 0). */
  cpuid: boolean;
  /** The CONTEXT's ContextFlags. */
  flags: number;
  /** The segment values (and MXCSR) of a Windows user-mode thread, used when the snapshot has none. */
  registers: Registers;
  /** A context record of another form than the machine's Windows CONTEXT: its size and encoder. */
  context?: { size: number; encode(registers: Registers): Uint8Array };
}

/** One table per machine the writer writes (minidump.md §2.6, §3); the stack and instruction pointers come from the machine table. */
export const WRITER_MACHINES: Readonly<Record<WrittenMachine, WriterMachine>> = {
  x86: {
    processorArchitecture: PROCESSOR_ARCHITECTURE.INTEL,
    cpuid: true,
    flags: CONTEXT_X86_FULL,
    registers: { cs: 0x1bn, ss: 0x23n, ds: 0x23n, es: 0x23n, fs: 0x3bn, gs: 0n },
  },
  x64: {
    processorArchitecture: PROCESSOR_ARCHITECTURE.AMD64,
    cpuid: false,
    flags: CONTEXT_AMD64_CONTROL | CONTEXT_AMD64_INTEGER | CONTEXT_AMD64_SEGMENTS,
    registers: { cs: 0x33n, ss: 0x2bn, ds: 0x2bn, es: 0x2bn, fs: 0x53n, gs: 0x2bn, mxcsr: 0x1f80n },
  },
  // The 912-byte ARM64_NT_CONTEXT with SystemInfo 12, as MiniDumpWriteDump writes it (arm64.md §2.3).
  arm64: {
    processorArchitecture: PROCESSOR_ARCHITECTURE.ARM64,
    cpuid: false,
    flags: CONTEXT_ARM64_FULL,
    registers: {},
  },
  // Breakpad's 368-byte MDRawContextARM with SystemInfo 5, as Breakpad's clients write it: the
  // only ARM context Breakpad's processor reads (a Windows 0x1A0-byte CONTEXT is read too).
  arm: {
    processorArchitecture: PROCESSOR_ARCHITECTURE.ARM,
    cpuid: false,
    flags: MD_CONTEXT_ARM_FULL,
    registers: {},
    context: { size: BREAKPAD_ARM_CONTEXT_SIZE, encode: encodeBreakpadArmContext },
  },
};

/** The size of the CONTEXT records the writer writes for `machine`. */
function writtenContextSize(machine: WrittenMachine): number {
  return WRITER_MACHINES[machine].context?.size ?? contextSize(machine);
}

/** True when the writer writes snapshots of `machine`. */
export function isWrittenMachine(machine: Machine): machine is WrittenMachine {
  return Object.hasOwn(WRITER_MACHINES, machine);
}

/** The machines the writer writes, as a sentence: "x86, x64 and arm64". */
export function writtenMachinesText(): string {
  const names = Object.keys(WRITER_MACHINES);
  return `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`;
}

const PLATFORM_WIN32_NT = 2;
const VER_SUITE_SINGLEUSERTS = 0x100;
/** CPUID leaf 1 EAX for family 6, model 158, stepping 10, and a typical EDX feature word. */
const X86_CPUID_VERSION = 0x000906ea;
const X86_CPUID_FEATURES = 0xbfebfbff;
const NORMAL_PRIORITY_CLASS = 0x20;
const VS_FFI_STRUCVERSION = 0x0001_0000;
const VS_FFI_FILEFLAGSMASK = 0x3f;
const VOS_NT_WINDOWS32 = 0x0004_0004;
const VFT_APP = 1;
const VFT_DLL = 2;
const MISC1_PROCESS_ID = 0x1;
const MISC1_PROCESS_TIMES = 0x2;
const U32_MAX = 0xffff_ffff;

/** SystemInfo (minidump.md §2.6). */
export function writeSystemInfo(s: Structures, machine: WrittenMachine, system: MinidumpWriteSystem): WrittenStreamInfo {
  const table = WRITER_MACHINES[machine];
  const sys = s.alloc(SYSTEM_INFO_SIZE);
  s.u16(sys, table.processorArchitecture);
  s.u16(sys + 2, system.processorLevel);
  s.u16(sys + 4, system.processorRevision);
  s.u8(sys + 6, system.numberOfProcessors);
  s.u8(sys + 7, system.productType);
  s.u32(sys + 8, system.majorVersion);
  s.u32(sys + 12, system.minorVersion);
  s.u32(sys + 16, system.buildNumber);
  s.u32(sys + 20, PLATFORM_WIN32_NT);
  s.u16(sys + 28, VER_SUITE_SINGLEUSERTS);
  if (table.cpuid) {
    const vendor = new TextEncoder().encode(system.vendorId.padEnd(12, "\0").slice(0, 12));
    s.bytes(sys + 32, vendor.subarray(0, 12));
    s.u32(sys + 44, X86_CPUID_VERSION);
    s.u32(sys + 48, X86_CPUID_FEATURES);
  }
  s.u32(sys + 24, s.string(system.csdVersion));
  return { type: MINIDUMP_STREAM.SystemInfo, rva: sys, size: SYSTEM_INFO_SIZE };
}

/** Where the thread list put each thread's CONTEXT, and the Stack descriptors to fill in once memory is placed. */
export interface WrittenThreads {
  stream: WrittenStreamInfo;
  /** CONTEXT RVA by thread id. */
  contextRva: Map<number, number>;
  /** The file offset of each thread's Stack descriptor, with the thread's stack pointer. */
  stackFixups: { at: number; sp: bigint }[];
}

/** ThreadList (minidump.md §2.2) and a CONTEXT record per thread (16-aligned). */
export function writeThreads(s: Structures, machine: WrittenMachine, threads: readonly ThreadSnapshot[]): WrittenThreads {
  const table = WRITER_MACHINES[machine];
  const threadList = s.alloc(4 + threads.length * THREAD_SIZE);
  s.u32(threadList, threads.length);
  const size = writtenContextSize(machine);
  const contextRva = new Map<number, number>();
  const stackFixups: { at: number; sp: bigint }[] = [];
  threads.forEach((t, i) => {
    const at = threadList + 4 + i * THREAD_SIZE;
    const registers = contextRegisters(machine, t.registers);
    const ctx = table.context?.encode(registers) ?? encodeContext({ machine, contextFlags: table.flags, registers });
    const rva = s.alloc(size, 16);
    s.bytes(rva, ctx);
    contextRva.set(t.id, rva);
    s.u32(at, t.id >>> 0);
    s.u32(at + 8, NORMAL_PRIORITY_CLASS);
    s.u32(at + 40, size);
    s.u32(at + 44, rva);
    stackFixups.push({ at: at + 24, sp: t.registers[machineInfo(machine).sp] ?? 0n });
  });
  return { stream: { type: MINIDUMP_STREAM.ThreadList, rva: threadList, size: 4 + threads.length * THREAD_SIZE }, contextRva, stackFixups };
}

/** A thread's registers as the CONTEXT model names them: the defaults, then the snapshot's (names the CONTEXT has no field for are left out). */
function contextRegisters(machine: WrittenMachine, registers: Registers): Registers {
  const known = new Set(contextRegisterNames(machine));
  const out: Registers = { ...WRITER_MACHINES[machine].registers };
  for (const [name, value] of Object.entries(registers)) if (known.has(name)) out[name] = value;
  return out;
}

/** ModuleList (minidump.md §2.3) with each module's name, version resource and CodeView record. */
export function writeModules(s: Structures, modules: readonly Module[], memory: MemoryReader): { stream: WrittenStreamInfo; withoutCodeView: string[] } {
  const moduleList = s.alloc(4 + modules.length * MODULE_SIZE);
  s.u32(moduleList, modules.length);
  const withoutCodeView: string[] = [];
  modules.forEach((m, i) => {
    const at = moduleList + 4 + i * MODULE_SIZE;
    if (m.size > BigInt(U32_MAX)) throw new RangeError(`minidump writer: module ${m.name} is ${hex(m.size)} bytes; SizeOfImage is a u32`);
    s.u64(at, m.base);
    s.u32(at + 8, Number(m.size));
    s.u32(at + 16, moduleTimeDateStamp(m, memory));
    s.u32(at + 20, s.string(m.path ?? m.name));
    const version = parseVersion(m.version);
    if (version !== undefined) {
      const hi = ((version[0] << 16) | version[1]) >>> 0;
      const lo = ((version[2] << 16) | version[3]) >>> 0;
      const ffi = at + 24;
      s.u32(ffi, VS_FFI_SIGNATURE);
      s.u32(ffi + 4, VS_FFI_STRUCVERSION);
      s.u32(ffi + 8, hi);
      s.u32(ffi + 12, lo);
      s.u32(ffi + 16, hi);
      s.u32(ffi + 20, lo);
      s.u32(ffi + 24, VS_FFI_FILEFLAGSMASK);
      s.u32(ffi + 32, VOS_NT_WINDOWS32);
      s.u32(ffi + 36, /\.dll$/i.test(m.name) ? VFT_DLL : VFT_APP);
    }
    const cv = moduleCodeView(m, memory);
    if (cv === undefined) withoutCodeView.push(m.name);
    else {
      const record = encodeCodeView(cv);
      const rva = s.alloc(record.length);
      s.bytes(rva, record);
      s.u32(at + 76, record.length);
      s.u32(at + 80, rva);
    }
  });
  return { stream: { type: MINIDUMP_STREAM.ModuleList, rva: moduleList, size: 4 + modules.length * MODULE_SIZE }, withoutCodeView };
}

/** Four numbers of a version `a.b.c.d`, each at most 0xFFFF, or undefined. */
function parseVersion(version: string | undefined): [number, number, number, number] | undefined {
  const m = version === undefined ? null : /^(\d{1,5})\.(\d{1,5})\.(\d{1,5})\.(\d{1,5})$/.exec(version);
  if (m === null) return undefined;
  const parts = [m[1], m[2], m[3], m[4]].map(Number) as [number, number, number, number];
  return parts.every((p) => p <= 0xffff) ? parts : undefined;
}

/**
 * The Exception stream (minidump.md §2.5) for `thread`, whose CONTEXT (at `contextRva`) is the
 * faulting context: the snapshot was taken where the thread stopped.
 */
export function writeException(
  s: Structures,
  machine: WrittenMachine,
  exception: MinidumpWriteException & { threadId: number },
  thread: ThreadSnapshot,
  contextRva: number,
): WrittenStreamInfo {
  const at = s.alloc(EXCEPTION_STREAM_SIZE);
  const params = exception.parameters ?? [];
  if (params.length > EXCEPTION_MAXIMUM_PARAMETERS) throw new RangeError(`minidump writer: ${params.length} exception parameters; the stream holds ${EXCEPTION_MAXIMUM_PARAMETERS}`);
  s.u32(at, exception.threadId >>> 0);
  s.u32(at + 8, exception.code >>> 0);
  s.u32(at + 12, (exception.flags ?? 0) >>> 0);
  s.u64(at + 24, exception.address ?? thread.registers[machineInfo(machine).pc] ?? 0n);
  s.u32(at + 32, params.length);
  params.forEach((p, i) => s.u64(at + 40 + 8 * i, p));
  s.u32(at + 160, writtenContextSize(machine));
  s.u32(at + 164, contextRva);
  return { type: MINIDUMP_STREAM.Exception, rva: at, size: EXCEPTION_STREAM_SIZE };
}

/** MiscInfo, version 1 (minidump.md §2.7): the process id, and the process times when the dump has a time. */
export function writeMiscInfo(s: Structures, timeDateStamp: number, processId: number): WrittenStreamInfo {
  const misc = s.alloc(MISC_INFO_MIN_SIZE);
  s.u32(misc, MISC_INFO_MIN_SIZE);
  s.u32(misc + 4, MISC1_PROCESS_ID | (timeDateStamp !== 0 ? MISC1_PROCESS_TIMES : 0));
  s.u32(misc + 8, processId);
  s.u32(misc + 12, timeDateStamp);
  return { type: MINIDUMP_STREAM.MiscInfo, rva: misc, size: MISC_INFO_MIN_SIZE };
}
