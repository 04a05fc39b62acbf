/**
 * Pieces of the Breakpad report (src/render/breakpad.ts, minidump.md §4–§6): register lines and
 * their 80-column wrapping, which registers a frame prints and in what order (x86 and AMD64),
 * the "Found by:" texts, the crash reason, and a whole report of a synthetic AMD64 dump with a
 * dump-writer thread to skip.
 */
import { describe, expect, it } from "vitest";
import { bytesSource, minidumpSnapshot, readMinidump, type Minidump } from "../../src/formats/minidump.js";
import { breakpadRegisters, breakpadTrust, formatRegisterLines, renderBreakpad, renderBreakpadMachineReadable } from "../../src/render/breakpad.js";
import { breakpadReport } from "../../src/analysis/breakpad-report.js";
import { crashReason } from "../../src/analysis/breakpad-crash.js";
import type { Frame, Trust } from "../../src/walk/frame.js";
import type { FpoData } from "../../src/model/fpo-data.js";
import type { FrameData } from "../../src/formats/frame-data.js";
import { CONTEXT_RULE } from "../../src/unwind/rule.js";
import type { Rule } from "../../src/arch/rule.js";
import { x64Dump } from "./x64-dump.js";

function frame(index: number, trust: Trust, registers: Record<string, bigint>, rule: Rule = CONTEXT_RULE): Frame {
  return { index, addrPC: registers["eip"] ?? registers["rip"] ?? 0n, addrReturn: 0n, addrFrame: 0n, addrStack: 0n, addrBStore: 0n, params: [], far: false, virtual: false, trust, rule, registers };
}

const FPO: FpoData = { ulOffStart: 0x1000, cbProcSize: 0x40, cdwLocals: 2, cdwParams: 1, cbProlog: 3, cbRegs: 1, fHasSEH: false, fUseBP: false, reserved: 0, cbFrame: 0 };
const FRAME_DATA: FrameData = {
  rvaStart: 0x1000, codeSize: 0x40, localSize: 8, paramsSize: 4, maxStackSize: 0, frameFunc: 0, prologSize: 3, savedRegsSize: 4, flags: 0, hasSEH: false, hasEH: false, isFunctionStart: true,
};
const SCAN: Rule = { kind: "scan", registers: { sp: "esp", fp: "ebp" }, sp: 0x12fe84n, slot: 0x12fe90n, value: 0x401234n };
const REPAIRED = (rule: Extract<Rule, { kind: "fpo" | "frame-data" }>): Rule => ({ kind: "site-check", rule, found: "scan", eip: 0x1234n, slot: 0x12fe90n, value: 0x401234n });

const X86_CONTEXT = {
  eip: 0x0040429en, esp: 0x0012fe84n, ebp: 0x0012fe88n, ebx: 0x7c80abc1n, esi: 2n, edi: 0xa28n,
  eax: 0x45n, ecx: 0x0012fe94n, edx: 0x0042bc58n, eflags: 0x10246n, cs: 0x1bn, ds: 0x23n,
};

describe("register lines", () => {
  it("x86: four registers a line, each ` %5s = 0x%08x`, a new line starting with one space", () => {
    const text = " " + formatRegisterLines(breakpadRegisters("x86", frame(0, "context", X86_CONTEXT)), 8);
    expect(text.split("\n")).toEqual([
      "    eip = 0x0040429e   esp = 0x0012fe84   ebp = 0x0012fe88   ebx = 0x7c80abc1",
      "    esi = 0x00000002   edi = 0x00000a28   eax = 0x00000045   ecx = 0x0012fe94",
      "    edx = 0x0042bc58   efl = 0x00010246",
    ]);
  });

  it("wraps only when a register would pass column 80: exactly 80 still fits", () => {
    // A 6-letter name makes a 20-column entry: four fill 80 columns, the fifth goes on a new line.
    const regs: [string, bigint][] = ["abcdef", "bcdefg", "cdefgh", "defghi", "efghij"].map((n) => [n, 1n]);
    const lines = formatRegisterLines(regs, 8).split("\n");
    expect(lines[0]!.length).toBe(80);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toBe("  efghij = 0x00000001");
  });

  it("64-bit registers: ` %5s = 0x%016x`, two a line", () => {
    const text = formatRegisterLines([["rax", 1n], ["rdx", 2n], ["rcx", 3n]], 16);
    expect(text.split("\n")).toEqual(["   rax = 0x0000000000000001   rdx = 0x0000000000000002", "    rcx = 0x0000000000000003"]);
  });
});

