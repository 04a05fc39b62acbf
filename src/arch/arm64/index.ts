/**
 * The ARM64 machine's front door: its definition (walkers, roles, parameters, StackWalk64
 * backend, function-table access) and what other layers use of the machine.
 */
import { machineRoles, type ArchDefinition } from "../definition.js";
import { arm64ModuleCfi } from "./cfi-from-unwind.js";
import { arm64Cfi } from "./cfi.js";
import { ARM64_LINK_REGISTER } from "./link-register.js";
import { arm64BreakpadFramePointer, arm64FrameRecord, arm64LinkRegister } from "./frame-pointer.js";
import { arm64FunctionTableAccess } from "./function-table.js";
import { arm64BreakpadScan, arm64Scan } from "./scan.js";
import { arm64Walk } from "./stackwalk64.js";
import { arm64Unwind } from "./unwind.js";

export { arm64Unwind } from "./unwind.js";
export { arm64FunctionTableAccess } from "./function-table.js";
export { breakpadPacMask, breakpadPacStripper, breakpadStripPac, pacStripper, stripPac, PAC_VA_BITS, PAC_VA_BITS_MAX, PAC_VA_BITS_MIN, type PacStrip } from "./pac.js";
export { ARM64_LINK_REGISTER } from "./link-register.js";
export { arm64ModuleCfi, arm64PlanRules, type Arm64PlanRules } from "./cfi-from-unwind.js";

export const ARM64_ARCH: ArchDefinition = {
  ...machineRoles("arm64"),
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
  stackWalk64: arm64Walk,
  // Wine registers no ARM64 function-table lookup (arm64.md §3.1).
  functionTableAccess: (target, address, compatibility) => (compatibility === "native" ? arm64FunctionTableAccess(target, address) : 0n),
  picture: ARM64_LINK_REGISTER,
  moduleCfi: (module, memory) => arm64ModuleCfi(module, memory),
};
