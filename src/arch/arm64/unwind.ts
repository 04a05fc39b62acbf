/**
 * The ARM64 `unwind-info` strategy: RtlVirtualUnwind over the `.pdata` entries and their packed
 * words or `.xdata` records of the images mapped in the snapshot (arm64.md Part 1). Which address
 * a frame is looked up at (arm64.md §3.3 step 4):
 *
 * - the context frame, and a frame whose pc a custom stack gave (an interrupted instruction), at
 *   their pc as it is;
 * - a caller frame, whose pc is a return address, at pc − 4: every instruction is 4 bytes, so that
 *   is the `bl` or `blr` itself, inside the calling function even when the call was its last
 *   instruction (the site's lookup address). The prolog and epilog positions are worked out from
 *   that ControlPc too.
 *
 * No entry covers the address: a leaf, pc = lr with sp unchanged (§1.10). A Flag 3 entry is
 * unwound as its parent at the parent's start (§1.1). Bad unwind data stops the frame with the
 * reason; nothing here throws.
 */
import { walkStop } from "../../unwind/frame.js";
import type { FuncTableEntry } from "../../unwind/frame.js";
import { moduleAt, type Module } from "../../model/snapshot.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { isProblem, type DataProblem } from "../../formats/unwind-data/problem.js";
import { stopRule, type StopPlan } from "../stop.js";
import type { Arm64Plan } from "./exec.js";
import { buildPlan, leafPlan, type Arm64UnwindPlan, type PlanFunction } from "./plan.js";
import { arm64Tables, entryLength, lookupEntry, parentEntry, unwindDataOf } from "./tables.js";

/** A problem of a module's unwind data, named by the module. */
function inModule(module: Module, p: DataProblem): DataProblem {
  return p.rva === undefined ? { problem: `${module.name}: ${p.problem}` } : { problem: `${module.name}: ${p.problem}`, rva: p.rva, address: module.base + BigInt(p.rva) };
}

/**
 * The unwind plan for a frame looked up at `at` (the site's lookup address), a problem saying why
 * the module's unwind data cannot be used, or undefined when no ARM64 image describes it.
 */
export function planAt(site: Pick<FrameSite, "modules" | "images" | "cache">, at: bigint): Arm64UnwindPlan | DataProblem | undefined {
  const module = moduleAt(site.modules, at);
  if (module === undefined) return undefined;
  const tables = arm64Tables(module, site.images, site.cache);
  if (tables === undefined) return undefined;
  if (tables.problem !== undefined) return { problem: tables.problem };
  const rva = Number(at - module.base);
  const found = lookupEntry(tables, rva);
  if (found === undefined) return leafPlan(rva);
  if (isProblem(found)) return inModule(module, found);
  const length = entryLength(tables, found.index);
  if (typeof length !== "number") return inModule(module, length);
  const funcEntry: FuncTableEntry = { kind: "runtime-function", beginRva: BigInt(found.begin), endRva: BigInt(found.begin + length), moduleBase: module.base };
  let unwound = found;
  let controlRva = rva;
  let parent: number | undefined;
  if ((found.unwindData & 3) === 3) {
    const p = parentEntry(tables, found);
    if (isProblem(p)) return inModule(module, p);
    unwound = p;
    controlRva = p.begin;
    parent = p.begin;
  }
  const data = unwindDataOf(tables, unwound.unwindData);
  if (isProblem(data)) return inModule(module, data);
  const form = data.source.form === "xdata" ? "xdata" : (data.source.word & 3) === 2 ? "fragment" : "packed";
  const fn: PlanFunction = parent === undefined ? { begin: found.begin, form } : { begin: found.begin, form, parent };
  const plan = buildPlan(data, ((controlRva - unwound.begin) >>> 0) >>> 2, fn, funcEntry);
  return isProblem(plan) ? inModule(module, plan) : plan;
}

/** The ARM64 table-based unwinder (trust `unwind-info`). */
export const arm64Unwind: UnwindStrategy<Arm64Plan | StopPlan> = {
  name: "unwind-info",
  trust: "unwind-info",
  ruleFor(site: FrameSite) {
    const plan = planAt(site, site.lookupPc);
    if (plan === undefined) return undefined;
    // Bad unwind data: the frame stops with the reason.
    if (isProblem(plan)) return stopRule(walkStop("unsupported", plan.problem));
    return { kind: "arm64-unwind", plan };
  },
};
