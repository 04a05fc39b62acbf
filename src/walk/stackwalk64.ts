/**
 * A call-by-call StackWalk64: each call fills a caller-owned STACKFRAME64 with the next frame,
 * keeping all walk state in its Reserved[] slots, with the semantics of stackwalk64.md §5-§6
 * (Wine's i386 walker, which native dbghelp matches on these points; arm64.md Part 3 for ARM64). Like dbghelp it has no
 * progress guard: a cyclic EBP chain returns frames for as long as the caller keeps calling.
 * The guarded walk is walk.ts.
 *
 * In this port hProcess is the {@link Snapshot} being walked (the `target` parameter): the NULL-callback defaults
 * (stackwalk64.md §3) read its memory, its module list and its unwind sources.
 */
import { hex } from "../hex.js";
import { address32To64Sign, address32To64Zero, address64To32, AddressMode } from "../model/address.js";
import { machineFromImageFileMachine, type Machine } from "../model/machine.js";
import { CONTEXT_UNWOUND_TO_CALL } from "../model/context-layout.js";
import type { Registers, Snapshot } from "../model/snapshot.js";
import { newStackFrame64, type StackFrame32, type StackFrame64 } from "../model/stackframe.js";
import type { MemoryReader } from "../memory/reader.js";
import { execRule } from "../arch/exec.js";
import type { ArchStrategy } from "../arch/rule.js";
import { x86Params } from "../arch/x86/params.js";
import { x86FrameData } from "../arch/x86/frame-data.js";
import { x86Fpo } from "../arch/x86/fpo.js";
import { x86RecordlessScan, x86ScanWithoutRecords } from "../arch/x86/scan.js";
import { x64UnwindInfo } from "../arch/x64/unwind.js";
import { pacStripper, type PacStrip } from "../arch/arm64/pac.js";
import { arm64Unwind } from "../arch/arm64/unwind.js";
import { ia64Pc } from "../arch/ia64/rse.js";
import { ia64Params, ia64Unwind } from "../arch/ia64/walker.js";
import { lookupAddress } from "../unwind/lookup-address.js";
import { execContext, type FrameSite, type OkStep } from "../unwind/step.js";
import { strategiesFor } from "./registry.js";
import {
  callbacksOf,
  linear,
  readerOf,
  resolveCallbacks,
  type ContextRecord,
  type FunctionTableAccessRoutine,
  type GetModuleBaseRoutine,
  type ReadMemoryRoutine,
  type Resolved,
  type StackWalkCallbacks,
  type StackWalkResult,
  type TranslateAddressRoutine,
} from "./stackwalk64-callbacks.js";

export type {
  Compatibility,
  ContextRecord,
  FunctionTableAccessRoutine,
  GetModuleBaseRoutine,
  ReadMemoryRoutine,
  StackWalkCallbacks,
  StackWalkResult,
  TranslateAddressRoutine,
} from "./stackwalk64-callbacks.js";

/** What native dbghelp tries before the EBP chain on x86 (stackwalk64.md §10); a scan follows a chain that gives nothing. */
const NATIVE_RECORD_STRATEGIES: readonly ArchStrategy[] = [x86FrameData, x86Fpo, x86RecordlessScan];

/** i386 walker modes kept in Reserved[0] bits 0-3 (stackwalk64.md §6.1). */
const I386_MODE = { start: 0n, bit32: 1n, bit16: 2n, done: 3n } as const;

const U32 = 0xffff_ffffn;

/** What every unwind of one facade call works with: the target, its memory masked to the walk's width, the resolved callbacks. */
interface FacadeCall {
  target: Snapshot | undefined;
  memory: MemoryReader;
  cb: Resolved;
}

/** One table unwind in place ({@link unwindInPlace}): the strategy, the PC and where it is looked up, and an optional check of the caller's registers. */
interface InPlaceUnwind {
  strategy: ArchStrategy;
  machine: Machine;
  pc: bigint;
  lookup: bigint;
  contextFrame: boolean;
  accept?: (caller: Registers) => boolean;
}

/**
 * unwind32 (stackwalk64.md §6.4): the x86 unwind sources in dbghelp's order, ending with the EBP
 * chain, applied to `ctx` in place; `returned` when the PC is looked up as a return address. Like Wine, ESP is set to EBP+8 before the chain's reads, so
 * a failed read leaves the context partly updated.
 */
