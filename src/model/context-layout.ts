/**
 * The layouts of Windows CONTEXT records (minidump.md §3.1, §3.2; ia64.md §4.1; arm64.md §2.1): sizes,
 * ContextFlags bits, every field's offset, and which register name each field holds. The machine
 * table (machine.ts) names each machine's layout; context.ts reads and writes records with it.
 */
import { defineLayout } from "./record.js";
import type { FieldSpec, RecordLayout } from "./record.js";

/** sizeof(CONTEXT) on x86 = 0x2CC (minidump.md §3.1). */
export const X86_CONTEXT_SIZE = 716;
/** sizeof(CONTEXT) on AMD64 = 0x4D0 (minidump.md §3.2). */
export const AMD64_CONTEXT_SIZE = 1232;
/** sizeof(CONTEXT) on IA-64 = 0xA70 (ia64.md §4.1). */
export const IA64_CONTEXT_SIZE = 0xa70;
/** sizeof(ARM64_NT_CONTEXT) = 0x390, 16-byte aligned (arm64.md §2.1). */
export const ARM64_CONTEXT_SIZE = 0x390;
/** sizeof(CONTEXT) under `_M_ARM` (ARM_NT_CONTEXT) = 0x1A0, 8-byte aligned (winnt.h). */
export const ARM_CONTEXT_SIZE = 0x1a0;

/** ContextFlags CPU bit for x86 (minidump.md §3.1). */
export const CONTEXT_i386 = 0x0001_0000;
/** x86: Ebp, Eip, SegCs, EFlags, Esp, SegSs. */
export const CONTEXT_X86_CONTROL = CONTEXT_i386 | 0x01;
/** x86: Edi, Esi, Ebx, Edx, Ecx, Eax. */
export const CONTEXT_X86_INTEGER = CONTEXT_i386 | 0x02;
/** x86: SegGs, SegFs, SegEs, SegDs. */
export const CONTEXT_X86_SEGMENTS = CONTEXT_i386 | 0x04;
/** x86: FloatSave. */
export const CONTEXT_X86_FLOATING_POINT = CONTEXT_i386 | 0x08;
/** x86: Dr0-Dr3, Dr6, Dr7. */
export const CONTEXT_X86_DEBUG_REGISTERS = CONTEXT_i386 | 0x10;
/** x86: ExtendedRegisters. */
export const CONTEXT_X86_EXTENDED_REGISTERS = CONTEXT_i386 | 0x20;
/** x86: XSAVE state follows the record. */
export const CONTEXT_X86_XSTATE = CONTEXT_i386 | 0x40;
/** x86 CONTEXT_FULL = CONTROL | INTEGER | SEGMENTS. */
export const CONTEXT_X86_FULL = CONTEXT_X86_CONTROL | CONTEXT_X86_INTEGER | CONTEXT_X86_SEGMENTS;
/** x86 CONTEXT_ALL = FULL plus FLOATING_POINT, DEBUG_REGISTERS and EXTENDED_REGISTERS. */
export const CONTEXT_X86_ALL = CONTEXT_X86_FULL | CONTEXT_X86_FLOATING_POINT | CONTEXT_X86_DEBUG_REGISTERS | CONTEXT_X86_EXTENDED_REGISTERS;

