/**
 * Breakpad STACK CFI (minidump.md §7): the call frame information dump_syms writes from DWARF
 * CFI or from a PE's UNWIND_INFO, as rules that compute the caller's registers from the callee's.
 *
 * A module's records are an INIT range (`STACK CFI INIT <addr> <size> <rules>`) and delta rows
 * (`STACK CFI <addr> <rules>`). The rules for an address are the INIT range's that covers it, then
 * every delta row from the range's start up to the address, in address order, each rule replacing
 * the one of the same name. A rule set is `name: expression` pairs: `.cfa` (the canonical frame
 * address, the caller's stack pointer), `.ra` (the return address) and registers (`$rbx`, ...),
 * each a postfix expression over the callee's registers, decimal literals and `.cfa`:
 * `+ - * / %`, `@` (align down: `a b @` is `a & ~(b − 1)`), `^` (the word at an address) and `=`
 * (assign to a `$` variable). An expression must leave exactly one value; a name without a
 * value, an unreadable `^` or division by zero fails it (Breakpad's postfix_evaluator-inl.h and
 * cfi_frame_info.cc). The expressions are read and run by formats/postfix.ts, in its STACK CFI
 * dialect.
 *
 * Evaluation (Breakpad's SimpleCFIWalker): `.cfa` first, over the callee's valid registers; then
 * `.ra` and each register rule with `.cfa` defined. A failed `.cfa` or `.ra` fails the rule; a
 * failed register rule is dropped. The caller gets every register a rule gave (by its name, or
 * as the machine's alias: the stack pointer is `.cfa`, the PC `.ra`), and the callee-saved
 * registers the rules leave alone, when valid in the callee.
 *
 * Records are parsed once per module and a lookup address's rule set once per address (working
 * a rule out reads no memory); a rule is a value ({@link CfiPlan}, `kind` "cfi") run by one
 * function, {@link execCfi}.
 */
import type { BreakpadStackCfi } from "../formats/breakpad-sym.js";
import { compilePostfix, isPostfixError, runPostfix, stackCfiDialect, type PostfixCode } from "../formats/postfix.js";
import type { StackCfiIndex } from "../model/stack-cfi.js";
import { countStartingAtOrBelow, innermostContaining } from "../formats/sorted-ranges.js";
import type { MemoryReader } from "../memory/reader.js";
import { moduleAt, type Module, type Registers } from "../model/snapshot.js";
import { keyed, keyedSlot, type UnwindCache } from "../unwind/cache.js";
import { walkStop } from "../unwind/frame.js";
import type { CfiRule } from "../unwind/rule.js";
import { ruleText } from "./rule-text.js";
import type { ExecContext, UnwindResult } from "./step.js";
import type { FrameSite, UnwindStrategy } from "../unwind/step.js";
import { work } from "../unwind/work.js";

/** One register of a machine's CFI register map (Breakpad's `cfi_register_map_`). */
export interface CfiRegister {
  /** The name rules use, e.g. `$rbx`. */
  name: string;
  /** The walker's register name, e.g. `rbx`. */
  register: string;
  /** `.cfa` for the stack pointer, `.ra` for the PC. */
  alias?: ".cfa" | ".ra";
  /** Callee-saved: the caller has the callee's value when no rule mentions it. */
  calleeSaves: boolean;
}

/** What one machine gives the CFI evaluator. */
export interface CfiMachine {
  width: 4 | 8;
  pc: string;
  sp: string;
  registers: readonly CfiRegister[];
  /** Registers the caller must have for the rule to count (besides PC and SP). */
  essentials: readonly string[];
  /**
   * Every `.ra` is a return address, wherever the rules read it (ARM64: lr, or its saved copy);
   * otherwise only a `.ra` read just below the CFA is, and any other caller PC is an interrupted one.
   */
  raIsReturnAddress?: true;
  /** What the caller's PC is made before use, in the walk `ctx` (ARM64: a pointer authentication code stripped). */
  cleanPc?: (pc: bigint, ctx: ExecContext) => bigint;
  /**
   * A caller PC or SP of 0 is a failed rule, which leaves the frame to the next strategy
   * (Breakpad's amd64 walker, minidump.md §5.6 step 1), rather than the outermost frame.
   */
  zeroFails?: true;
}

