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
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, type Module, type Registers } from "../../model/snapshot.js";
import type { WalkStop } from "../../walk/frame.js";
import { lazyText } from "../../walk/lazy-text.js";
import { unwindStep, type FrameNumbers, type FrameSite, type UnwindResult, type UnwindRule, type UnwindStep, type UnwindStrategy } from "../../walk/strategy.js";
import { isReturnAddress64 } from "./code.js";
import { inherited64, lastRun, runPlan } from "./exec.js";
import { buildPlan, leafPlan, type UnwindPlan } from "./plan.js";
import { RIP_RSP, X64_CHECKED_SCAN, X64_SCAN_WORDS, X64_SCAN_WORDS_CONTEXT } from "./scan.js";
import { callSiteCheck, scanForReturn, type CallSiteCheck } from "../scan.js";
import { findEntryIndex, lookupEntry, primaryBegin, resolveEntry, x64Tables, type X64Tables } from "./tables.js";
import { REG64, type RuntimeFunctionEntry } from "./unwind-info.js";

const hex = (v: number | bigint): string => "0x" + v.toString(16);

function machineFrameText(label: string, slot: number | bigint): string {
  return `${label}: rip@[${hex(slot)}]`;
}

/** A plan with what its checks need, kept by value (the walk reuses its site object). */
class PlanRule implements UnwindRule {
  /**
   * The step the usual success is written into, made once and refilled on every run: the walk
   * reads a step before it runs the next rule, and one step per frame is garbage it need not make.
   */
  private scratch: (UnwindStep & { ok: true }) | undefined;

  constructor(
    private readonly plan: UnwindPlan,
    private readonly modules: readonly Module[],
    private readonly images: MemoryReader,
    /** Words a repair scan looks at. */
    private readonly words: number,
    /** What a repair scan's call-site checks know of the frame. */
    private readonly check: CallSiteCheck,
  ) {}

  describe(): string {
    return this.plan.label;
  }

  exec(registers: Registers, memory: MemoryReader, numbers?: FrameNumbers): UnwindResult {
    let plan = this.plan;
    let out = runPlan(plan, registers, memory, numbers?.sp);
    let repaired = false;
    if (out === undefined && lastRun.inconsistent && plan.withoutFrameRegister !== undefined) {
      // The frame register belongs to another frame (a longjmp reloaded it): RSP is all there is.
      const stop = lastRun.stop!;
      plan = plan.withoutFrameRegister;
      out = runPlan(plan, registers, memory, numbers?.sp);
      if (out === undefined) return { ok: false, stop };
      repaired = true;
    }
    const rsp = registers["rsp"];
    if (out === undefined) {
      const stop = lastRun.stop!;
      return lastRun.inconsistent && rsp !== undefined ? this.scan(registers, memory, rsp, stop.detail, stop) : { ok: false, stop };
    }
    const rip = out["rip"]!;
    if ((rip !== 0n || repaired) && !plan.machineFrame) {
      if ((lastRun.rspLow & 7) !== 0) {
        return { ok: false, stop: { reason: "unsupported", address: out["rsp"]!, detail: `${plan.label}: the caller's RSP ${hex(out["rsp"]!)} is not 8-byte aligned` } };
      }
      // A return address of 0 ends the stack, unless it came from a guess (a repaired plan).
      if (rip === 0n || !isReturnAddress64(this.modules, this.images, rip, lastRun.ripNumber)) {
        const stop: WalkStop = {
          reason: "bad-pc",
          address: rip,
          detail: `${plan.label}: [${hex(lastRun.ripSlot)}] = ${hex(rip)} is not a return address (no call instruction before it in a module)`,
        };
        // After a repair the frame's own RSP is all that is certain; otherwise the caller's RSP is.
        return this.scan(registers, memory, repaired && rsp !== undefined ? rsp : out["rsp"]!, stop.detail, stop);
      }
    }
    // The rule text: the plan's (RSP-relative, the same for every frame at this PC); a machine
    // frame's RIP slot is not the caller's RSP − 8, so its frames name it.
    const entry = plan.entry;
    if (entry !== undefined && !plan.machineFrame && !repaired) {
      const step = this.scratch;
      if (step === undefined) return (this.scratch = unwindStep(out, plan.label, plan.recovered, undefined, entry, undefined, undefined, lastRun.ripNumber, lastRun.rspNumber));
      step.registers = out;
      step.pcNumber = lastRun.ripNumber;
      step.spNumber = lastRun.rspNumber;
      return step;
    }
    const rule = plan.machineFrame ? lazyText(machineFrameText, plan.label, lastRun.ripSlot) : plan.label;
    const step: UnwindStep & { ok: true } = { ok: true, registers: out, recovered: plan.recovered, rule };
    if (entry !== undefined) step.entry = entry;
    // The next frame's PC is an interrupted instruction, unwound like the context frame (§1.8).
    if (plan.machineFrame) step.interrupted = true;
    if (repaired) step.trust = "scan";
    return step;
  }

