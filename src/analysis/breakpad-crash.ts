/**
 * The crash reason and crash address Breakpad's processor prints for a dump's Exception stream
 * (minidump_processor.cc GetCrashReason; minidump.md §4), for every OS it names: Windows
 * exception codes (access violations and in-page errors with their kind, `__fastfail` codes),
 * Linux and Android signals with their si_code, macOS and iOS Mach exceptions with their codes
 * (and Crashpad's simulated ones), Solaris signals and Fuchsia exceptions. The tables are the
 * values of Breakpad's minidump_exception_{win32,linux,mac,solaris,fuchsia}.h; what no table
 * names prints as `0x<code> / 0x<flags>`.
 */
import type { Minidump } from "../formats/minidump.js";
import { hex8, NTSTATUS_NAMES } from "./windows-errors.js";

/** SystemInfo.PlatformId values (Breakpad's MD_OS_*). */
const OS = { windows: 1, windowsNt: 2, mac: 0x8101, ios: 0x8102, linux: 0x8201, solaris: 0x8202, android: 0x8203, fuchsia: 0x8206 } as const;

/** SystemInfo.ProcessorArchitecture values the Mach tables depend on (MD_CPU_ARCHITECTURE_*). */
const CPU = { x86: 0, ppc: 3, arm: 5, amd64: 9, arm64Old: 0x8003 } as const;

/** Windows exception codes Breakpad names (minidump_exception_win32.h). */
export const WINDOWS_EXCEPTION_NAMES: Readonly<Record<number, string>> = {
  0x40010005: "DBG_CONTROL_C",
  0x80000001: "EXCEPTION_GUARD_PAGE",
  0x80000002: "EXCEPTION_DATATYPE_MISALIGNMENT",
  0x80000003: "EXCEPTION_BREAKPOINT",
  0x80000004: "EXCEPTION_SINGLE_STEP",
  0xc0000005: "EXCEPTION_ACCESS_VIOLATION",
  0xc0000006: "EXCEPTION_IN_PAGE_ERROR",
  0xc0000008: "EXCEPTION_INVALID_HANDLE",
  0xc000001d: "EXCEPTION_ILLEGAL_INSTRUCTION",
  0xc0000025: "EXCEPTION_NONCONTINUABLE_EXCEPTION",
  0xc0000026: "EXCEPTION_INVALID_DISPOSITION",
  0xc000008c: "EXCEPTION_BOUNDS_EXCEEDED",
  0xc000008d: "EXCEPTION_FLT_DENORMAL_OPERAND",
  0xc000008e: "EXCEPTION_FLT_DIVIDE_BY_ZERO",
  0xc000008f: "EXCEPTION_FLT_INEXACT_RESULT",
  0xc0000090: "EXCEPTION_FLT_INVALID_OPERATION",
  0xc0000091: "EXCEPTION_FLT_OVERFLOW",
  0xc0000092: "EXCEPTION_FLT_STACK_CHECK",
  0xc0000093: "EXCEPTION_FLT_UNDERFLOW",
  0xc0000094: "EXCEPTION_INT_DIVIDE_BY_ZERO",
  0xc0000095: "EXCEPTION_INT_OVERFLOW",
  0xc0000096: "EXCEPTION_PRIV_INSTRUCTION",
  0xc00000fd: "EXCEPTION_STACK_OVERFLOW",
  0xc00000ff: "EXCEPTION_BAD_FUNCTION_TABLE",
  0xc0000194: "EXCEPTION_POSSIBLE_DEADLOCK",
  0xc0000409: "EXCEPTION_STACK_BUFFER_OVERRUN",
  0xc0000374: "EXCEPTION_HEAP_CORRUPTION",
  0xe0000008: "Out of Memory",
  0xe06d7363: "Unhandled C++ Exception",
  0x0517a7ed: "Simulated Exception",
};

const ACCESS_VIOLATION = 0xc0000005;
const IN_PAGE_ERROR = 0xc0000006;
const STACK_BUFFER_OVERRUN = 0xc0000409;
/** ExceptionInformation[0] of an access violation or in-page error: 0 read, 1 write, 8 execute. */
const ACCESS_KIND: Readonly<Record<string, string>> = { "0": "_READ", "1": "_WRITE", "8": "_EXEC" };

/**
 * `__fastfail` codes (winnt.h FAST_FAIL_*), ExceptionInformation[0] of
 * STATUS_STACK_BUFFER_OVERRUN. Breakpad prints the name in place of the exception's; it leaves
 * out code 0 (FAST_FAIL_LEGACY_GS_VIOLATION, a real /GS overrun) and unknown codes, which keep
 * the name EXCEPTION_STACK_BUFFER_OVERRUN.
 */