/** A compiled expression (the STACK CFI dialect of formats/postfix.ts) and its text. */
export type CfiExpression = PostfixCode<bigint>;

/** Compiles an expression for a machine whose registers are `width` bytes; undefined past the postfix limits. */
export function compileExpression(text: string, width: 4 | 8): CfiExpression | undefined {
  const compiled = compilePostfix(text, stackCfiDialect(width));
  return compiled.ok ? compiled.code : undefined;
}

/**
 * Evaluates an expression over `names` (the callee's registers by their CFI names) and, when
 * given, `.cfa`; undefined when it fails. What `=` assigns lasts for this evaluation only.
 */
export function evaluateExpression(e: CfiExpression, names: ReadonlyMap<string, bigint>, memory: MemoryReader, cfa?: bigint): bigint | undefined {
  const variables = e.variables;
  const slots: (bigint | undefined)[] = new Array<bigint | undefined>(variables.length);
  for (let i = 0; i < variables.length; i++) {
    const name = variables[i]!;
    slots[i] = cfa !== undefined && name === ".cfa" ? cfa : names.get(name);
  }
  work.units += e.ops.length;
  const value = runPostfix(e, slots, memory);
  return isPostfixError(value) ? undefined : value;
}

/** The rules in effect at one address. */
export interface CfiRuleSet {
  cfa?: CfiExpression;
  ra?: CfiExpression;
  /** Register rules by name, in the order they were first set. */
  registers: Map<string, CfiExpression>;
}

/**
 * Applies a rule-set text (`name: expr name: expr …`) to `set`, as Breakpad's CFIRuleParser:
 * rules before a malformed one are applied; returns false at the first malformed one (an empty
 * name or expression, an expression without a name).
 */
export function applyRules(set: CfiRuleSet, text: string, width: 4 | 8): boolean {
  let name: string | undefined;
  let expression: string[] = [];
  const report = (): boolean => {
    if (name === undefined || name === "" || expression.length === 0) return false;
    // Past the postfix limits the rule is malformed (records from a .sym file were left out when attached).
    const e = compileExpression(expression.join(" "), width);
    if (e === undefined) return false;
    if (name === ".cfa") set.cfa = e;
    else if (name === ".ra") set.ra = e;
    else set.registers.set(name, e);
    return true;
  };
  for (const token of text.split(/[ \t\r\n]+/)) {
    if (token === "") continue;
    if (token.endsWith(":")) {
      if (token.length < 2) return false;
      if ((name !== undefined || expression.length > 0) && !report()) return false;
      name = token.slice(0, -1);
      expression = [];
    } else expression.push(token);
  }
  return report();
}

const TABLES = keyedSlot<readonly BreakpadStackCfi[], StackCfiIndex>("STACK CFI tables");

/** A list of STACK CFI records made ready for lookups (once per record list and cache). */
export function cfiTable(records: readonly BreakpadStackCfi[], cache?: UnwindCache): StackCfiIndex {
  return cache === undefined ? buildTable(records) : keyed(cache, TABLES, records, () => buildTable(records));
}

