/**
 * The x64 `unwind-info` strategy: RtlVirtualUnwind over the RUNTIME_FUNCTIONs and UNWIND_INFOs of
 * the images mapped in the snapshot (x64-unwind.md Part 1). Which entry and which PC a frame uses
 * (§1.8):
 *
 * - the context frame, and a frame whose PC a machine frame gave (an interrupted instruction), use
 *   their PC as it is: entry lookup, prolog offset and epilog check;
 * - a caller frame's PC is a return address: its entry is the one containing ra − 1 (the site's
 *   lookup address), and when ra still lies in that entry it is the ControlPc (prolog offset and
 *   epilog check at ra, as Windows does). When ra is past the entry's end (a call was its last
 *   instruction), the frame is in the body: every code applies and no epilog is checked;
 * - no entry at all means a leaf: RIP = [RSP], RSP += 8.
 *
 * Where the unwind data does not fit the frame, the frame is repaired and marked as found by
 * scanning (trust `scan`), as the x86 record strategies do: a frame register that would move RSP
 * down belongs to another frame (a longjmp reloaded it), so the plan runs again with RSP as the
 * establisher frame; a computed RIP that is not a return address makes a bounded scan for one.
 * A context frame at `jmp r64` (no REX.W, so not an epilog) to outside its function is unwound as
 * at the jump's target: control is already there, with this stack (a longjmp's last instruction).
 * Bad unwind data stops the frame with the reason; nothing here throws.
 */
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, type Module, type Registers } from "../../model/snapshot.js";
import type { UnwindCache } from "../../unwind/cache.js";
import { walkStop, type WalkStop } from "../../unwind/frame.js";
import type { RescanRule, UnwindInfoRule } from "./rule.js";
import { stepInto, unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { isProblem, type DataProblem } from "../../formats/unwind-data/problem.js";
import { callSiteCheck, scanForReturn, type CallSiteCheck } from "../scan.js";
import { stopRule, type StopPlan } from "../stop.js";
import { isReturnAddress64 } from "./code.js";
import { inherited64, PLAN_RUN, planLabel, RIP_RSP, runPlan } from "./exec.js";
import { buildPlan, leafPlan, type UnwindPlan } from "./plan.js";
import { X64_CHECKED_SCAN, X64_SCAN_WORDS, X64_SCAN_WORDS_CONTEXT } from "./scan.js";
import { findEntryIndex, lookupEntry, primaryBegin, resolveEntry, x64Tables, type X64Tables } from "./tables.js";
import { REG64, type RuntimeFunctionEntry } from "../../formats/unwind-data/x64.js";

/** A frame's plan with what its checks need, kept by value (the walk reuses its site object); never changed once made. */
export interface UnwindInfoPlan {
  kind: "unwind-info";
  plan: UnwindPlan;
  modules: readonly Module[];
  images: MemoryReader;
  /** Words a repair scan looks at. */
  words: number;
  /** What a repair scan's call-site checks know of the frame. */
  check: CallSiteCheck;
}

/** Runs an x64 unwind plan, repairing what the unwind data does not fit (see the file comment). */
export function execUnwindInfo(rule: UnwindInfoPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const run = ctx.cache.get(PLAN_RUN);
  let plan = rule.plan;
  let out = runPlan(plan, registers, memory, run, ctx.sp);
  let repaired = false;
  if (out === undefined && run.inconsistent && plan.withoutFrameRegister !== undefined) {
    // The frame register belongs to another frame (a longjmp reloaded it): RSP is all there is.
    const stop = run.stop!;
    plan = plan.withoutFrameRegister;
    out = runPlan(plan, registers, memory, run, ctx.sp);
    if (out === undefined) return { ok: false, stop };
    repaired = true;
  }
  const rsp = registers["rsp"];
  if (out === undefined) {
    const stop = run.stop!;
    return run.inconsistent && rsp !== undefined ? rescan(rule, ctx.cache, registers, memory, rsp, stop) : { ok: false, stop };
  }
  const rip = out["rip"]!;
  if ((rip !== 0n || repaired) && !plan.machineFrame) {
    if ((run.rspLow & 7) !== 0) {
      return { ok: false, stop: walkStop("unsupported", `${planLabel(plan)}: the caller's RSP ${hex(out["rsp"]!)} is not 8-byte aligned`, out["rsp"]!) };
    }
    // A return address of 0 ends the stack, unless it came from a guess (a repaired plan).
    if (rip === 0n || !isReturnAddress64(ctx.cache, rule.modules, rule.images, rip, run.ripNumber)) {
      const stop = walkStop("bad-pc", `${planLabel(plan)}: [${hex(run.ripSlot)}] = ${hex(rip)} is not a return address (no call instruction before it in a module)`, rip);
      // After a repair the frame's own RSP is all that is certain; otherwise the caller's RSP is.
      return rescan(rule, ctx.cache, registers, memory, repaired && rsp !== undefined ? rsp : out["rsp"]!, stop);
    }
  }
  // The rule: the plan's (RSP-relative, the same for every frame at this PC); a machine frame's
  // RIP slot is not the caller's RSP − 8, so its frames name it.
  const entry = plan.entry;
  if (entry !== undefined && !plan.machineFrame && !repaired) {
    return stepInto(ctx, out, plan.rule, plan.recovered, entry, run.ripNumber, run.rspNumber);
  }
  const found: UnwindInfoRule = plan.machineFrame ? { ...plan.rule, machineFrameSlot: run.ripSlot } : plan.rule;
  // The next frame's PC is an interrupted instruction, unwound like the context frame (§1.8).
  return unwindStep(out, found, { recovered: plan.recovered, entry, interrupted: plan.machineFrame ? true : undefined, trust: repaired ? "scan" : undefined });
}

/** The last repair when the unwind data does not fit the frame: the first return address from `start` up (trust `scan`), else `stop`. */
function rescan(rule: UnwindInfoPlan, cache: UnwindCache, registers: Registers, memory: MemoryReader, start: bigint, stop: WalkStop): UnwindResult {
  const hit = scanForReturn(X64_CHECKED_SCAN, cache, memory, { check: rule.check, start, words: rule.words });
  if (hit === undefined) return { ok: false, stop };
  const out = inherited64(registers);
  out["rip"] = hit.value;
  out["rsp"] = hit.slot + 8n;
  const found: RescanRule = { kind: "rescan", problem: stop.detail, start, slot: hit.slot, value: hit.value };
  return unwindStep(out, found, { recovered: RIP_RSP, trust: "scan", entry: rule.plan.entry });
}

/** How a frame's PC is to be used (§1.8). */
type PcKind = "context" | "interrupted" | "return";

/**
 * The unwind plan for a frame whose PC is `pc`, or a problem (in words: `module: why`) saying
 * why there is none, or undefined when no image describes the PC. `registers` (the context
 * frame's) are looked at only for a context frame.
 */
function planAt(site: FrameSite, pc: bigint, kind: PcKind): UnwindPlan | DataProblem | undefined {
  const { modules, images, registers } = site;
  // A return address is looked up at ra − 1: the call's own function.
  const at = lookupAddress(pc, kind === "return");
  const module = moduleAt(modules, at);
  if (module === undefined) return undefined;
  const tables = x64Tables(module, images, site.cache);
  if (tables === undefined) return undefined;
  if (tables.problem !== undefined) return { problem: tables.problem };
  const rva = Number(at - module.base);
  const index = findEntryIndex(tables, rva);
  if (index < 0) return leafPlan(rva);
  const entry = resolveEntry(tables, index);
  if (isProblem(entry)) return inModule(module, entry);
  const controlRva = Number(pc - module.base);
  // A call that ended its function: the return address is past the entry (§1.8).
  const mode = kind === "return" && controlRva >= tables.functions[index * 3 + 1]! ? "body" : "pc";
  const plan = buildPlan(tables, module.base, entry, controlRva, mode);
  if (isProblem(plan)) return inModule(module, plan);
  if (kind === "context" && !plan.epilog) {
    // A register jump out of the function (not an epilog form): control is already the
    // target's, with this stack (a longjmp, or a tail call without REX.W).
    const jump = jumpOut(registers, tables, module, entry, controlRva);
    if (jump !== undefined) {
      const there = planAt(site, jump.target, "interrupted");
      if (there !== undefined && !isProblem(there)) return jumped(there, jump);
    }
  }
  return plan;
}

/** A problem of a module's unwind data, named by the module, with its address. */
function inModule(module: Module, p: DataProblem): DataProblem {
  return p.rva === undefined ? { problem: `${module.name}: ${p.problem}` } : { problem: `${module.name}: ${p.problem}`, rva: p.rva, address: module.base + BigInt(p.rva) };
}

/** `plan` as the plan of a frame that jumped to it (its variant too). */
function jumped(plan: UnwindPlan, jump: { register: string; target: bigint }): UnwindPlan {
  const out: UnwindPlan = { ...plan, rule: { ...plan.rule, jumped: jump } };
  if (plan.withoutFrameRegister !== undefined) out.withoutFrameRegister = jumped(plan.withoutFrameRegister, jump);
  return out;
}

/** The site's plan (see {@link planAt}). */
export function planFor(site: FrameSite): UnwindPlan | DataProblem | undefined {
  // An interrupted PC is looked up at itself; a return address at its lookup address.
  return planAt(site, site.pc, site.index === 0 ? "context" : site.interrupted ? "interrupted" : "return");
}

/**
 * When the instruction at `rva` is `jmp r64` without REX.W (not an epilog form, §1.5 D) and the
 * register points outside the function (no entry of the same primary function), the target.
 */
function jumpOut(registers: Registers, tables: X64Tables, module: Module, entry: RuntimeFunctionEntry, rva: number): { register: string; target: bigint } | undefined {
  const b = tables.read(rva, 3) ?? tables.read(rva, 2);
  if (b === undefined) return undefined;
  const rex = (b[0]! & 0xf0) === 0x40 ? b[0]! : 0;
  const at = rex === 0 ? 0 : 1;
  if ((rex & 8) !== 0 || b[at] !== 0xff || at + 1 >= b.length) return undefined;
  const modrm = b[at + 1]!;
  if ((modrm & 0xc0) !== 0xc0 || ((modrm >> 3) & 7) !== 4) return undefined;
  const register = REG64[((rex & 1) << 3) | (modrm & 7)]!;
  const target = registers[register];
  if (target === undefined) return undefined;
  if (target >= module.base && target - module.base < BigInt(tables.sizeOfImage)) {
    const t = lookupEntry(tables, Number(target - module.base));
    if (t !== undefined && !isProblem(t) && primaryBegin(tables, t) === primaryBegin(tables, entry)) return undefined;
  }
  return { register, target };
}

/** The x64 table-based unwinder (trust `unwind-info`). */
export const x64UnwindInfo: UnwindStrategy<UnwindInfoPlan | StopPlan> = {
  name: "unwind-info",
  trust: "unwind-info",
  ruleFor(site: FrameSite) {
    const plan = planFor(site);
    if (plan === undefined) return undefined;
    // Bad unwind data: the frame stops with the reason.
    if (isProblem(plan)) return stopRule(walkStop("unsupported", plan.problem));
    return { kind: "unwind-info", plan, modules: site.modules, images: site.images, words: site.index === 0 ? X64_SCAN_WORDS_CONTEXT : X64_SCAN_WORDS, check: callSiteCheck(site) };
  },
};
