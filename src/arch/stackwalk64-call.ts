/**
 * One StackWalk64 call as every machine's backend sees it: the callbacks (stackwalk64.md §3) — the
 * routine types a caller may pass and the defaults a NULL callback takes from the target snapshot
 * (its memory, its module list, the machine's SymFunctionTableAccess64) — the results of one
 * call, the backend's shape, and the steps the backends share (the opening checks of a call,
 * one table unwind of a CONTEXT in place).
 */
import type { Address64 } from "../model/address.js";
import { AddressMode } from "../model/address.js";
import { machineInfo, type Machine } from "../model/machine.js";
import { moduleAt, type Registers, type Snapshot } from "../model/snapshot.js";
import type { StackFrame64 } from "../model/stackframe.js";
import type { MemoryReader } from "../memory/reader.js";
import { UnwindCache } from "../unwind/cache.js";
import { execContext, type OkStep, type PacStrip } from "./step.js";
import type { FrameSite } from "../unwind/step.js";
import { execRule } from "./exec.js";
import type { ArchStrategy } from "./rule.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../model/context-layout.js";
import { lookupAddress } from "../unwind/lookup-address.js";

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
export interface ResolvedCallbacks {
  compatibility: Compatibility;
  cache: UnwindCache;
  /** How ARM64 return addresses lose their pointer authentication codes; undefined for the default size. */
  stripPac: PacStrip | undefined;
  read: ReadMemoryRoutine;
  functionTableAccess: FunctionTableAccessRoutine;
  getModuleBase: GetModuleBaseRoutine;
  translate: TranslateAddressRoutine;
}

/** SymFunctionTableAccess64 of a machine (stackwalk64.md §3): a handle to the entry covering the address, or 0. */
export type FunctionTableAccess = (target: Snapshot, address: bigint, compatibility: Compatibility) => bigint;

/** The defaults for NULL callbacks, taken from the target snapshot (stackwalk64.md §3 "Recommended port behaviour"). */
export function resolveCallbacks(target: Snapshot | undefined, callbacks: StackWalkCallbacks, stripPac: PacStrip | undefined, tableAccess: FunctionTableAccess): ResolvedCallbacks {
  const compatibility = callbacks.compatibility ?? "native";
  return {
    compatibility,
    cache: callbacks.cache ?? new UnwindCache(),
    stripPac,
    read: callbacks.readMemory ?? ((address, size) => target?.memory.read(address, size)),
    getModuleBase: callbacks.getModuleBase ?? ((address) => (target === undefined ? 0n : (moduleAt(target.modules, address)?.base ?? 0n))),
    // Native: a handle to the FPO_DATA (or FrameData) record covering the address; Wine: NULL.
    functionTableAccess:
      callbacks.functionTableAccess ?? (target === undefined ? () => 0n : (address) => tableAccess(target, address, compatibility)),
    translate: callbacks.translateAddress ?? (() => 0n),
  };
}

/** The linear address of an ADDRESS64: the offset for Flat, otherwise the translate callback's answer. */
export function linear(address: Address64, cb: ResolvedCallbacks): bigint {
  return address.mode === AddressMode.Flat ? address.offset : cb.translate(address);
}