/** ContextFlags CPU bit for AMD64 (minidump.md §3.2). */
export const CONTEXT_AMD64 = 0x0010_0000;
/** AMD64: SegSs, Rsp, SegCs, Rip, EFlags (and Rbp in the frame sense). */
export const CONTEXT_AMD64_CONTROL = CONTEXT_AMD64 | 0x01;
/** AMD64: Rax … R15. */
export const CONTEXT_AMD64_INTEGER = CONTEXT_AMD64 | 0x02;
/** AMD64: SegDs, SegEs, SegFs, SegGs. */
export const CONTEXT_AMD64_SEGMENTS = CONTEXT_AMD64 | 0x04;
/** AMD64: FltSave and MxCsr. */
export const CONTEXT_AMD64_FLOATING_POINT = CONTEXT_AMD64 | 0x08;
/** AMD64: Dr0-Dr3, Dr6, Dr7. */
export const CONTEXT_AMD64_DEBUG_REGISTERS = CONTEXT_AMD64 | 0x10;
/** AMD64: XSAVE state follows the record. */
export const CONTEXT_AMD64_XSTATE = CONTEXT_AMD64 | 0x40;
/** AMD64 CONTEXT_FULL as winnt.h defines it: CONTROL | INTEGER | FLOATING_POINT (no SEGMENTS). */
export const CONTEXT_AMD64_FULL = CONTEXT_AMD64_CONTROL | CONTEXT_AMD64_INTEGER | CONTEXT_AMD64_FLOATING_POINT;
/** AMD64 CONTEXT_ALL = CONTROL | INTEGER | SEGMENTS | FLOATING_POINT | DEBUG_REGISTERS. */
export const CONTEXT_AMD64_ALL =
  CONTEXT_AMD64_CONTROL | CONTEXT_AMD64_INTEGER | CONTEXT_AMD64_SEGMENTS | CONTEXT_AMD64_FLOATING_POINT | CONTEXT_AMD64_DEBUG_REGISTERS;

/** ContextFlags CPU bit for IA-64 (ia64.md §4.1). */
export const CONTEXT_IA64 = 0x0008_0000;
/** IA-64: the control registers (StIIP, StIPSR, StIFS, BrRp, the RSE registers, IntSp). */
export const CONTEXT_IA64_CONTROL = CONTEXT_IA64 | 0x01;
/** IA-64: f2-f31. */
export const CONTEXT_IA64_LOWER_FLOATING_POINT = CONTEXT_IA64 | 0x02;
/** IA-64: f32-f127. */
export const CONTEXT_IA64_HIGHER_FLOATING_POINT = CONTEXT_IA64 | 0x04;
/** IA-64: LOWER | HIGHER floating point. */
export const CONTEXT_IA64_FLOATING_POINT = CONTEXT_IA64_LOWER_FLOATING_POINT | CONTEXT_IA64_HIGHER_FLOATING_POINT;
/** IA-64: the general registers, NaT bits and predicates. */
export const CONTEXT_IA64_INTEGER = CONTEXT_IA64 | 0x08;
/** IA-64: the debug registers. */
export const CONTEXT_IA64_DEBUG = CONTEXT_IA64 | 0x10;
/** IA-64: the IA-32 emulation control state. */
export const CONTEXT_IA64_IA32_CONTROL = CONTEXT_IA64 | 0x20;
/** IA-64 CONTEXT_FULL as winnt.h defines it: CONTROL | FLOATING_POINT | INTEGER | IA32_CONTROL. IA-64 has no SEGMENTS class. */
export const CONTEXT_IA64_FULL = CONTEXT_IA64_CONTROL | CONTEXT_IA64_FLOATING_POINT | CONTEXT_IA64_INTEGER | CONTEXT_IA64_IA32_CONTROL;
/** IA-64 CONTEXT_ALL = FULL | DEBUG. */
export const CONTEXT_IA64_ALL = CONTEXT_IA64_FULL | CONTEXT_IA64_DEBUG;

