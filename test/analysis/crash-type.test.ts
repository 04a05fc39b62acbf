/**
 * `crash_info.type` as rust-minidump writes it (its minidump crate's `CrashReason` and that
 * type's Display), per OS family, from the names and rules rust-minidump documents: the
 * exception tables of minidump-common's errors (windows.rs, linux.rs, macos.rs) and the text
 * each kind of reason is written as. Breakpad's wording of the same records (breakpad-crash.ts)
 * is checked beside it where the two differ.
 */
import { describe, expect, it } from "vitest";
import { crashTypeOf, type CrashTypeInput } from "../../src/analysis/crash-type.js";
import { crashReason } from "../../src/analysis/breakpad-crash.js";
import type { Minidump } from "../../src/formats/minidump.js";

const WINDOWS = 2;
const LINUX = 0x8201;
const ANDROID = 0x8203;
const MAC = 0x8101;
const IOS = 0x8102;
const X86 = 0;
const AMD64 = 9;
const PPC = 3;
const ARM64 = 12;
const ARM64_OLD = 0x8003;

function record(platformId: number | undefined, processorArchitecture: number | undefined, code: number, flags = 0, parameters: bigint[] = []): CrashTypeInput {
  return { platformId, processorArchitecture, code, flags, parameters, numberParameters: parameters.length };
}

/** Breakpad's reason for the same record (the `--format breakpad` wording). */
function breakpad(r: CrashTypeInput): string | undefined {
  const dump = {
    exception: { threadId: 1, code: r.code, flags: r.flags, record: 0n, address: 0n, numberParameters: r.numberParameters, parameters: [...r.parameters], contextLocation: { dataSize: 0, rva: 0 } },
    systemInfo: r.platformId === undefined ? undefined : { platformId: r.platformId, processorArchitecture: r.processorArchitecture ?? 0 },
  } as unknown as Minidump;
  return crashReason(dump)?.reason;
}

