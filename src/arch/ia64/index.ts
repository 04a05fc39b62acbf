/**
 * The IA-64 machine's front door: its definition (walkers, roles, parameters, StackWalk64
 * backend, function-table access) and what other layers use of the machine.
 */
import { machineRoles, type ArchDefinition } from "../definition.js";
import { ia64Pc } from "./rse.js";
import { IA64_TWO_STACKS } from "./two-stacks.js";
import { ia64Walk } from "./stackwalk64.js";
import { ia64FunctionTableAccess, ia64Params, ia64Unwind } from "./walker.js";

export * as ia64Rse from "./rse.js";
export { frameStateAt as ia64FrameStateAt, type FrameState as Ia64FrameState } from "./state.js";
export { ia64Unwind, ia64Params, ia64FunctionTableAccess } from "./walker.js";
export { IA64_TWO_STACKS } from "./two-stacks.js";

export const IA64_ARCH: ArchDefinition = {
  ...machineRoles("ia64"),
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
  stackWalk64: ia64Walk,
  functionTableAccess: (target, address) => ia64FunctionTableAccess(target, address),
  picture: IA64_TWO_STACKS,
};
