/**
 * The x86 StackWalk64 backend (stackwalk64.md §6): one call, the EBP chain with native dbghelp's
 * FPO_DATA and FrameData before it, Wine's chain alone with Wine compatibility.
 */
import { AddressMode } from "../../model/address.js";
import type { Registers, Snapshot } from "../../model/snapshot.js";
import type { StackFrame64 } from "../../model/stackframe.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { execContext } from "../step.js";
import type { FrameSite } from "../../unwind/step.js";
import { execRule } from "../exec.js";
import type { ArchStrategy } from "../rule.js";
import { linear, readerOf, tableEntryAt, type ContextRecord, type FacadeCall, type ResolvedCallbacks, type StackWalkResult } from "../stackwalk64-call.js";
import { x86FrameData } from "./frame-data.js";
import { x86Fpo } from "./fpo.js";
import { x86FramePointer } from "./frame-pointer.js";
import { x86Params } from "./params.js";
import { x86RecordlessScan, x86ScanWithoutRecords } from "./scan.js";

/** What native dbghelp tries before the EBP chain on x86 (stackwalk64.md §10); a scan follows a chain that gives nothing. */
const NATIVE_RECORD_STRATEGIES: readonly ArchStrategy[] = [x86FrameData, x86Fpo, x86RecordlessScan];

/** i386 walker modes kept in Reserved[0] bits 0-3 (stackwalk64.md §6.1). */
const I386_MODE = { start: 0n, bit32: 1n, bit16: 2n, done: 3n } as const;

const U32 = 0xffff_ffffn;

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
  for (const strategy of [x86FramePointer]) {
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

export function i386Walk(frame: StackFrame64, context: ContextRecord | undefined, target: Snapshot | undefined, cb: ResolvedCallbacks): StackWalkResult {
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
  frame.funcTableEntry = tableEntryAt(cb, p);
  count += 1n;
  frame.reserved[0] = (count << 4n) | mode;
  return { ok: true };
}