function buildTable(records: readonly BreakpadStackCfi[]): StackCfiIndex {
  const order = records.map((r, i) => ({ r, i })).filter(({ r }) => r.size > 0).sort((a, b) => a.r.address - b.r.address || a.i - b.i);
  const inits: { address: number; end: number; rules: string; i: number }[] = [];
  for (const { r, i } of order) {
    const last = inits[inits.length - 1];
    const end = r.address + r.size;
    if (last !== undefined && r.address < last.end) {
      // Overlapping ranges: the one earlier in the file is kept.
      if (i < last.i) inits[inits.length - 1] = { address: r.address, end, rules: r.init, i };
      continue;
    }
    inits.push({ address: r.address, end, rules: r.init, i });
  }
  const byAddress = new Map<number, string>();
  for (const r of records) for (const d of r.deltas) byAddress.set(d.address, d.rules);
  const deltas = [...byAddress].map(([address, rules]) => ({ address, rules })).sort((a, b) => a.address - b.address);
  return {
    count: records.length,
    at(rva: number) {
      // INIT ranges do not overlap: the one starting last at or below the address is the only candidate.
      const init = innermostContaining(inits, rva, startOf, sizeOf, 1);
      if (init === undefined) return undefined;
      const found: string[] = [];
      for (let i = countStartingAtOrBelow(deltas, init.address - 1, startOf); i < deltas.length && deltas[i]!.address <= rva; i++) found.push(deltas[i]!.rules);
      return { address: init.address, init: init.rules, deltas: found };
    },
  };
}

/** The rules in effect at `rva` for registers of `width` bytes, undefined when no INIT range covers it or its INIT rules are malformed. */
export function rulesAt(table: StackCfiIndex, rva: number, width: 4 | 8): { set: CfiRuleSet; start: number } | undefined {
  const found = table.at(rva);
  if (found === undefined) return undefined;
  const set: CfiRuleSet = { registers: new Map() };
  if (!applyRules(set, found.init, width)) return undefined;
  for (const rules of found.deltas) applyRules(set, rules, width);
  work.units += 1 + found.deltas.length;
  return { set, start: found.address };
}

const startOf = (r: { address: number }): number => r.address;
const sizeOf = (r: { address: number; end: number }): number => r.end - r.address;

/** Whether `.ra` reads the word just below the CFA, where a call leaves its return address. */
function isReturnSlot(ra: CfiExpression, width: number): boolean {
  const [base, k, op, read] = ra.tokens;
  if (ra.tokens.length !== 4 || base?.kind !== "variable" || base.name !== ".cfa" || read?.kind !== "operator" || read.op !== "^" || op?.kind !== "operator" || k?.kind !== "number") return false;
  return (op.op === "-" && k.value === BigInt(width)) || (op.op === "+" && k.value === -BigInt(width));
}

/** A CFI rule: the rules in effect at the address, run by {@link execCfi}. */
export interface CfiPlan {
  kind: "cfi";
  machine: CfiMachine;
  rules: CfiRuleSet;
  /** The rule as a frame carries it: the INIT range's RVA and the rules' texts. */
  rule: CfiRule;
  /**
   * The caller's PC is a return address (`.ra` is the word below the CFA); otherwise it was
   * read from elsewhere (a machine or signal frame) and the caller's PC is an interrupted one.
   */
  returns: boolean;
}

/**
 * The plans found in a table, by RVA (null: none there), for the walks that share a cache: the
 * same symbol file's rules at the same return address, in one dump after another of a batch, are
 * compiled once.
 */
const PLANS = keyedSlot<StackCfiIndex, WeakMap<CfiMachine, Map<number, CfiPlan | null>>>("STACK CFI plans by RVA");

/** The CFI rule for a site, or undefined when its module has no STACK CFI covering the lookup address. */
export function cfiRuleFor(machine: CfiMachine, site: FrameSite): CfiPlan | undefined {
  const module: Module | undefined = moduleAt(site.modules, site.lookupPc);
  const unwind = module?.unwind;
  if (module === undefined || unwind === undefined) return undefined;
  const records = unwind.stackCfiIndex === undefined ? unwind.stackCfi : undefined;
  const table = records === undefined ? unwind.stackCfiIndex : records.length === 0 ? undefined : cfiTable(records, site.cache);
  if (table === undefined || table.count === 0) return undefined;
  const rva = site.lookupPc - module.base;
  if (rva > 0xffff_ffffn) return undefined;
  const byMachine = keyed(site.cache, PLANS, table, () => new WeakMap<CfiMachine, Map<number, CfiPlan | null>>());
  let plans = byMachine.get(machine);
  if (plans === undefined) {
    plans = new Map();
    byMachine.set(machine, plans);
  }
  const at = Number(rva);
  const known = plans.get(at);
  if (known !== undefined) return known ?? undefined;
  const plan = planAt(machine, table, at);
  plans.set(at, plan ?? null);
  return plan;
}

