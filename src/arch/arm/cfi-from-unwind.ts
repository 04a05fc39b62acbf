/**
 * STACK CFI records from an ARM image's `.pdata` entries and their packed words or `.xdata`
 * records, as a symbol file carries them for Breakpad (which never reads `.pdata`). They are
 * exact: at every halfword of every function the rules are what the Windows unwinder (this
 * project's plans, plan.ts) does there, prologs and epilogs included, and a delta row is written
 * wherever they change. Register names are Breakpad's ARM ones, `r0`-`r12`, `sp`, `lr`, `pc`;
 * `.cfa` is the caller's sp and `.ra` its pc (lr once the codes ran). Breakpad has no names for
 * the d registers, so vpop saves move the CFA and are otherwise left out.
 *
 * A function the module's symbols name that no `.pdata` entry covers is a leaf to the Windows
 * unwinder: pc = lr, sp unchanged, `.cfa: sp .ra: lr`. A module without symbols names no
 * functions, so there every stretch of executable section that no `.pdata` entry covers (leaves,
 * a `__chkstk`, padding) gets that rule: it is what the unwinder does at any address there.
 */
import type { BreakpadStackCfi } from "../../formats/breakpad-sym.js";
import type { MemoryReader } from "../../memory/reader.js";
import { hasSymbols, type Module } from "../../model/snapshot.js";
import { readMappedImage } from "../../formats/pe-mapped.js";
import { cacheSlot, ImageKeyed, UnwindCache } from "../../unwind/cache.js";
import { cfiAdd, cfiAt, cfiDeref, cfiPostfix, tableCfiRecords, type CfiRules, type CfiSym } from "../cfi-text.js";
import { isProblem } from "../../formats/unwind-data/problem.js";
import type { ArmUnwindPlan } from "./plan.js";
import { armEntryLength, armTables } from "./tables.js";
import { armPlanAt } from "./unwind.js";

/** The STACK CFI rules a plan amounts to. */
export function armPlanRules(plan: ArmUnwindPlan): CfiRules | undefined {
  if (plan.leaf) return { cfa: "sp", ra: "lr", registers: [] };
  let sp: CfiSym = { base: "sp", off: 0 };
  const saved = new Map<string, CfiSym>();
  const value = (r: string): CfiSym => (saved.has(r) ? cfiDeref(saved.get(r)!) : { base: r, off: 0 });
  for (const code of plan.codes) {
    switch (code.op) {
      case "alloc":
        sp = cfiAdd(sp, code.size);
        break;
      case "pop":
        for (let r = 0; r <= 14; r++) {
          if ((code.mask & (1 << r)) === 0) continue;
          saved.set(r === 14 ? "lr" : `r${r}`, sp);
          sp = cfiAdd(sp, 4);
        }
        break;
      case "vpop":
        sp = cfiAdd(sp, 8 * (code.last - code.first + 1));
        break;
      case "mov-sp":
        if (code.register === 13) break;
        sp = value(code.register === 14 ? "lr" : code.register === 15 ? "pc" : `r${code.register}`);
        break;
      case "ldr-lr":
        saved.set("lr", sp);
        sp = cfiAdd(sp, code.size);
        break;
      case "nop":
        break;
      default:
        return undefined;
    }
  }
  const cfa = sp;
  const lr = saved.get("lr");
  const registers = [...saved]
    .filter(([r]) => r !== "lr")
    .sort((a, b) => Number(a[0].slice(1)) - Number(b[0].slice(1)))
    .map(([r, address]): [string, string] => [r, cfiAt(address, cfa)]);
  return { cfa: cfiPostfix(cfa), ra: lr === undefined ? "lr" : cfiAt(lr, cfa), registers };
}

const RECORDS = cacheSlot("arm STACK CFI from unwind tables", () => new ImageKeyed<Module, BreakpadStackCfi[]>());

/**
 * The STACK CFI records of an ARM module whose image (with its exception directory) is mapped in
 * `memory`: one INIT range per `.pdata` entry, with a delta row wherever the rules change inside
 * it. Empty when the image or its tables cannot be read. Kept in `cache` when one is given.
 */
export function armModuleCfi(module: Module, memory: MemoryReader, cache?: UnwindCache): BreakpadStackCfi[] {
  return cache === undefined ? moduleCfi(module, memory) : cache.get(RECORDS).get(memory, module, () => moduleCfi(module, memory));
}

function moduleCfi(module: Module, memory: MemoryReader): BreakpadStackCfi[] {
  const cache = new UnwindCache();
  const tables = armTables(module, memory, cache);
  if (tables === undefined || tables.problem !== undefined) return [];
  const site = { modules: [module], images: memory, cache };
  const f = tables.functions;
  const functions: { begin: number; length: number }[] = [];
  for (let index = 0; 2 * index < f.length; index++) {
    const length = armEntryLength(tables, index);
    if (typeof length === "number" && length > 0) functions.push({ begin: f[2 * index]! & ~1, length });
  }
  const rulesAt = (rva: number): CfiRules | undefined => {
    const plan = armPlanAt(site, module.base + BigInt(rva));
    return plan === undefined || isProblem(plan) ? undefined : armPlanRules(plan);
  };
  const records = tableCfiRecords(module, functions, 2, rulesAt, LEAF_RULES);
  if (hasSymbols(module)) return records;
  const image = readMappedImage(memory, module.base);
  for (const gap of uncoveredCode(image?.sections ?? [], functions)) records.push({ address: gap.begin, size: gap.length, init: LEAF_RULES, deltas: [] });
  return records.sort((a, b) => a.address - b.address);
}

/** The rules of an address no `.pdata` entry covers: a leaf, pc = lr, sp unchanged. */
const LEAF_RULES = ".cfa: sp .ra: lr";
const IMAGE_SCN_MEM_EXECUTE = 0x2000_0000;

/** The stretches of the executable sections that no function covers, in address order (halfword-aligned). */
function uncoveredCode(sections: readonly { virtualAddress: number; virtualSize: number; characteristics: number }[], functions: readonly { begin: number; length: number }[]): { begin: number; length: number }[] {
  const covered = [...functions].sort((a, b) => a.begin - b.begin);
  const out: { begin: number; length: number }[] = [];
  for (const s of sections) {
    if ((s.characteristics & IMAGE_SCN_MEM_EXECUTE) === 0 || s.virtualSize === 0) continue;
    let at = s.virtualAddress;
    const end = s.virtualAddress + s.virtualSize;
    for (const f of covered) {
      if (f.begin + f.length <= at || f.begin >= end) continue;
      if (f.begin > at) out.push({ begin: at, length: f.begin - at });
      at = Math.max(at, f.begin + f.length);
    }
    if (at < end) out.push({ begin: at, length: end - at });
  }
  return out;
}