function unwind32(call: FacadeCall, ctx: Registers, at: { pc: bigint; returned: boolean; index: number }): boolean {
  const { target, memory, cb } = call;
  const { pc, returned, index } = at;
  // The facade keeps no state outside Reserved[], so it does not know the callee's parameter
  // bytes: calleeParams is 0 and the return-address search absorbs the callee's arguments.
  const site: FrameSite = {
    machine: "x86", index, interrupted: false, registers: ctx, pc: pc & U32, lookupPc: lookupAddress(pc & U32, returned),
    modules: target?.modules ?? [], images: memory, calleeParams: 0, cache: cb.cache,
  };
  const exec = execContext(cb.cache);
  const compatibility = cb.compatibility;
  if (compatibility === "native") {
    for (const strategy of NATIVE_RECORD_STRATEGIES) {
      const rule = strategy.ruleFor(site);
      if (rule === undefined) continue;
      const result = execRule(rule, { ...ctx }, memory, exec);
      if (!result.ok) {
        if (result.final === true) return false;
        continue;
      }
      for (const [k, v] of Object.entries(result.registers)) ctx[k] = v & U32;
      return true;
    }
  }
  const callee: Registers = { ...ctx };
  const ebp = ctx["ebp"] ?? 0n;
  if (ebp !== 0n) ctx["esp"] = (ebp + 8n) & U32;
  for (const strategy of strategiesFor("x86", "frame-pointer")) {
    const rule = strategy.ruleFor(site);
    if (rule === undefined) continue;
    const result = execRule(rule, { ...ctx, ebp }, memory, exec);
    if (!result.ok) continue;
    for (const [k, v] of Object.entries(result.registers)) ctx[k] = v & U32;
    return true;
  }
  if (compatibility === "native") {
    // Where the chain gives nothing (EBP 0 or unreadable) in code without records, native dbghelp
    // searches the stack for a return address: the walk layer's scan, from the frame's own ESP.
    const rule = x86ScanWithoutRecords.ruleFor({ ...site, registers: callee });
    const result = rule === undefined ? undefined : execRule(rule, callee, memory, exec);
    if (result?.ok === true) {
      for (const [k, v] of Object.entries(result.registers)) ctx[k] = v & U32;
      return true;
    }
  }
  return false;
}

function i386Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: Resolved): StackWalkResult {
  let mode = frame.reserved[0] & 0xfn;
  let count = frame.reserved[0] >> 4n;
  const done = (reason: NonNullable<StackWalkResult["reason"]>, detail: string): StackWalkResult => {
    frame.reserved[0] = (count << 4n) | I386_MODE.done;
    return { ok: false, reason, detail };
  };
  if (mode >= I386_MODE.done) return { ok: false, reason: "done", detail: "the walk has already ended; zero Reserved[] to start again" };
  const deltapc = count <= 1n ? 0n : 1n;
  const memory = readerOf(cb, U32);
  const call: FacadeCall = { target, memory, cb };
  const ctx: Registers = context?.registers ?? { eip: frame.addrPC.offset, ebp: frame.addrFrame.offset, esp: frame.addrStack.offset };

  if (mode === I386_MODE.start) {
    if (frame.addrPC.mode === AddressMode.Flat && frame.addrFrame.mode !== AddressMode.Flat) {
      return done("bad-frame", "AddrPC is flat but AddrFrame is not: set AddrFrame.Mode = AddrModeFlat");
    }
    if (frame.addrPC.mode !== AddressMode.Flat) {
      return done(
        "unsupported",
        `AddrPC.Mode is ${frame.addrPC.mode} (${frame.addrPC.mode === AddressMode.Mode1616 ? "AddrMode1616: a zeroed ADDRESS64 is 16:16, not flat" : "not flat"}); ` +
          "16-bit and segmented walks are not supported: set Mode = AddrModeFlat (3) on AddrPC, AddrFrame and AddrStack",
      );
    }
    mode = I386_MODE.bit32;
    // The 16/32-bit switch discovery needs a live thread (§6.5): this port has none, so there is no switch frame.
    frame.reserved[1] = 0n;
    frame.reserved[2] = 0n;
    frame.addrReturn.mode = AddressMode.Flat;
    frame.addrStack.mode = AddressMode.Flat;
    frame.addrBStore = { offset: 0n, segment: 0, mode: 0 };
  } else {
    if (!unwind32(call, ctx, { pc: linear(frame.addrPC, cb), returned: deltapc === 1n, index: Number(count) - 1 })) {
      return done("unwind-failed", "the previous frame cannot be unwound (EBP is 0 or [EBP], [EBP+4] cannot be read)");
    }
    frame.addrPC.mode = frame.addrFrame.mode = frame.addrStack.mode = AddressMode.Flat;
    frame.addrStack.offset = ctx["esp"] ?? 0n;
    frame.addrFrame.offset = ctx["ebp"] ?? 0n;
    frame.addrPC.offset = ctx["eip"] ?? 0n;
  }
  frame.reserved[0] = (count << 4n) | mode;

  const tmp: Registers = { ...ctx };
  if (!unwind32(call, tmp, { pc: frame.addrPC.offset, returned: deltapc === 1n, index: Number(count) })) {
    if (frame.addrPC.offset === 0n) return done("unwind-failed", "PC is 0 and no return address can be computed");
    // Wine's wow64 workaround: report this frame as the last one (§6.2, §9 item 8).
    tmp["eip"] = 0n;
  }
  frame.addrReturn.mode = AddressMode.Flat;
  frame.addrReturn.offset = tmp["eip"] ?? 0n;
  frame.params = x86Params(frame.addrFrame.offset, memory);
  frame.far = 1;
  frame.virtual = 1;
  const p = linear(frame.addrPC, cb);
  frame.funcTableEntry = p !== 0n && cb.getModuleBase(p) !== 0n ? cb.functionTableAccess(p) : 0n;
  count += 1n;
  frame.reserved[0] = (count << 4n) | mode;
  return { ok: true };
}