/** The plan of the rules `table` has in effect at `rva`, or undefined when none does (or its `.cfa` or `.ra` is missing). */
function planAt(machine: CfiMachine, table: StackCfiIndex, rva: number): CfiPlan | undefined {
  const found = rulesAt(table, rva, machine.width);
  if (found === undefined || found.set.cfa === undefined || found.set.ra === undefined) return undefined;
  const set = found.set;
  const rules: [string, string][] = [[".cfa", set.cfa!.text], [".ra", set.ra!.text], ...[...set.registers].map(([n, e]): [string, string] => [n, e.text])];
  return { kind: "cfi", machine, rules: set, rule: { kind: "cfi", rva: found.start, rules }, returns: machine.raIsReturnAddress === true || isReturnSlot(set.ra!, machine.width) };
}

/** The strategy of a machine's STACK CFI records (trust `cfi`). */
export function cfiStrategy(machine: CfiMachine): UnwindStrategy<CfiPlan> {
  return { name: "cfi", trust: "cfi", ruleFor: (site: FrameSite) => cfiRuleFor(machine, site) };
}

/** Runs a CFI rule (the only place it reads memory). */
export function execCfi(plan: CfiPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const m = plan.machine;
  const valid = ctx.recovered;
  const names = new Map<string, bigint>();
  for (const r of m.registers) {
    const v = registers[r.register];
    if (v !== undefined && (valid === undefined || valid.includes(r.register))) names.set(r.name, v);
  }
  const failed = (what: string): UnwindResult => ({ ok: false, stop: walkStop("unsupported", `${ruleText(plan.rule)}: ${what} cannot be evaluated`) });
  const cfa = evaluateExpression(plan.rules.cfa!, names, memory);
  if (cfa === undefined) return failed(".cfa");
  const ra = evaluateExpression(plan.rules.ra!, names, memory, cfa);
  if (ra === undefined) return failed(".ra");
  const given = new Map<string, bigint>();
  // forEach, not for-of: no iterator and entry pair for each rule in code not yet optimised.
  plan.rules.registers.forEach((e, name) => {
    const v = evaluateExpression(e, names, memory, cfa);
    if (v !== undefined) given.set(name, v);
  });
  const out: Registers = {};
  const recovered: string[] = [];
  for (const r of m.registers) {
    let v = given.get(r.name);
    if (v === undefined && r.alias !== undefined) v = r.alias === ".cfa" ? cfa : ra;
    if (v === undefined && r.calleeSaves && names.has(r.name)) v = names.get(r.name);
    if (v === undefined) continue;
    out[r.register] = v;
    recovered.push(r.register);
  }
  for (const e of m.essentials) if (out[e] === undefined) return failed(`the caller's ${e}`);
  if (m.cleanPc !== undefined) out[m.pc] = m.cleanPc(out[m.pc]!, ctx);
  const pc = out[m.pc]!;
  if (m.zeroFails === true && (pc === 0n || out[m.sp] === 0n)) return { ok: false, stop: walkStop("unsupported", `${ruleText(plan.rule)}: the caller's ${pc === 0n ? m.pc : m.sp} is 0`) };
  // A return address of 0 is the outermost frame; otherwise the stack pointer must be known too.
  if (pc !== 0n && out[m.sp] === 0n) return failed(`the caller's ${m.sp}`);
  const step: UnwindResult = { ok: true, registers: out, recovered, rule: plan.rule };
  if (!plan.returns && pc !== 0n) step.interrupted = true;
  return step;
}
