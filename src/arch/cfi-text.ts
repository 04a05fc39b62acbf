/**
 * Writing unwind rules as Breakpad STACK CFI text (minidump.md §7): values as postfix
 * expressions over register names, addresses relative to `.cfa` where they share its base, and a
 * rule set as a record's text, and the records of a module whose functions' rules are worked
 * out instruction by instruction. The x64, ARM64 and ARM converters from unwind tables share these.
 */
import type { BreakpadCfiDelta, BreakpadStackCfi } from "../formats/breakpad-sym.js";
import type { Module } from "../model/snapshot.js";

/** A value as a postfix expression plus a constant: `base + off`. */
export interface CfiSym {
  base: string;
  off: number;
}

/** `base`, or `base off +` / `base off -`. */
export const cfiPostfix = (s: CfiSym): string => (s.off === 0 ? s.base : `${s.base} ${Math.abs(s.off)} ${s.off < 0 ? "-" : "+"}`);
/** `s + n`. */
export const cfiAdd = (s: CfiSym, n: number): CfiSym => ({ base: s.base, off: s.off + n });
/** The word at `s`. */
export const cfiDeref = (s: CfiSym): CfiSym => ({ base: `${cfiPostfix(s)} ^`, off: 0 });

/** The word at an address as a rule expression: relative to `.cfa` when it shares the CFA's base, as dump_syms writes DWARF rules. */
export function cfiAt(address: CfiSym, cfa: CfiSym): string {
  if (address.base !== cfa.base) return `${cfiPostfix(address)} ^`;
  const below = cfa.off - address.off;
  return below === 0 ? ".cfa ^" : `.cfa ${Math.abs(below)} ${below > 0 ? "-" : "+"} ^`;
}

/** A rule set: the `.cfa` and `.ra` expressions and the saved registers' (by their CFI names). */
export interface CfiRules {
  cfa: string;
  ra: string;
  registers: [string, string][];
}

/** A rule set as a record's text; `also` are registers named by earlier rows that now hold their own values. */
export function cfiRulesText(rules: CfiRules, also: Iterable<string>): string {
  const parts = [`.cfa: ${rules.cfa}`, `.ra: ${rules.ra}`, ...rules.registers.map(([r, e]) => `${r}: ${e}`)];
  const named = new Set(rules.registers.map(([r]) => r));
  for (const r of also) if (!named.has(r)) parts.push(`${r}: ${r}`);
  return parts.join(" ");
}

/**
 * The STACK CFI records of a module's table-described functions: one INIT range per function
 * (`begin`, `length`), its rules worked out at every `step` bytes by `rulesAt` (undefined ends
 * the range there), with a delta row wherever they change. Registers some row gave a rule and a
 * later row no longer saves are written as holding their own values again (`r4: r4`), since a
 * delta row only replaces the rules it names. A FUNC of the module's symbols that no function
 * covers gets `leafRules` (the machine's rules of a function without unwind data).
 */
export function tableCfiRecords(module: Module, functions: readonly { begin: number; length: number }[], step: number, rulesAt: (rva: number) => CfiRules | undefined, leafRules: string): BreakpadStackCfi[] {
  const out: BreakpadStackCfi[] = [];
  for (const { begin, length } of functions) {
    let init: string | undefined;
    let current: string | undefined;
    const deltas: BreakpadCfiDelta[] = [];
    const mentioned = new Set<string>();
    for (let rva = begin; rva < begin + length; rva += step) {
      const found = rulesAt(rva);
      if (found === undefined) break;
      const rules = cfiRulesText(found, mentioned);
      if (rules === current) continue;
      for (const [r] of found.registers) mentioned.add(r);
      if (init === undefined) init = rules;
      else deltas.push({ address: rva, rules });
      current = rules;
    }
    if (init !== undefined) out.push({ address: begin, size: length, init, deltas });
  }
  for (const s of module.symbols) {
    if (s.size === undefined || s.size === 0n || s.kind === "public") continue;
    const begin = Number(s.rva) & ~1;
    const end = begin + Number(s.size);
    if (functions.some((f) => f.begin < end && begin < f.begin + f.length)) continue;
    out.push({ address: begin, size: end - begin, init: leafRules, deltas: [] });
  }
  return out.sort((a, b) => a.address - b.address);
}
