/**
 * The crash reason as rust-minidump writes it in the JSON's `crash_info.type` (its `CrashReason`,
 * read from the Exception stream under the OS and CPU SystemInfo names, and its Display text).
 * Breakpad's wording, which `--format breakpad` and `minidump-stackwalk` keep, is
 * breakpad-crash.ts; the two differ in places (`SIGSEGV / SEGV_MAPERR` against Breakpad's
 * `SIGSEGV /SEGV_MAPERR`, `SIGSEGV` against `SIGSEGV /0x00000000`, `unknown 0x… / 0x…` against
 * `0x… / 0x…`).
 *
 * - Windows (PlatformId 1 or 2): the exception code's name (`EXCEPTION_ACCESS_VIOLATION`), an
 *   access violation with at least one parameter naming a known access with `_READ`, `_WRITE`
 *   or `_EXEC`, an in-page error with at least three parameters also with its NTSTATUS
 *   (`EXCEPTION_IN_PAGE_ERROR_READ / STATUS_…`), a STATUS_STACK_BUFFER_OVERRUN with a parameter
 *   as `EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_…`; a code that is no exception name is
 *   named as an error (windows-errors.ts), else `unknown 0x%08x`. Chromium's out-of-memory, the
 *   C++ exception and Crashpad's simulated one read `Out of Memory`, `Unhandled C++ Exception`,
 *   `Simulated Exception`.
 * - Linux and Android: the signal, with its si_code's name when the signal's table has it
 *   (`SIGSEGV / SEGV_MAPERR`), else the generic si_code (`SIGABRT / SI_TKILL`; none for
 *   SI_USER, 0), else the si_code in hex.
 * - macOS and iOS: the Mach exception with its code's name (`EXC_BAD_ACCESS /
 *   KERN_INVALID_ADDRESS`), the kern_return_t names first, then the CPU's (ARM64, PPC, x86), else
 *   the code in hex; EXC_RESOURCE and EXC_GUARD decode their type, flavour and values from the
 *   exception information; Crashpad's SimulateCrash reads `Simulated Exception`.
 * - Anything else (another OS, an exception no table names): `unknown 0x%08x / 0x%08x`.
 */
import type { Minidump } from "../formats/minidump.js";
import { FAST_FAIL_NAMES, LINUX_SIGNALS, MACH_EXCEPTIONS, WINDOWS_EXCEPTION_NAMES, type MachCodes } from "./breakpad-crash.js";
import { hex8, NTSTATUS_NAMES, windowsErrorName } from "./windows-errors.js";

/** What the reason depends on: the Exception stream's record and SystemInfo's PlatformId and ProcessorArchitecture. */
export interface CrashTypeInput {
  platformId: number | undefined;
  processorArchitecture: number | undefined;
  code: number;
  flags: number;
  /** ExceptionInformation, as many entries as the record says it holds. */
  parameters: readonly bigint[];
  numberParameters: number;
}

/** The CPU families whose Mach exception codes differ (rust-minidump's Cpu). */
type MachCpu = "arm64" | "ppc" | "x86" | "other";

function machCpu(arch: number | undefined): MachCpu {
  if (arch === 12 || arch === 0x8003) return "arm64";
  if (arch === 3) return "ppc";
  if (arch === 0 || arch === 9 || arch === 10) return "x86";
  return "other";
}

const hex16 = (n: bigint): string => `0x${n.toString(16).padStart(16, "0")}`;

// ---------------------------------------------------------------- Windows

/** rust-minidump's Windows exception names: Breakpad's, less the four it names as NTSTATUS codes, and .NET's. */
const WINDOWS_EXCEPTIONS: Readonly<Record<number, string>> = (() => {
  const names: Record<number, string> = { ...WINDOWS_EXCEPTION_NAMES, 0xe0434352: "MANAGED_EXCEPTION_CODE_V4" };
  // DBG_CONTROL_C, EXCEPTION_BAD_FUNCTION_TABLE, EXCEPTION_STACK_BUFFER_OVERRUN, EXCEPTION_HEAP_CORRUPTION.
  for (const code of [0x40010005, 0xc00000ff, 0xc0000409, 0xc0000374]) delete names[code];
  return names;
})();

