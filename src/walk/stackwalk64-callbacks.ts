/**
 * StackWalk64's callbacks (stackwalk64.md §3): the routine types a caller may pass, the results of
 * one call, and the defaults a NULL callback takes from the target snapshot (its memory, its
 * module list, SymFunctionTableAccess64 per machine).
 */
import type { Address64 } from "../model/address.js";
import { AddressMode } from "../model/address.js";
import type { Machine } from "../model/machine.js";
import { moduleAt, type Registers, type Snapshot } from "../model/snapshot.js";
import type { MemoryReader } from "../memory/reader.js";
import { x86FunctionTableAccess } from "../arch/x86/function-table.js";
import { x64FunctionTableAccess } from "../arch/x64/function-table.js";
import { arm64FunctionTableAccess } from "../arch/arm64/function-table.js";
import { ia64FunctionTableAccess } from "../arch/ia64/walker.js";
import { UnwindCache } from "../unwind/cache.js";
import type { PacStrip } from "../unwind/step.js";

/** PREAD_PROCESS_MEMORY_ROUTINE64: all bytes of the range, or undefined (FALSE). */
export type ReadMemoryRoutine = (address: bigint, size: number) => Uint8Array | undefined;
/** PFUNCTION_TABLE_ACCESS_ROUTINE64: an opaque non-zero handle for the function-table entry, or 0 (NULL). */
export type FunctionTableAccessRoutine = (address: bigint) => bigint;
/** PGET_MODULE_BASE_ROUTINE64: the base of the module containing the address, or 0. */
export type GetModuleBaseRoutine = (address: bigint) => bigint;
/** PTRANSLATE_ADDRESS_ROUTINE64: the linear address of a non-flat address. */
export type TranslateAddressRoutine = (address: Address64) => bigint;

/**
 * Which dbghelp the facade behaves like (stackwalk64.md §10): `native` (the default) unwinds x86
 * frames with FPO_DATA and FrameData before the EBP chain and hands out FPO_DATA through
 * FuncTableEntry; `wine` uses the EBP chain only and its SymFunctionTableAccess64 returns NULL.
 */
export type Compatibility = "native" | "wine";

/** The four callbacks; a missing one takes its default from the target (stackwalk64.md §3). */
export interface StackWalkCallbacks {
  readMemory?: ReadMemoryRoutine;
  functionTableAccess?: FunctionTableAccessRoutine;
  getModuleBase?: GetModuleBaseRoutine;
  translateAddress?: TranslateAddressRoutine;
  /** The dbghelp to behave like; default `native`. */
  compatibility?: Compatibility;
  /**
   * What the unwinders keep between calls (unwind tables, parsed records): give the same cache
   * to every call of one walk to have them found once. Without one each call works them out again.
   */
  cache?: UnwindCache;
  /**
   * ARM64: the virtual-address size pointer authentication codes are stripped at (64 − TxSZ, 16
   * to 52, arm64.md §1.12), as the walk's `pacVaBits`; default 48. Outside that range the call
   * returns FALSE with `invalid-parameter`.
   */
  pacVaBits?: number;
}

/** A CONTEXT as the facade needs it: a register file it may read and update in place. */
export interface ContextRecord {
  registers: Registers;
  /**
   * ContextFlags, where the walker keeps state in them: on ARM64, CONTEXT_UNWOUND_TO_CALL says the
   * PC is a return address (looked up at PC − 4), set by every unwind that returned to a call and
   * cleared by one that a custom stack gave (arm64.md §1.7, §1.9). Absent: 0.
   */
  contextFlags?: number;
}

/** The outcome of one call: dbghelp's BOOL, and on FALSE the reason in words. */
export interface StackWalkResult {
  ok: boolean;
  /** Why the call returned FALSE; `invalid-parameter` mirrors SetLastError(ERROR_INVALID_PARAMETER). */
  reason?: "invalid-parameter" | "unsupported" | "done" | "bad-frame" | "unwind-failed";
  detail?: string;
}

/** The callbacks of one call, each a given one or its default. */
export interface Resolved {
  compatibility: Compatibility;
  cache: UnwindCache;
  /** How ARM64 return addresses lose their pointer authentication codes; undefined for the default size. */
  stripPac: PacStrip | undefined;
  read: ReadMemoryRoutine;
  functionTableAccess: FunctionTableAccessRoutine;
  getModuleBase: GetModuleBaseRoutine;
  translate: TranslateAddressRoutine;
}

/** SymFunctionTableAccess64 per machine (stackwalk64.md §3): Wine's hands out nothing on x86. */
const FUNCTION_TABLE_ACCESS: Record<Machine, (target: Snapshot, address: bigint, compatibility: Compatibility) => bigint> = {
  x86: (target, address, compatibility) => (compatibility === "native" ? x86FunctionTableAccess(target, address) : 0n),
  x64: (target, address) => x64FunctionTableAccess(target, address),
  ia64: (target, address) => ia64FunctionTableAccess(target, address),
  // Wine registers no ARM64 function-table lookup (arm64.md §3.1).
  arm64: (target, address, compatibility) => (compatibility === "native" ? arm64FunctionTableAccess(target, address) : 0n),
};

/** The defaults for NULL callbacks, taken from the target snapshot (stackwalk64.md §3 "Recommended port behaviour"). */
export function resolveCallbacks(target: Snapshot | undefined, callbacks: StackWalkCallbacks, stripPac: PacStrip | undefined): Resolved {
  const compatibility = callbacks.compatibility ?? "native";
  return {
    compatibility,
    cache: callbacks.cache ?? new UnwindCache(),
    stripPac,
    read: callbacks.readMemory ?? ((address, size) => target?.memory.read(address, size)),
    getModuleBase: callbacks.getModuleBase ?? ((address) => (target === undefined ? 0n : (moduleAt(target.modules, address)?.base ?? 0n))),
    // Native: a handle to the FPO_DATA (or FrameData) record covering the address; Wine: NULL.
    functionTableAccess:
      callbacks.functionTableAccess ?? (target === undefined ? () => 0n : (address) => FUNCTION_TABLE_ACCESS[target.machine](target, address, compatibility)),
    translate: callbacks.translateAddress ?? (() => 0n),
  };
}

/** The linear address of an ADDRESS64: the offset for Flat, otherwise the translate callback's answer. */
export function linear(address: Address64, cb: Resolved): bigint {
  return address.mode === AddressMode.Flat ? address.offset : cb.translate(address);
}

/** The memory the unwinders read: the read callback, addresses masked to the walk's width. */
export function readerOf(cb: Resolved, mask: bigint): MemoryReader {
  return { read: (address, size) => cb.read(address & mask, size) };
}

/** The callbacks a StackWalk64-style call was given, as one object (those not given are left out). */
export function callbacksOf(
  readMemory?: ReadMemoryRoutine,
  functionTableAccess?: FunctionTableAccessRoutine,
  getModuleBase?: GetModuleBaseRoutine,
  translateAddress?: TranslateAddressRoutine,
): StackWalkCallbacks {
  const callbacks: StackWalkCallbacks = {};
  if (readMemory !== undefined) callbacks.readMemory = readMemory;
  if (functionTableAccess !== undefined) callbacks.functionTableAccess = functionTableAccess;
  if (getModuleBase !== undefined) callbacks.getModuleBase = getModuleBase;
  if (translateAddress !== undefined) callbacks.translateAddress = translateAddress;
  return callbacks;
}
