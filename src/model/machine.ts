/**
 * Machines, one descriptor each (Wine dbghelp's "one table per CPU", gimli's "register tables
 * generated from one list"): the IMAGE_FILE_MACHINE value, the pointer width, the CONTEXT layout,
 * and the register list from which the STACKFRAME roles, the encoding numbers, the callee-saved
 * set and the display names are all derived (stackwalk64.md §1, §4). Everything that needs a
 * fact about a machine reads it here, through a `Record<Machine, …>` or {@link machineInfo}, so
 * that a new machine is a compile error wherever a case is missing.
 */
import {
  AMD64_CONTEXT_LAYOUT,
  AMD64_CONTEXT_REGISTERS,
  ARM64_CONTEXT_LAYOUT,
  ARM64_CONTEXT_REGISTERS,
  ARM_CONTEXT_LAYOUT,
  ARM_CONTEXT_REGISTERS,
  CONTEXT_AMD64,
  CONTEXT_ARM,
  CONTEXT_ARM64,
  CONTEXT_i386,
  CONTEXT_IA64,
  IA64_CONTEXT_LAYOUT,
  IA64_CONTEXT_REGISTERS,
  X86_CONTEXT_LAYOUT,
  X86_CONTEXT_REGISTERS,
} from "./context-layout.js";
import { hexPadded } from "../hex.js";
import type { RecordLayout } from "./record.js";

/** The machines the walker models. */
export type Machine = "x86" | "x64" | "ia64" | "arm64" | "arm";

/** All machines, in the order they are shown side by side. */
export const MACHINES: readonly Machine[] = ["x86", "x64", "ia64", "arm64", "arm"];

/** IMAGE_FILE_MACHINE_* values (stackwalk64.md §1). */
export const IMAGE_FILE_MACHINE = {
  UNKNOWN: 0x0000,
  I386: 0x014c,
  IA64: 0x0200,
  ARMNT: 0x01c4,
  AMD64: 0x8664,
  ARM64: 0xaa64,
} as const;

/** A STACKFRAME64 field whose value comes from a register role. */
export type StackFrameRole =
  | "AddrPC"
  | "AddrReturn"
  | "AddrFrame"
  | "AddrStack"
  | "AddrBStore"
  | "FuncTableEntry"
  | "Params";

/** One row of a machine's role table. */
export interface RoleBinding {
  role: StackFrameRole;
  /** The register (lower-case CONTEXT name) that holds it, or null when no register does. */
  register: string | null;
  /** The register as the documentation writes it, e.g. "EIP" or "RsBSP". */
  display: string;
  /** One line saying why, in terms a learner can follow. */
  explanation: string;
}

/** The registers a walk reads for every frame: program counter, stack pointer, frame pointer, backing store. */
export type RegisterRole = "pc" | "sp" | "fp" | "bstore";

/** One register of a machine's list. */
export interface RegisterSpec {
  /** The lower-case CONTEXT name: "ebx", "r12", "brrp". */
  readonly name: string;
  /** The encoding number: x86 ModRM, x64 OpInfo and FrameRegister, IA-64 GR or BR number, ARM64 Xn. */
  readonly number?: number;
  /** IA-64 branch registers are numbered apart from the general registers. */
  readonly bank?: "branch";
  /** The CodeView register id (cvconst.h CV_REG_*) FrameData programs may name it by. */
  readonly codeView?: number;
  /** The STACKFRAME role it plays. */
  readonly role?: RegisterRole;
  /** Preserved across calls by the ABI: a caller keeps the callee's value unless a rule restores it. */
  readonly calleeSaved?: true;
  /** How the documentation writes it, when not in upper case ("StIIP", "SP (r12)"). */
  readonly display?: string;
  /** How a stack diagram marks the word it points at, when not the display name ("SP", "BSP"). */
  readonly mark?: string;
  /** The register that returns a value. */
  readonly returnValue?: true;
}