const ACCESS_VIOLATION = 0xc0000005;
const IN_PAGE_ERROR = 0xc0000006;
const STACK_BUFFER_OVERRUN = 0xc0000409;
/** ExceptionInformation[0] of an access violation or in-page error. */
const ACCESS: Readonly<Record<string, string>> = { "0": "READ", "1": "WRITE", "8": "EXEC" };
/** winnt.h's `__fastfail` codes, every one (0 too) named. */
const FAST_FAIL: ReadonlyMap<bigint, string> = new Map([[0n, "FAST_FAIL_LEGACY_GS_VIOLATION"], ...FAST_FAIL_NAMES.map(([code, name]) => [BigInt(code), `FAST_FAIL_${name}`] as const)]);

function windowsType(e: CrashTypeInput): string {
  const code = e.code >>> 0;
  const first = e.parameters[0] ?? 0n;
  const name = WINDOWS_EXCEPTIONS[code];
  if (name === undefined) {
    if (code === STACK_BUFFER_OVERRUN && e.numberParameters >= 1) {
      const fastFail = first & 0xffff_ffffn;
      return `EXCEPTION_STACK_BUFFER_OVERRUN / ${FAST_FAIL.get(fastFail) ?? hex8(Number(fastFail))}`;
    }
    return windowsErrorName(code);
  }
  const access = ACCESS[String(first)];
  if (code === ACCESS_VIOLATION && e.numberParameters >= 1 && access !== undefined) return `EXCEPTION_ACCESS_VIOLATION_${access}`;
  if (code === IN_PAGE_ERROR && e.numberParameters >= 3 && access !== undefined) {
    const status = Number((e.parameters[2] ?? 0n) & 0xffff_ffffn);
    return `EXCEPTION_IN_PAGE_ERROR_${access} / ${NTSTATUS_NAMES[status] ?? hex8(status)}`;
  }
  return name;
}

// ---------------------------------------------------------------- Linux

/** The si_code names of the signals rust-minidump refines (asm-generic/siginfo.h), by code. */
const SIGNAL_CODES: Readonly<Record<number, MachCodes>> = {
  4: { 1: "ILL_ILLOPC", 2: "ILL_ILLOPN", 3: "ILL_ILLADR", 4: "ILL_ILLTRP", 5: "ILL_PRVOPC", 6: "ILL_PRVREG", 7: "ILL_COPROC", 8: "ILL_BADSTK", 9: "ILL_BADIADDR" },
  5: { 1: "TRAP_BRKPT", 2: "TRAP_TRACE", 3: "TRAP_BRANCH", 4: "TRAP_HWBKPT", 5: "TRAP_UNK", 6: "TRAP_PERF" },
  7: { 1: "BUS_ADRALN", 2: "BUS_ADRERR", 3: "BUS_OBJERR", 4: "BUS_MCEERR_AR", 5: "BUS_MCEERR_AO" },
  8: { 1: "FPE_INTDIV", 2: "FPE_INTOVF", 3: "FPE_FLTDIV", 4: "FPE_FLTOVF", 5: "FPE_FLTUND", 6: "FPE_FLTRES", 7: "FPE_FLTINV", 8: "FPE_FLTSUB" },
  11: { 1: "SEGV_MAPERR", 2: "SEGV_ACCERR", 3: "SEGV_BNDERR", 4: "SEGV_PKUERR" },
  31: { 1: "SYS_SECCOMP", 2: "SYS_USER_DISPATCH" },
};

/** The si_codes any signal can have (read as i32): who sent it. SI_USER (0) is not written. */
const GENERIC_SI_CODES: Readonly<Record<number, string>> = {
  0x80: "SI_KERNEL", [-1]: "SI_QUEUE", [-2]: "SI_TIMER", [-3]: "SI_MESGQ", [-4]: "SI_ASYNCIO", [-5]: "SI_SIGIO", [-6]: "SI_TKILL", [-7]: "SI_DETHREAD", [-60]: "SI_ASYNCNL",
};

