/**
 * STACK CFI records from a PE's RUNTIME_FUNCTIONs and UNWIND_INFOs, as a symbol file carries them
 * for Breakpad (minidump.md §7). dump_syms derives them from the same data, but coarsely: one INIT
 * row per function (`.cfa: $rsp 8 + .ra: .cfa 8 - ^`) and one delta at its first byte giving the
 * whole fixed allocation, with no prolog or epilog positions, no frame register and no saved
 * registers, so a frame interrupted in a prolog or epilog, or with a frame register moved by
 * alloca, unwinds wrongly. These records are exact: for every byte of every function the rules
 * are what the Windows unwinder (this project's plans, x64-unwind.md) does there, prologs,
 * epilogs, frame registers, saved registers and machine frames included, and a delta row is
 * written wherever they change.
 */
import type { BreakpadCfiDelta, BreakpadStackCfi } from "../../formats/breakpad-sym.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { Module } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, type UnwindCache } from "../../unwind/cache.js";
import { cfiAdd, cfiAt, cfiDeref, cfiPostfix, cfiRulesText, type CfiRules, type CfiSym } from "../cfi-text.js";
import { isProblem } from "../../formats/unwind-data/problem.js";
import { buildPlan, OP_ADD, OP_BASE_REG, OP_BASE_RSP, OP_LOAD, OP_MACHFRAME, OP_POP, OP_RET, OP_SET_RSP, type UnwindPlan } from "./plan.js";
import { resolveEntry, x64Tables } from "./tables.js";
import { REG64, RSP } from "../../formats/unwind-data/x64.js";

/** A rule set: the `.cfa` and `.ra` expressions and the saved registers'. */
export type PlanRules = CfiRules;

/** The STACK CFI rules that a plan amounts to, or undefined when it finds no return address. */
export function planRules(plan: UnwindPlan): PlanRules | undefined {
  let rsp: CfiSym = { base: "$rsp", off: 0 };
  let est: CfiSym = rsp;
  let ra: CfiSym | undefined;
  const values = new Map<number, CfiSym>();
  const saved = new Map<number, CfiSym>();
  const regValue = (r: number): CfiSym => (r === RSP ? rsp : (values.get(r) ?? { base: `$${REG64[r]}`, off: 0 }));
  const code = plan.code;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_BASE_RSP: est = rsp; break;
      case OP_BASE_REG: est = cfiAdd(regValue(r), -n); break;
      case OP_SET_RSP: rsp = cfiAdd(regValue(r), n); break;
      case OP_ADD: rsp = cfiAdd(rsp, n); break;
      case OP_POP:
        if (r === RSP) rsp = cfiAdd(cfiDeref(rsp), 8);
        else {
          saved.set(r, rsp);
          values.set(r, cfiDeref(rsp));
          rsp = cfiAdd(rsp, 8);
        }
        break;
      case OP_LOAD: {
        const address = cfiAdd(est, n);
        if (r === RSP) rsp = cfiDeref(address);
        else {
          saved.set(r, address);
          values.set(r, cfiDeref(address));
        }
        break;
      }
      case OP_MACHFRAME:
        ra = cfiAdd(rsp, n);
        rsp = cfiDeref(cfiAdd(rsp, n + 24));
        break;
      case OP_RET:
        ra = rsp;
        rsp = cfiAdd(rsp, 8);
        break;
      default:
        // OP_LOAD_XMM: Breakpad's register map has no XMM registers.
        break;
    }
  }
  if (ra === undefined) return undefined;
  const cfa = rsp;
  const registers = [...saved].sort((a, b) => a[0] - b[0]).map(([r, address]): [string, string] => [`$${REG64[r]}`, cfiAt(address, cfa)]);
  return { cfa: cfiPostfix(cfa), ra: cfiAt(ra, cfa), registers };
}

const RECORDS = cacheSlot("x64 STACK CFI from unwind tables", () => new ImageKeyed<Module, BreakpadStackCfi[]>());

/**
 * The STACK CFI records of a module whose image (with its exception directory) is mapped in
 * `memory`: one INIT range per RUNTIME_FUNCTION, with a delta row wherever the rules change
 * inside it. Empty when the image or its tables cannot be read. Kept in `cache` when one is given
 * (the records of one module and image are asked for once per snapshot of a sweep).
 */
export function x64ModuleCfi(module: Module, memory: MemoryReader, cache?: UnwindCache): BreakpadStackCfi[] {
  return cache === undefined ? moduleCfi(module, memory) : cache.get(RECORDS).get(memory, module, () => moduleCfi(module, memory));
}

function moduleCfi(module: Module, memory: MemoryReader): BreakpadStackCfi[] {
  const out: BreakpadStackCfi[] = [];
  const tables = x64Tables(module, memory);
  if (tables !== undefined && tables.problem === undefined) {
    const f = tables.functions;
    for (let index = 0; index * 3 < f.length; index++) {
      const begin = f[index * 3]!;
      const end = f[index * 3 + 1]!;
      const entry = resolveEntry(tables, index);
      if (isProblem(entry) || end <= begin) continue;
      let init: string | undefined;
      let current: string | undefined;
      const deltas: BreakpadCfiDelta[] = [];
      // Registers some row gave a rule: a later row that no longer saves one says it holds its
      // own value again (`$rbx: $rbx`), since a delta row only replaces the rules it names.
      const mentioned = new Set<string>();
      for (let rva = begin; rva < end; rva++) {
        const plan = buildPlan(tables, module.base, entry, rva, "pc");
        const found = isProblem(plan) ? undefined : planRules(plan);
        if (found === undefined) continue;
        const rules = cfiRulesText(found, mentioned);
        if (rules === current) continue;
        for (const [r] of found.registers) mentioned.add(r);
        if (init === undefined) {
          if (rva !== begin) break;
          init = rules;
        } else deltas.push({ address: rva, rules });
        current = rules;
      }
      if (init !== undefined) out.push({ address: begin, size: end - begin, init, deltas });
    }
  }
  return out;
}