/** Everything the walker needs to know about a machine. */
export interface MachineInfo {
  machine: Machine;
  /** The IMAGE_FILE_MACHINE_* value StackWalk64 takes. */
  imageFileMachine: number;
  /** Name used in documentation ("x86 (I386)"). */
  title: string;
  /** Pointer width in bytes; addresses are masked to it. */
  pointerSize: 4 | 8;
  /**
   * How far back from a return address a caller's function is looked up, so that the address lies
   * inside the call instruction: 1 where instructions vary in length, 4 where all are 4 bytes (ARM64).
   */
  returnLookBack: bigint;
  /** Return addresses may carry a pointer authentication code in their upper bits (ARM64 PAC, arm64.md §1.10). */
  pointerAuthentication: boolean;
  /**
   * Arguments are passed on the stack, so StackWalk64's Params are the words above the return
   * address (x86); elsewhere they travel in registers and Params are 0.
   */
  stackParams: boolean;
  /** All ones in the pointer width: the mask of an address. */
  mask: bigint;
  /** CONTEXT registers that a snapshot of this machine must provide. */
  requiredRegisters: readonly string[];
  /** The role table, in STACKFRAME64 field order. */
  roles: readonly RoleBinding[];
  /** The register list every other register fact is derived from. */
  registers: readonly RegisterSpec[];
  /** The register of each role, or null when the machine has none. */
  pc: string;
  sp: string;
  fp: string | null;
  bstore: string | null;
  /** General registers by encoding number (undefined where the CONTEXT holds none). */
  general: readonly (string | undefined)[];
  /** Branch registers by number (IA-64; empty elsewhere). */
  branch: readonly (string | undefined)[];
  /** Callee-saved registers, in list order. */
  calleeSaved: readonly string[];
  /** Registers by CodeView id. */
  codeView: Readonly<Record<number, string>>;
  /** The register a function returns its value in. */
  returnValue: string;
  /** The CONTEXT record: its layout, ContextFlags CPU bit, and register name → field. */
  context: { layout: RecordLayout; cpuBit: number; fields: Readonly<Record<string, string>> };
  /** Names other tools give the machine: rust-minidump's `cpu_arch`, a Breakpad `.sym` MODULE line's, Breakpad's processor's CPU (null where it has no stack walker). */
  names: MachineNames;
  /** Its images' unwind records become Breakpad STACK WIN records (x86's FPO_DATA and FrameData). */
  stackWin: boolean;
  /**
   * ETW's stack capture on this machine follows the frame-pointer chain from the capture site
   * (x86's EBP chain), so a cross-check re-walks that site as such a chain.
   */
  etwFramePointerCapture: boolean;
  /** The TEB's LastErrorValue offset (Windows), where a dump's thread list gives the TEB. */
  tebLastError?: bigint;
  /** Why code of this machine may keep no frame pointer, in words. */
  noFramePointer: string;
}

/** What other tools call a machine. */
export interface MachineNames {
  /** The machine's short name in prose ("IA-64"). */
  prose: string;
  /** rust-minidump's JSON `system_info.cpu_arch`. */
  cpuArch: string;
  /** The architecture word of a Breakpad `.sym` file's MODULE line (dump_syms). */
  breakpadSym: string;
  /** The CPU Breakpad's processor walks it as (stackwalker_<cpu>.cc); null where Breakpad has no stack walker. */
  breakpadCpu: "x86" | "amd64" | "arm64" | "arm" | null;
}

/**
 * x86: general registers in ModRM order (eax … edi = 0 … 7) with their CodeView ids (CV_REG_EAX =
 * 17 … CV_REG_EDI = 24), EIP, and the callee-saved set of the Windows x86 calling conventions.
 */
const X86_REGISTERS = [
  { name: "eip", role: "pc" },
  { name: "eax", number: 0, codeView: 17, returnValue: true },
  { name: "ecx", number: 1, codeView: 18 },
  { name: "edx", number: 2, codeView: 19 },
  { name: "ebx", number: 3, codeView: 20, calleeSaved: true },
  { name: "esp", number: 4, codeView: 21, role: "sp" },
  { name: "ebp", number: 5, codeView: 22, role: "fp", calleeSaved: true },
  { name: "esi", number: 6, codeView: 23, calleeSaved: true },
  { name: "edi", number: 7, codeView: 24, calleeSaved: true },
] as const satisfies readonly RegisterSpec[];