function linuxType(e: CrashTypeInput): string | undefined {
  const code = e.code >>> 0;
  const signal = LINUX_SIGNALS[code]?.name;
  if (signal === undefined) return undefined;
  const flags = e.flags >>> 0;
  const kind = SIGNAL_CODES[code]?.[flags];
  if (kind !== undefined) return `${signal} / ${kind}`;
  if (flags === 0) return signal;
  const generic = GENERIC_SI_CODES[flags | 0];
  return `${signal} / ${generic ?? hex8(flags)}`;
}

// ---------------------------------------------------------------- macOS and iOS

const EXC_BAD_ACCESS = 1;
const EXC_BAD_INSTRUCTION = 2;
const EXC_ARITHMETIC = 3;
const EXC_SOFTWARE = 5;
const EXC_BREAKPOINT = 6;
const EXC_RESOURCE = 11;
const EXC_GUARD = 12;
/** Crashpad's SimulateCrash ('CPsx'). */
const EXC_SIMULATED = 0x43507378;

/** The Mach exception names rust-minidump knows (mach/exception_types.h): Breakpad's, without Crashpad's uncaught NSException. */
const MACH_NAMES: Readonly<Record<number, string>> = Object.fromEntries(
  Object.entries(MACH_EXCEPTIONS)
    .filter(([, e]) => e.fixed === undefined)
    .map(([code, e]) => [code, e.name]),
);

/** kern_return_t names of EXC_BAD_ACCESS codes: Breakpad's and KERN_FAILURE. */
const KERN_CODES: MachCodes = { ...MACH_EXCEPTIONS[EXC_BAD_ACCESS]!.codes, 5: "KERN_FAILURE" };

