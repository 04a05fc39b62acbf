/**
 * The postfix language of symbol files (minidump.md §7, x86-fpo.md §3, §5.2): Breakpad's STACK
 * CFI rules, and the program strings of FrameData records and STACK WIN lines. One reader and one
 * evaluator serve all of them; what differs is data, a {@link PostfixDialect}.
 *
 * Words are split on white space, an `=` glued to the next word counting as two (MSVC's LTCG
 * program strings, as Breakpad reads them). `+ - * / %` and `@` (align down: `a b @` is
 * `a & ~(b − 1)`) take two values, `^` one (the word at that address), `=` a value and then a
 * variable whose name starts with `$`, which it assigns at once, so later words see the new value.
 * A decimal literal may be negative; any other word names a variable, looked up when it is used.
 * A variable without a value, a read that fails, a division by 0, too few values for an operator
 * and what is left on the stack at the end fail the run.
 *
 * The dialects:
 * - **STACK CFI** ({@link stackCfiDialect}): an expression leaves one value; values are as wide as
 *   the machine's registers, as bigints.
 * - **FrameData programs** ({@link FRAME_DATA_PROGRAM}): a program assigns and leaves nothing;
 *   32-bit values; a word must be a literal, a `$variable` or a `.input`, and registers may be
 *   named by their CodeView numbers (`$20` is `$ebx`).
 * - **Breakpad's STACK WIN evaluator** ({@link BREAKPAD_STACK_WIN}, `PostfixEvaluator<uint32_t>`):
 *   programs as above, but any word names a variable and no CodeView numbers are known, a literal
 *   may carry a `+`, and the stack's depth is checked as it runs.
 *
 * Reading a text makes a {@link PostfixCode}: its tokens, its variables numbered in first-use
 * order (a run's values are an array of them, its slots) and the tokens as numbers. The limits of
 * postfix-limits.ts are checked where the dialect says.
 */
import { hex } from "../hex.js";
import { readPointer, readU32n, type MemoryReader } from "../memory/reader.js";
import { machineInfo } from "../model/machine.js";
import { MAX_POSTFIX_DEPTH, MAX_POSTFIX_TOKENS, postfixOverLimit } from "./postfix-limits.js";

/** An operator of the language. */
export type PostfixOperator = "+" | "-" | "*" | "/" | "%" | "@" | "^" | "=";

/** One token: a literal as written (its value before it is cut to the dialect's width), a variable by its name, or an operator. */
export type PostfixToken = { kind: "number"; value: bigint } | { kind: "variable"; name: string } | { kind: "operator"; op: PostfixOperator };

/** Why a text could not be read or a run failed. */
export interface PostfixError {
  /** Token index where it failed (−1 for the whole text, or its end). */
  token: number;
  reason: string;
  /** The unreadable address, for a failed `^`. */
  address?: bigint;
}

/** The values a dialect computes with: 32-bit numbers, or bigints of a register's width. */
export interface PostfixValues<V> {
  /** Bytes a `^` reads. */
  width: 4 | 8;
  /** A literal's value. */
  literal(value: bigint): V;
  /** `a op b` for a binary operator code (see {@link OP}); undefined for a division by 0. */
  binary(op: number, a: V, b: V): V | undefined;
  /** The word at an address, or undefined when it cannot be read. */
  read(memory: MemoryReader, address: V): V | undefined;
}

/** How one dialect reads and runs the language. */
export interface PostfixDialect<V> {
  /** What a text of the dialect is, in errors: "the program". */
  noun: string;
  /** Values a run leaves: 1 (a STACK CFI expression's result) or 0 (a program, which assigns). */
  leaves: 0 | 1;
  /** Which words are literals. */
  literal: RegExp;
  /** Which words name variables; undefined: every word that is not an operator or a literal does. */
  name?: RegExp;
  /** The words a text may hold, for the error on one that is none of them (with {@link name}). */
  words?: string;
  /** The name a variable is known by (the CodeView numbers of FrameData programs). */
  canonical?: (name: string) => string;
  /**
   * Where the limits of postfix-limits.ts are checked: "read" refuses a text past either when it
   * is read; "run" refuses one of too many tokens when read and fails a run whose stack grows past
   * the depth limit when it does (Breakpad's evaluator, which keeps what it assigned until then).
   */
  limits: "read" | "run";
  values: PostfixValues<V>;
}

/** A text read in a dialect, ready to run. */
export interface PostfixCode<V> {
  text: string;
  dialect: PostfixDialect<V>;
  tokens: readonly PostfixToken[];
  /** Every variable the text names, in first-use order; a variable's index is its slot. */
  variables: readonly string[];
  /** Per token: an operator as a negative code ({@link OP}), a literal as 2·index into {@link literals}, a variable as 2·slot + 1. */
  ops: readonly number[];
  literals: readonly V[];
  /** Per slot: whether `=` may assign the variable (its name starts with `$`). */
  assignable: readonly boolean[];
  /** Whether the text assigns anything. */
  assigns: boolean;
}