/**
 * x64: general registers in CONTEXT order, the numbers OpInfo and FrameRegister use
 * (x64-unwind.md §1.1), RIP, and the Windows x64 ABI's nonvolatile set.
 */
const X64_REGISTERS = [
  { name: "rip", role: "pc" },
  { name: "rax", number: 0, returnValue: true },
  { name: "rcx", number: 1 },
  { name: "rdx", number: 2 },
  { name: "rbx", number: 3, calleeSaved: true },
  { name: "rsp", number: 4, role: "sp" },
  { name: "rbp", number: 5, role: "fp", calleeSaved: true },
  { name: "rsi", number: 6, calleeSaved: true },
  { name: "rdi", number: 7, calleeSaved: true },
  { name: "r8", number: 8 },
  { name: "r9", number: 9 },
  { name: "r10", number: 10 },
  { name: "r11", number: 11 },
  { name: "r12", number: 12, calleeSaved: true },
  { name: "r13", number: 13, calleeSaved: true },
  { name: "r14", number: 14, calleeSaved: true },
  { name: "r15", number: 15, calleeSaved: true },
] as const satisfies readonly RegisterSpec[];

/**
 * IA-64: the CONTEXT's control and register-stack fields, the static general registers it holds
 * by GR number (r1, r4-r8, r12, r13) and the branch registers by BR number (ia64.md §1, §4.1);
 * r4-r7 and b1-b5 are preserved by the software conventions.
 */
const IA64_REGISTERS = [
  { name: "stiip", role: "pc", display: "StIIP" },
  { name: "intsp", number: 12, role: "sp", display: "SP (r12)", mark: "SP" },
  { name: "rsbsp", role: "bstore", display: "RsBSP", mark: "BSP" },
  { name: "stipsr", display: "StIPSR" },
  { name: "stifs", display: "StIFS" },
  { name: "rspfs", display: "RsPFS" },
  { name: "rsbspstore", display: "RsBSPSTORE" },
  { name: "rsrnat", display: "RsRNAT" },
  { name: "intgp", number: 1 },
  { name: "ints0", number: 4, calleeSaved: true },
  { name: "ints1", number: 5, calleeSaved: true },
  { name: "ints2", number: 6, calleeSaved: true },
  { name: "ints3", number: 7, calleeSaved: true },
  { name: "intv0", number: 8, returnValue: true },
  { name: "intteb", number: 13 },
  { name: "brrp", number: 0, bank: "branch", display: "b0 (rp)" },
  { name: "brs0", number: 1, bank: "branch", calleeSaved: true },
  { name: "brs1", number: 2, bank: "branch", calleeSaved: true },
  { name: "brs2", number: 3, bank: "branch", calleeSaved: true },
  { name: "brs3", number: 4, bank: "branch", calleeSaved: true },
  { name: "brs4", number: 5, bank: "branch", calleeSaved: true },
  { name: "brt0", number: 6, bank: "branch" },
  { name: "brt1", number: 7, bank: "branch" },
] as const satisfies readonly RegisterSpec[];

/**
 * ARM64: x0-x28, the frame pointer x29 and the link register x30 by their X numbers (the numbers
 * the unwind codes use: x(19+X)), SP and PC, and the preserved set of the Windows ARM64 ABI:
 * x18 (the TEB), x19-x28, fp, lr, and the low halves d8-d15 of v8-v15 (arm64.md §2.1). A frame's
 * return address lives in lr until a prolog saves it (arm64.md §1.10, §4).
 */
