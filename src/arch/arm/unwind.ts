/**
 * The ARM `unwind-info` strategy: the Windows ARM unwinder over the `.pdata` entries and their
 * packed words or `.xdata` records of the images mapped in the snapshot (docs/arm.md). The
 * context frame, and a frame whose pc was interrupted, are looked up at their pc; a caller frame,
 * whose pc is a return address (with the Thumb bit), at pc − 2 (the site's lookup address), inside
 * the `bl` or `blx` that made the call even when it was the function's last instruction. Bit 0 is
 * cleared before the offset into the function is worked out.
 *
 * No entry covers the address: a leaf, pc = lr with sp unchanged. Bad unwind data stops the frame
 * with the reason; nothing here throws.
 */
import { walkStop, type FuncTableEntry } from "../../unwind/frame.js";
import { moduleAt, type Module } from "../../model/snapshot.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { isProblem, type DataProblem } from "../../formats/unwind-data/problem.js";
import { stopRule, type StopPlan } from "../stop.js";
import type { ArmPlan } from "./exec.js";
import { armLeafPlan, buildArmPlan, type ArmUnwindPlan } from "./plan.js";
import { armEntryLength, armLookupEntry, armTables, armUnwindDataOf } from "./tables.js";

/** A problem of a module's unwind data, named by the module. */
function inModule(module: Module, p: DataProblem): DataProblem {
  return p.rva === undefined ? { problem: `${module.name}: ${p.problem}` } : { problem: `${module.name}: ${p.problem}`, rva: p.rva, address: module.base + BigInt(p.rva) };
}

/**
 * The unwind plan for a frame looked up at `at`, a problem saying why the module's unwind data
 * cannot be used, or undefined when no ARMNT image describes it.
 */
export function armPlanAt(site: Pick<FrameSite, "modules" | "images" | "cache">, at: bigint): ArmUnwindPlan | DataProblem | undefined {
  const module = moduleAt(site.modules, at);
  if (module === undefined) return undefined;
  const tables = armTables(module, site.images, site.cache);
  if (tables === undefined) return undefined;
  if (tables.problem !== undefined) return { problem: tables.problem };
  const rva = Number(at - module.base) & ~1;
  const found = armLookupEntry(tables, rva);
  if (found === undefined) return armLeafPlan(rva);
  if (isProblem(found)) return inModule(module, found);
  const length = armEntryLength(tables, found.index);
  if (typeof length !== "number") return inModule(module, length);
  const entry: FuncTableEntry = { kind: "runtime-function", beginRva: BigInt(found.begin), endRva: BigInt(found.begin + length), moduleBase: module.base };
  const data = armUnwindDataOf(tables, found.unwindData);
  if (isProblem(data)) return inModule(module, data);
  const form = data.source.form === "xdata" ? "xdata" : data.fragment ? "fragment" : "packed";
  const plan = buildArmPlan(data, rva - found.begin, { begin: found.begin, form }, entry);
  return isProblem(plan) ? inModule(module, plan) : plan;
}

/** The ARM table-based unwinder (trust `unwind-info`). */
export const armUnwind: UnwindStrategy<ArmPlan | StopPlan> = {
  name: "unwind-info",
  trust: "unwind-info",
  ruleFor(site: FrameSite) {
    const plan = armPlanAt(site, site.lookupPc);
    if (plan === undefined) return undefined;
    if (isProblem(plan)) return stopRule(walkStop("unsupported", plan.problem));
    return { kind: "arm-unwind", plan };
  },
};