/** ContextFlags CPU bit for ARM64 (arm64.md §2.2). */
export const CONTEXT_ARM64 = 0x0040_0000;
/** ARM64: Fp, Lr, Sp, Pc, Cpsr. */
export const CONTEXT_ARM64_CONTROL = CONTEXT_ARM64 | 0x01;
/** ARM64: X0-X28. */
export const CONTEXT_ARM64_INTEGER = CONTEXT_ARM64 | 0x02;
/** ARM64: Fpcr, Fpsr, V0-V31. */
export const CONTEXT_ARM64_FLOATING_POINT = CONTEXT_ARM64 | 0x04;
/** ARM64: Bcr, Bvr, Wcr, Wvr. */
export const CONTEXT_ARM64_DEBUG_REGISTERS = CONTEXT_ARM64 | 0x08;
/** ARM64: X18 (the TEB in user mode; absent from Breakpad's flags). */
export const CONTEXT_ARM64_X18 = CONTEXT_ARM64 | 0x10;
/** ARM64 CONTEXT_FULL = CONTROL | INTEGER | FLOATING_POINT. */
export const CONTEXT_ARM64_FULL = CONTEXT_ARM64_CONTROL | CONTEXT_ARM64_INTEGER | CONTEXT_ARM64_FLOATING_POINT;
/** ARM64 CONTEXT_ALL as the classic SDK and Wine define it: FULL | DEBUG_REGISTERS | X18. */
export const CONTEXT_ARM64_ALL = CONTEXT_ARM64_FULL | CONTEXT_ARM64_DEBUG_REGISTERS | CONTEXT_ARM64_X18;
/** ContextFlags CPU bit for ARM (winnt.h CONTEXT_ARM). */
export const CONTEXT_ARM = 0x0020_0000;
/** ARM: Sp, Lr, Pc, Cpsr. */
export const CONTEXT_ARM_CONTROL = CONTEXT_ARM | 0x01;
/** ARM: R0-R12. */
export const CONTEXT_ARM_INTEGER = CONTEXT_ARM | 0x02;
/** ARM: Fpscr, D0-D31. */
export const CONTEXT_ARM_FLOATING_POINT = CONTEXT_ARM | 0x04;
/** ARM: Bvr, Bcr, Wvr, Wcr. */
export const CONTEXT_ARM_DEBUG_REGISTERS = CONTEXT_ARM | 0x08;
/** ARM CONTEXT_FULL = CONTROL | INTEGER | FLOATING_POINT. */
export const CONTEXT_ARM_FULL = CONTEXT_ARM_CONTROL | CONTEXT_ARM_INTEGER | CONTEXT_ARM_FLOATING_POINT;
/**
 * Set by the unwinder in the unwound context: its Pc is a return address (the instruction after a
 * call), not an interrupted instruction, so lookups use Pc − 4 (arm64.md §1.7, §2.2, §3.3).
 */
export const CONTEXT_UNWOUND_TO_CALL = 0x2000_0000;

/** Consecutive u64 fields named `names`, starting at `offset` (e.g. R8 … R15). */
function u64Run(names: readonly string[], offset: number, doc: string): FieldSpec[] {
  return names.map((name, i) => ({ name, offset: offset + 8 * i, size: 8, kind: "u64", doc }));
}

/** x86 FLOATING_SAVE_AREA (112 bytes), nested at CONTEXT+28 (minidump.md §3.1). */
export const X86_FLOATING_SAVE_AREA_LAYOUT: RecordLayout = defineLayout("FLOATING_SAVE_AREA", 112, [
  { name: "ControlWord", offset: 0, size: 4, kind: "u32" },
  { name: "StatusWord", offset: 4, size: 4, kind: "u32" },
  { name: "TagWord", offset: 8, size: 4, kind: "u32" },
  { name: "ErrorOffset", offset: 12, size: 4, kind: "u32" },
  { name: "ErrorSelector", offset: 16, size: 4, kind: "u32" },
  { name: "DataOffset", offset: 20, size: 4, kind: "u32" },
  { name: "DataSelector", offset: 24, size: 4, kind: "u32" },
  { name: "RegisterArea", offset: 28, size: 80, kind: "bytes", doc: "ST0-ST7, 10 bytes each" },
  { name: "Cr0NpxState", offset: 108, size: 4, kind: "u32" },
]);