const ARM64_REGISTERS = [
  { name: "pc", role: "pc", display: "Pc" },
  { name: "sp", role: "sp", display: "Sp" },
  { name: "fp", number: 29, role: "fp", calleeSaved: true, display: "Fp (x29)", mark: "FP" },
  { name: "lr", number: 30, calleeSaved: true, display: "Lr (x30)", mark: "LR" },
  ...Array.from({ length: 29 }, (_, i) =>
    i === 0 ? { name: "x0", number: 0, returnValue: true as const } : i >= 18 ? { name: `x${i}`, number: i, calleeSaved: true as const } : { name: `x${i}`, number: i },
  ),
  ...Array.from({ length: 8 }, (_, i) => ({ name: `d${i + 8}`, calleeSaved: true as const })),
] as const satisfies readonly RegisterSpec[];

/**
 * ARM (32-bit, Thumb-2 on Windows): r0-r12, sp (r13), lr (r14) and pc (r15) by their numbers (the
 * numbers unwind codes and STACK CFI use), Cpsr, and the preserved set of the ARM procedure call
 * standard that Windows follows: r4-r11, lr (kept by a caller unless a rule restores it) and
 * d8-d15. The frame pointer is r11 on Windows (and in ARM-mode code elsewhere); Thumb code on
 * other systems keeps its chain in r7 (docs/arm.md).
 */
const ARM_REGISTERS = [
  { name: "pc", number: 15, role: "pc", display: "Pc" },
  { name: "sp", number: 13, role: "sp", display: "Sp" },
  { name: "r11", number: 11, role: "fp", calleeSaved: true, display: "R11", mark: "FP" },
  { name: "lr", number: 14, calleeSaved: true, display: "Lr", mark: "LR" },
  ...Array.from({ length: 13 }, (_, i) =>
    i === 0 ? { name: "r0", number: 0, returnValue: true as const } : i >= 4 && i <= 10 ? { name: `r${i}`, number: i, calleeSaved: true as const } : { name: `r${i}`, number: i },
  ).filter((r) => r.name !== "r11"),
  { name: "cpsr", display: "Cpsr" },
  ...Array.from({ length: 8 }, (_, i) => ({ name: `d${i + 8}`, calleeSaved: true as const })),
] as const satisfies readonly RegisterSpec[];

/** What a machine's entry gives; the rest of its {@link MachineInfo} is derived. */
interface MachineEntry {
  imageFileMachine: number;
  title: string;
  pointerSize: 4 | 8;
  returnLookBack: bigint;
  pointerAuthentication: boolean;
  stackParams: boolean;
  registers: readonly RegisterSpec[];
  roles: readonly RoleBinding[];
  context: MachineInfo["context"];
  names: MachineNames;
  stackWin: boolean;
  etwFramePointerCapture: boolean;
  tebLastError?: bigint;
  noFramePointer: string;
}

