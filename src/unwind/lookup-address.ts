/**
 * Which address to look a frame's function up at. A caller frame's PC is a return address: the
 * instruction after a call. When the call is the last instruction of a function (a noreturn
 * call), the return address is already the first byte of the next function, so unwind tables
 * and symbols must be looked up at an address inside the call instruction: return address − 1
 * where instructions vary in length (x86, x64, IA-64 bundles), return address − 4 on ARM64, whose
 * instructions are all 4 bytes, so that the address is the `bl` itself (arm64.md §3.3 step 4:
 * Windows' unwinder, Wine and Breakpad all use 4); the machine table holds the distance
 * (MachineInfo.returnLookBack). The context frame's PC is the interrupted instruction itself and
 * is used as it is. This is the only place that subtraction happens.
 */
import { machineInfo, type Machine } from "../model/machine.js";

/** The address at which to look up unwind data and symbols for a frame's PC. */
export function lookupAddress(pc: bigint, pcIsReturnAddress: boolean, machine?: Machine): bigint {
  if (!pcIsReturnAddress) return pc;
  const back = machine === undefined ? 1n : machineInfo(machine).returnLookBack;
  return pc >= back ? pc - back : pc;
}
