/**
 * Running an {@link ArmUnwindPlan} against the stack: the one place the ARM table-based unwinder
 * reads stack memory. Each code is undone in order on the frame's registers — `add sp`, pops of
 * r0-r12 and lr (lowest register at the lowest address), vpops of d registers, `mov sp, rN`,
 * `ldr lr, [sp], #n` — and the caller's pc is lr.
 */
import { hex } from "../../hex.js";
import { readU32, readU64, type MemoryReader } from "../../memory/reader.js";
import { machineInfo } from "../../model/machine.js";
import type { Registers } from "../../model/snapshot.js";
import { walkStop, type WalkStop } from "../../unwind/frame.js";
import { ruleText } from "../rule-text.js";
import { unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { ArmUnwindPlan } from "./plan.js";

const U32 = 0xffff_ffffn;

/** The registers the ARM procedure call standard preserves (the machine table's): a caller keeps them unless a code restores them. */
export const CALLEE_SAVED_ARM: readonly string[] = machineInfo("arm").calleeSaved;

/** The caller's starting register set: pc and sp to be set, and the callee frame's preserved registers. */
export function inheritedArm(registers: Registers): Registers {
  const out: Registers = { pc: 0n, sp: 0n };
  for (const r of CALLEE_SAVED_ARM) {
    const v = registers[r];
    if (v !== undefined) out[r] = v;
  }
  return out;
}

/** An ARM frame's rule: its plan. */
export interface ArmPlan {
  kind: "arm-unwind";
  plan: ArmUnwindPlan;
}

function fault(plan: ArmUnwindPlan, address: bigint, what: string): WalkStop {
  return walkStop("read-fault", `${ruleText(plan.rule)}: cannot read ${what} at ${hex(address)}`, address);
}

/** Runs an ARM plan on a frame's registers. */
export function execArmUnwind(rule: ArmPlan, registers: Registers, memory: MemoryReader, _ctx: ExecContext): UnwindResult {
  const plan = rule.plan;
  const text = (): string => ruleText(plan.rule);
  let sp = registers["sp"];
  if (sp === undefined) return { ok: false, stop: walkStop("unsupported", `${text()}: SP is not known for this frame`) };
  const out = inheritedArm(registers);
  if (plan.leaf) {
    const lr = registers["lr"];
    if (lr === undefined) return { ok: false, stop: walkStop("unsupported", `${text()}: LR is not known for this frame`) };
    if (registers["pc"] === lr) return { ok: false, stop: walkStop("no-progress", `${text()}: pc ${hex(lr)} already is lr (no .pdata entry, so no return address but lr)`, lr) };
    out["pc"] = lr;
    out["sp"] = sp;
    return unwindStep(out, plan.rule, { recovered: plan.recovered, entry: plan.entry });
  }
  for (const code of plan.codes) {
    switch (code.op) {
      case "alloc":
        sp = (sp + BigInt(code.size)) & U32;
        break;
      case "pop":
        for (let r = 0; r <= 14; r++) {
          if ((code.mask & (1 << r)) === 0) continue;
          const v = readU32(memory, sp);
          const name = r === 14 ? "lr" : `r${r}`;
          if (v === undefined) return { ok: false, stop: fault(plan, sp, `the saved ${name}`) };
          out[name] = v;
          sp = (sp + 4n) & U32;
        }
        break;
      case "vpop":
        for (let d = code.first; d <= code.last; d++) {
          const v = readU64(memory, sp);
          if (v === undefined) return { ok: false, stop: fault(plan, sp, `the saved d${d}`) };
          if (d >= 8 && d <= 15) out[`d${d}`] = v;
          sp = (sp + 8n) & U32;
        }
        break;
      case "mov-sp": {
        if (code.register === 13) break;
        const name = code.register === 14 ? "lr" : code.register === 15 ? "pc" : `r${code.register}`;
        const v = out[name] ?? registers[name];
        if (v === undefined) return { ok: false, stop: walkStop("unsupported", `${text()}: ${name} is not known for this frame (mov sp,${name})`) };
        sp = v & U32;
        break;
      }
      case "ldr-lr": {
        const v = readU32(memory, sp);
        if (v === undefined) return { ok: false, stop: fault(plan, sp, "the saved lr") };
        out["lr"] = v;
        sp = (sp + BigInt(code.size)) & U32;
        break;
      }
      default:
        break;
    }
  }
  const lr = out["lr"] ?? registers["lr"];
  if (lr === undefined) return { ok: false, stop: walkStop("unsupported", `${text()}: LR is not known for this frame`) };
  out["pc"] = lr;
  out["sp"] = sp;
  return unwindStep(out, plan.rule, { recovered: plan.recovered, entry: plan.entry });
}