/** The machine list: everything else about a machine is worked out from its entry. */
const ENTRIES: Record<Machine, MachineEntry> = {
  x86: {
    imageFileMachine: IMAGE_FILE_MACHINE.I386,
    title: "x86 (I386)",
    pointerSize: 4,
    returnLookBack: 1n,
    pointerAuthentication: false,
    stackParams: true,
    registers: X86_REGISTERS,
    context: { layout: X86_CONTEXT_LAYOUT, cpuBit: CONTEXT_i386, fields: X86_CONTEXT_REGISTERS },
    names: { prose: "x86", cpuArch: "x86", breakpadSym: "x86", breakpadCpu: "x86" },
    stackWin: true,
    etwFramePointerCapture: true,
    tebLastError: 0x34n,
    noFramePointer: "frame-pointer omission",
    roles: [
      { role: "AddrPC", register: "eip", display: "EIP", explanation: "the instruction pointer: where this frame is executing" },
      { role: "AddrReturn", register: null, display: "[EBP+4]", explanation: "the return address, read from the slot a call pushed just above the saved EBP" },
      { role: "AddrFrame", register: "ebp", display: "EBP", explanation: "the frame pointer: points at the caller's saved EBP, so frames form a linked chain" },
      { role: "AddrStack", register: "esp", display: "ESP", explanation: "the stack pointer: the lowest address this frame uses" },
      { role: "AddrBStore", register: null, display: "-", explanation: "unused on x86: StackWalk64 zeroes it on the first call" },
      { role: "FuncTableEntry", register: null, display: "FPO_DATA*", explanation: "the FPO_DATA record for the PC, when the function omits the frame pointer" },
      { role: "Params", register: null, display: "[EBP+8..+20]", explanation: "the first four stack arguments, just above the return address" },
    ],
  },
  x64: {
    imageFileMachine: IMAGE_FILE_MACHINE.AMD64,
    title: "x64 (AMD64)",
    pointerSize: 8,
    returnLookBack: 1n,
    pointerAuthentication: false,
    stackParams: false,
    registers: X64_REGISTERS,
    context: { layout: AMD64_CONTEXT_LAYOUT, cpuBit: CONTEXT_AMD64, fields: AMD64_CONTEXT_REGISTERS },
    names: { prose: "x64", cpuArch: "amd64", breakpadSym: "x86_64", breakpadCpu: "amd64" },
    stackWin: false,
    etwFramePointerCapture: false,
    tebLastError: 0x68n,
    noFramePointer: "x64 code needs none",
    roles: [
      { role: "AddrPC", register: "rip", display: "RIP", explanation: "the instruction pointer: where this frame is executing" },
      { role: "AddrReturn", register: null, display: "unwound RIP", explanation: "found by unwinding the frame with its UNWIND_INFO, not by following a chain" },
      { role: "AddrFrame", register: "rbp", display: "RBP", explanation: "the unwound RBP; a frame register is optional on x64 (\"RBP or RDI; not always used\")" },
      { role: "AddrStack", register: "rsp", display: "RSP", explanation: "the stack pointer; unwinding is driven by tables keyed on RIP, with RSP as the base" },
      { role: "AddrBStore", register: null, display: "-", explanation: "unused on x64: StackWalk64 zeroes it on the first call" },
      { role: "FuncTableEntry", register: null, display: "RUNTIME_FUNCTION*", explanation: "the .pdata entry whose UNWIND_INFO describes the function's prolog" },
      { role: "Params", register: null, display: "0", explanation: "arguments travel in RCX, RDX, R8, R9, so the stack holds no reliable copy; Wine reports 0" },
    ],
  },
  ia64: {
    imageFileMachine: IMAGE_FILE_MACHINE.IA64,
    title: "Itanium (IA64)",
    pointerSize: 8,
    returnLookBack: 1n,
    pointerAuthentication: false,
    stackParams: false,
    registers: IA64_REGISTERS,
    context: { layout: IA64_CONTEXT_LAYOUT, cpuBit: CONTEXT_IA64, fields: IA64_CONTEXT_REGISTERS },
    names: { prose: "IA-64", cpuArch: "ia64", breakpadSym: "ia64", breakpadCpu: null },
    stackWin: false,
    etwFramePointerCapture: false,
    noFramePointer: "IA-64 has none",
    roles: [
      { role: "AddrPC", register: "stiip", display: "StIIP", explanation: "the bundle address of the interrupted instruction, plus its slot" },
      { role: "AddrReturn", register: "brrp", display: "b0 (rp)", explanation: "the caller's IP: br.call leaves it in b0, which a non-leaf prolog saves" },
      { role: "AddrFrame", register: null, display: "-", explanation: "there is no frame pointer on Itanium: AddrFrame is left 0" },
      { role: "AddrStack", register: "intsp", display: "SP (r12)", explanation: "the memory stack pointer, r12 by convention" },
      { role: "AddrBStore", register: "rsbsp", display: "RsBSP", explanation: "the backing-store pointer: where this frame's stacked registers r32.. spill, on a second stack growing up" },
      { role: "FuncTableEntry", register: null, display: "IMAGE_IA64_RUNTIME_FUNCTION_ENTRY*", explanation: "the IA-64 function-table entry whose unwind descriptors describe the frame" },
      { role: "Params", register: null, display: "in0..in3", explanation: "arguments are stacked registers (in0..), found in the backing store" },
    ],
  },
  arm64: {
    imageFileMachine: IMAGE_FILE_MACHINE.ARM64,
    title: "ARM64 (AArch64)",
    pointerSize: 8,
    returnLookBack: 4n,
    pointerAuthentication: true,
    stackParams: false,
    registers: ARM64_REGISTERS,
    context: { layout: ARM64_CONTEXT_LAYOUT, cpuBit: CONTEXT_ARM64, fields: ARM64_CONTEXT_REGISTERS },
    names: { prose: "ARM64", cpuArch: "arm64", breakpadSym: "arm64", breakpadCpu: "arm64" },
    stackWin: false,
    etwFramePointerCapture: false,
    noFramePointer: "a leaf or a function built without frame pointers keeps x29 as its caller left it",
    roles: [
      { role: "AddrPC", register: "pc", display: "Pc", explanation: "the program counter: where this frame is executing" },
      { role: "AddrReturn", register: "lr", display: "Lr / unwound Pc", explanation: "bl leaves the return address in Lr (x30), not on the stack; a prolog may save it, so it is found by unwinding with .pdata/.xdata and the caller's Pc = Lr" },
      { role: "AddrFrame", register: "fp", display: "Fp (x29)", explanation: "the frame pointer x29: it points at the frame record {caller's x29, saved x30}, the chain ETW's fast walks follow" },
      { role: "AddrStack", register: "sp", display: "Sp", explanation: "the stack pointer, 16-byte aligned at all times; a leaf without a prolog leaves it where the caller had it" },
      { role: "AddrBStore", register: null, display: "-", explanation: "unused on ARM64: StackWalk64 zeroes it on the first call" },
      { role: "FuncTableEntry", register: null, display: "IMAGE_ARM64_RUNTIME_FUNCTION_ENTRY*", explanation: "the 8-byte .pdata entry: packed unwind data, or the RVA of the .xdata record with the unwind codes" },
      { role: "Params", register: null, display: "0", explanation: "arguments travel in x0-x7, so the stack holds no reliable copy; Wine reports 0" },
    ],
  },
  arm: {
    imageFileMachine: IMAGE_FILE_MACHINE.ARMNT,
    title: "ARM (ARMNT, Thumb-2)",
    pointerSize: 4,
    returnLookBack: 2n,
    pointerAuthentication: false,
    stackParams: false,
    registers: ARM_REGISTERS,
    context: { layout: ARM_CONTEXT_LAYOUT, cpuBit: CONTEXT_ARM, fields: ARM_CONTEXT_REGISTERS },
    names: { prose: "ARM", cpuArch: "arm", breakpadSym: "arm", breakpadCpu: "arm" },
    stackWin: false,
    etwFramePointerCapture: false,
    tebLastError: 0x34n,
    noFramePointer: "a leaf or a function built without frame pointers keeps r11 (r7 in Thumb code off Windows) as its caller left it",
    roles: [
      { role: "AddrPC", register: "pc", display: "Pc", explanation: "the program counter: where this frame is executing; bit 0 of a code address says Thumb, and a return address keeps it" },
      { role: "AddrReturn", register: "lr", display: "Lr / unwound Pc", explanation: "bl and blx leave the return address in Lr (r14), not on the stack; a prolog may push it, so it is found by unwinding with .pdata/.xdata and the caller's Pc = Lr" },
      { role: "AddrFrame", register: "r11", display: "R11 (or R7)", explanation: "the frame pointer: r11 on Windows and in ARM code, r7 in Thumb code elsewhere; it points at the pair {caller's frame pointer, saved Lr}" },
      { role: "AddrStack", register: "sp", display: "Sp", explanation: "the stack pointer (r13), 4-byte aligned, 8 at calls; a leaf without a prolog leaves it where the caller had it" },
      { role: "AddrBStore", register: null, display: "-", explanation: "unused on ARM: StackWalk64 zeroes it on the first call" },
      { role: "FuncTableEntry", register: null, display: "IMAGE_ARM_RUNTIME_FUNCTION_ENTRY*", explanation: "the 8-byte .pdata entry: its function start with the Thumb bit, then packed unwind data or the RVA of the .xdata record" },
      { role: "Params", register: null, display: "0", explanation: "arguments travel in r0-r3, so the stack holds no reliable copy; Wine reports 0" },
    ],
  },
};