/** AMD64 walker modes kept in Reserved[0]; Reserved[1] counts successful calls (stackwalk64.md §7.1). */
const AMD64_MODE = { start: 0n, bit64: 1n, done: 2n } as const;

const U64 = 0xffff_ffff_ffff_ffffn;

/**
 * unwind64(ctx, pc) (stackwalk64.md §7.3): a PC outside every module ends the walk; otherwise
 * the Windows unwinder (x64-unwind.md) runs on `ctx` in place: the function's unwind info, or
 * the leaf rule when it has no RUNTIME_FUNCTION. `pc` is the frame's PC, looked up as it is for
 * the context frame and at return address − 1 otherwise. Records FuncTableEntry when asked.
 */
function unwind64(call: FacadeCall, ctx: Registers, at: { pc: bigint; contextFrame: boolean; entry?: (rtf: bigint) => void }): boolean {
  const { pc, contextFrame } = at;
  const lookup = lookupAddress(pc, !contextFrame) & U64;
  if (lookup === 0n || call.cb.getModuleBase(lookup) === 0n) return false;
  const rtf = call.cb.functionTableAccess(lookup);
  at.entry?.(rtf);
  return unwindInPlace(call, ctx, { strategy: x64UnwindInfo, machine: "x64", pc, lookup, contextFrame }) !== undefined;
}

/**
 * One unwind of the CONTEXT `ctx` in place by a table strategy (x64's UNWIND_INFO, ARM64's
 * .pdata/.xdata), looked up at `lookup`: the step, or undefined when the strategy has no rule, the
 * unwind fails or `accept` rejects the caller's registers (the CONTEXT is then unchanged).
 */
