/**
 * What a machine brings to the house: one {@link ArchDefinition} per machine, exported by its
 * folder's front door (`src/arch/<machine>/index.ts`). The walk's registry is a table of them;
 * the StackWalk64 facade calls their backends; no file outside `src/arch/` reaches into a
 * machine folder past its index. Names and flags of a machine live in the machine table
 * (model/machine.ts); this is its behaviour.
 */
import type { MemoryReader } from "../memory/reader.js";
import { machineInfo, type Machine } from "../model/machine.js";
import type { Module, OperatingSystem, Registers } from "../model/snapshot.js";
import type { BreakpadStackCfi } from "../formats/breakpad-sym.js";
import type { FrameSite } from "../unwind/step.js";
import type { ArchStrategy } from "./rule.js";
import type { FunctionTableAccess, StackWalkBackend } from "./stackwalk64-call.js";

/** Names accepted by `--walker`. */
export type WalkerName = "auto" | "frame-pointer" | "fpo" | "unwind" | "ia64" | "scan" | "breakpad";

/** Every walker name, for usage text. */
export const WALKER_NAMES: readonly WalkerName[] = ["auto", "frame-pointer", "fpo", "unwind", "ia64", "scan", "breakpad"];

/** One machine's behaviour: its walkers, how a frame's roles and parameters are read, its StackWalk64 backend. */
export interface ArchDefinition {
  machine: Machine;
  /** Walkers available on this machine, each a list of strategies tried in order (for Windows code). */
  walkers: Partial<Record<WalkerName, readonly ArchStrategy[]>>;
  /** Walkers that differ for code of other operating systems. */
  nonWindows?: Partial<Record<WalkerName, readonly ArchStrategy[]>>;
  /** Walkers that differ for code of one operating system, before `nonWindows` (Breakpad's ARM walker on iOS). */
  byOs?: Partial<Record<OperatingSystem, Partial<Record<WalkerName, readonly ArchStrategy[]>>>>;
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
  /** The StackWalk64 backend: one call (stackwalk64.md §6-§8, arm64.md Part 3). */
  stackWalk64: StackWalkBackend;
  /** SymFunctionTableAccess64 on this machine (stackwalk64.md §3), the default of a NULL callback. */
  functionTableAccess: FunctionTableAccess;
  /** The teaching picture `stackwalk roles` shows beside this machine's roles, where it has one. */
  picture?: string;
  /**
   * The STACK CFI a module's image gives a Breakpad symbol file (x64: from RUNTIME_FUNCTIONs and
   * UNWIND_INFO; ARM64: from .pdata and .xdata), where the machine's images give any.
   */
  moduleCfi?: (module: Module, memory: MemoryReader) => BreakpadStackCfi[];
}

/** The role register names of a machine, from the machine table. */
export function machineRoles(machine: Machine): Pick<ArchDefinition, "machine" | "pc" | "sp" | "fp" | "bstore"> {
  const m = machineInfo(machine);
  return { machine, pc: m.pc, sp: m.sp, fp: m.fp, bstore: m.bstore };
}