/** x86 CONTEXT field table, every field (minidump.md §3.1). Segment selectors are DWORDs here. */
export const X86_CONTEXT_LAYOUT: RecordLayout = defineLayout("CONTEXT(x86)", X86_CONTEXT_SIZE, [
  { name: "ContextFlags", offset: 0, size: 4, kind: "u32", doc: "CONTEXT_i386 | classes present" },
  { name: "Dr0", offset: 4, size: 4, kind: "u32" },
  { name: "Dr1", offset: 8, size: 4, kind: "u32" },
  { name: "Dr2", offset: 12, size: 4, kind: "u32" },
  { name: "Dr3", offset: 16, size: 4, kind: "u32" },
  { name: "Dr6", offset: 20, size: 4, kind: "u32" },
  { name: "Dr7", offset: 24, size: 4, kind: "u32" },
  { name: "FloatSave", offset: 28, size: 112, kind: "bytes", record: X86_FLOATING_SAVE_AREA_LAYOUT, doc: "x87 state" },
  { name: "SegGs", offset: 140, size: 4, kind: "u32" },
  { name: "SegFs", offset: 144, size: 4, kind: "u32" },
  { name: "SegEs", offset: 148, size: 4, kind: "u32" },
  { name: "SegDs", offset: 152, size: 4, kind: "u32" },
  { name: "Edi", offset: 156, size: 4, kind: "u32" },
  { name: "Esi", offset: 160, size: 4, kind: "u32" },
  { name: "Ebx", offset: 164, size: 4, kind: "u32" },
  { name: "Edx", offset: 168, size: 4, kind: "u32" },
  { name: "Ecx", offset: 172, size: 4, kind: "u32" },
  { name: "Eax", offset: 176, size: 4, kind: "u32" },
  { name: "Ebp", offset: 180, size: 4, kind: "u32", doc: "frame pointer" },
  { name: "Eip", offset: 184, size: 4, kind: "u32", doc: "instruction pointer" },
  { name: "SegCs", offset: 188, size: 4, kind: "u32" },
  { name: "EFlags", offset: 192, size: 4, kind: "u32" },
  { name: "Esp", offset: 196, size: 4, kind: "u32", doc: "stack pointer" },
  { name: "SegSs", offset: 200, size: 4, kind: "u32" },
  { name: "ExtendedRegisters", offset: 204, size: 512, kind: "bytes", doc: "FXSAVE image" },
]);

/** AMD64 CONTEXT field table, every field (minidump.md §3.2). ContextFlags is at 0x30, not 0. */
export const AMD64_CONTEXT_LAYOUT: RecordLayout = defineLayout("CONTEXT(AMD64)", AMD64_CONTEXT_SIZE, [
  ...u64Run(["P1Home", "P2Home", "P3Home", "P4Home", "P5Home", "P6Home"], 0, "register home slot"),
  { name: "ContextFlags", offset: 48, size: 4, kind: "u32", doc: "CONTEXT_AMD64 | classes present" },
  { name: "MxCsr", offset: 52, size: 4, kind: "u32" },
  { name: "SegCs", offset: 56, size: 2, kind: "u16" },
  { name: "SegDs", offset: 58, size: 2, kind: "u16" },
  { name: "SegEs", offset: 60, size: 2, kind: "u16" },
  { name: "SegFs", offset: 62, size: 2, kind: "u16" },
  { name: "SegGs", offset: 64, size: 2, kind: "u16" },
  { name: "SegSs", offset: 66, size: 2, kind: "u16" },
  { name: "EFlags", offset: 68, size: 4, kind: "u32" },
  ...u64Run(["Dr0", "Dr1", "Dr2", "Dr3", "Dr6", "Dr7"], 72, "debug register"),
  ...u64Run(["Rax", "Rcx", "Rdx", "Rbx", "Rsp", "Rbp", "Rsi", "Rdi"], 120, "general register"),
  ...u64Run(["R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15"], 184, "general register"),
  { name: "Rip", offset: 248, size: 8, kind: "u64", doc: "instruction pointer" },
  { name: "FltSave", offset: 256, size: 512, kind: "bytes", doc: "XSAVE_FORMAT (legacy FXSAVE area)" },
  { name: "VectorRegister", offset: 768, size: 416, kind: "bytes", doc: "26 × M128A" },
  { name: "VectorControl", offset: 1184, size: 8, kind: "u64" },
  ...u64Run(["DebugControl", "LastBranchToRip", "LastBranchFromRip", "LastExceptionToRip", "LastExceptionFromRip"], 1192, "branch trace"),
]);

/**
 * IA-64 CONTEXT field table: only the fields whose offsets ia64.md §4.1 gives. The gaps (fill,
 * debug and floating-point registers, scratch integer registers, trailing IA-32 state) are left
 * unnamed and pass through encodeContext from its base.
 */