export const FAST_FAIL_NAMES: readonly (readonly [number, string])[] = [
  [1, "VTGUARD_CHECK_FAILURE"], [2, "STACK_COOKIE_CHECK_FAILURE"], [3, "CORRUPT_LIST_ENTRY"], [4, "INCORRECT_STACK"],
  [5, "INVALID_ARG"], [6, "GS_COOKIE_INIT"], [7, "FATAL_APP_EXIT"], [8, "RANGE_CHECK_FAILURE"],
  [9, "UNSAFE_REGISTRY_ACCESS"], [10, "GUARD_ICALL_CHECK_FAILURE"], [11, "GUARD_WRITE_CHECK_FAILURE"], [12, "INVALID_FIBER_SWITCH"],
  [13, "INVALID_SET_OF_CONTEXT"], [14, "INVALID_REFERENCE_COUNT"], [18, "INVALID_JUMP_BUFFER"], [19, "MRDATA_MODIFIED"],
  [20, "CERTIFICATION_FAILURE"], [21, "INVALID_EXCEPTION_CHAIN"], [22, "CRYPTO_LIBRARY"], [23, "INVALID_CALL_IN_DLL_CALLOUT"],
  [24, "INVALID_IMAGE_BASE"], [25, "DLOAD_PROTECTION_FAILURE"], [26, "UNSAFE_EXTENSION_CALL"], [27, "DEPRECATED_SERVICE_INVOKED"],
  [28, "INVALID_BUFFER_ACCESS"], [29, "INVALID_BALANCED_TREE"], [30, "INVALID_NEXT_THREAD"], [31, "GUARD_ICALL_CHECK_SUPPRESSED"],
  [32, "APCS_DISABLED"], [33, "INVALID_IDLE_STATE"], [34, "MRDATA_PROTECTION_FAILURE"], [35, "UNEXPECTED_HEAP_EXCEPTION"],
  [36, "INVALID_LOCK_STATE"], [37, "GUARD_JUMPTABLE"], [38, "INVALID_LONGJUMP_TARGET"], [39, "INVALID_DISPATCH_CONTEXT"],
  [40, "INVALID_THREAD"], [41, "INVALID_SYSCALL_NUMBER"], [42, "INVALID_FILE_OPERATION"], [43, "LPAC_ACCESS_DENIED"],
  [44, "GUARD_SS_FAILURE"], [45, "LOADER_CONTINUITY_FAILURE"], [46, "GUARD_EXPORT_SUPPRESSION_FAILURE"], [47, "INVALID_CONTROL_STACK"],
  [48, "SET_CONTEXT_DENIED"], [49, "INVALID_IAT"], [50, "HEAP_METADATA_CORRUPTION"], [51, "PAYLOAD_RESTRICTION_VIOLATION"],
  [52, "LOW_LABEL_ACCESS_DENIED"], [53, "ENCLAVE_CALL_FAILURE"], [54, "UNHANDLED_LSS_EXCEPTON"], [55, "ADMINLESS_ACCESS_DENIED"],
  [56, "UNEXPECTED_CALL"], [57, "CONTROL_INVALID_RETURN_ADDRESS"], [58, "UNEXPECTED_HOST_BEHAVIOR"], [59, "FLAGS_CORRUPTION"],
  [60, "VEH_CORRUPTION"], [61, "ETW_CORRUPTION"], [62, "RIO_ABORT"], [63, "INVALID_PFN"],
  [64, "GUARD_ICALL_CHECK_FAILURE_XFG"], [65, "CAST_GUARD"], [66, "HOST_VISIBILITY_CHANGE"], [67, "KERNEL_CET_SHADOW_STACK_ASSIST"],
  [68, "PATCH_CALLBACK_FAILED"], [69, "NTDLL_PATCH_FAILED"], [70, "INVALID_FLS_DATA"],
];
const FAST_FAIL: ReadonlyMap<number, string> = new Map(FAST_FAIL_NAMES.map(([code, name]) => [code, `FAST_FAIL_${name}`]));

/**
 * A signal and the names of its si_code values (the exception flags). `separator` joins the two:
 * Breakpad writes `SIGSEGV /` with no space before the code, the others with one.
 */
export interface Signal {
  name: string;
  codes?: readonly string[];
  separator?: string;
}

