/**
 * Writing unwind rules as Breakpad STACK CFI text (minidump.md §7): values as postfix
 * expressions over register names, addresses relative to `.cfa` where they share its base, and a
 * rule set as a record's text. The x64 and ARM64 converters from unwind tables share these.
 */

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
