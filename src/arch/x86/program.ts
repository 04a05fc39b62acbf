/**
 * The FrameData program-string language (x86-fpo.md §3): postfix expressions over a value
 * stack, with `=` assigning immediately so later tokens see the new value. A program is parsed
 * once (no memory is read) and evaluated per frame; `^` is the only operator that reads memory.
 */
import { readU32, type MemoryReader } from "../../memory/reader.js";

/** One token of a program. */
export type ProgramToken =
  | { kind: "number"; value: bigint }
  | { kind: "variable"; name: string }
  | { kind: "operator"; op: "+" | "-" | "*" | "/" | "%" | "@" | "^" | "=" };

/** A parsed program string. */
export interface Program {
  text: string;
  tokens: ProgramToken[];
  /** True when the program realigns with `@` (its `.raSearch` comes from EBP, x86-fpo.md §3.1 rule 3). */
  realigns: boolean;
}

/** Why a program could not be parsed or evaluated. */
export interface ProgramError {
  /** Token index where it failed (-1 for the end of the program). */
  token: number;
  reason: string;
  /** The unreadable address, for a failed `^`. */
  address?: bigint;
}

const MASK = 0xffff_ffffn;
const OPERATORS = new Set(["+", "-", "*", "/", "%", "@", "^", "="]);

/** CodeView register numbers as programs write them (`$20` = EBX; CV_REG_EAX = 17 … CV_REG_EDI = 24). */
const CODEVIEW_REGISTERS: Record<string, string> = {
  "17": "eax", "18": "ecx", "19": "edx", "20": "ebx", "21": "esp", "22": "ebp", "23": "esi", "24": "edi",
};

/** Register variables a program may read and assign, by canonical name. */
export const PROGRAM_REGISTERS = ["eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx"] as const;

/** The canonical name of a `$` variable: registers by their x86 name (numeric CodeView ids mapped), others as written. */
export function canonicalVariable(name: string): string {
  const bare = name.slice(1);
  const cv = CODEVIEW_REGISTERS[bare];
  if (cv !== undefined) return `$${cv}`;
  return name;
}

/** Parses a program string; `=$ebp`-style glued tokens are split as Breakpad does. */
export function parseProgram(text: string): { ok: true; program: Program } | { ok: false; error: ProgramError } {
  const tokens: ProgramToken[] = [];
  const raw = text.split(/\s+/).filter((t) => t.length > 0);
  const words: string[] = [];
  for (const w of raw) {
    if (w.length > 1 && w.startsWith("=")) words.push("=", w.slice(1));
    else words.push(w);
  }
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (OPERATORS.has(w)) tokens.push({ kind: "operator", op: w as "+" });
    else if (/^-?\d+$/.test(w)) tokens.push({ kind: "number", value: BigInt(w) & MASK });
    else if (/^\$[A-Za-z0-9_]+$/.test(w) || /^\.[A-Za-z]+$/.test(w)) tokens.push({ kind: "variable", name: w.startsWith("$") ? canonicalVariable(w) : w });
    else return { ok: false, error: { token: i, reason: `"${w}" is not a number, a $variable, a .input or an operator` } };
  }
  return { ok: true, program: { text, tokens, realigns: tokens.some((t) => t.kind === "operator" && t.op === "@") } };
}

/** The values a program starts with: registers as `$name`, inputs as `.name`. */
export type ProgramInputs = Record<string, bigint>;

/** The result of evaluating a program: every variable's final value and which were assigned. */
export type ProgramResult = { ok: true; values: Map<string, bigint>; assigned: Set<string> } | { ok: false; error: ProgramError };

/**
 * Evaluates a program (x86-fpo.md §3): binary operators pop the right operand first, `^` reads
 * four bytes, `=` pops a value then a `$` name and assigns at once. Stack underflow, unknown
 * variables, unreadable memory, division by zero and values left over are errors.
 */
export function evaluateProgram(program: Program, inputs: ProgramInputs, memory: MemoryReader): ProgramResult {
  const values = new Map<string, bigint>(Object.entries(inputs));
  const assigned = new Set<string>();
  type Item = { value: bigint } | { name: string };
  const stack: Item[] = [];
  const fail = (token: number, reason: string, address?: bigint): ProgramResult => {
    const error: ProgramError = { token, reason };
    if (address !== undefined) error.address = address;
    return { ok: false, error };
  };
  const valueOf = (item: Item): bigint | string => {
    if ("value" in item) return item.value;
    const v = values.get(item.name);
    return v === undefined ? `${item.name} has no value` : v;
  };
  for (let i = 0; i < program.tokens.length; i++) {
    const t = program.tokens[i]!;
    if (t.kind === "number") {
      stack.push({ value: t.value });
      continue;
    }
    if (t.kind === "variable") {
      stack.push({ name: t.name });
      continue;
    }
    if (t.op === "^") {
      const a = stack.pop();
      if (a === undefined) return fail(i, "^ needs an operand");
      const address = valueOf(a);
      if (typeof address === "string") return fail(i, address);
      const v = readU32(memory, address);
      if (v === undefined) return fail(i, `cannot read 4 bytes at 0x${address.toString(16)}`, address);
      stack.push({ value: v });
      continue;
    }
    const right = stack.pop();
    const left = stack.pop();
    if (right === undefined || left === undefined) return fail(i, `${t.op} needs two operands`);
    const r = valueOf(right);
    if (typeof r === "string") return fail(i, r);
    if (t.op === "=") {
      if (!("name" in left) || !left.name.startsWith("$")) return fail(i, "= assigns only to a $variable");
      values.set(left.name, r & MASK);
      assigned.add(left.name);
      continue;
    }
    const l = valueOf(left);
    if (typeof l === "string") return fail(i, l);
    let v: bigint;
    switch (t.op) {
      case "+": v = l + r; break;
      case "-": v = l - r; break;
      case "*": v = l * r; break;
      case "/":
        if (r === 0n) return fail(i, "division by zero");
        v = l / r;
        break;
      case "%":
        if (r === 0n) return fail(i, "division by zero");
        v = l % r;
        break;
      case "@": v = l & ~(r - 1n); break;
    }
    stack.push({ value: v & MASK });
  }
  if (stack.length > 0) return fail(-1, `${stack.length} value(s) left on the stack`);
  return { ok: true, values, assigned };
}
