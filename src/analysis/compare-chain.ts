/**
 * What `stackwalk compare` shows, gathered: one call chain on several targets, each walked by
 * every walker its machine has and checked against the target's ground truth, the most trusted
 * walk explained (where each return address and saved register was read), and the ETW stack the
 * target's capture recorded. render/compare.ts draws it side by side.
 */
import { threadEtw, type ThreadEtw } from "./crosscheck.js";
import type { Machine } from "../model/machine.js";
import type { Snapshot, ThreadSnapshot, TruthFrame } from "../model/snapshot.js";
import { UnwindCache } from "../unwind/cache.js";
import { compareWithTruth, type TruthComparison } from "../walk/compare.js";
import type { Walk } from "../walk/frame.js";
import { archWalker, type WalkerName } from "../walk/registry.js";
import { walkThread } from "../walk/walk.js";
import type { ExplainedWalk } from "./explain-model.js";
import { explainWalk } from "./explain-walk.js";

/** One target of a comparison: a snapshot of the chain with its ground truth. */
export interface CompareTargetInput {
  /** Short name: `x86-fp`, `x86-fpo`, `x64`, `ia64`. */
  target: string;
  /** How the target builds the chain, in one line. */
  build: string;
  snapshot: Snapshot;
  /** How the ETW stack in the snapshot was captured, or why there is none. */
  etwSource: string;
}

/** The whole comparison's input. */
export interface CompareInput {
  name: string;
  description: string;
  /** Function names, outermost first. */
  chain: readonly string[];
  targets: readonly CompareTargetInput[];
}

/** One walker's walk of a target, against its ground truth. */
export interface WalkerResult {
  walker: WalkerName;
  walk: Walk;
  comparison: TruthComparison;
}

/** One target, compared. */
export interface ComparedTarget {
  input: CompareTargetInput;
  thread: ThreadSnapshot;
  truth: readonly TruthFrame[];
  /** The walk of the machine's most trusted walker, explained. */
  explained: ExplainedWalk;
  /** Every walker of the machine, weakest first, `auto` last. */
  walkers: WalkerResult[];
  /** What ETW recorded for the thread. */
  etw: ThreadEtw;
}

/** A comparison ready to draw. */
export interface Comparison {
  input: CompareInput;
  targets: ComparedTarget[];
}

/** The walkers shown per machine, weakest first; `auto` last. */
const WALKER_ORDER: readonly WalkerName[] = ["frame-pointer", "fpo", "unwind", "ia64", "auto"];

/** The walker whose frames a target's table explains: the machine's most trusted one of its own. */
const EXPLAINED_WALKER: Record<Machine, WalkerName> = { x86: "fpo", x64: "unwind", ia64: "ia64", arm64: "unwind", arm: "unwind" };

function truthOf(t: CompareTargetInput): { thread: ThreadSnapshot; truth: readonly TruthFrame[] } {
  const thread = t.snapshot.threads[0];
  if (thread?.truth === undefined) throw new RangeError(`${t.target}: the snapshot has no ground truth`);
  return { thread, truth: thread.truth };
}

/** Walks and explains every target of a comparison. */
export function compareChain(input: CompareInput): Comparison {
  return { input, targets: input.targets.map(compareTarget) };
}

function compareTarget(t: CompareTargetInput): ComparedTarget {
  const machine = t.snapshot.machine;
  const { thread, truth } = truthOf(t);
  const explained = explainWalk(t.snapshot, thread, { walker: EXPLAINED_WALKER[machine] });
  const arch = archWalker(machine);
  const cache = new UnwindCache();
  const walkers = WALKER_ORDER.filter((w) => (arch.walkers[w]?.length ?? 0) > 0).map((walker): WalkerResult => {
    const walk = walkThread(t.snapshot, thread, { walker, cache });
    return { walker, walk, comparison: compareWithTruth(machine, walk, truth) };
  });
  return { input: t, thread, truth, explained, walkers, etw: threadEtw(t.snapshot, thread) };
}