/** ARM64 codes (mach/arm/exception.h), where rust-minidump's differ from Breakpad's ARM tables. */
const ARM64_CODES: Readonly<Record<number, MachCodes>> = {
  [EXC_BAD_ACCESS]: { 0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG", 0x103: "EXC_ARM_SP_ALIGN", 0x104: "EXC_ARM_SWP", 0x105: "EXC_ARM_PAC_FAIL" },
  [EXC_BAD_INSTRUCTION]: { 1: "EXC_ARM_UNDEFINED" },
  [EXC_ARITHMETIC]: { 1: "EXC_ARM_FP_IO", 2: "EXC_ARM_FP_DZ", 3: "EXC_ARM_FP_OF", 4: "EXC_ARM_FP_UF", 5: "EXC_ARM_FP_IX", 6: "EXC_ARM_FP_ID" },
  [EXC_BREAKPOINT]: { 1: "EXC_ARM_BREAKPOINT" },
};

/** The code names of a Mach exception on a CPU; the PPC and x86 tables are Breakpad's. */
function machCodes(exception: number, cpu: MachCpu): MachCodes | undefined {
  if (exception === EXC_SOFTWARE) return MACH_EXCEPTIONS[EXC_SOFTWARE]!.codes;
  if (cpu === "arm64") return ARM64_CODES[exception];
  if (cpu === "other" || ![EXC_BAD_ACCESS, EXC_BAD_INSTRUCTION, EXC_ARITHMETIC, EXC_BREAKPOINT].includes(exception)) return undefined;
  return MACH_EXCEPTIONS[exception]!.byCpu?.[cpu];
}

/** EXC_RESOURCE's resource types (kern/exc_resource.h), each with its flavours and how its code and subcode read. */
const RESOURCES: Readonly<Record<number, { name: string; flavors: MachCodes; text: (code: bigint, subcode: bigint) => string }>> = {
  1: {
    name: "RESOURCE_TYPE_CPU",
    flavors: { 1: "FLAVOR_CPU_MONITOR", 2: "FLAVOR_CPU_MONITOR_FATAL" },
    text: (c, s) => `interval: ${(c >> 7n) & 0x1ffffffn}s CPU limit: ${c & 7n}% CPU consumed: ${s & 7n}%`,
  },
  2: {
    name: "RESOURCE_TYPE_WAKEUPS",
    flavors: { 1: "FLAVOR_WAKEUPS_MONITOR" },
    text: (c, s) => `interval: ${(c >> 20n) & 0xfffffn}s wakeups permitted: ${c & 0xfffn} wakeups observed: ${s & 0xfffn}`,
  },
  3: { name: "RESOURCE_TYPE_MEMORY", flavors: { 1: "FLAVOR_HIGH_WATERMARK" }, text: (c) => `high watermark limit: ${c & 0x1fffn}MiB` },
  4: {
    name: "RESOURCE_TYPE_IO",
    flavors: { 1: "FLAVOR_IO_PHYSICAL_WRITES", 2: "FLAVOR_IO_LOGICAL_WRITES" },
    text: (c, s) => `interval: ${(c >> 15n) & 0x1ffffn}s I/O limit: ${c & 0x7fffn}% I/O observed: ${s & 0x7fffn}%`,
  },
  5: { name: "RESOURCE_TYPE_THREADS", flavors: { 1: "FLAVOR_THREADS_HIGH_WATERMARK" }, text: (c) => `high watermark limit: ${c & 0x7fffn}` },
};

/** GUARD_EXC_ flavour names of Mach port guards (mach/port.h), by bit. */
const PORT_FLAVORS: readonly (readonly [number, string])[] = [
  [1, "DESTROY"], [2, "MOD_REFS"], [3, "INVALID_OPTIONS"], [4, "SET_CONTEXT"], [5, "THREAD_SET_STATE"], [0x8, "UNGUARDED"],
  [0x10, "INCORRECT_GUARD"], [0x20, "IMMOVABLE"], [0x40, "STRICT_REPLY"], [0x80, "MSG_FILTERED"], [0x100, "INVALID_RIGHT"],
  [0x200, "INVALID_NAME"], [0x400, "INVALID_VALUE"], [0x800, "INVALID_ARGUMENT"], [0x1000, "RIGHT_EXISTS"], [0x2000, "KERN_NO_SPACE"],
  [0x4000, "KERN_FAILURE"], [0x8000, "KERN_RESOURCE"], [0x10000, "SEND_INVALID_REPLY"], [0x20000, "SEND_INVALID_VOUCHER"],
  [0x40000, "SEND_INVALID_RIGHT"], [0x80000, "RCV_INVALID_NAME"], [0x100000, "RCV_GUARDED_DESC"], [0x200000, "MOD_REFS_NON_FATAL"],
  [0x400000, "IMMOVABLE_NON_FATAL"], [0x800000, "REQUIRE_REPLY_PORT_SEMANTICS"], [0x1000000, "EXCEPTION_BEHAVIOR_ENFORCE"],
];
/** File-descriptor guard flavours (sys/guarded.h). */
const FD_FLAVORS: readonly (readonly [number, string])[] = [[1, "CLOSE"], [2, "DUP"], [4, "NOCLOEXEC"], [8, "SOCKET_IPC"], [0x10, "FILEPORT"], [0x20, "MISMATCH"], [0x40, "WRITE"]];
/** Vnode guard flavours (sys/guarded.h). */
const VN_FLAVORS: readonly (readonly [number, string])[] = [[1, "RENAME_TO"], [2, "RENAME_FROM"], [4, "UNLINK"], [8, "WRITE_OTHER"], [0x10, "TRUNC_OTHER"], [0x20, "LINK"], [0x40, "EXCHDATA"]];

const flavorTable = (list: readonly (readonly [number, string])[]): MachCodes => Object.fromEntries(list.map(([n, name]) => [n, `GUARD_EXC_${name}`]));

/**
 * EXC_GUARD's guard types (kern/exc_guard.h): each with its flavours (none for USER, which has
 * no flavour) and how its code and subcode read after the flavour.
 */
const GUARDS: Readonly<Record<number, { name: string; flavors?: MachCodes; text?: (code: bigint, subcode: bigint) => string }>> = {
  0: { name: "GUARD_TYPE_NONE" },
  1: {
    name: "GUARD_TYPE_MACH_PORT",
    flavors: flavorTable(PORT_FLAVORS),
    text: (c, s) => `port name: ${c & 0xfffffffn}${s !== 0n ? ` subcode: ${s}` : ""}`,
  },
  2: { name: "GUARD_TYPE_FD", flavors: flavorTable(FD_FLAVORS), text: (c, s) => `file descriptor: ${c & 0xfffffffn} guard identifier: ${s}` },
  3: { name: "GUARD_TYPE_USER" },
  4: { name: "GUARD_TYPE_VN", flavors: flavorTable(VN_FLAVORS), text: (c, s) => `pid: ${c & 0xfffffffn} guard identifier: ${s}` },
  5: { name: "GUARD_TYPE_VIRT_MEMORY", flavors: { 1: "GUARD_EXC_DEALLOC_GAP" }, text: (_, s) => `offset: ${s}` },
  6: { name: "GUARD_TYPE_REJECTED_SC", flavors: { 0: "GUARD_EXC_MACH_TRAP" }, text: (_, s) => `syscall: ${s}` },
};

/** EXC_RESOURCE with its type: its flavour and values, or the code and subcode in hex. */
function resourceType(type: number, code: bigint, subcode: bigint): string | undefined {
  const r = RESOURCES[type];
  if (r === undefined) return undefined;
  const flavor = r.flavors[Number((code >> 58n) & 7n)];
  return `EXC_RESOURCE / ${r.name} / ${flavor === undefined ? `${hex16(code)} / ${hex16(subcode)}` : `${flavor} ${r.text(code, subcode)}`}`;
}

/** EXC_GUARD with its type: its flavour and values, or the code and subcode in hex. */
function guardType(type: number, code: bigint, subcode: bigint): string | undefined {
  const g = GUARDS[type];
  if (g === undefined) return undefined;
  const head = `EXC_GUARD / ${g.name}`;
  // rust-minidump writes the user guard's values after a "/" with no space before it.
  if (type === 3) return `${head}/ namespace: ${code & 0xffff_ffffn} guard identifier: ${subcode}`;
  if (g.flavors === undefined || g.text === undefined) return head;
  const flavor = g.flavors[Number((code >> 32n) & 0x1fff_ffffn)];
  return `${head} / ${flavor === undefined ? `${hex16(code)} / ${hex16(subcode)}` : `${flavor} ${g.text(code, subcode)}`}`;
}

function machType(e: CrashTypeInput): string | undefined {
  const code = e.code >>> 0;
  if (code === EXC_SIMULATED) return "Simulated Exception";
  const name = MACH_NAMES[code];
  if (name === undefined) return undefined;
  const flags = e.flags >>> 0;
  const info = (i: number): bigint => e.parameters[i] ?? 0n;
  const typed = code === EXC_RESOURCE ? resourceType((flags >>> 29) & 7, info(1), info(2)) : code === EXC_GUARD ? guardType((flags >>> 29) & 7, info(1), info(2)) : undefined;
  if (typed !== undefined) return typed;
  const named = (code === EXC_BAD_ACCESS ? KERN_CODES[flags] : undefined) ?? machCodes(code, machCpu(e.processorArchitecture))?.[flags];
  return `${name} / ${named ?? hex8(flags)}`;
}

// ----------------------------------------------------------------

/** SystemInfo.PlatformId values rust-minidump reads crash reasons for. */
const PLATFORM = { windows: 1, windowsNt: 2, mac: 0x8101, ios: 0x8102, linux: 0x8201, android: 0x8203 } as const;

/** rust-minidump's crash reason for an exception record under an OS and CPU. */
export function crashTypeOf(e: CrashTypeInput): string {
  let reason: string | undefined;
  switch (e.platformId) {
    case PLATFORM.windows:
    case PLATFORM.windowsNt:
      reason = windowsType(e);
      break;
    case PLATFORM.linux:
    case PLATFORM.android:
      reason = linuxType(e);
      break;
    case PLATFORM.mac:
    case PLATFORM.ios:
      reason = machType(e);
      break;
    default:
      break;
  }
  return reason ?? `unknown ${hex8(e.code)} / ${hex8(e.flags)}`;
}

/** rust-minidump's `crash_info.type` of a dump: undefined without an Exception stream. */
export function crashType(dump: Minidump): string | undefined {
  const ex = dump.exception;
  if (ex === undefined) return undefined;
  const { code, flags, parameters, numberParameters } = ex;
  return crashTypeOf({ platformId: dump.systemInfo?.platformId, processorArchitecture: dump.systemInfo?.processorArchitecture, code, flags, parameters, numberParameters });
}