export const IA64_CONTEXT_LAYOUT: RecordLayout = defineLayout("CONTEXT(IA64)", IA64_CONTEXT_SIZE, [
  { name: "ContextFlags", offset: 0x000, size: 4, kind: "u32", doc: "CONTEXT_IA64 | classes present; 3 fill DWORDs follow" },
  { name: "StFPSR", offset: 0x870, size: 8, kind: "u64", doc: "ar40, floating-point status" },
  { name: "IntGp", offset: 0x878, size: 8, kind: "u64", doc: "r1, global pointer" },
  ...u64Run(["IntS0", "IntS1", "IntS2", "IntS3"], 0x890, "r4-r7, preserved"),
  { name: "IntV0", offset: 0x8b0, size: 8, kind: "u64", doc: "r8, return value" },
  { name: "IntSp", offset: 0x8d0, size: 8, kind: "u64", doc: "r12, memory stack pointer" },
  { name: "IntTeb", offset: 0x8d8, size: 8, kind: "u64", doc: "r13, thread pointer" },
  { name: "IntNats", offset: 0x970, size: 8, kind: "u64", doc: "NaT bits of r1-r31 in bits 1-31" },
  { name: "Preds", offset: 0x978, size: 8, kind: "u64", doc: "p0-p63" },
  { name: "BrRp", offset: 0x980, size: 8, kind: "u64", doc: "b0, return link" },
  ...u64Run(["BrS0", "BrS1", "BrS2", "BrS3", "BrS4"], 0x988, "b1-b5, preserved"),
  ...u64Run(["BrT0", "BrT1"], 0x9b0, "b6-b7, scratch"),
  { name: "ApUNAT", offset: 0x9c0, size: 8, kind: "u64", doc: "ar36, user NaT collection" },
  { name: "ApLC", offset: 0x9c8, size: 8, kind: "u64", doc: "ar65, loop count" },
  { name: "ApEC", offset: 0x9d0, size: 8, kind: "u64", doc: "ar66, epilog count" },
  { name: "ApCCV", offset: 0x9d8, size: 8, kind: "u64", doc: "ar32, compare-and-exchange value" },
  { name: "ApDCR", offset: 0x9e0, size: 8, kind: "u64", doc: "cr.dcr, default control" },
  { name: "RsPFS", offset: 0x9e8, size: 8, kind: "u64", doc: "ar64, previous function state" },
  { name: "RsBSP", offset: 0x9f0, size: 8, kind: "u64", doc: "ar17, backing store pointer" },
  { name: "RsBSPSTORE", offset: 0x9f8, size: 8, kind: "u64", doc: "ar18, backing store write pointer" },
  { name: "RsRSC", offset: 0xa00, size: 8, kind: "u64", doc: "ar16, RSE configuration" },
  { name: "RsRNAT", offset: 0xa08, size: 8, kind: "u64", doc: "ar19, partial NaT collection" },
  { name: "StIPSR", offset: 0xa10, size: 8, kind: "u64", doc: "cr.ipsr; ri = bits 42:41" },
  { name: "StIIP", offset: 0xa18, size: 8, kind: "u64", doc: "cr.iip, bundle address" },
  { name: "StIFS", offset: 0xa20, size: 8, kind: "u64", doc: "cr.ifs; v = bit 63, ifm = CFM" },
]);

/** ARM64_NT_NEON128 V[0..31]: each a Low and a High u64 (D[n] is V[n].Low). */
function neonRun(offset: number): FieldSpec[] {
  return Array.from({ length: 32 }, (_, i) => [
    { name: `V[${i}].Low`, offset: offset + 16 * i, size: 8, kind: "u64" as const, doc: `d${i}: the low 64 bits of v${i}` },
    { name: `V[${i}].High`, offset: offset + 16 * i + 8, size: 8, kind: "u64" as const, doc: `the high 64 bits of v${i}` },
  ]).flat();
}

/** Consecutive u32 fields named `name[0]`, `name[1]`, … (a debug register array). */
function u32Array(name: string, count: number, offset: number, doc: string): FieldSpec[] {
  return Array.from({ length: count }, (_, i) => ({ name: `${name}[${i}]`, offset: offset + 4 * i, size: 4, kind: "u32" as const, doc }));
}

/**
 * ARM64_NT_CONTEXT (`CONTEXT` under `_M_ARM64`), every field, from the SDK's winnt.h offset
 * comments (arm64.md §2.1). X[i] is at 0x008 + 8i; X29 and X30 are named Fp and Lr.
 */
