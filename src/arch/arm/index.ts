/**
 * The ARM (ARMNT, Thumb-2) machine's front door: its definition (walkers, roles, parameters,
 * StackWalk64 backend, function-table access) and what other layers use of the machine.
 */
import { machineRoles, type ArchDefinition } from "../definition.js";
import { armModuleCfi } from "./cfi-from-unwind.js";
import { armCfi } from "./cfi.js";
import { ARM_LINK_REGISTER } from "./link-register.js";
import { armBreakpadFramePointer, armFrameChain, armFrameChainElsewhere, armLinkRegister, armLinkRegisterElsewhere } from "./frame-pointer.js";
import { armFunctionTableAccess } from "./function-table.js";
import { armBreakpadScan, armScan } from "./scan.js";
import { armWalk } from "./stackwalk64.js";
import { armUnwind } from "./unwind.js";

export { armUnwind } from "./unwind.js";
export { armFunctionTableAccess } from "./function-table.js";
export { ARM_LINK_REGISTER } from "./link-register.js";
export { armModuleCfi, armPlanRules } from "./cfi-from-unwind.js";

export const ARM_ARCH: ArchDefinition = {
  ...machineRoles("arm"),
  walkers: {
    // The image's .pdata/.xdata first, then a symbol file's STACK CFI; where neither describes
    // the code, the r11 frame chain (lr first for the context frame), then scanning.
    auto: [armUnwind, armCfi, armLinkRegister, armFrameChain, armScan],
    unwind: [armUnwind, armCfi, armScan],
    "frame-pointer": [armLinkRegister, armFrameChain],
    scan: [armScan],
    // Breakpad's stackwalker_arm.cc: STACK CFI, then scanning (its frame-pointer step runs only
    // for iOS, whose frame pointer is r7; elsewhere its frame-pointer register is -1: byOs).
    breakpad: [armCfi, armBreakpadScan],
  },
  // Off Windows, Thumb code keeps its chain in r7.
  nonWindows: {
    auto: [armUnwind, armCfi, armLinkRegisterElsewhere, armFrameChainElsewhere, armScan],
    "frame-pointer": [armLinkRegisterElsewhere, armFrameChainElsewhere],
  },
  // On iOS Breakpad ignores STACK CFI and follows the r7 chain, then scans.
  byOs: { ios: { breakpad: [armBreakpadFramePointer, armBreakpadScan] } },
  pcOf: (r) => r["pc"],
  spOf: (r) => r["sp"],
  fpOf: (r) => r["r11"],
  bstoreOf: () => undefined,
  // Arguments travel in r0-r3: Params are 0.
  params: () => [0n, 0n, 0n, 0n],
  // A leaf unwind (pc = lr) leaves sp where it was.
  leafKeepsSp: true,
  stackWalk64: armWalk,
  functionTableAccess: (target, address, compatibility) => (compatibility === "native" ? armFunctionTableAccess(target, address) : 0n),
  picture: ARM_LINK_REGISTER,
  moduleCfi: (module, memory) => armModuleCfi(module, memory),
};
