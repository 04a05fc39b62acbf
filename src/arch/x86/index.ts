/**
 * The x86 machine's front door: its definition (walkers, roles, parameters, StackWalk64 backend,
 * function-table access) and what other layers use of the machine.
 */
import { machineRoles, type ArchDefinition } from "../definition.js";
import { breakpadWindowsParams, x86BreakpadFramePointer, x86BreakpadWin } from "./breakpad.js";
import { x86Cfi } from "./cfi.js";
import { x86FrameData } from "./frame-data.js";
import { x86Fpo } from "./fpo.js";
import { x86CheckedFramePointer, x86FramePointer } from "./frame-pointer.js";
import { x86FunctionTableAccess } from "./function-table.js";
import { x86Params } from "./params.js";
import { x86RecordlessScan, x86Scan, x86ScanWithoutRecords } from "./scan.js";
import { i386Walk } from "./stackwalk64.js";

export { callBefore } from "./code.js";
export { findFpo, outermostFrameData, x86Tables } from "./tables.js";

export const X86_ARCH: ArchDefinition = {
  ...machineRoles("x86"),
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
  stackWalk64: i386Walk,
  // Native dbghelp hands out the FPO_DATA (or FrameData) record covering the address; Wine's, nothing.
  functionTableAccess: (target, address, compatibility) => (compatibility === "native" ? x86FunctionTableAccess(target, address) : 0n),
};