/** The register playing `role` in a list, or null. */
function roleRegister(list: readonly RegisterSpec[], role: RegisterRole): string | null {
  return list.find((r) => r.role === role)?.name ?? null;
}

/** Registers of a bank by number. */
function numbered(list: readonly RegisterSpec[], branch: boolean): (string | undefined)[] {
  const out: (string | undefined)[] = [];
  for (const r of list) if (r.number !== undefined && (r.bank === "branch") === branch) out[r.number] = r.name;
  return out;
}

function describe(machine: Machine, e: MachineEntry): MachineInfo {
  const list = e.registers;
  const pc = roleRegister(list, "pc")!;
  const sp = roleRegister(list, "sp")!;
  const fp = roleRegister(list, "fp");
  const bstore = roleRegister(list, "bstore");
  return {
    machine,
    imageFileMachine: e.imageFileMachine,
    title: e.title,
    pointerSize: e.pointerSize,
    returnLookBack: e.returnLookBack,
    pointerAuthentication: e.pointerAuthentication,
    stackParams: e.stackParams,
    mask: e.pointerSize === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn,
    requiredRegisters: [pc, sp, fp ?? bstore!],
    roles: e.roles,
    registers: list,
    pc,
    sp,
    fp,
    bstore,
    general: numbered(list, false),
    branch: numbered(list, true),
    calleeSaved: list.filter((r) => r.calleeSaved === true).map((r) => r.name),
    codeView: Object.fromEntries(list.filter((r) => r.codeView !== undefined).map((r) => [r.codeView!, r.name])),
    returnValue: list.find((r) => r.returnValue === true)!.name,
    context: e.context,
    names: e.names,
    stackWin: e.stackWin,
    etwFramePointerCapture: e.etwFramePointerCapture,
    ...(e.tebLastError === undefined ? {} : { tebLastError: e.tebLastError }),
    noFramePointer: e.noFramePointer,
  };
}