/** The operator codes of {@link PostfixCode.ops}. */
export const OP = { "+": -1, "-": -2, "*": -3, "/": -4, "%": -5, "@": -6, "^": -7, "=": -8 } as const;
const OP_TEXT = ["", "+", "-", "*", "/", "%", "@", "^", "="];
const OPERATORS = new Set<string>(Object.keys(OP));

/** The words of a text: split on white space, an `=` glued to the next word split off. */
export function postfixWords(text: string): string[] {
  const words: string[] = [];
  for (const raw of text.split(/\s+/)) {
    if (raw === "") continue;
    if (raw.length > 1 && raw.startsWith("=")) words.push("=", raw.slice(1));
    else words.push(raw);
  }
  return words;
}

/** The value of a literal as written: its sign, and its digits after any `+`. */
function literalValue(word: string): bigint {
  const negative = word.startsWith("-");
  const digits = word.slice(negative ? 1 : 0).replace(/^\+/, "");
  return negative ? -BigInt(digits) : BigInt(digits);
}

/** Reads a text in a dialect; the error names the token at fault, or −1 for a text past the postfix limits. */
export function compilePostfix<V>(text: string, dialect: PostfixDialect<V>): { ok: true; code: PostfixCode<V> } | { ok: false; error: PostfixError } {
  if (dialect.limits === "read") {
    const over = postfixOverLimit(text);
    if (over !== undefined) return { ok: false, error: { token: -1, reason: `${dialect.noun} is ${over} (the postfix limits)` } };
  }
  const words = postfixWords(text);
  if (words.length > MAX_POSTFIX_TOKENS) return { ok: false, error: { token: -1, reason: `${dialect.noun} is an expression of more than ${MAX_POSTFIX_TOKENS} tokens (the postfix limits)` } };
  const tokens: PostfixToken[] = [];
  const variables: string[] = [];
  const ops: number[] = [];
  const literals: V[] = [];
  let assigns = false;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (OPERATORS.has(w)) {
      const op = w as PostfixOperator;
      tokens.push({ kind: "operator", op });
      ops.push(OP[op]);
      if (op === "=") assigns = true;
    } else if (dialect.literal.test(w)) {
      const value = literalValue(w);
      tokens.push({ kind: "number", value });
      ops.push(2 * literals.length);
      literals.push(dialect.values.literal(value));
    } else if (dialect.name === undefined || dialect.name.test(w)) {
      const name = dialect.canonical === undefined ? w : dialect.canonical(w);
      tokens.push({ kind: "variable", name });
      let slot = variables.indexOf(name);
      if (slot < 0) slot = variables.push(name) - 1;
      ops.push(2 * slot + 1);
    } else return { ok: false, error: { token: i, reason: `"${w}" is not ${dialect.words}` } };
  }
  return { ok: true, code: { text, dialect, tokens, variables, ops, literals, assignable: variables.map((v) => v.startsWith("$")), assigns } };
}

/**
 * Runs a text over its slots (`undefined` is a variable without a value), assigning into them as
 * `=` runs and setting `assigned[slot]` for each assignment. Returns the value left (a dialect
 * that leaves one), undefined (one that leaves none), or the error. The caller counts the work
 * (one unit per token, unwind/work.ts).
 */
export function runPostfix<V>(code: PostfixCode<V>, slots: (V | undefined)[], memory: MemoryReader, assigned?: Uint8Array): V | PostfixError | undefined {
  const { ops, literals, dialect } = code;
  const values = dialect.values;
  const limit = dialect.limits === "run" ? MAX_POSTFIX_DEPTH : Number.POSITIVE_INFINITY;
  // Each entry is a value (ref −1) or a variable (ref = its slot), read when it is used.
  const stack: (V | undefined)[] = [];
  const refs: number[] = [];
  let depth = 0;
  for (let i = 0; i < ops.length; i++) {
    const c = ops[i]!;
    if (c >= 0) {
      if (depth >= limit) return { token: i, reason: `the stack holds more than ${MAX_POSTFIX_DEPTH} values (the postfix limits)` };
      if ((c & 1) === 1) {
        refs[depth] = (c - 1) / 2;
        stack[depth] = undefined;
      } else {
        refs[depth] = -1;
        stack[depth] = literals[c / 2];
      }
      depth++;
      continue;
    }
    if (c === OP["^"]) {
      if (depth < 1) return { token: i, reason: "^ needs an operand" };
      depth--;
      const address = refs[depth]! < 0 ? stack[depth] : slots[refs[depth]!];
      if (address === undefined) return { token: i, reason: noValue(code, refs[depth]!) };
      const v = values.read(memory, address);
      if (v === undefined) return { token: i, reason: `cannot read ${values.width} bytes at ${hex(address as number | bigint)}`, address: BigInt(address as number | bigint) };
      refs[depth] = -1;
      stack[depth++] = v;
      continue;
    }
    if (depth < 2) return { token: i, reason: `${OP_TEXT[-c]} needs two operands` };
    depth -= 2;
    const rightRef = refs[depth + 1]!;
    const r = rightRef < 0 ? stack[depth + 1] : slots[rightRef];
    if (r === undefined) return { token: i, reason: noValue(code, rightRef) };
    const leftRef = refs[depth]!;
    if (c === OP["="]) {
      if (leftRef < 0 || !code.assignable[leftRef]) return { token: i, reason: "= assigns only to a $variable" };
      slots[leftRef] = r;
      if (assigned !== undefined) assigned[leftRef] = 1;
      continue;
    }
    const l = leftRef < 0 ? stack[depth] : slots[leftRef];
    if (l === undefined) return { token: i, reason: noValue(code, leftRef) };
    const v = values.binary(c, l, r);
    if (v === undefined) return { token: i, reason: "division by zero" };
    refs[depth] = -1;
    stack[depth++] = v;
  }
  if (dialect.leaves === 0) return depth === 0 ? undefined : { token: -1, reason: `${depth} value(s) left on the stack` };
  if (depth !== 1) return { token: -1, reason: `${depth} values left on the stack, not one` };
  const result = refs[0]! < 0 ? stack[0] : slots[refs[0]!];
  return result === undefined ? { token: -1, reason: noValue(code, refs[0]!) } : result;
}

