/**
 * The `fpo` strategy: unwinding with an old FPO_DATA record (x86-fpo.md §1.4). In the body the
 * return address is at esp + calleeParams + locals + savedRegs; in the prolog the bytes up to
 * the PC say what has been pushed; at an epilogue the context frame runs it. fUseBP functions
 * saved the caller's EBP in their register area; FRAME_NONFPO is an EBP frame; FRAME_TRAP and
 * FRAME_TSS end a user-mode walk with their own stop reasons.
 */
import { bigintOfU32 } from "../../memory/bigint-cache.js";
import { readU32, readU32n, type MemoryReader } from "../../memory/reader.js";
import { hex } from "../../hex.js";
import { FRAME_NONFPO, FRAME_TRAP, FRAME_TSS, type FpoData } from "../../model/fpo-data.js";
import type { Registers } from "../../model/snapshot.js";
import { walkStop, type FuncTableEntry } from "../../unwind/frame.js";
import type { FpoRule } from "./rule.js";
import { fpoLabel } from "./rule.js";
import type { ExecContext, UnwindResult } from "../step.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import type { StopPlan } from "../stop.js";
import { decodeProlog, SCANNED, scanSlots, type PrologState } from "./code.js";
import { acceptOrScan, EIP_ESP, EIP_ESP_EBP, epilogRule, inherited, RA_SEARCH_WORDS, siteCheck, U32, x86Site, type RecordSteps, type X86EpilogPlan, type X86Site } from "./site.js";
import { findFpo } from "./tables.js";

/** An FPO_DATA record's rule for one frame, in the form the PC's place in the function asks for. */
export type FpoPlan =
  | { kind: "fpo"; form: "body"; found: X86Site; record: FpoData; steps: RecordSteps; calleeParams: number; offset: number; callerEsp: bigint; plain: FpoRule }
  | { kind: "fpo"; form: "prolog"; found: X86Site; record: FpoData; steps: RecordSteps; state: PrologState }
  | { kind: "fpo"; form: "non-fpo"; found: X86Site; record: FpoData; steps: RecordSteps };

function entryOf(record: FpoData, base: bigint): FuncTableEntry {
  return { kind: "fpo", beginRva: BigInt(record.ulOffStart), endRva: BigInt(record.ulOffStart + record.cbProcSize), moduleBase: base };
}

/** A rule that ends the walk: the caller's context is in a kernel structure a user-mode walker cannot see. */
function kernelFrameRule(record: FpoData): StopPlan {
  const trap = record.cbFrame === FRAME_TRAP;
  const detail = `${fpoLabel(record)} is a ${trap ? "FRAME_TRAP" : "FRAME_TSS"} record: the caller's context is in a ${trap ? "kernel trap frame (KTRAP_FRAME)" : "task-state segment"}, which a user-mode walk does not follow`;
  return { kind: "stop", stop: walkStop(trap ? "trap-frame" : "tss-frame", detail), final: true };
}