  /** The last repair when the unwind data does not fit the frame: the first return address from `start` up (trust `scan`), else `stop`. */
  private scan(registers: Registers, memory: MemoryReader, start: bigint, why: string, stop: WalkStop): UnwindResult {
    const hit = scanForReturn(X64_CHECKED_SCAN, memory, this.check, start, this.words);
    if (hit === undefined) return { ok: false, stop };
    const out = inherited64(registers);
    out["rip"] = hit.value;
    out["rsp"] = hit.slot + 8n;
    const step: UnwindStep & { ok: true } = {
      ok: true,
      registers: out,
      recovered: RIP_RSP,
      rule: `${why}; scanned from ${hex(start)} to ra@[${hex(hit.slot)}]=${hex(hit.value)}`,
      trust: "scan",
    };
    if (this.plan.entry !== undefined) step.entry = this.plan.entry;
    return step;
  }
}

/** A rule that stops the frame: the unwind data is unusable. */
function stopRule(detail: string): UnwindRule {
  return {
    describe: () => detail,
    exec: (): UnwindResult => ({ ok: false, stop: { reason: "unsupported", detail } }),
  };
}

/** How a frame's PC is to be used (§1.8). */
type PcKind = "context" | "interrupted" | "return";

/**
 * The unwind plan for a frame whose PC is `pc`, or a string saying why there is none, or
 * undefined when no image describes the PC. `registers` (the context frame's) are looked at only
 * for a context frame.
 */
function planAt(modules: readonly Module[], images: MemoryReader, pc: bigint, kind: PcKind, registers: Registers): UnwindPlan | string | undefined {
  // A return address is looked up at ra − 1: the call's own function.
  const at = kind === "return" ? pc - 1n : pc;
  const module = moduleAt(modules, at);
  if (module === undefined) return undefined;
  const tables = x64Tables(module, images);
  if (tables === undefined) return undefined;
  if (tables.problem !== undefined) return tables.problem;
  const rva = Number(at - module.base);
  const index = findEntryIndex(tables, rva);
  if (index < 0) return leafPlan(rva);
  const entry = resolveEntry(tables, index);
  if (typeof entry === "string") return `${module.name}: ${entry}`;
  const controlRva = Number(pc - module.base);
  // A call that ended its function: the return address is past the entry (§1.8).
  const mode = kind === "return" && controlRva >= tables.functions[index * 3 + 1]! ? "body" : "pc";
  const plan = buildPlan(tables, module.base, entry, controlRva, mode);
  if (typeof plan === "string") return `${module.name}: ${plan}`;
  if (kind === "context" && !plan.epilog) {
    // A register jump out of the function (not an epilog form): control is already the
    // target's, with this stack (a longjmp, or a tail call without REX.W).
    const jump = jumpOut(registers, tables, module, entry, controlRva);
    if (jump !== undefined) {
      const there = planAt(modules, images, jump.target, "interrupted", registers);
      if (there !== undefined && typeof there !== "string") return relabel(there, `${jump.text} leaves the function: as at ${hex(jump.target)}, `);
    }
  }
  return plan;
}

/** `plan` with `prefix` before its label (and its variant's). */
function relabel(plan: UnwindPlan, prefix: string): UnwindPlan {
  const out: UnwindPlan = { ...plan, label: prefix + plan.label };
  if (plan.withoutFrameRegister !== undefined) out.withoutFrameRegister = relabel(plan.withoutFrameRegister, prefix);
  return out;
}

/** The site's plan (see {@link planAt}). */
export function planFor(site: FrameSite): UnwindPlan | string | undefined {
  if (site.index === 0) return planAt(site.modules, site.images, site.lookupPc, "context", site.registers);
  // An interrupted PC is looked up at itself; a return address's lookup address is PC − 1.
  if (site.interrupted) return planAt(site.modules, site.images, site.lookupPc, "interrupted", site.registers);
  return planAt(site.modules, site.images, site.lookupPc + 1n, "return", site.registers);
}

/**
 * When the instruction at `rva` is `jmp r64` without REX.W (not an epilog form, §1.5 D) and the
 * register points outside the function (no entry of the same primary function), the target.
 */
function jumpOut(registers: Registers, tables: X64Tables, module: Module, entry: RuntimeFunctionEntry, rva: number): { target: bigint; text: string } | undefined {
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
    if (t !== undefined && typeof t !== "string" && primaryBegin(tables, t) === primaryBegin(tables, entry)) return undefined;
  }
  return { target, text: `jmp ${register}=${hex(target)}` };
}

/** The x64 table-based unwinder (trust `unwind-info`). */
export const x64UnwindInfo: UnwindStrategy = {
  name: "unwind-info",
  trust: "unwind-info",
  ruleFor(site: FrameSite): UnwindRule | undefined {
    const plan = planFor(site);
    if (plan === undefined) return undefined;
    if (typeof plan === "string") return stopRule(plan);
    return new PlanRule(plan, site.modules, site.images, site.index === 0 ? X64_SCAN_WORDS_CONTEXT : X64_SCAN_WORDS, callSiteCheck(site));
  },
};