export const ARM64_CONTEXT_LAYOUT: RecordLayout = defineLayout("ARM64_NT_CONTEXT", ARM64_CONTEXT_SIZE, [
  { name: "ContextFlags", offset: 0x000, size: 4, kind: "u32", doc: "CONTEXT_ARM64 | classes present" },
  { name: "Cpsr", offset: 0x004, size: 4, kind: "u32", doc: "NZCV, DAIF, CurrentEL, SPSel" },
  ...u64Run(Array.from({ length: 29 }, (_, i) => `X${i}`), 0x008, "general register (X18 is the TEB in user mode)"),
  { name: "Fp", offset: 0x0f0, size: 8, kind: "u64", doc: "x29, frame pointer" },
  { name: "Lr", offset: 0x0f8, size: 8, kind: "u64", doc: "x30, link register" },
  { name: "Sp", offset: 0x100, size: 8, kind: "u64", doc: "stack pointer" },
  { name: "Pc", offset: 0x108, size: 8, kind: "u64", doc: "program counter" },
  ...neonRun(0x110),
  { name: "Fpcr", offset: 0x310, size: 4, kind: "u32", doc: "floating-point control" },
  { name: "Fpsr", offset: 0x314, size: 4, kind: "u32", doc: "floating-point status" },
  ...u32Array("Bcr", 8, 0x318, "breakpoint control (ARM64_MAX_BREAKPOINTS = 8)"),
  ...u64Run(Array.from({ length: 8 }, (_, i) => `Bvr[${i}]`), 0x338, "breakpoint value"),
  ...u32Array("Wcr", 2, 0x378, "watchpoint control (ARM64_MAX_WATCHPOINTS = 2)"),
  ...u64Run(["Wvr[0]", "Wvr[1]"], 0x380, "watchpoint value"),
]);

/**
 * ARM_NT_CONTEXT (`CONTEXT` under `_M_ARM`), every field, in winnt.h's order: R0-R12, Sp, Lr,
 * Pc, Cpsr, Fpscr and a pad word, the 32 D registers (the union with Q0-Q15 and S0-S31), the
 * debug registers (ARM_MAX_BREAKPOINTS = 8, ARM_MAX_WATCHPOINTS = 1), then Padding2[2]. Pc holds
 * the address without the Thumb bit; Cpsr's T bit (bit 5) says the code is Thumb.
 */
export const ARM_CONTEXT_LAYOUT: RecordLayout = defineLayout("ARM_NT_CONTEXT", ARM_CONTEXT_SIZE, [
  { name: "ContextFlags", offset: 0x000, size: 4, kind: "u32", doc: "CONTEXT_ARM | classes present" },
  ...Array.from({ length: 13 }, (_, i): FieldSpec => ({
    name: `R${i}`,
    offset: 0x004 + 4 * i,
    size: 4,
    kind: "u32",
    doc: i === 7 ? "r7, the frame pointer of Thumb code off Windows" : i === 11 ? "r11, the frame pointer on Windows" : "general register",
  })),
  { name: "Sp", offset: 0x038, size: 4, kind: "u32", doc: "r13, stack pointer" },
  { name: "Lr", offset: 0x03c, size: 4, kind: "u32", doc: "r14, link register" },
  { name: "Pc", offset: 0x040, size: 4, kind: "u32", doc: "r15, program counter" },
  { name: "Cpsr", offset: 0x044, size: 4, kind: "u32", doc: "NZCVQ, IT, GE, E, AIF, T (bit 5), mode" },
  { name: "Fpscr", offset: 0x048, size: 4, kind: "u32", doc: "floating-point status and control" },
  { name: "Padding", offset: 0x04c, size: 4, kind: "u32" },
  ...u64Run(Array.from({ length: 32 }, (_, i) => `D[${i}]`), 0x050, "VFP/NEON register (Q[n] is D[2n], D[2n+1])"),
  ...u32Array("Bvr", 8, 0x150, "breakpoint value (ARM_MAX_BREAKPOINTS = 8)"),
  ...u32Array("Bcr", 8, 0x170, "breakpoint control"),
  ...u32Array("Wvr", 1, 0x190, "watchpoint value (ARM_MAX_WATCHPOINTS = 1)"),
  ...u32Array("Wcr", 1, 0x194, "watchpoint control"),
  ...u32Array("Padding2", 2, 0x198, "padding to 8-byte alignment"),
]);