describe("which registers a frame prints", () => {
  it("x86 context frame: eip esp ebp ebx esi edi, then eax ecx edx efl", () => {
    expect(breakpadRegisters("x86", frame(0, "context", X86_CONTEXT)).map(([n]) => n)).toEqual(["eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx", "efl"]);
  });

  it("x86 caller frame: only the recovered ones among eip esp ebp ebx esi edi, in that order", () => {
    const f = frame(1, "frame-data", { esi: 5n, ebp: 3n, eip: 1n, esp: 2n, eax: 9n });
    expect(breakpadRegisters("x86", f)).toEqual([["eip", 1n], ["esp", 2n], ["ebp", 3n], ["esi", 5n]]);
  });

  it("x86 caller frame whose rule left EBP alone: EBP carried over, as Breakpad keeps it valid", () => {
    const f: Frame = { ...frame(1, "fpo", { eip: 1n, esp: 2n }), unwindRegisters: { eip: 1n, esp: 2n, ebp: 7n, ebx: 8n } };
    expect(breakpadRegisters("x86", f)).toEqual([["eip", 1n], ["esp", 2n], ["ebp", 7n]]);
  });

  it("amd64: rax rdx rcx rbx rsi rdi rbp rsp r8 … r15 rip, those present", () => {
    const all = Object.fromEntries(["rip", "r15", "r8", "rsp", "rax", "rcx", "rdx", "rbx", "rbp", "rsi", "rdi", "r9", "r10", "r11", "r12", "r13", "r14", "eflags"].map((n, i) => [n, BigInt(i)]));
    expect(breakpadRegisters("amd64", frame(0, "context", all)).map(([n]) => n)).toEqual([
      "rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
    ]);
    expect(breakpadRegisters("amd64", frame(1, "unwind-info", { rip: 1n, rsp: 2n, rbx: 3n })).map(([n]) => n)).toEqual(["rbx", "rsp", "rip"]);
  });

  it("a CPU Breakpad prints no registers for: none", () => {
    expect(breakpadRegisters("0x0006", frame(0, "context", X86_CONTEXT))).toEqual([]);
  });
});

describe("Found by", () => {
  it.each([
    ["context", CONTEXT_RULE, "given as instruction pointer in context"],
    ["frame-data", { kind: "frame-data", record: FRAME_DATA, ra: { at: "esp", offset: 12, moved: 0 } }, "call frame info"],
    ["fpo", { kind: "fpo", record: FPO, form: "body", raOffset: 12, moved: 0, ebpSlot: -1 }, "call frame info"],
    ["unwind-info", { kind: "unwind-info", function: { begin: 0x1000 }, body: false, parts: [], frameRegisterIgnored: false, callerRsp: "rsp+0x8" }, "call frame info"],
    ["cfi", { kind: "cfi", rva: 0x1000, rules: [[".cfa", "$rsp 8 +"], [".ra", ".cfa 8 - ^"]] }, "call frame info"],
    ["frame-pointer", { kind: "frame-pointer", chain: { pc: "eip", sp: "esp", fp: "ebp", width: 4 }, fp: 0x12fe88n, pc: 0x401234n, savedFp: 0x12fea0n }, "previous frame's frame pointer"],
    ["scan", SCAN, "stack scanning"],
    ["scan", { kind: "rescan", problem: "unwind-info rva=0x1000 ops=[] rsp+0x8: [0x12fe84] = 0x5 is not a return address", start: 0x12fe84n, slot: 0x12fe90n, value: 0x401234n }, "stack scanning"],
    ["scan", REPAIRED({ kind: "frame-data", record: FRAME_DATA, ra: { at: "esp", offset: 12, moved: 0 } }), "call frame info with scanning"],
    ["scan", REPAIRED({ kind: "fpo", record: FPO, form: "body", raOffset: 12, moved: 0, ebpSlot: -1 }), "call frame info with scanning"],
    ["scan", { kind: "leaf", slot: 0x12fe84n, value: 0x401234n }, "simulating a return from leaf function"],
  ] as const satisfies readonly (readonly [Trust, Rule, string])[])("trust %s, rule %o → %s", (trust, rule, text) => {
    // From the trust and the rule's kind, not from its text.
    expect(breakpadTrust(frame(1, trust, {}, rule))).toBe(text);
  });
});

