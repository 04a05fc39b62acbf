/**
 * Program strings as rules (framehop's approach to unwind data): most programs only add
 * constants to one input and read memory there, e.g. `$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 +
 * =` says "eip = [raSearch], esp = raSearch + 4". Evaluating such a program symbolically once
 * gives, for each register it sets, `input + offset` or `[input + offset]`; a frame then needs
 * only those reads. Programs that do anything else (realignment, multiplication, arithmetic on
 * loaded values, a loaded value kept in a temporary) are left to the evaluator.
 */
import type { Program } from "./program.js";

/** What a register of the caller is: an input plus a constant, or the word there. */
export interface AffineOutput {
  /** Index into CALLER_REGISTERS order: eip, esp, ebp, ebx, esi, edi. */
  register: number;
  /** The input the value is based on (`.raSearch`, `$ebp`, ...). */
  base: string;
  offset: number;
  load: boolean;
}

/** A program reduced to its outputs; eip and esp are always among them. */
export interface AffineRule {
  outputs: AffineOutput[];
}

const CALLER = ["$eip", "$esp", "$ebp", "$ebx", "$esi", "$edi"];

type Sym = { kind: "base"; base: string; offset: number } | { kind: "const"; value: number } | { kind: "load"; base: string; offset: number } | { kind: "opaque" };

const cache = new WeakMap<Program, AffineRule | null>();

/** The program as an {@link AffineRule}, or undefined when it is not of that shape. */
export function affineRule(program: Program): AffineRule | undefined {
  let rule = cache.get(program);
  if (rule === undefined) {
    rule = reduce(program) ?? null;
    cache.set(program, rule);
  }
  return rule ?? undefined;
}

function reduce(program: Program): AffineRule | undefined {
  const vars = new Map<string, Sym>();
  const stack: (Sym | { kind: "name"; name: string })[] = [];
  for (const t of program.tokens) {
    if (t.kind === "number") {
      stack.push({ kind: "const", value: Number(t.value) });
      continue;
    }
    if (t.kind === "variable") {
      stack.push({ kind: "name", name: t.name });
      continue;
    }
    if (t.op === "^") {
      const a = stack.pop();
      if (a === undefined) return undefined;
      const v = symOf(vars, a);
      stack.push(v.kind === "base" ? { kind: "load", base: v.base, offset: v.offset } : OPAQUE);
      continue;
    }
    const right = stack.pop();
    const left = stack.pop();
    if (right === undefined || left === undefined) return undefined;
    const r = symOf(vars, right);
    if (t.op === "=") {
      if (left.kind !== "name" || !left.name.startsWith("$")) return undefined;
      vars.set(left.name, r);
      continue;
    }
    const l = symOf(vars, left);
    // Anything but adding a constant to an input makes a value the reduced rule cannot use; it
    // only matters if it reaches a caller register (then the evaluator runs the program).
    if ((t.op === "+" || t.op === "-") && r.kind === "const" && l.kind === "base") {
      stack.push({ kind: "base", base: l.base, offset: t.op === "+" ? l.offset + r.value : l.offset - r.value });
    } else if ((t.op === "+" || t.op === "-") && r.kind === "const" && l.kind === "const") {
      stack.push({ kind: "const", value: t.op === "+" ? l.value + r.value : l.value - r.value });
    } else stack.push(OPAQUE);
  }
  if (stack.length > 0) return undefined;
  const outputs: AffineOutput[] = [];
  for (let i = 0; i < CALLER.length; i++) {
    const v = vars.get(CALLER[i]!);
    if (v === undefined) {
      if (i < 2) return undefined;
      continue;
    }
    if (v.kind !== "base" && v.kind !== "load") return undefined;
    outputs.push({ register: i, base: v.base, offset: v.offset, load: v.kind === "load" });
  }
  return { outputs };
}

const OPAQUE: Sym = { kind: "opaque" };

/** The symbolic value of a stack entry: a name stands for its latest assignment, or for itself as an input. */
function symOf(vars: Map<string, Sym>, e: Sym | { kind: "name"; name: string }): Sym {
  return e.kind === "name" ? (vars.get(e.name) ?? { kind: "base", base: e.name, offset: 0 }) : e;
}