describe("crash_info.type on Windows", () => {
  it("names an access violation with its access when a parameter says it, and the exception alone otherwise", () => {
    expect(crashTypeOf(record(WINDOWS, X86, 0xc0000005, 0, [1n, 0x45n]))).toBe("EXCEPTION_ACCESS_VIOLATION_WRITE");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000005, 0, [0n, 0n]))).toBe("EXCEPTION_ACCESS_VIOLATION_READ");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000005, 0, [8n, 0x1000n]))).toBe("EXCEPTION_ACCESS_VIOLATION_EXEC");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000005, 0, [2n, 0x1000n]))).toBe("EXCEPTION_ACCESS_VIOLATION");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000005))).toBe("EXCEPTION_ACCESS_VIOLATION");
  });

  it("gives an in-page error its access and NTSTATUS only with three parameters (Breakpad adds the access with one)", () => {
    const three = record(WINDOWS, AMD64, 0xc0000006, 0, [0n, 0x1000n, 0xc000009dn]);
    expect(crashTypeOf(three)).toBe("EXCEPTION_IN_PAGE_ERROR_READ / STATUS_DEVICE_NOT_CONNECTED");
    expect(breakpad(three)).toBe("EXCEPTION_IN_PAGE_ERROR_READ / STATUS_DEVICE_NOT_CONNECTED");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000006, 0, [1n, 0x1000n, 0x12345678n]))).toBe("EXCEPTION_IN_PAGE_ERROR_WRITE / 0x12345678");
    const two = record(WINDOWS, AMD64, 0xc0000006, 0, [1n, 0x1000n]);
    expect(crashTypeOf(two)).toBe("EXCEPTION_IN_PAGE_ERROR");
    expect(breakpad(two)).toBe("EXCEPTION_IN_PAGE_ERROR_WRITE");
  });

  it("writes a __fastfail as EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_…, code 0 and unknown codes too (Breakpad prints the fast-fail name alone)", () => {
    const fatal = record(WINDOWS, AMD64, 0xc0000409, 0, [7n]);
    expect(crashTypeOf(fatal)).toBe("EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_FATAL_APP_EXIT");
    expect(breakpad(fatal)).toBe("FAST_FAIL_FATAL_APP_EXIT");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000409, 0, [0n]))).toBe("EXCEPTION_STACK_BUFFER_OVERRUN / FAST_FAIL_LEGACY_GS_VIOLATION");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000409, 0, [0x1_0000_00ffn]))).toBe("EXCEPTION_STACK_BUFFER_OVERRUN / 0x000000ff");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000409))).toBe("STATUS_STACK_BUFFER_OVERRUN");
  });

  it("names the exception codes, writes the special ones in words, and names other codes as errors", () => {
    expect(crashTypeOf(record(WINDOWS, X86, 0xc00000fd))).toBe("EXCEPTION_STACK_OVERFLOW");
    expect(crashTypeOf(record(WINDOWS, X86, 0x80000003))).toBe("EXCEPTION_BREAKPOINT");
    expect(crashTypeOf(record(WINDOWS, X86, 0xc0000094))).toBe("EXCEPTION_INT_DIVIDE_BY_ZERO");
    expect(crashTypeOf(record(WINDOWS, X86, 0xe06d7363))).toBe("Unhandled C++ Exception");
    expect(crashTypeOf(record(WINDOWS, X86, 0xe0000008))).toBe("Out of Memory");
    expect(crashTypeOf(record(WINDOWS, X86, 0x0517a7ed))).toBe("Simulated Exception");
    expect(crashTypeOf(record(WINDOWS, X86, 0xe0434352))).toBe("MANAGED_EXCEPTION_CODE_V4");
    // Codes Breakpad names as exceptions and rust-minidump as NTSTATUS values.
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000374))).toBe("STATUS_HEAP_CORRUPTION");
    expect(breakpad(record(WINDOWS, AMD64, 0xc0000374))).toBe("EXCEPTION_HEAP_CORRUPTION");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc00000ff))).toBe("STATUS_BAD_FUNCTION_TABLE");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0x40010005))).toBe("DBG_CONTROL_C");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc0000602))).toBe("STATUS_FAIL_FAST_EXCEPTION");
    // A delay-load failure: severity bits, FACILITY_VISUALCPP (109) and ERROR_MOD_NOT_FOUND.
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc06d007e))).toBe("FACILITY_VISUALCPP / ERROR_MOD_NOT_FOUND");
    expect(crashTypeOf(record(WINDOWS, AMD64, 0xc06d007f))).toBe("FACILITY_VISUALCPP / ERROR_PROC_NOT_FOUND");
  });

  it("writes a code no table names as unknown 0x%08x (Breakpad: code / flags)", () => {
    const odd = record(WINDOWS, AMD64, 0xdeadbeef, 1);
    expect(crashTypeOf(odd)).toBe("unknown 0xdeadbeef");
    expect(breakpad(odd)).toBe("0xdeadbeef / 0x00000001");
  });
});