describe("crash reason", () => {
  function dumpWith(code: number, parameters: bigint[], platformId = 2, arch = 0, address = 0x401000n): Minidump {
    return {
      exception: { threadId: 1, code, flags: 0, record: 0n, address, numberParameters: parameters.length, parameters, contextLocation: { dataSize: 0, rva: 0 } },
      systemInfo: { platformId, processorArchitecture: arch },
    } as unknown as Minidump;
  }

  it.each([
    ["EXCEPTION_ACCESS_VIOLATION_WRITE", 0xc0000005, [1n, 0x45n], 0x45n],
    ["EXCEPTION_ACCESS_VIOLATION_READ", 0xc0000005, [0n, 0n], 0n],
    ["EXCEPTION_ACCESS_VIOLATION_EXEC", 0xc0000005, [8n, 0x401000n], 0x401000n],
    ["EXCEPTION_ACCESS_VIOLATION", 0xc0000005, [3n, 0x10n], 0x10n],
    ["EXCEPTION_ACCESS_VIOLATION", 0xc0000005, [], 0x401000n],
    ["EXCEPTION_IN_PAGE_ERROR_READ / STATUS_DEVICE_DATA_ERROR", 0xc0000006, [0n, 0x2000n, 0xc000009cn], 0x2000n],
    ["EXCEPTION_IN_PAGE_ERROR_WRITE / 0xc0001234", 0xc0000006, [1n, 0x2000n, 0xc0001234n], 0x2000n],
    ["EXCEPTION_STACK_OVERFLOW", 0xc00000fd, [0n, 0x12000n], 0x401000n],
    ["Unhandled C++ Exception", 0xe06d7363, [], 0x401000n],
    ["0x12345678 / 0x00000000", 0x12345678, [], 0x401000n],
  ] as const)("%s", (reason, code, params, address) => {
    expect(crashReason(dumpWith(code, [...params]))).toEqual({ reason, address });
  });

  it.each([
    ["FAST_FAIL_FATAL_APP_EXIT", 7n],
    ["FAST_FAIL_STACK_COOKIE_CHECK_FAILURE", 2n],
    ["FAST_FAIL_INVALID_FLS_DATA", 70n],
    ["FAST_FAIL_GUARD_ICALL_CHECK_FAILURE", 0x1_0000_000an],
    // Code 0 (a legacy /GS overrun) and codes winnt.h does not name keep the exception's name.
    ["EXCEPTION_STACK_BUFFER_OVERRUN", 0n],
    ["EXCEPTION_STACK_BUFFER_OVERRUN", 15n],
  ] as const)("__fastfail: %s", (reason, code) => {
    expect(crashReason(dumpWith(0xc0000409, [code]))?.reason).toBe(reason);
    expect(crashReason(dumpWith(0xc0000409, []))?.reason).toBe("EXCEPTION_STACK_BUFFER_OVERRUN");
  });

  function withFlags(platformId: number, code: number, flags: number, arch = 9): Minidump {
    const d = dumpWith(code, [], platformId, arch, 0x1234n);
    return { ...d, exception: { ...d.exception!, flags } } as Minidump;
  }

  it.each([
    // Linux and Android: the signal, with its si_code where Breakpad names one; SIGSEGV has no space after the slash.
    [0x8201, 11, 0, "SIGSEGV /0x00000000"],
    [0x8201, 11, 1, "SIGSEGV /SEGV_MAPERR"],
    [0x8201, 11, 2, "SIGSEGV /SEGV_ACCERR"],
    [0x8203, 11, 9, "SIGSEGV /SEGV_MTESERR"],
    [0x8201, 8, 0, "SIGFPE / 0x00000000"],
    [0x8201, 8, 1, "SIGFPE / FPE_INTDIV"],
    [0x8201, 4, 2, "SIGILL / ILL_ILLOPN"],
    [0x8201, 7, 2, "SIGBUS / BUS_ADRERR"],
    [0x8201, 7, 9, "SIGBUS / 0x00000009"],
    [0x8201, 6, 0, "SIGABRT"],
    [0x8201, 5, 0, "SIGTRAP"],
    [0x8201, 16, 0, "SIGSTKFLT"],
    [0x8201, 30, 0, "SIGPWR"],
    [0x8201, 31, 0, "SIGSYS"],
    [0x8201, 0xffffffff, 0, "DUMP_REQUESTED"],
    [0x8201, 64, 3, "0x00000040 / 0x00000003"],
    // macOS and iOS: the Mach exception and its code, CPU by CPU; Crashpad's simulated exceptions.
    [0x8101, 1, 1, "EXC_BAD_ACCESS / KERN_INVALID_ADDRESS"],
    [0x8101, 1, 13, "EXC_BAD_ACCESS / EXC_I386_GPFLT"],
    [0x8101, 1, 0x101, "EXC_BAD_ACCESS / 0x00000101"],
    [0x8101, 2, 1, "EXC_BAD_INSTRUCTION / EXC_I386_INVOP"],
    [0x8101, 3, 1, "EXC_ARITHMETIC / EXC_I386_DIV"],
    [0x8101, 5, 0x10002, "EXC_SOFTWARE / SIGABRT"],
    [0x8102, 5, 0xdeadc0de, "EXC_SOFTWARE / UNCAUGHT_NS_EXCEPTION"],
    [0x8101, 6, 2, "EXC_BREAKPOINT / EXC_I386_BPT"],
    [0x8101, 12, 7, "EXC_GUARD / 0x00000007"],
    [0x8102, 0x43506e78, 0, "Uncaught NSException"],
    [0x8101, 0x43507378, 0, "Simulated Exception"],
    [0x8101, 77, 0, "0x0000004d / 0x00000000"],
    // Solaris and Fuchsia.
    [0x8202, 6, 0, "SIGIOT | SIGABRT"],
    [0x8202, 11, 0, "SIGSEGV"],
    [0x8206, 0x108, 4, "FATAL_PAGE_FAULT / 0x00000004"],
  ] as const)("platform %s, code %s, flags %s: %s", (platformId, code, flags, reason) => {
    expect(crashReason(withFlags(platformId, code, flags))).toEqual({ reason, address: 0x1234n });
  });

  it("Mach codes depend on the CPU: ARM's data-abort codes, x86's general protection fault", () => {
    expect(crashReason(withFlags(0x8102, 1, 0x101, 5))?.reason).toBe("EXC_BAD_ACCESS / EXC_ARM_DA_ALIGN");
    expect(crashReason(withFlags(0x8102, 6, 1, 0x8003))?.reason).toBe("EXC_BREAKPOINT / EXC_ARM_BREAKPOINT");
    expect(crashReason(withFlags(0x8101, 1, 13, 12))?.reason).toBe("EXC_BAD_ACCESS / 0x0000000d");
    expect(crashReason(withFlags(0x8101, 1, 13, 0))?.reason).toBe("EXC_BAD_ACCESS / EXC_I386_GPFLT");
  });

  it("without SystemInfo: numbers, and the address as it is", () => {
    const d = { ...dumpWith(0xc0000005, [1n, 0x45n], 2, 0, 0xffff_ffff_0040_1000n), systemInfo: undefined } as unknown as Minidump;
    expect(crashReason(d)).toEqual({ reason: "0xc0000005 / 0x00000000", address: 0xffff_ffff_0040_1000n });
  });

  it("only Windows platforms name codes; 32-bit CPUs mask the address", () => {
    expect(crashReason(dumpWith(0xc0000005, [1n, 0x45n], 0x8201))?.reason).toBe("0xc0000005 / 0x00000000");
    expect(crashReason(dumpWith(0x80000003, [], 2, 0, 0xffff_ffff_0040_1000n))?.address).toBe(0x401000n);
    expect(crashReason(dumpWith(0x80000003, [], 2, 9, 0xffff_ffff_0040_1000n))?.address).toBe(0xffff_ffff_0040_1000n);
  });
});

