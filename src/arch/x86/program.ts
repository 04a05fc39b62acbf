/**
 * The FrameData program-string language (x86-fpo.md §3): postfix expressions over a value
 * stack, with `=` assigning immediately so later tokens see the new value. A program is parsed
 * once (no memory is read) and evaluated per frame; `^` is the only operator that reads memory.
 */
import { machineInfo } from "../../model/machine.js";
import { hex } from "../../hex.js";
import { readU32n, type MemoryReader } from "../../memory/reader.js";
import { postfixOverLimit } from "../../formats/postfix-limits.js";
import { work } from "../../unwind/work.js";

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
  /** Every variable the program names, in first-use order; a variable's index is its slot. */
  variables: string[];
  /** The tokens as numbers: operators as negative codes, numbers as 2·value, variables as 2·slot + 1. */
  code: number[];
  /** Per slot: whether `=` may assign the variable (its name starts with `$`). */
  assignable: boolean[];
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

/** Registers by the CodeView numbers programs may write them as (`$20` = EBX; CV_REG_EAX = 17 … CV_REG_EDI = 24): the machine table's. */
const CODEVIEW_REGISTERS = machineInfo("x86").codeView;

/** Register variables a program may read and assign, by canonical name. */
export const PROGRAM_REGISTERS = ["eip", "esp", "ebp", "ebx", "esi", "edi", "eax", "ecx", "edx"] as const;

/** The canonical name of a `$` variable: registers by their x86 name (numeric CodeView ids mapped), others as written. */
export function canonicalVariable(name: string): string {
  const bare = name.slice(1);
  const cv = /^[1-9][0-9]*$/.test(bare) ? CODEVIEW_REGISTERS[Number(bare)] : undefined;
  if (cv !== undefined) return `$${cv}`;
  return name;
}

/** Parses a program string; `=$ebp`-style glued tokens are split as Breakpad does. */
export function parseProgram(text: string): { ok: true; program: Program } | { ok: false; error: ProgramError } {
  const over = postfixOverLimit(text);
  if (over !== undefined) return { ok: false, error: { token: -1, reason: `the program is ${over} (the postfix limits)` } };
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
  const variables: string[] = [];
  const code = tokens.map((t) => {
    if (t.kind === "number") return Number(t.value) * 2;
    if (t.kind === "operator") return OP_CODES[t.op];
    let slot = variables.indexOf(t.name);
    if (slot < 0) slot = variables.push(t.name) - 1;
    return slot * 2 + 1;
  });
  const assignable = variables.map((v) => v.startsWith("$"));
  return { ok: true, program: { text, tokens, realigns: tokens.some((t) => t.kind === "operator" && t.op === "@"), variables, code, assignable } };
}

const OP_CODES = { "+": -1, "-": -2, "*": -3, "/": -4, "%": -5, "@": -6, "^": -7, "=": -8 } as const;
const OP_TEXT = ["", "+", "-", "*", "/", "%", "@", "^", "="];

/**
 * Runs a program over its slots (x86 values are 32-bit, so they are plain numbers; `NaN` is "no
 * value"), assigning immediately as `=` runs. `assigned[slot]` is set for each assignment.
 * Returns undefined on success, or the error.
 */
export function runProgram(program: Program, slots: number[], assigned: Uint8Array, memory: MemoryReader): ProgramError | undefined {
  const code = program.code;
  work.units += code.length;
  // Each stack entry is a value (≥ 0) or a variable reference (−1 − slot).
  const stack: number[] = [];
  for (let i = 0; i < code.length; i++) {
    const c = code[i]!;
    if (c >= 0) {
      stack.push((c & 1) === 1 ? -1 - (c - 1) / 2 : c / 2);
      continue;
    }
    if (c === OP_CODES["^"]) {
      const a = stack.pop();
      if (a === undefined) return { token: i, reason: "^ needs an operand" };
      const address = a >= 0 ? a : slots[-1 - a]!;
      if (Number.isNaN(address)) return { token: i, reason: noValue(program, a) };
      const v = readU32n(memory, address);
      if (v === undefined) return { token: i, reason: `cannot read 4 bytes at ${hex(address)}`, address: BigInt(address) };
      stack.push(v);
      continue;
    }
    const right = stack.pop();
    const left = stack.pop();
    if (right === undefined || left === undefined) return { token: i, reason: `${OP_TEXT[-c]} needs two operands` };
    const r = right >= 0 ? right : slots[-1 - right]!;
    if (Number.isNaN(r)) return { token: i, reason: noValue(program, right) };
    if (c === OP_CODES["="]) {
      if (left >= 0 || !program.assignable[-1 - left]) return { token: i, reason: "= assigns only to a $variable" };
      slots[-1 - left] = r;
      assigned[-1 - left] = 1;
      continue;
    }
    const l = left >= 0 ? left : slots[-1 - left]!;
    if (Number.isNaN(l)) return { token: i, reason: noValue(program, left) };
    let v: number;
    switch (c) {
      case OP_CODES["+"]: v = l + r; break;
      case OP_CODES["-"]: v = l - r; break;
      case OP_CODES["*"]: v = Math.imul(l, r); break;
      case OP_CODES["/"]:
        if (r === 0) return { token: i, reason: "division by zero" };
        v = Math.floor(l / r);
        break;
      case OP_CODES["%"]:
        if (r === 0) return { token: i, reason: "division by zero" };
        v = l % r;
        break;
      default: v = l & ~(r - 1); break;
    }
    stack.push(v >>> 0);
  }
  if (stack.length > 0) return { token: -1, reason: `${stack.length} value(s) left on the stack` };
  return undefined;
}

function noValue(program: Program, entry: number): string {
  return `${program.variables[-1 - entry]} has no value`;
}


/** The values a program starts with: registers as `$name`, inputs as `.name`. */
export type ProgramInputs = Record<string, bigint>;

/** The result of evaluating a program: every variable's final value and which were assigned. */
export type ProgramResult = { ok: true; values: Map<string, bigint>; assigned: Set<string> } | { ok: false; error: ProgramError };

/**
 * Evaluates a program (x86-fpo.md §3): binary operators pop the right operand first, `^` reads
 * four bytes, `=` pops a value then a `$` name and assigns at once. Stack underflow, unknown
 * variables, unreadable memory, division by zero and values left over are errors. The values
 * returned are the inputs plus every variable the program assigned.
 */
export function evaluateProgram(program: Program, inputs: ProgramInputs, memory: MemoryReader): ProgramResult {
  const slots = program.variables.map((name) => {
    const v = inputs[name];
    return v === undefined ? NaN : Number(v & MASK);
  });
  const assignedSlots = new Uint8Array(slots.length);
  const error = runProgram(program, slots, assignedSlots, memory);
  if (error !== undefined) return { ok: false, error };
  const values = new Map<string, bigint>(Object.entries(inputs));
  const assigned = new Set<string>();
  program.variables.forEach((name, slot) => {
    if (assignedSlots[slot] === 1) {
      values.set(name, BigInt(slots[slot]!));
      assigned.add(name);
    }
  });
  return { ok: true, values, assigned };
}
