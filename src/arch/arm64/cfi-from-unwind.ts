/**
 * STACK CFI records from an ARM64 image's `.pdata` entries and their packed words or `.xdata`
 * records, as a symbol file carries them for Breakpad (arm64.md Part 5). Breakpad's own Windows
 * dump_syms writes none for ARM64 (it converts x64 unwind data only), so a Windows ARM64 `.sym`
 * usually leaves Breakpad to the frame pointer and scanning; getsentry/symbolic converts the
 * unwind codes as these records do. They are exact: at every instruction of every function the
 * rules are what the Windows unwinder (this project's plans, arm64.md §1.7) does there, prologs
 * and epilogs included, and a delta row is written wherever they change.
 *
 * Register names are Breakpad's arm64 ones: `x0`-`x30` (x29 the frame pointer, x30 the link
 * register), `sp`; `.cfa` is the caller's sp and `.ra` its pc. Breakpad has no names for the
 * floating-point registers, so d8-d15 saves are left out, and a function whose caller's pc comes
 * from a custom stack (a machine frame, trap frame or CONTEXT) gets no record: the caller's pc is
 * then an interrupted one, and a CFI rule cannot say so (Breakpad looks every caller up at pc − 4).
 *
 * A function the module's symbols name (a FUNC with a size) that no `.pdata` entry covers is a
 * leaf to the Windows unwinder (arm64.md §1.10): pc = lr, sp unchanged. It gets that rule as its
 * record, `.cfa: sp .ra: x30`, so a dump without images walks through it as Windows does.
 */
import type { BreakpadStackCfi } from "../../formats/breakpad-sym.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { Module } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, UnwindCache } from "../../unwind/cache.js";
import { cfiAdd, cfiAt, cfiDeref, cfiPostfix, tableCfiRecords, type CfiRules, type CfiSym } from "../cfi-text.js";
import { isProblem } from "../../formats/unwind-data/problem.js";
import { OP_ADD, OP_LEAF, OP_LOAD, OP_PAC, OP_RET, OP_SET_SP, type Arm64UnwindPlan } from "./plan.js";
import { arm64Tables, entryLength } from "./tables.js";
import { planAt } from "./unwind.js";

/** Breakpad's name of X register `r`. */
const xName = (r: number): string => `x${r}`;

/** A rule set: the `.cfa` and `.ra` expressions and the saved registers'. */
export type Arm64PlanRules = CfiRules;

/** The STACK CFI rules a plan amounts to, or undefined when it takes the caller's pc from a custom stack. */
export function arm64PlanRules(plan: Arm64UnwindPlan): Arm64PlanRules | undefined {
  if (plan.custom) return undefined;
  let sp: CfiSym = { base: "sp", off: 0 };
  const values = new Map<number, CfiSym>();
  const saved = new Map<number, CfiSym>();
  const regValue = (r: number): CfiSym => values.get(r) ?? { base: xName(r), off: 0 };
  // Whether the plan ends in pc = lr (every plan without a custom stack does).
  let returns = false;
  const code = plan.code;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_ADD:
        sp = cfiAdd(sp, n);
        break;
      case OP_LOAD:
        // d8-d15 (and the high halves of q registers) have no Breakpad name.
        if (r < 31) {
          saved.set(r, cfiAdd(sp, n));
          values.set(r, cfiDeref(cfiAdd(sp, n)));
        }
        break;
      case OP_SET_SP:
        sp = cfiAdd(regValue(29), -n);
        break;
      case OP_PAC:
        // Breakpad strips the code from the pc a rule gives (PtrauthStrip).
        break;
      case OP_RET:
      case OP_LEAF:
        returns = true;
        break;
      default:
        return undefined;
    }
  }
  if (!returns) return undefined;
  const cfa = sp;
  const lr = saved.get(30);
  const registers = [...saved]
    .filter(([r]) => r !== 30)
    .sort((a, b) => a[0] - b[0])
    .map(([r, address]): [string, string] => [xName(r), cfiAt(address, cfa)]);
  return { cfa: cfiPostfix(cfa), ra: lr === undefined ? cfiPostfix(regValue(30)) : cfiAt(lr, cfa), registers };
}

const RECORDS = cacheSlot("arm64 STACK CFI from unwind tables", () => new ImageKeyed<Module, BreakpadStackCfi[]>());

/**
 * The STACK CFI records of an ARM64 module whose image (with its exception directory) is mapped
 * in `memory`: one INIT range per `.pdata` entry, with a delta row wherever the rules change
 * inside it. Empty when the image or its tables cannot be read. Kept in `cache` when one is given.
 */
export function arm64ModuleCfi(module: Module, memory: MemoryReader, cache?: UnwindCache): BreakpadStackCfi[] {
  return cache === undefined ? moduleCfi(module, memory) : cache.get(RECORDS).get(memory, module, () => moduleCfi(module, memory));
}

function moduleCfi(module: Module, memory: MemoryReader): BreakpadStackCfi[] {
  const cache = new UnwindCache();
  const tables = arm64Tables(module, memory, cache);
  if (tables === undefined || tables.problem !== undefined) return [];
  const site = { modules: [module], images: memory, cache };
  const f = tables.functions;
  const functions: { begin: number; length: number }[] = [];
  for (let index = 0; 2 * index < f.length; index++) {
    const length = entryLength(tables, index);
    if (typeof length === "number" && length > 0) functions.push({ begin: f[2 * index]!, length });
  }
  const rulesAt = (rva: number): Arm64PlanRules | undefined => {
    const plan = planAt(site, module.base + BigInt(rva));
    return plan === undefined || isProblem(plan) ? undefined : arm64PlanRules(plan);
  };
  return tableCfiRecords(module, functions, 4, rulesAt, LEAF_RULES);
}

/** The rules of a function without a `.pdata` entry: the return address is in lr, sp is the caller's. */
const LEAF_RULES = ".cfa: sp .ra: x30";