describe("a synthetic AMD64 dump", () => {
  const dump = readMinidump(bytesSource(x64Dump()));
  const snapshot = minidumpSnapshot(dump);

  it("human report: header, the crashed thread first by its index, the dump-writer thread skipped, warnings", () => {
    const text = renderBreakpad(breakpadReport(dump, snapshot, { symbolPathGiven: true }));
    expect(text).toBe(`Operating system: Windows NT
                  10.0.19045 Service Pack 9
CPU: amd64
     family 6 model 13 stepping 8
     1 CPU

GPU: UNKNOWN

Crash reason:  EXCEPTION_INT_DIVIDE_BY_ZERO
Crash address: 0x140001234
Process uptime: 42 seconds

Thread 1 (crashed)
 0  app.exe + 0x1234
    rax = 0x11110000000000a0   rdx = 0x11110000000000d0
    rcx = 0x11110000000000c0   rbx = 0x11110000000000b0
    rsi = 0x1111000000000051   rdi = 0x11110000000000e1
    rbp = 0x000000000014ff80   rsp = 0x000000000014ff00
     r8 = 0x0000000000000008    r9 = 0x0000000000000009
    r10 = 0x0000000000000010   r11 = 0x0000000000000011
    r12 = 0x0000000000000012   r13 = 0x0000000000000013
    r14 = 0x0000000000000014   r15 = 0x0000000000000015
    rip = 0x0000000140001234
    Found by: given as instruction pointer in context

Thread 0
 0  ntdll.dll + 0x2000
    rax = 0x11110000000000a0   rdx = 0x11110000000000d0
    rcx = 0x11110000000000c0   rbx = 0x11110000000000b0
    rsi = 0x1111000000000051   rdi = 0x11110000000000e1
    rbp = 0x000000000014ff80   rsp = 0x000000000024ff00
     r8 = 0x0000000000000008    r9 = 0x0000000000000009
    r10 = 0x0000000000000010   r11 = 0x0000000000000011
    r12 = 0x0000000000000012   r13 = 0x0000000000000013
    r14 = 0x0000000000000014   r15 = 0x0000000000000015
    rip = 0x00007ff800002000
    Found by: given as instruction pointer in context

Loaded modules:
0x140000000 - 0x140004fff  app.exe  1.2.3.4  (main)  (WARNING: No symbols, app.pdb, 00112233445566778899AABBCCDDEEFF1)
0x7ff800000000 - 0x7ff80000ffff  ntdll.dll  ???  (WARNING: No symbols, ntdll.pdb, 5A9832E5287241C1838ED98914E9B7FF2)
0x7ff900000000 - 0x7ff900007fff  writer.dll  ???
`);
  });

  it("no warnings without a symbol path", () => {
    expect(renderBreakpad(breakpadReport(dump, snapshot))).not.toContain("WARNING");
  });

  it("-m: modules by base, the requesting thread's index, frames numbered per thread", () => {
    expect(renderBreakpadMachineReadable(breakpadReport(dump, snapshot))).toBe(`OS|Windows NT|10.0.19045 Service Pack 9
CPU|amd64|family 6 model 13 stepping 8|1
GPU|||
Crash|EXCEPTION_INT_DIVIDE_BY_ZERO|0x140001234|1
Module|app.exe|1.2.3.4|app.pdb|00112233445566778899AABBCCDDEEFF1|0x140000000|0x140004fff|1
Module|ntdll.dll||ntdll.pdb|5A9832E5287241C1838ED98914E9B7FF2|0x7ff800000000|0x7ff80000ffff|0
Module|writer.dll||writer.pdb|000000000000000000000000000000011|0x7ff900000000|0x7ff900007fff|0

1|0|app.exe||||0x1234
0|0|ntdll.dll||||0x2000
`);
  });

  it("one thread chosen by id keeps its Breakpad index; the dump-writer thread cannot be chosen", () => {
    const report = breakpadReport(dump, snapshot, { thread: 7 });
    expect(report.threads.map((t) => [t.index, t.thread.id])).toEqual([[0, 7]]);
    expect(report.requestingThread).toBe(1);
    expect(() => breakpadReport(dump, snapshot, { thread: 3 })).toThrow(/dump-writer thread/);
    expect(() => breakpadReport(dump, snapshot, { thread: 99 })).toThrow(/no thread with id 99/);
  });
});