/** The memory the unwinders read: the read callback, addresses masked to the walk's width. */
export function readerOf(cb: ResolvedCallbacks, mask: bigint): MemoryReader {
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

/** A machine's StackWalk64 backend: one call, `frame` (and the CONTEXT, when given) updated in place. */
export type StackWalkBackend = (frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks) => StackWalkResult;

/** What every unwind of one facade call works with: the target, its memory masked to the walk's width, the resolved callbacks. */
export interface FacadeCall {
  target: Snapshot | undefined;
  memory: MemoryReader;
  cb: ResolvedCallbacks;
}

/** Walker modes the 64-bit backends keep in Reserved[0]; Reserved[1] counts successful calls (stackwalk64.md §7.1, this port's layout on IA-64 and ARM64). */
export const MODE64 = { start: 0n, walking: 1n, done: 2n } as const;

const U64 = 0xffff_ffff_ffff_ffffn;

/**
 * The opening of a call of a 64-bit backend that needs a CONTEXT: `invalid-parameter` without
 * one, `done` once the walk has ended; otherwise the call's mode and count (Reserved[0] and [1]),
 * what its unwinds work with, and `done`, which ends the walk with a reason.
 */
export function open64(
  machineName: string,
  frame: StackFrame64,
  context: ContextRecord | undefined,
  target: Snapshot | undefined,
  cb: ResolvedCallbacks,
  why = "",
): { mode: bigint; count: bigint; call: FacadeCall; context: ContextRecord; done: (reason: NonNullable<StackWalkResult["reason"]>, detail: string) => StackWalkResult } | StackWalkResult {
  if (context === undefined) return { ok: false, reason: "invalid-parameter", detail: `the ${machineName} walker needs a CONTEXT (ContextRecord is NULL)${why}` };
  const mode = frame.reserved[0];
  if (mode >= MODE64.done) return { ok: false, reason: "done", detail: "the walk has already ended; zero Reserved[] to start again" };
  const done = (reason: NonNullable<StackWalkResult["reason"]>, detail: string): StackWalkResult => {
    frame.reserved[0] = MODE64.done;
    return { ok: false, reason, detail };
  };
  return { mode, count: frame.reserved[1], call: { target, memory: readerOf(cb, U64), cb }, context, done };
}

/** One table unwind in place ({@link unwindInPlace}): the strategy, the PC and where it is looked up, and an optional check of the caller's registers. */
export interface InPlaceUnwind {
  strategy: ArchStrategy;
  machine: Machine;
  pc: bigint;
  lookup: bigint;
  contextFrame: boolean;
  accept?: (caller: Registers) => boolean;
}

/**
 * One unwind of the CONTEXT `ctx` in place by a table strategy (x64's UNWIND_INFO, ARM64's
 * .pdata/.xdata, IA-64's descriptors), looked up at `lookup`: the step, or undefined when the
 * strategy has no rule, the unwind fails or `accept` rejects the caller's registers (the CONTEXT
 * is then unchanged).
 */
export function unwindInPlace(call: FacadeCall, ctx: Registers, how: InPlaceUnwind): OkStep | undefined {
  const { target, memory, cb } = call;
  const { strategy, machine, pc, lookup, contextFrame } = how;
  const site: FrameSite = {
    machine, index: contextFrame ? 0 : 1, interrupted: false, registers: ctx, pc, lookupPc: lookup,
    modules: target?.modules ?? [], images: memory, calleeParams: 0, cache: cb.cache,
  };
  const rule = strategy.ruleFor(site);
  if (rule === undefined) return undefined;
  const exec = execContext(cb.cache);
  exec.stripPac = cb.stripPac;
  const result = execRule(rule, { ...ctx }, memory, exec);
  if (!result.ok || how.accept?.(result.registers) === false) return undefined;
  for (const [k, v] of Object.entries(result.registers)) ctx[k] = v & U64;
  return result;
}

/** FuncTableEntry of a frame looked up at `lookup`: the function-table callback's handle; 0 at 0 or outside every module. */
export function tableEntryAt(cb: ResolvedCallbacks, lookup: bigint): bigint {
  return lookup !== 0n && cb.getModuleBase(lookup) !== 0n ? cb.functionTableAccess(lookup) : 0n;
}

/** The end of a successful call of a 64-bit backend: Far and Virtual set (as dbghelp's AMD64 walker sets them), the call counted in Reserved[1]. */
export function reported64(frame: StackFrame64, count: bigint): StackWalkResult {
  frame.far = 1;
  frame.virtual = 1;
  frame.reserved[1] = count + 1n;
  return { ok: true };
}

/** What a link-register machine's backend gives {@link linkRegisterWalk}: its name, its frame register, its table strategy. */
export interface LinkRegisterWalker {
  /** The name the walker gives itself in messages ("ARM64"). */
  name: string;
  /** The register AddrFrame holds. */
  fp: string;
  machine: Machine;
  /** The table unwinder (`.pdata`/`.xdata`, or the leaf rule). */
  strategy: ArchStrategy;
}

/**
 * One unwind of a link-register machine's CONTEXT in place (arm64.md §3.3 steps 4-6): looked up
 * at the Pc less the machine's return look-back when CONTEXT_UNWOUND_TO_CALL is set, else at Pc;
 * the table strategy's rule (the function's .pdata entry, or the leaf rule). The flag is set
 * after an unwind that returned to a call and cleared after one a custom stack gave. False, with
 * the CONTEXT unchanged, when the Pc is in no module, the unwind fails, or its result fails the
 * sanity checks: Pc and Sp both unchanged, a Pc other than 0 below 0x1000, or an Sp that moved
 * down.
 */
function unwindLinkRegister(w: LinkRegisterWalker, call: FacadeCall, context: ContextRecord): boolean {
  const ctx = context.registers;
  const pc = ctx["pc"] ?? 0n;
  const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
  const lookup = lookupAddress(pc, returned, w.machine) & machineInfo(w.machine).mask;
  if (lookup === 0n || call.cb.getModuleBase(lookup) === 0n) return false;
  const sp = ctx["sp"] ?? 0n;
  const sane = (caller: Registers): boolean => {
    const newPc = caller["pc"] ?? 0n;
    const newSp = caller["sp"] ?? 0n;
    return !(newPc === pc && newSp === sp) && !(newPc !== 0n && newPc < 0x1000n) && newSp >= sp;
  };
  const result = unwindInPlace(call, ctx, { strategy: w.strategy, machine: w.machine, pc, lookup, contextFrame: !returned, accept: sane });
  if (result === undefined) return false;
  const flags = context.contextFlags ?? 0;
  context.contextFlags = result.interrupted === true ? flags & ~CONTEXT_UNWOUND_TO_CALL : flags | CONTEXT_UNWOUND_TO_CALL;
  return true;
}

/**
 * The StackWalk64 walker of a machine whose return address starts in a link register (ARM64,
 * ARM; arm64.md Part 3): AddrPC = Pc, AddrStack = Sp, AddrFrame the frame register of the unwound
 * CONTEXT, AddrReturn the Pc an unwind of a copy gives, Params 0, FuncTableEntry the .pdata entry
 * (looked up at Pc, or after a return as lookup-address.ts says), Far and Virtual TRUE. A frame
 * whose return address cannot be computed is not reported; a return address of 0 ends the walk on
 * the next call. With Wine compatibility, Wine's walker without DWARF: AddrReturn = Lr of the same
 * CONTEXT, and the next frame is Pc = Lr with Sp and the frame register unchanged, until Pc
 * equals Lr: two frames.
 */
export function linkRegisterWalk(w: LinkRegisterWalker, frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
  const opened = open64(w.name, frame, context, target, cb);
  if ("ok" in opened) return opened;
  const { call, done, count } = opened;
  let { mode } = opened;
  const record = opened.context;
  const ctx = record.registers;
  const wine = cb.compatibility === "wine";
  if (mode === MODE64.start) {
    mode = MODE64.walking;
    frame.addrPC.mode = frame.addrReturn.mode = frame.addrFrame.mode = frame.addrStack.mode = AddressMode.Flat;
    frame.addrBStore = { offset: 0n, segment: 0, mode: 0 };
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (wine) {
      // Wine without DWARF: pc = lr, nothing else changes; no progress once pc is lr.
      if (ctx["pc"] === ctx["lr"]) return done("unwind-failed", "Pc equals Lr: Wine's walker has no other way to the caller without DWARF unwind data");
      ctx["pc"] = ctx["lr"] ?? 0n;
    } else if (!unwindLinkRegister(w, call, record)) {
      return done("unwind-failed", "the previous frame cannot be unwound (its Pc is in no module, or its unwind data or stack cannot be read)");
    }
  }
  frame.reserved[0] = mode;
  frame.params = [0n, 0n, 0n, 0n];
  frame.addrPC.offset = ctx["pc"] ?? 0n;
  frame.addrStack.offset = ctx["sp"] ?? 0n;
  frame.addrFrame.offset = ctx[w.fp] ?? 0n;
  if (wine) frame.addrReturn.offset = ctx["lr"] ?? 0n;
  else {
    const copy: ContextRecord = { registers: { ...ctx }, contextFlags: record.contextFlags ?? 0 };
    if (!unwindLinkRegister(w, call, copy)) return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported");
    frame.addrReturn.offset = copy.registers["pc"] ?? 0n;
    const returned = ((record.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
    frame.funcTableEntry = tableEntryAt(cb, lookupAddress(frame.addrPC.offset, returned, w.machine));
  }
  return reported64(frame, count);
}
