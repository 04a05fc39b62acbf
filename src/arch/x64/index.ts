/**
 * The x64 machine's front door: its definition (walkers, roles, parameters, StackWalk64 backend,
 * function-table access) and what other layers use of the machine.
 */
import { machineRoles, type ArchDefinition } from "../definition.js";
import { x64ModuleCfi } from "./cfi-from-unwind.js";
import { x64Cfi } from "./cfi.js";
import { x64CheckedFramePointer, x64FramePointer } from "./frame-pointer.js";
import { x64FunctionTableAccess } from "./function-table.js";
import { x64Leaf, x64Scan } from "./scan.js";
import { amd64Walk } from "./stackwalk64.js";
import { x64UnwindInfo } from "./unwind.js";

export { x64ModuleCfi } from "./cfi-from-unwind.js";

export const X64_ARCH: ArchDefinition = {
  ...machineRoles("x64"),
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
  stackWalk64: amd64Walk,
  functionTableAccess: (target, address) => x64FunctionTableAccess(target, address),
  moduleCfi: (module, memory) => x64ModuleCfi(module, memory),
};
