/**
 * Machine -> walker table (Wine dbghelp's "one table per CPU, looked up by machine"): for each
 * machine, the walkers it offers (each a list of strategies in trust order) and how a frame's
 * role registers and parameters are read. The register names come from the machine table
 * (model/machine.ts); a machine without an entry here is a compile error.
 */
import type { ArchStrategy } from "../arch/rule.js";
import { x86Cfi } from "../arch/x86/cfi.js";
import { x86FrameData } from "../arch/x86/frame-data.js";
import { x86Fpo } from "../arch/x86/fpo.js";
import { x86CheckedFramePointer, x86FramePointer } from "../arch/x86/frame-pointer.js";
import { x86RecordlessScan, x86Scan, x86ScanWithoutRecords } from "../arch/x86/scan.js";
import { x86Params } from "../arch/x86/params.js";
import { breakpadWindowsParams, x86BreakpadFramePointer, x86BreakpadWin } from "../arch/x86/breakpad.js";
import { x64Cfi } from "../arch/x64/cfi.js";
import { x64CheckedFramePointer, x64FramePointer } from "../arch/x64/frame-pointer.js";
import { x64Leaf, x64Scan } from "../arch/x64/scan.js";
import { x64UnwindInfo } from "../arch/x64/unwind.js";
import { arm64Cfi } from "../arch/arm64/cfi.js";
import { arm64BreakpadFramePointer, arm64FrameRecord, arm64LinkRegister } from "../arch/arm64/frame-pointer.js";
import { arm64BreakpadScan, arm64Scan } from "../arch/arm64/scan.js";
import { arm64Unwind } from "../arch/arm64/unwind.js";
import { ia64Pc } from "../arch/ia64/rse.js";
import { ia64Params, ia64Unwind } from "../arch/ia64/walker.js";
import { InputError } from "../errors.js";
import type { MemoryReader } from "../memory/reader.js";
import type { FrameSite } from "../unwind/step.js";
import { machineInfo, type Machine } from "../model/machine.js";
import { isWindows, type OperatingSystem, type Registers } from "../model/snapshot.js";

/** Names accepted by `--walker`. */
export type WalkerName = "auto" | "frame-pointer" | "fpo" | "unwind" | "ia64" | "scan" | "breakpad";

/** Every walker name, for usage text. */
export const WALKER_NAMES: readonly WalkerName[] = ["auto", "frame-pointer", "fpo", "unwind", "ia64", "scan", "breakpad"];

/** What a machine offers the walk loop. */
export interface ArchWalker {
  machine: Machine;
  /** Walkers available on this machine, each a list of strategies tried in order (for Windows code). */
  walkers: Partial<Record<WalkerName, readonly ArchStrategy[]>>;
  /** Walkers that differ for code of other operating systems. */
  nonWindows?: Partial<Record<WalkerName, readonly ArchStrategy[]>>;
  /** Register names: program counter, stack pointer, frame register (or null), backing store (or null). */
  pc: string;
  sp: string;
  fp: string | null;
  bstore: string | null;
  /** The role registers of a frame, read with fixed property names (a walk reads them for every frame); undefined when absent. */
  pcOf(registers: Registers): bigint | undefined;
  spOf(registers: Registers): bigint | undefined;
  fpOf(registers: Registers): bigint | undefined;
  bstoreOf(registers: Registers): bigint | undefined;
  /** The STACKFRAME Params for a frame. */
  params(registers: Registers, memory: MemoryReader): bigint[];
  /**
   * Breakpad's walker on this machine passes a parameter size from frame to frame its own way
   * (x86: that of the innermost frame with a STACK WIN record or a FUNC, `breakpadWindowsParams`):
   * the frame's, or undefined when it has none.
   */
  breakpadParams?: (site: FrameSite) => number | undefined;
  /** Why a walker finds nothing beyond the context frame on this machine, when that is so. */
  unsupportedDetail?: string;
  /**
   * A caller may have the callee's stack pointer when the callee's PC was interrupted (the context
   * frame, a frame a machine frame gave): a function that has not stored its return address
   * returns through the link register and leaves sp as it found it (ARM64, arm64.md §3.3 step 6).
   */
  leafKeepsSp?: true;
}

/** The role register names of a machine, from the machine table. */
function roles(machine: Machine): Pick<ArchWalker, "machine" | "pc" | "sp" | "fp" | "bstore"> {
  const m = machineInfo(machine);
  return { machine, pc: m.pc, sp: m.sp, fp: m.fp, bstore: m.bstore };
}

const X86: ArchWalker = {
  ...roles("x86"),
  walkers: {
    // FrameData before FPO_DATA (x86-fpo.md §1.3: prefer FrameData); records before the EBP chain.
    // STACK CFI where no STACK WIN record describes the function (minidump.md §5.5); without a
    // record, the EBP chain where it is plausible, else Breakpad's scan with call-site checks.
    auto: [x86FrameData, x86Fpo, x86Cfi, x86RecordlessScan, x86CheckedFramePointer, x86ScanWithoutRecords],
    fpo: [x86FrameData, x86Fpo, x86RecordlessScan, x86FramePointer],
    "frame-pointer": [x86FramePointer],
    scan: [x86Scan],
    // Breakpad's stackwalker_x86.cc: STACK WIN, STACK CFI, then the EBP chain or its scan.
    breakpad: [x86BreakpadWin, x86Cfi, x86BreakpadFramePointer],
  },
  pcOf: (r) => r["eip"],
  spOf: (r) => r["esp"],
  fpOf: (r) => r["ebp"],
  bstoreOf: () => undefined,
  params: (registers, memory) => x86Params(registers["ebp"] ?? 0n, memory),
  breakpadParams: breakpadWindowsParams,
};