/** Whether a run's answer is an error rather than a value (or nothing). */
export function isPostfixError<V>(answer: V | PostfixError | undefined): answer is PostfixError {
  return typeof answer === "object" && answer !== null;
}

function noValue<V>(code: PostfixCode<V>, ref: number): string {
  return `${code.variables[ref]} has no value`;
}

/** 32-bit values as numbers: what FrameData programs and Breakpad's STACK WIN evaluator compute with. */
export const U32_VALUES: PostfixValues<number> = {
  width: 4,
  literal: (value) => Number(value & 0xffff_ffffn),
  binary(op, l, r) {
    switch (op) {
      case OP["+"]: return (l + r) >>> 0;
      case OP["-"]: return (l - r) >>> 0;
      case OP["*"]: return Math.imul(l, r) >>> 0;
      case OP["/"]: return r === 0 ? undefined : Math.floor(l / r) >>> 0;
      case OP["%"]: return r === 0 ? undefined : (l % r) >>> 0;
      default: return (l & ~(r - 1)) >>> 0;
    }
  },
  read: (memory, address) => readU32n(memory, address),
};

/** Values of `width` bytes as bigints, each result cut to the width: what STACK CFI rules compute with. */
function bigintValues(width: 4 | 8): PostfixValues<bigint> {
  const mask = width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  return {
    width,
    literal: (value) => value & mask,
    binary(op, a, b) {
      switch (op) {
        case OP["+"]: return (a + b) & mask;
        case OP["-"]: return (a - b) & mask;
        case OP["*"]: return (a * b) & mask;
        case OP["/"]: return b === 0n ? undefined : (a / b) & mask;
        case OP["%"]: return b === 0n ? undefined : (a % b) & mask;
        default: return a & (mask ^ ((b - 1n) & mask)) & mask;
      }
    },
    read: (memory, address) => readPointer(memory, address, width),
  };
}

/** A decimal literal, possibly negative. */
const DECIMAL = /^-?[0-9]+$/;

function stackCfi(width: 4 | 8): PostfixDialect<bigint> {
  return { noun: "the expression", leaves: 1, literal: DECIMAL, limits: "read", values: bigintValues(width) };
}
const STACK_CFI_32 = stackCfi(4);
const STACK_CFI_64 = stackCfi(8);

/** STACK CFI rule expressions on a machine whose registers are `width` bytes. */
export function stackCfiDialect(width: 4 | 8): PostfixDialect<bigint> {
  return width === 4 ? STACK_CFI_32 : STACK_CFI_64;
}

/** Registers by the CodeView numbers programs may write them as (`$20` = EBX; CV_REG_EAX = 17 … CV_REG_EDI = 24): the machine table's. */
const CODEVIEW_REGISTERS = machineInfo("x86").codeView;

/** The canonical name of a `$` variable: registers by their x86 name (numeric CodeView ids mapped), others as written. */
export function canonicalVariable(name: string): string {
  const bare = name.slice(1);
  const cv = /^[1-9][0-9]*$/.test(bare) ? CODEVIEW_REGISTERS[Number(bare)] : undefined;
  return cv === undefined ? name : `$${cv}`;
}

/** FrameData program strings (x86-fpo.md §3). */
export const FRAME_DATA_PROGRAM: PostfixDialect<number> = {
  noun: "the program",
  leaves: 0,
  literal: DECIMAL,
  name: /^\$[A-Za-z0-9_]+$|^\.[A-Za-z]+$/,
  words: "a number, a $variable, a .input or an operator",
  canonical: (name) => (name.startsWith("$") ? canonicalVariable(name) : name),
  limits: "read",
  values: U32_VALUES,
};

/** STACK WIN program strings as Breakpad's `PostfixEvaluator<uint32_t>` reads them (x86-fpo.md §5.2). */
export const BREAKPAD_STACK_WIN: PostfixDialect<number> = {
  noun: "the program",
  leaves: 0,
  // istringstream >> uint32 with Breakpad's handling of '-': a '+' may follow the sign.
  literal: /^-?\+?[0-9]+$/,
  limits: "run",
  values: U32_VALUES,
};
