/**
 * Running an {@link ArmUnwindPlan} against the stack: the one place the ARM table-based unwinder
 * reads stack memory. Each code is undone in order on the frame's registers — `add sp`, pops of
 * r0-r12 and lr (lowest register at the lowest address), vpops of d registers, `mov sp, rN`,
 * `ldr lr, [sp], #n` — and the caller's pc is lr. Addresses are 32-bit, so sp is kept as a
 * number and words are read as numbers, made bigints through the recent-values cache.
 */
import { hex } from "../../hex.js";
import { bigintOfU32 } from "../../memory/bigint-cache.js";
import { readU32n, readU64, type MemoryReader } from "../../memory/reader.js";
import { machineInfo } from "../../model/machine.js";
import type { Registers } from "../../model/snapshot.js";
import { registersFrom } from "../register-set.js";
import { walkStop } from "../../unwind/frame.js";
import { ruleText } from "../rule-text.js";
import { stepInto, unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { ArmUnwindPlan } from "./plan.js";

/** The registers the ARM procedure call standard preserves (the machine table's): a caller keeps them unless a code restores them. */
export const CALLEE_SAVED_ARM: readonly string[] = machineInfo("arm").calleeSaved;

/** Pop-mask bit → register name (bit 14 is lr). */
const POP_NAMES: readonly string[] = Array.from({ length: 15 }, (_, r) => (r === 14 ? "lr" : `r${r}`));

/** The registers a caller's set starts with, to be set. */
const PC_SP: readonly string[] = ["pc", "sp"];

/** A caller frame's registers in the usual case: pc and sp to be set, and every preserved register (made by a constructor: see {@link Registers}). */
class ArmCallerRegisters {
  [name: string]: bigint;
  constructor(r4: bigint, r5: bigint, r6: bigint, r7: bigint, r8: bigint, r9: bigint, r10: bigint, r11: bigint, lr: bigint, d8: bigint, d9: bigint, d10: bigint, d11: bigint, d12: bigint, d13: bigint, d14: bigint, d15: bigint) {
    this.pc = 0n;
    this.sp = 0n;
    this.r4 = r4;
    this.r5 = r5;
    this.r6 = r6;
    this.r7 = r7;
    this.r8 = r8;
    this.r9 = r9;
    this.r10 = r10;
    this.r11 = r11;
    this.lr = lr;
    this.d8 = d8;
    this.d9 = d9;
    this.d10 = d10;
    this.d11 = d11;
    this.d12 = d12;
    this.d13 = d13;
    this.d14 = d14;
    this.d15 = d15;
  }
}

/** The caller's starting register set: pc and sp to be set, and the callee frame's preserved registers. */
export function inheritedArm(registers: Registers): Registers {
  const { r4, r5, r6, r7, r8, r9, r10, r11, lr, d8, d9, d10, d11, d12, d13, d14, d15 } = registers;
  // The usual case (a context with every register, and every frame unwound from it) in one
  // object shape, made without a loop of keyed stores.
  if (
    r4 !== undefined && r5 !== undefined && r6 !== undefined && r7 !== undefined && r8 !== undefined && r9 !== undefined && r10 !== undefined && r11 !== undefined &&
    lr !== undefined && d8 !== undefined && d9 !== undefined && d10 !== undefined && d11 !== undefined && d12 !== undefined && d13 !== undefined && d14 !== undefined && d15 !== undefined
  ) {
    return new ArmCallerRegisters(r4, r5, r6, r7, r8, r9, r10, r11, lr, d8, d9, d10, d11, d12, d13, d14, d15);
  }
  return registersFrom(registers, CALLEE_SAVED_ARM, PC_SP);
}

/** An ARM frame's rule: its plan. */
export interface ArmPlan {
  kind: "arm-unwind";
  plan: ArmUnwindPlan;
}

function fault(plan: ArmUnwindPlan, address: number, what: string): UnwindResult {
  return { ok: false, stop: walkStop("read-fault", `${ruleText(plan.rule)}: cannot read ${what} at ${hex(address)}`, BigInt(address)) };
}

function unknown(plan: ArmUnwindPlan, what: string): UnwindResult {
  return { ok: false, stop: walkStop("unsupported", `${ruleText(plan.rule)}: ${what} is not known for this frame`) };
}

/** Sets register `r` of a pop mask (0-12, 14 lr) with fixed property names: this runs for every frame. */
function setRegister(out: Registers, r: number, value: bigint): void {
  switch (r) {
    case 4: out["r4"] = value; break;
    case 5: out["r5"] = value; break;
    case 6: out["r6"] = value; break;
    case 7: out["r7"] = value; break;
    case 8: out["r8"] = value; break;
    case 9: out["r9"] = value; break;
    case 10: out["r10"] = value; break;
    case 11: out["r11"] = value; break;
    case 14: out["lr"] = value; break;
    default: out[POP_NAMES[r]!] = value;
  }
}

/**
 * The usual shape (see {@link ArmUnwindPlan.simple}): loads at fixed offsets from sp, the caller's
 * sp a constant above it. `spBig` is the frame's sp, which is exactly `sp` when `spExact`.
 */
function runSimple(plan: ArmUnwindPlan, simple: NonNullable<ArmUnwindPlan["simple"]>, memory: MemoryReader, out: Registers, sp: number, spBig: bigint, spExact: boolean, registers: Registers, ctx: ExecContext): UnwindResult {
  const regs = simple.registers;
  const offsets = simple.offsets;
  for (let k = 0; k < regs.length; k++) {
    const r = regs[k]!;
    const at = (sp + offsets[k]!) >>> 0;
    if (r >= 16) {
      const v = readU64(memory, BigInt(at));
      if (v === undefined) return fault(plan, at, `the saved d${r - 16}`);
      out[`d${r - 16}`] = v;
      continue;
    }
    const v = readU32n(memory, at);
    if (v === undefined) return fault(plan, at, `the saved ${POP_NAMES[r]}`);
    setRegister(out, r, bigintOfU32(v));
  }
  const lr = out["lr"] ?? registers["lr"];
  if (lr === undefined) return unknown(plan, "LR");
  const callerSp = (sp + simple.callerSp) >>> 0;
  out["pc"] = lr;
  // Every frame's sp is new: adding to the frame's own costs less than making a bigint of a number.
  out["sp"] = spExact && callerSp >= sp ? spBig + simple.callerSpBig : BigInt(callerSp);
  return stepInto(ctx, out, plan.rule, plan.recovered, plan.entry, lr <= 0xffff_ffffn ? Number(lr) : -1, callerSp);
}

/** Runs an ARM plan on a frame's registers. */
export function execArmUnwind(rule: ArmPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const plan = rule.plan;
  const spBig = registers["sp"];
  if (spBig === undefined) return unknown(plan, "SP");
  const out = inheritedArm(registers);
  if (plan.leaf) {
    const lr = registers["lr"];
    if (lr === undefined) return unknown(plan, "LR");
    if (registers["pc"] === lr) return { ok: false, stop: walkStop("no-progress", `${ruleText(plan.rule)}: pc ${hex(lr)} already is lr (no .pdata entry, so no return address but lr)`, lr) };
    out["pc"] = lr;
    out["sp"] = spBig;
    return unwindStep(out, plan.rule, { recovered: plan.recovered, entry: plan.entry });
  }
  // The walk knows the frame's sp as a number (−1 when not): no bigint to convert. Then the
  // bigint is exactly that number.
  const spExact = ctx.sp >= 0;
  let sp = spExact ? ctx.sp : Number(spBig & 0xffff_ffffn);
  const simple = plan.simple;
  if (simple !== undefined) return runSimple(plan, simple, memory, out, sp, spBig, spExact, registers, ctx);
  const codes = plan.codes;
  for (let k = 0; k < codes.length; k++) {
    const code = codes[k]!;
    switch (code.op) {
      case "alloc":
        sp = (sp + code.size) >>> 0;
        break;
      case "pop":
        for (let r = 0; r <= 14; r++) {
          if ((code.mask & (1 << r)) === 0) continue;
          const v = readU32n(memory, sp);
          if (v === undefined) return fault(plan, sp, `the saved ${POP_NAMES[r]}`);
          out[POP_NAMES[r]!] = bigintOfU32(v);
          sp = (sp + 4) >>> 0;
        }
        break;
      case "vpop":
        for (let d = code.first; d <= code.last; d++) {
          const v = readU64(memory, BigInt(sp));
          if (v === undefined) return fault(plan, sp, `the saved d${d}`);
          if (d >= 8 && d <= 15) out[`d${d}`] = v;
          sp = (sp + 8) >>> 0;
        }
        break;
      case "mov-sp": {
        if (code.register === 13) break;
        const name = code.register === 14 ? "lr" : code.register === 15 ? "pc" : `r${code.register}`;
        const v = out[name] ?? registers[name];
        if (v === undefined) return unknown(plan, `${name} (mov sp,${name})`);
        sp = Number(v & 0xffff_ffffn);
        break;
      }
      case "ldr-lr": {
        const v = readU32n(memory, sp);
        if (v === undefined) return fault(plan, sp, "the saved lr");
        out["lr"] = bigintOfU32(v);
        sp = (sp + code.size) >>> 0;
        break;
      }
      default:
        break;
    }
  }
  const lr = out["lr"] ?? registers["lr"];
  if (lr === undefined) return unknown(plan, "LR");
  out["pc"] = lr;
  out["sp"] = bigintOfU32(sp);
  return unwindStep(out, plan.rule, { recovered: plan.recovered, entry: plan.entry, pcNumber: Number(lr), spNumber: sp });
}