function unwindInPlace(call: FacadeCall, ctx: Registers, how: InPlaceUnwind): OkStep | undefined {
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

/**
 * The AMD64 walker (stackwalk64.md §7.2): AddrPC/AddrStack/AddrFrame always come from the CONTEXT
 * (AddrFrame is the unwound RBP), Params are 0, the context frame uses the exact IP and every
 * later frame return address − 1, a frame whose return cannot be computed is not reported, and
 * a return of 0 ends the walk on the next call. Unwinding follows Windows' rules rather than
 * Wine's interpreter (x64-unwind.md), in both compatibility modes.
 */
function amd64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: Resolved): StackWalkResult {
  let mode = frame.reserved[0];
  let count = frame.reserved[1];
  const done = (reason: NonNullable<StackWalkResult["reason"]>, detail: string): StackWalkResult => {
    frame.reserved[0] = AMD64_MODE.done;
    return { ok: false, reason, detail };
  };
  if (context === undefined) return { ok: false, reason: "invalid-parameter", detail: "the AMD64 walker needs a CONTEXT (ContextRecord is NULL)" };
  if (mode >= AMD64_MODE.done) return { ok: false, reason: "done", detail: "the walk has already ended; zero Reserved[] to start again" };
  const memory = readerOf(cb, U64);
  const call: FacadeCall = { target, memory, cb };
  const ctx = context.registers;
  let deltapc = count <= 1n ? 0n : 1n;
  if (mode === AMD64_MODE.start) {
    if (frame.addrPC.mode === AddressMode.Flat && frame.addrFrame.mode !== AddressMode.Flat) {
      return done("bad-frame", "AddrPC is flat but AddrFrame is not: set AddrFrame.Mode = AddrModeFlat");
    }
    mode = AMD64_MODE.bit64;
    frame.addrReturn.mode = AddressMode.Flat;
    frame.addrStack.mode = AddressMode.Flat;
    frame.addrBStore = { offset: 0n, segment: 0, mode: 0 };
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (!unwind64(call, ctx, { pc: frame.addrPC.offset, contextFrame: deltapc === 0n, entry: (rtf) => (frame.funcTableEntry = rtf) })) {
      return done("unwind-failed", "the previous frame cannot be unwound (its PC is in no module, or its stack cannot be read)");
    }
    deltapc = 1n;
  }
  frame.reserved[0] = mode;
  frame.params = [0n, 0n, 0n, 0n];
  frame.addrStack.offset = ctx["rsp"] ?? 0n;
  frame.addrFrame.offset = ctx["rbp"] ?? 0n;
  frame.addrPC.offset = ctx["rip"] ?? 0n;
  const tmp: Registers = { ...ctx };
  if (!unwind64(call, tmp, { pc: frame.addrPC.offset, contextFrame: deltapc === 0n })) {
    return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported (as Wine's walker does)");
  }
  frame.addrReturn.mode = AddressMode.Flat;
  frame.addrReturn.offset = tmp["rip"] ?? 0n;
  frame.far = 1;
  frame.virtual = 1;
  count += 1n;
  frame.reserved[1] = count;
  return { ok: true };
}

/** IA-64 walker modes kept in Reserved[0]; Reserved[1] counts successful calls (this port's layout, as for AMD64). */
const IA64_MODE = { start: 0n, walking: 1n, done: 2n } as const;

/**
 * One IA-64 unwind step (ia64.md §2) applied to `ctx` in place: StIIP ← rp (slot 0), IntSp ← psp,
 * RsBSP ← skip(bsp, −sol(pfs)), StIFS ← pfs.pfm, RsPFS ← pfs, BrRp ← rp (§5.3 step 4). The
 * context frame is looked up at its IP, every later frame at its return address − 1.
 */
function unwindIa64(call: FacadeCall, ctx: Registers, contextFrame: boolean): boolean {
  const { target, memory } = call;
  const cache = call.cb.cache;
  const pc = ia64Pc(ctx) ?? 0n;
  const site: FrameSite = {
    machine: "ia64", index: contextFrame ? 0 : 1, interrupted: false, registers: ctx, pc, lookupPc: lookupAddress(pc, !contextFrame) & U64,
    modules: target?.modules ?? [], images: memory, calleeParams: 0, cache,
  };
  const rule = ia64Unwind.ruleFor(site);
  if (rule === undefined) return false;
  const result = execRule(rule, { ...ctx }, memory, execContext(cache));
  if (!result.ok) return false;
  for (const [k, v] of Object.entries(result.registers)) ctx[k] = v & U64;
  return true;
}

/**
 * The IA-64 walker (stackwalk64.md §8, ia64.md §5.3): one unwind step per call, the CONTEXT
 * (required) rewritten in place. AddrPC = StIIP with the slot as `bundle | slot·4`, AddrStack =
 * IntSp, AddrBStore = RsBSP, AddrFrame = 0 (there is no frame pointer); AddrReturn = the caller's
 * IP. Params = r32-r35 from the backing store and FuncTableEntry = the IA-64 function-table entry
 * of the frame's function: dbghelp documents neither, so both are this port's choice, as is
 * setting Far and Virtual as the AMD64 walker does. A frame whose return address cannot be
 * computed is not reported; a return address of 0 ends the walk on the next call.
 */
function ia64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: Resolved): StackWalkResult {
  let mode = frame.reserved[0];
  let count = frame.reserved[1];
  const done = (reason: NonNullable<StackWalkResult["reason"]>, detail: string): StackWalkResult => {
    frame.reserved[0] = IA64_MODE.done;
    return { ok: false, reason, detail };
  };
  if (context === undefined) return { ok: false, reason: "invalid-parameter", detail: "the IA64 walker needs a CONTEXT (ContextRecord is NULL): the frame markers and RsBSP are only there" };
  if (mode >= IA64_MODE.done) return { ok: false, reason: "done", detail: "the walk has already ended; zero Reserved[] to start again" };
  const memory = readerOf(cb, U64);
  const call: FacadeCall = { target, memory, cb };
  const ctx = context.registers;
  if (mode === IA64_MODE.start) {
    mode = IA64_MODE.walking;
    frame.addrPC.mode = frame.addrReturn.mode = frame.addrFrame.mode = frame.addrStack.mode = frame.addrBStore.mode = AddressMode.Flat;
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (!unwindIa64(call, ctx, count === 1n)) {
      return done("unwind-failed", "the previous frame cannot be unwound (no unwind entry, or its backing store or stack cannot be read)");
    }
  }
  frame.reserved[0] = mode;
  const pc = ia64Pc(ctx) ?? 0n;
  frame.addrPC.offset = pc;
  frame.addrStack.offset = ctx["intsp"] ?? 0n;
  frame.addrBStore.offset = ctx["rsbsp"] ?? 0n;
  frame.addrFrame.offset = 0n;
  const tmp: Registers = { ...ctx };
  if (!unwindIa64(call, tmp, count === 0n)) {
    return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported");
  }
  frame.addrReturn.offset = ia64Pc(tmp) ?? 0n;
  frame.params = ia64Params(ctx, memory);
  const lookup = lookupAddress(pc, count !== 0n);
  frame.funcTableEntry = lookup !== 0n && cb.getModuleBase(lookup) !== 0n ? cb.functionTableAccess(lookup) : 0n;
  frame.far = 1;
  frame.virtual = 1;
  count += 1n;
  frame.reserved[1] = count;
  return { ok: true };
}