/** Register name → SDK field name, built from a list of field names. */
function registerMap(fields: readonly string[], rename: (field: string) => string): Readonly<Record<string, string>> {
  return Object.freeze(Object.fromEntries(fields.map((f) => [rename(f), f])));
}

/** SegGs → gs, EFlags → eflags: the register names the rest of the project uses. */
const lowerNoSeg = (field: string): string => field.toLowerCase().replace(/^seg/, "");

/** x86 register name → CONTEXT field. */
export const X86_CONTEXT_REGISTERS: Readonly<Record<string, string>> = registerMap(
  ["Eip", "Esp", "Ebp", "Eax", "Ebx", "Ecx", "Edx", "Esi", "Edi", "EFlags", "SegCs", "SegDs", "SegEs", "SegFs", "SegGs", "SegSs", "Dr0", "Dr1", "Dr2", "Dr3", "Dr6", "Dr7"],
  lowerNoSeg,
);

/** AMD64 register name → CONTEXT field. */
export const AMD64_CONTEXT_REGISTERS: Readonly<Record<string, string>> = registerMap(
  [
    "Rip", "Rsp", "Rbp", "Rax", "Rbx", "Rcx", "Rdx", "Rsi", "Rdi",
    "R8", "R9", "R10", "R11", "R12", "R13", "R14", "R15",
    "EFlags", "MxCsr", "SegCs", "SegDs", "SegEs", "SegFs", "SegGs", "SegSs",
    "Dr0", "Dr1", "Dr2", "Dr3", "Dr6", "Dr7",
    "P1Home", "P2Home", "P3Home", "P4Home", "P5Home", "P6Home",
  ],
  lowerNoSeg,
);

/** IA-64 register name → CONTEXT field. */
export const IA64_CONTEXT_REGISTERS: Readonly<Record<string, string>> = registerMap(
  [
    "StIIP", "StIPSR", "StIFS", "IntSp", "RsBSP", "RsBSPSTORE", "RsRNAT", "RsPFS", "BrRp",
    "IntGp", "IntS0", "IntS1", "IntS2", "IntS3", "IntV0", "IntTeb", "IntNats", "Preds",
    "BrS0", "BrS1", "BrS2", "BrS3", "BrS4", "BrT0", "BrT1",
    "ApUNAT", "ApLC", "ApEC", "ApCCV", "ApDCR", "RsRSC", "StFPSR",
  ],
  (field) => field.toLowerCase(),
);


/**
 * ARM64 register name → CONTEXT field: x0-x28, fp, lr, sp, pc, cpsr, fpcr, fpsr, and d8-d15, the
 * low halves of the FP registers the ABI preserves (the only ones an unwind restores). The other
 * V halves and the debug registers are named in the layout and pass through unnamed here.
 */
export const ARM64_CONTEXT_REGISTERS: Readonly<Record<string, string>> = Object.freeze({
  pc: "Pc",
  sp: "Sp",
  fp: "Fp",
  lr: "Lr",
  ...Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`x${i}`, `X${i}`])),
  cpsr: "Cpsr",
  fpcr: "Fpcr",
  fpsr: "Fpsr",
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`d${i + 8}`, `V[${i + 8}].Low`])),
});

/**
 * ARM register name → CONTEXT field: r0-r12, sp, lr, pc, cpsr, fpscr, and d8-d15, the FP
 * registers the ABI preserves (the only ones an unwind restores).
 */
export const ARM_CONTEXT_REGISTERS: Readonly<Record<string, string>> = Object.freeze({
  pc: "Pc",
  sp: "Sp",
  lr: "Lr",
  ...Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`r${i}`, `R${i}`])),
  cpsr: "Cpsr",
  fpscr: "Fpscr",
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`d${i + 8}`, `D[${i + 8}]`])),
});