/** Linux and Android signals (bits/signum.h on x86/x64/ARM) and si_codes (asm-generic/siginfo.h), codes from 1. */
export const LINUX_SIGNALS: Readonly<Record<number, Signal>> = {
  1: { name: "SIGHUP" },
  2: { name: "SIGINT" },
  3: { name: "SIGQUIT" },
  4: { name: "SIGILL", codes: ["ILL_ILLOPC", "ILL_ILLOPN", "ILL_ILLADR", "ILL_ILLTRP", "ILL_PRVOPC", "ILL_PRVREG", "ILL_COPROC", "ILL_BADSTK"] },
  5: { name: "SIGTRAP" },
  6: { name: "SIGABRT" },
  7: { name: "SIGBUS", codes: ["BUS_ADRALN", "BUS_ADRERR", "BUS_OBJERR", "BUS_MCEERR_AR", "BUS_MCEERR_AO"] },
  8: { name: "SIGFPE", codes: ["FPE_INTDIV", "FPE_INTOVF", "FPE_FLTDIV", "FPE_FLTOVF", "FPE_FLTUND", "FPE_FLTRES", "FPE_FLTINV", "FPE_FLTSUB"] },
  9: { name: "SIGKILL" },
  10: { name: "SIGUSR1" },
  11: {
    name: "SIGSEGV",
    codes: ["SEGV_MAPERR", "SEGV_ACCERR", "SEGV_BNDERR", "SEGV_PKUERR", "SEGV_ACCADI", "SEGV_ADIDERR", "SEGV_ADIPERR", "SEGV_MTEAERR", "SEGV_MTESERR"],
    separator: " /",
  },
  12: { name: "SIGUSR2" },
  13: { name: "SIGPIPE" },
  14: { name: "SIGALRM" },
  15: { name: "SIGTERM" },
  16: { name: "SIGSTKFLT" },
  17: { name: "SIGCHLD" },
  18: { name: "SIGCONT" },
  19: { name: "SIGSTOP" },
  20: { name: "SIGTSTP" },
  21: { name: "SIGTTIN" },
  22: { name: "SIGTTOU" },
  23: { name: "SIGURG" },
  24: { name: "SIGXCPU" },
  25: { name: "SIGXFSZ" },
  26: { name: "SIGVTALRM" },
  27: { name: "SIGPROF" },
  28: { name: "SIGWINCH" },
  29: { name: "SIGIO" },
  30: { name: "SIGPWR" },
  31: { name: "SIGSYS" },
  0xffffffff: { name: "DUMP_REQUESTED" },
};

/** Solaris signals (sys/iso/signal_iso.h); Breakpad prints the name alone. */
const SOLARIS_SIGNALS: readonly string[] = [
  "", "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGIOT | SIGABRT", "SIGEMT", "SIGFPE", "SIGKILL", "SIGBUS", "SIGSEGV",
  "SIGSYS", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGUSR1", "SIGUSR2", "SIGCLD | SIGCHLD", "SIGPWR", "SIGWINCH", "SIGURG",
  "SIGPOLL | SIGIO", "SIGSTOP", "SIGTSTP", "SIGCONT", "SIGTTIN", "SIGTTOU", "SIGVTALRM", "SIGPROF", "SIGXCPU", "SIGXFSZ",
  "SIGWAITING", "SIGLWP", "SIGFREEZE", "SIGTHAW", "SIGCANCEL", "SIGLOST", "SIGXRES", "SIGJVM1", "SIGJVM2",
];

/** Fuchsia exception types (zircon/syscalls/exception.h), printed as `NAME / 0x<flags>`. */
const FUCHSIA_EXCEPTIONS: Readonly<Record<number, string>> = {
  0x8: "GENERAL",
  0x108: "FATAL_PAGE_FAULT",
  0x208: "UNDEFINED_INSTRUCTION",
  0x308: "SW_BREAKPOINT",
  0x408: "HW_BREAKPOINT",
  0x508: "UNALIGNED_ACCESS",
  0x8008: "THREAD_STARTING",
  0x8108: "THREAD_EXITING",
  0x8208: "POLICY_ERROR",
  0x8308: "PROCESS_STARTING",
};

/** Mach exception codes by CPU family: which names a code has depends on the CPU (mach/<cpu>/exception.h). */
export type MachCodes = Readonly<Record<number, string>>;
export type CpuFamily = "arm" | "ppc" | "x86" | "other";

/**
 * A Mach exception type (mach/exception_types.h) with the names of its codes (the exception
 * flags): `codes` for any CPU, checked first, then the CPU family's. Without `codes` and
 * `byCpu` the code prints in hex; `fixed` replaces the whole reason (Crashpad's simulated
 * exceptions).
 */