/** ARM64 walker modes kept in Reserved[0]; Reserved[1] counts successful calls (this port's layout, as for AMD64). */
const ARM64_MODE = { start: 0n, walking: 1n, done: 2n } as const;

/**
 * One ARM64 unwind (arm64.md §3.3 steps 4-6) applied to `ctx` in place: looked up at Pc − 4 when
 * CONTEXT_UNWOUND_TO_CALL is set, else at Pc; RtlVirtualUnwind over the function's .pdata entry,
 * or the leaf rule; the new Pc stripped of any pointer authentication code. The flag is set after
 * an unwind that returned to a call and cleared after one a custom stack gave. False when the
 * Pc is in no module, the unwind fails, or its result fails the sanity checks of §3.3 step 6: Pc
 * and Sp both unchanged, a Pc other than 0 below 0x1000, or an Sp that moved down (an Sp that is
 * not 16-byte aligned already fails the unwind).
 */
function unwindArm64(call: FacadeCall, context: ContextRecord): boolean {
  const ctx = context.registers;
  const pc = ctx["pc"] ?? 0n;
  const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
  const lookup = lookupAddress(pc, returned, "arm64") & U64;
  if (lookup === 0n || call.cb.getModuleBase(lookup) === 0n) return false;
  const sp = ctx["sp"] ?? 0n;
  const sane = (caller: Registers): boolean => {
    const newPc = caller["pc"] ?? 0n;
    const newSp = caller["sp"] ?? 0n;
    return !(newPc === pc && newSp === sp) && !(newPc !== 0n && newPc < 0x1000n) && newSp >= sp;
  };
  const result = unwindInPlace(call, ctx, { strategy: arm64Unwind, machine: "arm64", pc, lookup, contextFrame: !returned, accept: sane });
  if (result === undefined) return false;
  const flags = context.contextFlags ?? 0;
  context.contextFlags = result.interrupted === true ? flags & ~CONTEXT_UNWOUND_TO_CALL : flags | CONTEXT_UNWOUND_TO_CALL;
  return true;
}

