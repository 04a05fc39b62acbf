/**
 * Compares a walk with ground truth (DESIGN.md "Ground truth"): a walk is exact when its
 * frames' (addrPC, addrStack[, addrBStore]) equal the truth frame for frame, with no extra frames.
 */
import { formatAddress, type Machine } from "../model/machine.js";
import type { TruthFrame } from "../model/snapshot.js";
import type { Walk } from "./frame.js";

/** The first place a walk and its truth disagree. */
export interface TruthDifference {
  /** Index of the first differing frame. */
  frame: number;
  kind: "pc" | "sp" | "bsp" | "missing-frame" | "extra-frame";
  /** The walk's value ("none" when the walk has no such frame). */
  walked: string;
  /** The truth's value ("none" when the truth has no such frame). */
  truth: string;
  /** The difference in one line. */
  text: string;
}

/** Result of comparing one walk with its truth. */
export interface TruthComparison {
  exact: boolean;
  walkedFrames: number;
  truthFrames: number;
  difference?: TruthDifference;
}

/** Compares frame by frame and reports the first difference. */
export function compareWithTruth(machine: Machine, walk: Walk, truth: readonly TruthFrame[]): TruthComparison {
  const a = (v: bigint): string => formatAddress(machine, v);
  const base = { walkedFrames: walk.frames.length, truthFrames: truth.length };
  const n = Math.min(walk.frames.length, truth.length);
  for (let i = 0; i < n; i++) {
    const f = walk.frames[i]!;
    const t = truth[i]!;
    const named = t.function !== undefined ? ` (${t.function})` : "";
    if (f.addrPC !== t.pc) {
      return { exact: false, ...base, difference: { frame: i, kind: "pc", walked: a(f.addrPC), truth: a(t.pc), text: `frame ${i}${named}: addrPC ${a(f.addrPC)}, truth pc ${a(t.pc)} (found by ${f.trust})` } };
    }
    if (f.addrStack !== t.sp) {
      return { exact: false, ...base, difference: { frame: i, kind: "sp", walked: a(f.addrStack), truth: a(t.sp), text: `frame ${i}${named}: addrStack ${a(f.addrStack)}, truth sp ${a(t.sp)} (found by ${f.trust})` } };
    }
    if (t.bsp !== undefined && f.addrBStore !== t.bsp) {
      return { exact: false, ...base, difference: { frame: i, kind: "bsp", walked: a(f.addrBStore), truth: a(t.bsp), text: `frame ${i}${named}: addrBStore ${a(f.addrBStore)}, truth bsp ${a(t.bsp)} (found by ${f.trust})` } };
    }
  }
  if (walk.frames.length < truth.length) {
    const t = truth[n]!;
    const named = t.function !== undefined ? ` (${t.function})` : "";
    return {
      exact: false,
      ...base,
      difference: { frame: n, kind: "missing-frame", walked: "none", truth: a(t.pc), text: `frame ${n}${named}: missing, truth pc ${a(t.pc)}; the walk stopped: ${walk.stop.reason}: ${walk.stop.detail}` },
    };
  }
  if (walk.frames.length > truth.length) {
    const f = walk.frames[n]!;
    return { exact: false, ...base, difference: { frame: n, kind: "extra-frame", walked: a(f.addrPC), truth: "none", text: `frame ${n}: extra frame at ${a(f.addrPC)} (found by ${f.trust}); the truth has ${truth.length} frames` } };
  }
  return { exact: true, ...base };
}
