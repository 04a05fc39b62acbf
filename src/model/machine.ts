/**
 * Machines and the register that plays each STACKFRAME role on them (stackwalk64.md §1, §4).
 * One table per machine, looked up by machine; everything that needs a register name for a
 * role reads it from here.
 */

/** The machines the walker models. */
export type Machine = "x86" | "x64" | "ia64";

/** All machines, in the order they are shown side by side. */
export const MACHINES: readonly Machine[] = ["x86", "x64", "ia64"];

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

/** Everything the walker needs to know about a machine. */
export interface MachineInfo {
  machine: Machine;
  /** The IMAGE_FILE_MACHINE_* value StackWalk64 takes. */
  imageFileMachine: number;
  /** Name used in documentation ("x86 (I386)"). */
  title: string;
  /** Pointer width in bytes; addresses are masked to it. */
  pointerSize: 4 | 8;
  /** CONTEXT registers that a snapshot of this machine must provide. */
  requiredRegisters: readonly string[];
  /** The role table, in STACKFRAME64 field order. */
  roles: readonly RoleBinding[];
}

const X86: MachineInfo = {
  machine: "x86",
  imageFileMachine: IMAGE_FILE_MACHINE.I386,
  title: "x86 (I386)",
  pointerSize: 4,
  requiredRegisters: ["eip", "esp", "ebp"],
  roles: [
    { role: "AddrPC", register: "eip", display: "EIP", explanation: "the instruction pointer: where this frame is executing" },
    { role: "AddrReturn", register: null, display: "[EBP+4]", explanation: "the return address, read from the slot a call pushed just above the saved EBP" },
    { role: "AddrFrame", register: "ebp", display: "EBP", explanation: "the frame pointer: points at the caller's saved EBP, so frames form a linked chain" },
    { role: "AddrStack", register: "esp", display: "ESP", explanation: "the stack pointer: the lowest address this frame uses" },
    { role: "AddrBStore", register: null, display: "-", explanation: "unused on x86: StackWalk64 zeroes it on the first call" },
    { role: "FuncTableEntry", register: null, display: "FPO_DATA*", explanation: "the FPO_DATA record for the PC, when the function omits the frame pointer" },
    { role: "Params", register: null, display: "[EBP+8..+20]", explanation: "the first four stack arguments, just above the return address" },
  ],
};

const X64: MachineInfo = {
  machine: "x64",
  imageFileMachine: IMAGE_FILE_MACHINE.AMD64,
  title: "x64 (AMD64)",
  pointerSize: 8,
  requiredRegisters: ["rip", "rsp", "rbp"],
  roles: [
    { role: "AddrPC", register: "rip", display: "RIP", explanation: "the instruction pointer: where this frame is executing" },
    { role: "AddrReturn", register: null, display: "unwound RIP", explanation: "found by unwinding the frame with its UNWIND_INFO, not by following a chain" },
    { role: "AddrFrame", register: "rbp", display: "RBP", explanation: "the unwound RBP; a frame register is optional on x64 (\"RBP or RDI; not always used\")" },
    { role: "AddrStack", register: "rsp", display: "RSP", explanation: "the stack pointer; unwinding is driven by tables keyed on RIP, with RSP as the base" },
    { role: "AddrBStore", register: null, display: "-", explanation: "unused on x64: StackWalk64 zeroes it on the first call" },
    { role: "FuncTableEntry", register: null, display: "RUNTIME_FUNCTION*", explanation: "the .pdata entry whose UNWIND_INFO describes the function's prolog" },
    { role: "Params", register: null, display: "0", explanation: "arguments travel in RCX, RDX, R8, R9, so the stack holds no reliable copy; Wine reports 0" },
  ],
};

const IA64: MachineInfo = {
  machine: "ia64",
  imageFileMachine: IMAGE_FILE_MACHINE.IA64,
  title: "Itanium (IA64)",
  pointerSize: 8,
  requiredRegisters: ["stiip", "intsp", "rsbsp"],
  roles: [
    { role: "AddrPC", register: "stiip", display: "StIIP", explanation: "the bundle address of the interrupted instruction, plus its slot" },
    { role: "AddrReturn", register: "brrp", display: "b0 (rp)", explanation: "the caller's IP: br.call leaves it in b0, which a non-leaf prolog saves" },
    { role: "AddrFrame", register: null, display: "-", explanation: "there is no frame pointer on Itanium: AddrFrame is left 0" },
    { role: "AddrStack", register: "intsp", display: "SP (r12)", explanation: "the memory stack pointer, r12 by convention" },
    { role: "AddrBStore", register: "rsbsp", display: "RsBSP", explanation: "the backing-store pointer: where this frame's stacked registers r32.. spill, on a second stack growing up" },
    { role: "FuncTableEntry", register: null, display: "IMAGE_IA64_RUNTIME_FUNCTION_ENTRY*", explanation: "the IA-64 function-table entry whose unwind descriptors describe the frame" },
    { role: "Params", register: null, display: "in0..in3", explanation: "arguments are stacked registers (in0..), found in the backing store" },
  ],
};

const TABLE: Record<Machine, MachineInfo> = { x86: X86, x64: X64, ia64: IA64 };

/** The role table and facts for a machine. */
export function machineInfo(machine: Machine): MachineInfo {
  return TABLE[machine];
}

/** True when `name` is a machine this project models. */
export function isMachine(name: string): name is Machine {
  return name === "x86" || name === "x64" || name === "ia64";
}

/** Maps an IMAGE_FILE_MACHINE_* value to a machine, or undefined when it is not modelled. */
export function machineFromImageFileMachine(value: number): Machine | undefined {
  for (const m of MACHINES) if (TABLE[m].imageFileMachine === value) return m;
  return undefined;
}

/** Masks an address to the machine's pointer width. */
export function maskAddress(machine: Machine, value: bigint): bigint {
  return TABLE[machine].pointerSize === 4 ? value & 0xffff_ffffn : value & 0xffff_ffff_ffff_ffffn;
}

/** Formats an address as lower-case hex, `0x`-prefixed and zero-padded to the pointer width. */
export function formatAddress(machine: Machine, value: bigint): string {
  const digits = TABLE[machine].pointerSize * 2;
  return "0x" + maskAddress(machine, value).toString(16).padStart(digits, "0");
}
