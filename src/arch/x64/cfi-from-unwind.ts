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
import { isProblem } from "../problem.js";
import { buildPlan, OP_ADD, OP_BASE_REG, OP_BASE_RSP, OP_LOAD, OP_MACHFRAME, OP_POP, OP_RET, OP_SET_RSP, type UnwindPlan } from "./plan.js";
import { resolveEntry, x64Tables } from "./tables.js";
import { REG64, RSP } from "./unwind-info.js";

/** A value as a postfix expression plus a constant: `base + off`. */
interface Sym {
  base: string;
  off: number;
}

const postfix = (s: Sym): string => (s.off === 0 ? s.base : `${s.base} ${Math.abs(s.off)} ${s.off < 0 ? "-" : "+"}`);
const add = (s: Sym, n: number): Sym => ({ base: s.base, off: s.off + n });
const deref = (s: Sym): Sym => ({ base: `${postfix(s)} ^`, off: 0 });

/** An address as a rule expression: relative to `.cfa` when it shares the CFA's base, as dump_syms writes DWARF rules. */
function at(address: Sym, cfa: Sym): string {
  if (address.base !== cfa.base) return `${postfix(address)} ^`;
  const below = cfa.off - address.off;
  return below === 0 ? ".cfa ^" : `.cfa ${Math.abs(below)} ${below > 0 ? "-" : "+"} ^`;
}

/** A rule set: the `.cfa` and `.ra` expressions and the saved registers' (by `$name`). */
export interface PlanRules {
  cfa: string;
  ra: string;
  registers: [string, string][];
}

/** The STACK CFI rules that a plan amounts to, or undefined when it finds no return address. */
export function planRules(plan: UnwindPlan): PlanRules | undefined {
  let rsp: Sym = { base: "$rsp", off: 0 };
  let est: Sym = rsp;
  let ra: Sym | undefined;
  const values = new Map<number, Sym>();
  const saved = new Map<number, Sym>();
  const regValue = (r: number): Sym => (r === RSP ? rsp : (values.get(r) ?? { base: `$${REG64[r]}`, off: 0 }));
  const code = plan.code;
  for (let i = 0; i < code.length; i += 3) {
    const r = code[i + 1]!;
    const n = code[i + 2]!;
    switch (code[i]) {
      case OP_BASE_RSP: est = rsp; break;
      case OP_BASE_REG: est = add(regValue(r), -n); break;
      case OP_SET_RSP: rsp = add(regValue(r), n); break;
      case OP_ADD: rsp = add(rsp, n); break;
      case OP_POP:
        if (r === RSP) rsp = add(deref(rsp), 8);
        else {
          saved.set(r, rsp);
          values.set(r, deref(rsp));
          rsp = add(rsp, 8);
        }
        break;
      case OP_LOAD: {
        const address = add(est, n);
        if (r === RSP) rsp = deref(address);
        else {
          saved.set(r, address);
          values.set(r, deref(address));
        }
        break;
      }
      case OP_MACHFRAME:
        ra = add(rsp, n);
        rsp = deref(add(rsp, n + 24));
        break;
      case OP_RET:
        ra = rsp;
        rsp = add(rsp, 8);
        break;
      default:
        // OP_LOAD_XMM: Breakpad's register map has no XMM registers.
        break;
    }
  }
  if (ra === undefined) return undefined;
  const cfa = rsp;
  const registers = [...saved].sort((a, b) => a[0] - b[0]).map(([r, address]): [string, string] => [`$${REG64[r]}`, at(address, cfa)]);
  return { cfa: postfix(cfa), ra: at(ra, cfa), registers };
}

/** A rule set as a record's text; `also` are registers named by earlier rows that now hold their own values. */
function rulesText(rules: PlanRules, also: Iterable<string>): string {
  const parts = [`.cfa: ${rules.cfa}`, `.ra: ${rules.ra}`, ...rules.registers.map(([r, e]) => `${r}: ${e}`)];
  const named = new Set(rules.registers.map(([r]) => r));
  for (const r of also) if (!named.has(r)) parts.push(`${r}: ${r}`);
  return parts.join(" ");
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
        const rules = rulesText(found, mentioned);
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
