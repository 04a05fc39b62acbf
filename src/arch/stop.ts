/**
 * A rule that stops the walk at a frame: the unwind data says the caller cannot be found (bad
 * unwind data, an FPO_DATA kernel frame, an IA-64 frame the model does not cover). `final`: no
 * later strategy may try.
 */
import type { WalkStop } from "../unwind/frame.js";
import type { UnwindResult } from "./step.js";

/** The stop rule's value. */
export interface StopPlan {
  kind: "stop";
  stop: WalkStop;
  final?: boolean;
}

/** A stop rule for `stop`. */
export function stopRule(stop: WalkStop, final?: boolean): StopPlan {
  return final === undefined ? { kind: "stop", stop } : { kind: "stop", stop, final };
}

/** Runs a stop rule: it fails with its stop. */
export function execStop(plan: StopPlan): UnwindResult {
  return plan.final === undefined ? { ok: false, stop: plan.stop } : { ok: false, stop: plan.stop, final: plan.final };
}