const X64: ArchWalker = {
  ...roles("x64"),
  walkers: {
    // Unwind tables first: the image's (x64-unwind.md), then a symbol file's STACK CFI; then, as
    // Breakpad on a Windows dump (minidump.md §5.6), the simulated return from a leaf for the
    // context frame and scanning: Windows x64 code keeps no RBP chain.
    auto: [x64UnwindInfo, x64Cfi, x64Leaf, x64Scan],
    unwind: [x64UnwindInfo, x64Cfi, x64Scan],
    "frame-pointer": [x64FramePointer],
    scan: [x64Leaf, x64Scan],
    // Breakpad's stackwalker_amd64.cc on Windows: STACK CFI (a caller RIP or RSP of 0 fails it),
    // the leaf simulation for the context frame, then scanning; never the RBP chain, and never
    // the image's unwind tables, which Breakpad does not read.
    breakpad: [x64Cfi, x64Leaf, x64Scan],
  },
  // Off Windows the RBP chain comes before scanning, with Breakpad's checks; RBP = 0 is never the
  // end of the stack.
  nonWindows: {
    auto: [x64UnwindInfo, x64Cfi, x64CheckedFramePointer, x64Scan],
    breakpad: [x64Cfi, x64CheckedFramePointer, x64Scan],
  },
  pcOf: (r) => r["rip"],
  spOf: (r) => r["rsp"],
  fpOf: (r) => r["rbp"],
  bstoreOf: () => undefined,
  params: () => [0n, 0n, 0n, 0n],
};

const IA64: ArchWalker = {
  ...roles("ia64"),
  walkers: {
    // The unwind descriptors are the only source on IA-64: no frame pointer to chain, and no
    // return address on the memory stack to scan for (ia64.md §2).
    auto: [ia64Unwind],
    ia64: [ia64Unwind],
  },
  // AddrPC = StIIP | StIPSR.ri·4 (bundle | slot·4, a modelling choice: ia64.md §4.3).
  pcOf: ia64Pc,
  spOf: (r) => r["intsp"],
  fpOf: () => undefined,
  bstoreOf: (r) => r["rsbsp"],
  // Params = r32-r35 from the backing store (undocumented in dbghelp; a modelling choice, ia64.md §4.2).
  params: ia64Params,
};

const ARM64: ArchWalker = {
  ...roles("arm64"),
  walkers: {
    // The image's .pdata/.xdata first (arm64.md Part 1), then a symbol file's STACK CFI; where
    // neither describes the code (JIT code, a module without unwind data), the frame-record chain
    // x29 keeps, then scanning (arm64.md §3.3 step 7, Part 5).
    auto: [arm64Unwind, arm64Cfi, arm64LinkRegister, arm64FrameRecord, arm64Scan],
    unwind: [arm64Unwind, arm64Cfi, arm64Scan],
    // The frame-record chain (arm64.md Part 4): lr for a context frame whose record is not stored yet.
    "frame-pointer": [arm64LinkRegister, arm64FrameRecord],
    scan: [arm64Scan],
    // Breakpad's stackwalker_arm64.cc (arm64.md Part 5): STACK CFI (Breakpad never reads
    // .pdata/.xdata), its frame-pointer step that takes lr first, then its scan, which checks
    // only that a word lies in a module (in a function, when the module has symbols).
    breakpad: [arm64Cfi, arm64BreakpadFramePointer, arm64BreakpadScan],
  },
  pcOf: (r) => r["pc"],
  spOf: (r) => r["sp"],
  fpOf: (r) => r["fp"],
  bstoreOf: () => undefined,
  // Arguments travel in x0-x7: Params are 0, as Wine reports them (arm64.md §3.1).
  params: () => [0n, 0n, 0n, 0n],
  // A leaf unwind (pc = lr) leaves sp where it was.
  leafKeepsSp: true,
};

const TABLE: Record<Machine, ArchWalker> = { x86: X86, x64: X64, ia64: IA64, arm64: ARM64 };

/** The walker table for a machine. */
export function archWalker(machine: Machine): ArchWalker {
  return TABLE[machine];
}

/**
 * The strategies `walker` uses on `machine` for code of `os` (absent: Windows); an
 * {@link InputError} when the walker does not apply there.
 */
export function strategiesFor(machine: Machine, walker: WalkerName, os?: OperatingSystem): readonly ArchStrategy[] {
  const arch = TABLE[machine];
  const list = (isWindows({ os }) ? undefined : arch.nonWindows?.[walker]) ?? arch.walkers[walker];
  if (list === undefined) {
    const available = Object.keys(TABLE[machine].walkers).join(", ");
    throw new InputError("unsupported", `walker '${walker}' is not available for ${machine} (available: ${available})`);
  }
  return list;
}