/** Runs an FPO_DATA rule. */
export function execFpo(plan: FpoPlan, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult {
  switch (plan.form) {
    case "non-fpo":
      return execNonFpo(plan, registers, stack, ctx);
    case "prolog":
      return execProlog(plan, registers, stack, ctx);
    case "body":
      return execBody(plan, registers, stack, ctx);
  }
}

/** FRAME_NONFPO: a normal EBP frame. */
function execNonFpo(plan: Extract<FpoPlan, { form: "non-fpo" }>, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult {
  // 32-bit arithmetic on numbers: this runs once per frame.
  const ebpBig = registers["ebp"] ?? 0n;
  const ebp = Number(ebpBig);
  const eip = readU32n(stack, (ebp + 4) >>> 0);
  const saved = readU32n(stack, ebp);
  if (eip === undefined || saved === undefined) {
    const at = eip === undefined ? (ebp + 4) >>> 0 : ebp;
    return { ok: false, stop: walkStop("read-fault", `${fpoLabel(plan.record)} FRAME_NONFPO: cannot read ${hex(at)}`, BigInt(at)) };
  }
  const out = inherited(registers);
  const esp = (ebp + 8) >>> 0;
  out["eip"] = bigintOfU32(eip);
  out["esp"] = esp === ebp + 8 ? ebpBig + 8n : BigInt(esp);
  out["ebp"] = bigintOfU32(saved);
  const rule: FpoRule = { kind: "fpo", record: plan.record, form: "non-fpo", ebp: ebpBig };
  const check = siteCheck(ctx.cache);
  check.scanFrom = esp;
  check.expected = undefined;
  check.eip = eip;
  check.esp = esp;
  return acceptOrScan(plan, out, rule, ctx, stack);
}

/** In the prolog: the return address is above what the decoded instructions pushed. */
function execProlog(plan: Extract<FpoPlan, { form: "prolog" }>, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult {
  const { state } = plan;
  const rule: FpoRule = { kind: "fpo", record: plan.record, form: "prolog", instructions: state.text, pushed: state.pushed };
  const label = `${fpoLabel(plan.record)} prolog [${state.text.join("; ")}]`;
  const esp = registers["esp"] ?? 0n;
  const raSlot = (esp + BigInt(state.pushed)) & U32;
  const eip = readU32(stack, raSlot);
  if (eip === undefined) return { ok: false, stop: walkStop("read-fault", `${label}: cannot read the return address at ${hex(raSlot)}`, raSlot) };
  const out = inherited(registers);
  for (const s of state.saves) {
    if (s.reg === "esp") continue;
    const slot = (esp + BigInt(state.pushed - s.total)) & U32;
    const v = readU32(stack, slot);
    if (v === undefined) return { ok: false, stop: walkStop("read-fault", `${label}: cannot read the saved ${s.reg} at ${hex(slot)}`, slot) };
    out[s.reg] = v;
  }
  out["eip"] = eip;
  out["esp"] = (raSlot + 4n) & U32;
  const check = siteCheck(ctx.cache);
  check.scanFrom = Number((raSlot + 4n) & U32);
  check.expected = Number(raSlot);
  check.eip = -1;
  check.esp = -1;
  return acceptOrScan(plan, out, rule, ctx, stack);
}

/** In the body: ra = esp + calleeParams + locals + savedRegs, validated by a short scan. */
function execBody(plan: Extract<FpoPlan, { form: "body" }>, registers: Registers, stack: MemoryReader, ctx: ExecContext): UnwindResult {
  const { found, record, offset } = plan;
  // 32-bit arithmetic on numbers: this runs once per frame.
  const espBig = registers["esp"] ?? 0n;
  const esp = ctx.sp >= 0 ? ctx.sp : Number(espBig);
  const expected = (esp + offset) >>> 0;
  let raSlot = scanSlots(ctx.cache, stack, found, expected, RA_SEARCH_WORDS);
  // The scan has read the slot it chose; without one, the slot is read here.
  let eip: number | undefined = ctx.cache.get(SCANNED).value;
  if (raSlot < 0) {
    raSlot = expected;
    eip = readU32n(stack, raSlot);
  }
  if (eip === undefined) return { ok: false, stop: walkStop("read-fault", `${fpoLabel(record)}: cannot read the return address at ${hex(raSlot)}`, BigInt(raSlot)) };
  const out = inherited(registers);
  const after = (raSlot + 4) >>> 0;
  out["eip"] = bigintOfU32(eip);
  out["esp"] = raSlot === expected && esp + offset + 4 <= 0xffff_ffff ? espBig + plan.callerEsp : BigInt(after);
  let ebpSlot = -1;
  if (record.fUseBP) {
    // MSVC saves EBP second (sub esp,L; push ebx; push ebp; ...): x86-fpo.md §1.4 step 3.
    // With one saved register, EBP is that register.
    ebpSlot = (esp + (raSlot - expected) + plan.calleeParams + Math.max(record.cbRegs * 4 - 8, 0)) >>> 0;
    // An unreadable slot leaves the caller's EBP unknown rather than losing the caller.
    const v = readU32n(stack, ebpSlot);
    if (v === undefined) delete out["ebp"];
    else out["ebp"] = BigInt(v);
  }
  // The usual rule (nothing moved, no EBP slot) is the same for every frame: made once.
  const moved = raSlot - expected;
  const rule: FpoRule = moved === 0 && ebpSlot < 0 ? plan.plain : { kind: "fpo", record, form: "body", raOffset: offset, moved, ebpSlot };
  const check = siteCheck(ctx.cache);
  check.scanFrom = after;
  check.expected = expected;
  check.eip = eip;
  check.esp = after;
  return acceptOrScan(plan, out, rule, ctx, stack);
}

/** The x86 FPO_DATA strategy (trust `fpo`). At an epilogue with no record at all, it runs the epilogue too. */
export const x86Fpo: UnwindStrategy<FpoPlan | StopPlan | X86EpilogPlan<FpoPlan>> = {
  name: "fpo",
  trust: "fpo",
  ruleFor(site: FrameSite) {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    const record = findFpo(found.tables.fpo, found.rva);
    if (record === undefined) {
      // No record of either kind covers the PC: an epilogue is still exact.
      return found.tables.frameDataIndex.innermost(found.rva) === undefined ? epilogRule<FpoPlan>(site, found, { none: true }) : undefined;
    }
    if (record.cbFrame === FRAME_TRAP || record.cbFrame === FRAME_TSS) return kernelFrameRule(record);
    const step = { paramsSize: record.cdwParams * 4, entry: entryOf(record, found.module.base) };
    const rule = recordRule(site, found, record, step);
    return epilogRule(site, found, { fpo: record }, step, rule) ?? rule;
  },
};

function recordRule(site: FrameSite, found: X86Site, record: FpoData, step: { paramsSize: number; entry: FuncTableEntry }): FpoPlan {
  const offset = found.rva - record.ulOffStart;
  if (offset < record.cbProlog) {
    const state = decodeProlog(site.images, found.module.base + BigInt(record.ulOffStart), site.pc);
    if (state !== undefined) {
      const steps = { ...step, recovered: [...EIP_ESP, ...state.saves.map((s) => s.reg).filter((r) => r !== "esp")] };
      return { kind: "fpo", form: "prolog", found, record, steps, state };
    }
  }
  if (record.cbFrame === FRAME_NONFPO) return { kind: "fpo", form: "non-fpo", found, record, steps: { ...step, recovered: EIP_ESP_EBP } };
  const calleeParams = site.calleeParams;
  const raOffset = calleeParams + record.cdwLocals * 4 + record.cbRegs * 4;
  return {
    kind: "fpo",
    form: "body",
    found,
    record,
    steps: { ...step, recovered: record.fUseBP ? EIP_ESP_EBP : EIP_ESP },
    calleeParams,
    offset: raOffset,
    // The caller's ESP when nothing moved, as a bigint to add (cheaper than making one per frame).
    callerEsp: BigInt(raOffset + 4),
    plain: { kind: "fpo", record, form: "body", raOffset, moved: 0, ebpSlot: -1 },
  };
}