describe("crash_info.type on Linux and Android", () => {
  it("writes a signal with its si_code as `SIGNAL / CODE`, spaced on both sides (Breakpad writes SIGSEGV's with none after the slash)", () => {
    const segv = record(LINUX, AMD64, 11, 1);
    expect(crashTypeOf(segv)).toBe("SIGSEGV / SEGV_MAPERR");
    expect(breakpad(segv)).toBe("SIGSEGV /SEGV_MAPERR");
    expect(crashTypeOf(record(ANDROID, ARM64_OLD, 11, 2))).toBe("SIGSEGV / SEGV_ACCERR");
    expect(crashTypeOf(record(LINUX, AMD64, 4, 2))).toBe("SIGILL / ILL_ILLOPN");
    expect(crashTypeOf(record(LINUX, AMD64, 4, 9))).toBe("SIGILL / ILL_BADIADDR");
    expect(crashTypeOf(record(LINUX, AMD64, 8, 1))).toBe("SIGFPE / FPE_INTDIV");
    expect(crashTypeOf(record(LINUX, AMD64, 7, 2))).toBe("SIGBUS / BUS_ADRERR");
    expect(crashTypeOf(record(LINUX, AMD64, 5, 1))).toBe("SIGTRAP / TRAP_BRKPT");
    expect(crashTypeOf(record(LINUX, AMD64, 31, 1))).toBe("SIGSYS / SYS_SECCOMP");
  });

  it("writes the signal alone for SI_USER (0), and the generic si_codes by name, others in hex", () => {
    const user = record(LINUX, AMD64, 11, 0);
    expect(crashTypeOf(user)).toBe("SIGSEGV");
    expect(breakpad(user)).toBe("SIGSEGV /0x00000000");
    expect(crashTypeOf(record(LINUX, AMD64, 8, 0))).toBe("SIGFPE");
    expect(crashTypeOf(record(LINUX, AMD64, 6, 0))).toBe("SIGABRT");
    expect(crashTypeOf(record(LINUX, AMD64, 11, 0x80))).toBe("SIGSEGV / SI_KERNEL");
    expect(crashTypeOf(record(LINUX, AMD64, 6, 0xfffffffa))).toBe("SIGABRT / SI_TKILL");
    expect(crashTypeOf(record(LINUX, AMD64, 6, 0xffffffff))).toBe("SIGABRT / SI_QUEUE");
    expect(crashTypeOf(record(LINUX, AMD64, 6, 0xffffffc4))).toBe("SIGABRT / SI_ASYNCNL");
    expect(crashTypeOf(record(LINUX, AMD64, 11, 5))).toBe("SIGSEGV / 0x00000005");
    expect(crashTypeOf(record(LINUX, AMD64, 0xffffffff, 0))).toBe("DUMP_REQUESTED");
  });

  it("writes an unknown signal as unknown code / flags", () => {
    expect(crashTypeOf(record(LINUX, AMD64, 42, 3))).toBe("unknown 0x0000002a / 0x00000003");
  });
});