const TABLE: Record<Machine, MachineInfo> = {
  x86: describe("x86", ENTRIES.x86),
  x64: describe("x64", ENTRIES.x64),
  ia64: describe("ia64", ENTRIES.ia64),
  arm64: describe("arm64", ENTRIES.arm64),
  arm: describe("arm", ENTRIES.arm),
};

/** The callee-saved general registers of the x64 ABI, as a tuple of their names (for typed code generators). */
export const X64_CALLEE_SAVED = X64_REGISTERS.filter((r): r is Extract<(typeof X64_REGISTERS)[number], { calleeSaved: true }> => "calleeSaved" in r).map((r) => r.name);

/** The descriptor of a machine. */
export function machineInfo(machine: Machine): MachineInfo {
  return TABLE[machine];
}

/** True when `name` is a machine this project models. */
export function isMachine(name: string): name is Machine {
  return Object.hasOwn(TABLE, name);
}

/** Maps an IMAGE_FILE_MACHINE_* value to a machine, or undefined when it is not modelled. */
export function machineFromImageFileMachine(value: number): Machine | undefined {
  for (const m of MACHINES) if (TABLE[m].imageFileMachine === value) return m;
  return undefined;
}

/** Masks an address to the machine's pointer width. */
export function maskAddress(machine: Machine, value: bigint): bigint {
  return value & TABLE[machine].mask;
}

/** Formats an address as lower-case hex, `0x`-prefixed and zero-padded to the pointer width. */
export function formatAddress(machine: Machine, value: bigint): string {
  return hexPadded(maskAddress(machine, value), TABLE[machine].pointerSize * 2);
}

/** How the documentation writes a register of the machine: its display name, else its name in upper case. */
export function registerDisplay(machine: Machine, name: string): string {
  return TABLE[machine].registers.find((r) => r.name === name)?.display ?? name.toUpperCase();
}

/** How a stack diagram marks a register: its mark, else its display name. */
export function registerMark(machine: Machine, name: string): string {
  const spec = TABLE[machine].registers.find((r) => r.name === name);
  return spec?.mark ?? spec?.display ?? name.toUpperCase();
}