/**
 * The ARM64 walker (arm64.md §3.3, the native model; dbghelp documents nothing ARM64-specific):
 * AddrPC = Pc, AddrStack = Sp, AddrFrame = Fp of the unwound CONTEXT (required), AddrReturn the Pc
 * an unwind of a copy gives, Params 0, FuncTableEntry the 8-byte .pdata entry, Far and Virtual
 * TRUE. A frame whose return address cannot be computed is not reported; a return address of 0
 * ends the walk on the next call. With Wine compatibility, Wine's `arm64_stack_walk` without DWARF
 * (§3.2): AddrReturn = Lr of the same CONTEXT, and the next frame is Pc = Lr with Sp and Fp
 * unchanged, until Pc equals Lr: two frames.
 */
function arm64Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: Resolved): StackWalkResult {
  let mode = frame.reserved[0];
  let count = frame.reserved[1];
  const done = (reason: NonNullable<StackWalkResult["reason"]>, detail: string): StackWalkResult => {
    frame.reserved[0] = ARM64_MODE.done;
    return { ok: false, reason, detail };
  };
  if (context === undefined) return { ok: false, reason: "invalid-parameter", detail: "the ARM64 walker needs a CONTEXT (ContextRecord is NULL)" };
  if (mode >= ARM64_MODE.done) return { ok: false, reason: "done", detail: "the walk has already ended; zero Reserved[] to start again" };
  const memory = readerOf(cb, U64);
  const call: FacadeCall = { target, memory, cb };
  const ctx = context.registers;
  const wine = cb.compatibility === "wine";
  if (mode === ARM64_MODE.start) {
    mode = ARM64_MODE.walking;
    frame.addrPC.mode = frame.addrReturn.mode = frame.addrFrame.mode = frame.addrStack.mode = AddressMode.Flat;
    frame.addrBStore = { offset: 0n, segment: 0, mode: 0 };
  } else {
    if (frame.addrReturn.offset === 0n) return done("done", "the previous frame's return address is 0: the stack ends there");
    if (wine) {
      // Wine without DWARF: pc = lr, nothing else changes; no progress once pc is lr.
      if (ctx["pc"] === ctx["lr"]) return done("unwind-failed", "Pc equals Lr: Wine's walker has no other way to the caller without DWARF unwind data");
      ctx["pc"] = ctx["lr"] ?? 0n;
    } else if (!unwindArm64(call, context)) {
      return done("unwind-failed", "the previous frame cannot be unwound (its Pc is in no module, or its unwind data or stack cannot be read)");
    }
  }
  frame.reserved[0] = mode;
  frame.params = [0n, 0n, 0n, 0n];
  frame.addrPC.offset = ctx["pc"] ?? 0n;
  frame.addrStack.offset = ctx["sp"] ?? 0n;
  frame.addrFrame.offset = ctx["fp"] ?? 0n;
  if (wine) frame.addrReturn.offset = ctx["lr"] ?? 0n;
  else {
    const copy: ContextRecord = { registers: { ...ctx }, contextFlags: context.contextFlags ?? 0 };
    if (!unwindArm64(call, copy)) return done("unwind-failed", "this frame's return address cannot be computed, so it is not reported");
    frame.addrReturn.offset = copy.registers["pc"] ?? 0n;
    const returned = ((context.contextFlags ?? 0) & CONTEXT_UNWOUND_TO_CALL) !== 0;
    const lookup = lookupAddress(frame.addrPC.offset, returned, "arm64");
    frame.funcTableEntry = lookup !== 0n && cb.getModuleBase(lookup) !== 0n ? cb.functionTableAccess(lookup) : 0n;
  }
  frame.far = 1;
  frame.virtual = 1;
  count += 1n;
  frame.reserved[1] = count;
  return { ok: true };
}

/**
 * One StackWalk64 call, with the reason for a FALSE. `target` plays hProcess (the snapshot);
 * `thread` plays hThread and is unused (no live thread to query).
 */