export interface MachException {
  name: string;
  codes?: MachCodes;
  byCpu?: Partial<Record<CpuFamily, MachCodes>>;
  fixed?: string;
}

export const MACH_EXCEPTIONS: Readonly<Record<number, MachException>> = {
  1: {
    name: "EXC_BAD_ACCESS",
    codes: { 1: "KERN_INVALID_ADDRESS", 2: "KERN_PROTECTION_FAILURE", 8: "KERN_NO_ACCESS", 9: "KERN_MEMORY_FAILURE", 10: "KERN_MEMORY_ERROR", 50: "KERN_CODESIGN_ERROR" },
    byCpu: {
      arm: { 0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG" },
      ppc: { 0x101: "EXC_PPC_VM_PROT_READ", 0x102: "EXC_PPC_BADSPACE", 0x103: "EXC_PPC_UNALIGNED" },
      x86: { 13: "EXC_I386_GPFLT" },
    },
  },
  2: {
    name: "EXC_BAD_INSTRUCTION",
    byCpu: {
      arm: { 1: "EXC_ARM_UNDEFINED" },
      ppc: { 1: "EXC_PPC_INVALID_SYSCALL", 2: "EXC_PPC_UNIPL_INST", 3: "EXC_PPC_PRIVINST", 4: "EXC_PPC_PRIVREG", 5: "EXC_PPC_TRACE", 6: "EXC_PPC_PERFMON" },
      x86: { 1: "EXC_I386_INVOP", 10: "EXC_I386_INVTSSFLT", 11: "EXC_I386_SEGNPFLT", 12: "EXC_I386_STKFLT", 13: "EXC_I386_GPFLT", 17: "EXC_I386_ALIGNFLT" },
    },
  },
  3: {
    name: "EXC_ARITHMETIC",
    byCpu: {
      ppc: {
        1: "EXC_PPC_OVERFLOW", 2: "EXC_PPC_ZERO_DIVIDE", 3: "EXC_FLT_INEXACT", 4: "EXC_PPC_FLT_ZERO_DIVIDE", 5: "EXC_PPC_FLT_UNDERFLOW",
        6: "EXC_PPC_FLT_OVERFLOW", 7: "EXC_PPC_FLT_NOT_A_NUMBER", 8: "EXC_PPC_NOEMULATION", 9: "EXC_PPC_ALTIVECASSIST",
      },
      x86: { 1: "EXC_I386_DIV", 2: "EXC_I386_INTO", 3: "EXC_I386_NOEXT", 4: "EXC_I386_EXTOVR", 5: "EXC_I386_EXTERR", 6: "EXC_I386_EMERR", 7: "EXC_I386_BOUND", 8: "EXC_I386_SSEEXTERR" },
    },
  },
  4: { name: "EXC_EMULATION" },
  5: { name: "EXC_SOFTWARE", codes: { 0x00010002: "SIGABRT", 0xdeadc0de: "UNCAUGHT_NS_EXCEPTION", 0x00000001: "EXC_PPC_TRAP", 0x00010100: "EXC_PPC_MIGRATE" } },
  6: {
    name: "EXC_BREAKPOINT",
    byCpu: {
      arm: { 0x101: "EXC_ARM_DA_ALIGN", 0x102: "EXC_ARM_DA_DEBUG", 1: "EXC_ARM_BREAKPOINT" },
      ppc: { 1: "EXC_PPC_BREAKPOINT" },
      x86: { 1: "EXC_I386_SGL", 2: "EXC_I386_BPT" },
    },
  },
  7: { name: "EXC_SYSCALL" },
  8: { name: "EXC_MACH_SYSCALL" },
  9: { name: "EXC_RPC_ALERT" },
  11: { name: "EXC_RESOURCE" },
  12: { name: "EXC_GUARD" },
  /** Crashpad's SimulateCrash ('CPsx'). */
  0x43507378: { name: "", fixed: "Simulated Exception" },
  /** Crashpad's report of an uncaught NSException ('CPnx'). */
  0x43506e78: { name: "", fixed: "Uncaught NSException" },
};

/** The CPU family whose Mach exception codes apply (Breakpad: ARM and the old ARM64 id, PPC, x86 and AMD64). */
function cpuFamily(arch: number): CpuFamily {
  if (arch === CPU.arm || arch === CPU.arm64Old) return "arm";
  if (arch === CPU.ppc) return "ppc";
  if (arch === CPU.x86 || arch === CPU.amd64) return "x86";
  return "other";
}

/** 32-bit CPUs, whose crash address Breakpad masks to 32 bits: x86, MIPS, PPC, SHx, ARM and x86 on Win64. */
const CPUS_32 = new Set([0, 1, 3, 4, 5, 10]);

/** The Windows reason and address (GetCrashReason's MD_OS_WIN32_* branch). */
function windowsReason(code: number, parameters: readonly bigint[], numberParameters: number, address: bigint): { reason?: string; address: bigint } {
  let reason = WINDOWS_EXCEPTION_NAMES[code];
  if (code === ACCESS_VIOLATION || code === IN_PAGE_ERROR) {
    if (numberParameters >= 1) reason += ACCESS_KIND[String(parameters[0] ?? 0n)] ?? "";
    if (numberParameters >= 2 && parameters[1] !== undefined) address = parameters[1];
    if (code === IN_PAGE_ERROR && numberParameters >= 3 && parameters[2] !== undefined) {
      const status = Number(parameters[2] & 0xffff_ffffn);
      reason += ` / ${NTSTATUS_NAMES[status] ?? hex8(status)}`;
    }
  } else if (code === STACK_BUFFER_OVERRUN && numberParameters >= 1) {
    reason = FAST_FAIL.get(Number((parameters[0] ?? 0n) & 0xffff_ffffn)) ?? reason;
  }
  return reason === undefined ? { address } : { reason, address };
}

/** The Mach exception's reason (GetCrashReason's MD_OS_MAC_OS_X / MD_OS_IOS branch), undefined for an unknown type. */
function machReason(code: number, flags: number, arch: number): string | undefined {
  const e = MACH_EXCEPTIONS[code];
  if (e === undefined) return undefined;
  if (e.fixed !== undefined) return e.fixed;
  const named = e.codes?.[flags] ?? e.byCpu?.[cpuFamily(arch)]?.[flags];
  return `${e.name} / ${named ?? hex8(flags)}`;
}

/** A Linux or Android signal's reason, undefined for an unknown signal. */
function linuxReason(code: number, flags: number): string | undefined {
  const s = LINUX_SIGNALS[code];
  if (s === undefined) return undefined;
  if (s.codes === undefined) return s.name;
  return `${s.name}${s.separator ?? " / "}${s.codes[flags - 1] ?? hex8(flags)}`;
}

/**
 * Breakpad's crash reason and crash address for a dump's Exception stream (minidump.md §4): the
 * name of the exception under the dump's OS (SystemInfo.PlatformId), else `0x<code> / 0x<flags>`.
 * On Windows the address is ExceptionInformation[1] for access violations and in-page errors
 * with at least two parameters, else ExceptionAddress; with SystemInfo present it is masked to
 * 32 bits on 32-bit CPUs.
 */
export function crashReason(dump: Minidump): { reason: string; address: bigint } | undefined {
  const ex = dump.exception;
  if (ex === undefined) return undefined;
  const code = ex.code >>> 0;
  const flags = ex.flags >>> 0;
  const numeric = `${hex8(code)} / ${hex8(flags)}`;
  const sys = dump.systemInfo;
  if (sys === undefined) return { reason: numeric, address: ex.address };
  let address = ex.address;
  let reason: string | undefined;
  switch (sys.platformId) {
    case OS.windows:
    case OS.windowsNt: {
      const w = windowsReason(code, ex.parameters, ex.numberParameters, address);
      reason = w.reason;
      address = w.address;
      break;
    }
    case OS.linux:
    case OS.android:
      reason = linuxReason(code, flags);
      break;
    case OS.mac:
    case OS.ios:
      reason = machReason(code, flags, sys.processorArchitecture);
      break;
    case OS.solaris:
      reason = SOLARIS_SIGNALS[code] || undefined;
      break;
    case OS.fuchsia: {
      const name = FUCHSIA_EXCEPTIONS[code];
      if (name !== undefined) reason = `${name} / ${hex8(flags)}`;
      break;
    }
  }
  if (CPUS_32.has(sys.processorArchitecture)) address &= 0xffff_ffffn;
  return { reason: reason ?? numeric, address };
}

/** What a dump says of its crash, for a report's header: the reason and address Breakpad gives, and the thread that crashed. */
export interface CrashSummary {
  reason: string;
  address: bigint;
  threadId: number;
  /** The crashing instruction, when it was disassembled (crash-info.ts). */
  instruction?: string;
}

/** The crash of a dump with an Exception stream ({@link crashReason}, and the stream's thread id); undefined without one. */
export function crashSummary(dump: Minidump): CrashSummary | undefined {
  const crash = crashReason(dump);
  return crash === undefined || dump.exception === undefined ? undefined : { ...crash, threadId: dump.exception.threadId };
}