describe("crash_info.type on macOS and iOS", () => {
  it("names EXC_BAD_ACCESS's kern_return_t codes first, then the CPU's", () => {
    expect(crashTypeOf(record(MAC, AMD64, 1, 1))).toBe("EXC_BAD_ACCESS / KERN_INVALID_ADDRESS");
    expect(crashTypeOf(record(IOS, ARM64, 1, 2))).toBe("EXC_BAD_ACCESS / KERN_PROTECTION_FAILURE");
    expect(crashTypeOf(record(MAC, AMD64, 1, 5))).toBe("EXC_BAD_ACCESS / KERN_FAILURE");
    expect(breakpad(record(MAC, AMD64, 1, 5))).toBe("EXC_BAD_ACCESS / 0x00000005");
    expect(crashTypeOf(record(MAC, AMD64, 1, 13))).toBe("EXC_BAD_ACCESS / EXC_I386_GPFLT");
    expect(crashTypeOf(record(MAC, ARM64, 1, 0x105))).toBe("EXC_BAD_ACCESS / EXC_ARM_PAC_FAIL");
    expect(crashTypeOf(record(MAC, PPC, 1, 0x103))).toBe("EXC_BAD_ACCESS / EXC_PPC_UNALIGNED");
    expect(crashTypeOf(record(MAC, ARM64, 1, 13))).toBe("EXC_BAD_ACCESS / 0x0000000d");
  });

  it("names the CPU's codes of bad instructions, arithmetic and breakpoints, software codes on any CPU", () => {
    expect(crashTypeOf(record(MAC, AMD64, 2, 1))).toBe("EXC_BAD_INSTRUCTION / EXC_I386_INVOP");
    expect(crashTypeOf(record(IOS, ARM64, 2, 1))).toBe("EXC_BAD_INSTRUCTION / EXC_ARM_UNDEFINED");
    expect(crashTypeOf(record(MAC, AMD64, 3, 1))).toBe("EXC_ARITHMETIC / EXC_I386_DIV");
    expect(crashTypeOf(record(MAC, ARM64, 3, 2))).toBe("EXC_ARITHMETIC / EXC_ARM_FP_DZ");
    expect(crashTypeOf(record(MAC, AMD64, 6, 2))).toBe("EXC_BREAKPOINT / EXC_I386_BPT");
    expect(crashTypeOf(record(IOS, ARM64, 6, 1))).toBe("EXC_BREAKPOINT / EXC_ARM_BREAKPOINT");
    expect(crashTypeOf(record(MAC, ARM64, 5, 0x10002))).toBe("EXC_SOFTWARE / SIGABRT");
    expect(crashTypeOf(record(MAC, AMD64, 5, 0xdeadc0de))).toBe("EXC_SOFTWARE / UNCAUGHT_NS_EXCEPTION");
    expect(crashTypeOf(record(MAC, AMD64, 4, 7))).toBe("EXC_EMULATION / 0x00000007");
  });

  it("decodes EXC_RESOURCE and EXC_GUARD from the exception information", () => {
    // RESOURCE_TYPE_MEMORY (3 << 29), FLAVOR_HIGH_WATERMARK (1 << 58), a limit of 0x100 MiB.
    expect(crashTypeOf(record(IOS, ARM64, 11, 0x6000_0000, [0n, (1n << 58n) | 0x100n, 0n]))).toBe("EXC_RESOURCE / RESOURCE_TYPE_MEMORY / FLAVOR_HIGH_WATERMARK high watermark limit: 256MiB");
    // RESOURCE_TYPE_CPU, FLAVOR_CPU_MONITOR, interval 180 s, limit 5 %, consumed 7 %.
    expect(crashTypeOf(record(MAC, AMD64, 11, 0x2000_0000, [0n, (1n << 58n) | (180n << 7n) | 5n, 7n]))).toBe("EXC_RESOURCE / RESOURCE_TYPE_CPU / FLAVOR_CPU_MONITOR interval: 180s CPU limit: 5% CPU consumed: 7%");
    expect(crashTypeOf(record(MAC, AMD64, 11, 0x2000_0000, [0n, 7n << 58n, 1n]))).toBe("EXC_RESOURCE / RESOURCE_TYPE_CPU / 0x1c00000000000000 / 0x0000000000000001");
    // GUARD_TYPE_FD (2 << 29), GUARD_EXC_CLOSE (1 << 32), fd 3, guard 0xabc.
    expect(crashTypeOf(record(MAC, ARM64, 12, 0x4000_0000, [0n, (1n << 32n) | 3n, 0xabcn]))).toBe("EXC_GUARD / GUARD_TYPE_FD / GUARD_EXC_CLOSE file descriptor: 3 guard identifier: 2748");
    expect(crashTypeOf(record(MAC, ARM64, 12, 0x2000_0000, [0n, (1n << 32n) | 0x1234n, 0n]))).toBe("EXC_GUARD / GUARD_TYPE_MACH_PORT / GUARD_EXC_DESTROY port name: 4660");
    expect(crashTypeOf(record(MAC, ARM64, 12, 0x6000_0000, [0n, 42n, 9n]))).toBe("EXC_GUARD / GUARD_TYPE_USER/ namespace: 42 guard identifier: 9");
    expect(crashTypeOf(record(MAC, ARM64, 12, 0, [0n, 0n, 0n]))).toBe("EXC_GUARD / GUARD_TYPE_NONE");
    expect(crashTypeOf(record(MAC, ARM64, 12, 0xe000_0000))).toBe("EXC_GUARD / 0xe0000000");
  });

  it("writes Crashpad's simulated crash in words, and an exception no table names as unknown code / flags", () => {
    expect(crashTypeOf(record(MAC, AMD64, 0x43507378, 0))).toBe("Simulated Exception");
    const nsException = record(IOS, AMD64, 0x43506e78, 0);
    expect(crashTypeOf(nsException)).toBe("unknown 0x43506e78 / 0x00000000");
    expect(breakpad(nsException)).toBe("Uncaught NSException");
  });
});

describe("crash_info.type elsewhere", () => {
  it("is unknown code / flags on an OS rust-minidump reads no reasons for, and without SystemInfo", () => {
    expect(crashTypeOf(record(0x8202, 0, 11, 1))).toBe("unknown 0x0000000b / 0x00000001");
    expect(crashTypeOf(record(0x8206, ARM64, 0x108, 0))).toBe("unknown 0x00000108 / 0x00000000");
    expect(crashTypeOf(record(undefined, undefined, 0xc0000005, 0, [1n, 0n]))).toBe("unknown 0xc0000005 / 0x00000000");
  });
});