export function stackWalk64Detailed(
  machineType: number,
  target: Snapshot | undefined,
  frame: StackFrame64,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
): StackWalkResult {
  const machine = machineFromImageFileMachine(machineType);
  if (machine === undefined) {
    return { ok: false, reason: "invalid-parameter", detail: `machine type ${hex(machineType)} has no StackWalk64 backend (ERROR_INVALID_PARAMETER)` };
  }
  let strip: PacStrip | undefined;
  if (callbacks.pacVaBits !== undefined) {
    try {
      strip = pacStripper(callbacks.pacVaBits);
    } catch (e) {
      return { ok: false, reason: "invalid-parameter", detail: (e as Error).message };
    }
  }
  return WALKS[machine](frame, context, target, resolveCallbacks(target, callbacks, strip));
}

/** The StackWalk64 backend of each machine, chosen by its IMAGE_FILE_MACHINE value. */
const WALKS: Readonly<Record<Machine, (frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: Resolved) => StackWalkResult>> = {
  x86: i386Walk,
  x64: amd64Walk,
  ia64: ia64Walk,
  arm64: arm64Walk,
};

/** StackWalk64 (dbghelp.h): fills `frame` with the next frame and returns TRUE, or returns FALSE at the end. */
export function stackWalk64(
  machineType: number,
  target: Snapshot | undefined,
  _thread: unknown,
  frame: StackFrame64,
  context?: ContextRecord,
  readMemory?: ReadMemoryRoutine,
  functionTableAccess?: FunctionTableAccessRoutine,
  getModuleBase?: GetModuleBaseRoutine,
  translateAddress?: TranslateAddressRoutine,
): boolean {
  return stackWalk64Detailed(machineType, target, frame, context, callbacksOf(readMemory, functionTableAccess, getModuleBase, translateAddress)).ok;
}

/** How StackWalk widens 32-bit ADDRESS offsets: Wine zero-extends, Microsoft's Address32To64 sign-extends. */
export type AddressWidening = "zero-extend" | "sign-extend";

/**
 * The 32-bit StackWalk over a STACKFRAME (164 bytes) (stackwalk64.md §5.2): converts the record
 * in, runs the same backend, and copies the results back only on success (addresses, Params and
 * Reserved truncated to 32 bits). KdHelp is not copied.
 */
export function stackWalk32Detailed(
  machineType: number,
  target: Snapshot | undefined,
  frame: StackFrame32,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
  widening: AddressWidening = "zero-extend",
): StackWalkResult {
  const widen = widening === "zero-extend" ? address32To64Zero : address32To64Sign;
  const f64: StackFrame64 = newStackFrame64();
  f64.addrPC = widen(frame.addrPC);
  f64.addrReturn = widen(frame.addrReturn);
  f64.addrFrame = widen(frame.addrFrame);
  f64.addrStack = widen(frame.addrStack);
  f64.addrBStore = widen(frame.addrBStore);
  f64.funcTableEntry = frame.funcTableEntry;
  f64.params = [...frame.params];
  f64.far = frame.far;
  f64.virtual = frame.virtual;
  f64.reserved = [...frame.reserved];
  const result = stackWalk64Detailed(machineType, target, f64, context, callbacks);
  if (!result.ok) return result;
  frame.addrPC = address64To32(f64.addrPC);
  frame.addrReturn = address64To32(f64.addrReturn);
  frame.addrFrame = address64To32(f64.addrFrame);
  frame.addrStack = address64To32(f64.addrStack);
  frame.addrBStore = address64To32(f64.addrBStore);
  frame.funcTableEntry = f64.funcTableEntry & U32;
  frame.far = f64.far;
  frame.virtual = f64.virtual;
  frame.params = [f64.params[0] & U32, f64.params[1] & U32, f64.params[2] & U32, f64.params[3] & U32];
  frame.reserved = [f64.reserved[0] & U32, f64.reserved[1] & U32, f64.reserved[2] & U32];
  return result;
}

/** StackWalk (32-bit dbghelp.h): like {@link stackWalk64} over a STACKFRAME. */
export function stackWalk(
  machineType: number,
  target: Snapshot | undefined,
  _thread: unknown,
  frame: StackFrame32,
  context?: ContextRecord,
  callbacks: StackWalkCallbacks = {},
  widening: AddressWidening = "zero-extend",
): boolean {
  return stackWalk32Detailed(machineType, target, frame, context, callbacks, widening).ok;
}
