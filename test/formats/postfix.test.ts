/**
 * The one postfix reader and evaluator (src/formats/postfix.ts) and its dialects: the same text
 * read and run as a STACK CFI expression (minidump.md §7), a FrameData program (x86-fpo.md §3)
 * and by Breakpad's STACK WIN evaluator (x86-fpo.md §5.2), each answer worked out by hand from
 * those rules; what differs between them is the dialect's data.
 */
import { describe, expect, it } from "vitest";
import {
  BREAKPAD_STACK_WIN,
  compilePostfix,
  FRAME_DATA_PROGRAM,
  isPostfixError,
  postfixWords,
  runPostfix,
  stackCfiDialect,
  type PostfixDialect,
  type PostfixError,
} from "../../src/formats/postfix.js";
import { MAX_POSTFIX_DEPTH, MAX_POSTFIX_TOKENS } from "../../src/formats/postfix-limits.js";
import { RegionMemory } from "../../src/memory/region-memory.js";

/** 0x1000: 78 56 34 12 f0 de bc 9a. */
const memory = new RegionMemory([{ base: 0x1000n, bytes: Uint8Array.of(0x78, 0x56, 0x34, 0x12, 0xf0, 0xde, 0xbc, 0x9a) }]);

/** Reads and runs `text` in a dialect with the given variables: the value left, or the assignments, or the error's words. */
function run<V>(dialect: PostfixDialect<V>, text: string, given: Record<string, V> = {}): { value?: V; assigned?: Record<string, V>; error?: string } {
  const compiled = compilePostfix(text, dialect);
  if (!compiled.ok) return { error: `read: ${compiled.error.reason}` };
  const code = compiled.code;
  const slots = code.variables.map((v) => given[v]);
  const flags = new Uint8Array(slots.length);
  const answer = runPostfix(code, slots, memory, flags);
  if (isPostfixError(answer)) return { error: (answer as PostfixError).reason };
  const assigned = Object.fromEntries(code.variables.flatMap((v, i) => (flags[i] === 1 ? [[v, slots[i]!]] : [])));
  return answer === undefined ? { assigned } : { value: answer as V };
}

const CFI64 = stackCfiDialect(8);
const CFI32 = stackCfiDialect(4);

describe("the words of a text", () => {
  it("splits on white space and splits an = glued to the next word off (MSVC's LTCG programs)", () => {
    expect(postfixWords("  $T0 .raSearch =$eip $T0 ^\t= ")).toEqual(["$T0", ".raSearch", "=", "$eip", "$T0", "^", "="]);
  });
});

describe("one evaluator, three dialects", () => {
  it("computes the same arithmetic in each: + - * / % and @ (align down), and ^ reads the word at an address", () => {
    const text = "$T0 $x 8 + 3 * 5 / 7 % = $T1 4099 4 @ ^ =";
    // (0x10 + 8) · 3 = 72, / 5 = 14, % 7 = 0; 4099 aligned down to 4 is 4096, the word there 0x12345678.
    expect(run(FRAME_DATA_PROGRAM, text.replace("$x", "$ebx"), { $ebx: 0x10 }).assigned).toEqual({ $T0: 0, $T1: 0x12345678 });
    expect(run(BREAKPAD_STACK_WIN, text, { $x: 0x10 }).assigned).toEqual({ $T0: 0, $T1: 0x12345678 });
    expect(run(CFI64, "$x 8 + 3 * 5 / 4099 4 @ ^ +", { $x: 0x10n }).value).toBe(0x9abcdef012345678n + 14n);
  });

  it("a STACK CFI expression leaves one value; a program assigns and leaves none", () => {
    expect(run(CFI64, "$rsp 8 +", { $rsp: 0x100n }).value).toBe(0x108n);
    expect(run(CFI64, "$t 5 = $t 1 +").value).toBe(6n);
    expect(run(CFI64, "1 2").error).toBe("2 values left on the stack, not one");
    expect(run(CFI64, "$t 5 =").error).toBe("0 values left on the stack, not one");
    expect(run(FRAME_DATA_PROGRAM, "$T0 1 = 5").error).toBe("1 value(s) left on the stack");
    expect(run(BREAKPAD_STACK_WIN, "$T0 5 =").assigned).toEqual({ $T0: 5 });
  });

  it("wraps at the dialect's width: 64 or 32 bits for STACK CFI, 32 for programs; ^ reads a word of that width", () => {
    expect(run(CFI64, "0 1 -").value).toBe(0xffff_ffff_ffff_ffffn);
    expect(run(CFI32, "0 1 -").value).toBe(0xffff_ffffn);
    expect(run(CFI64, "4096 ^").value).toBe(0x9abcdef012345678n);
    expect(run(CFI32, "4096 ^").value).toBe(0x12345678n);
    expect(run(FRAME_DATA_PROGRAM, "$T0 0 1 - = $T1 -4 = $T2 4294967295 2 * =").assigned).toEqual({ $T0: 0xffffffff, $T1: 0xfffffffc, $T2: 0xfffffffe });
  });

  it("reads the literals of each dialect: Breakpad's evaluator takes a + after the sign, the others read such a word as a name", () => {
    expect(run(BREAKPAD_STACK_WIN, "$T0 +5 -+3 + =").assigned).toEqual({ $T0: 2 });
    expect(run(CFI64, "+5").error).toBe("+5 has no value");
    expect(run(FRAME_DATA_PROGRAM, "$T0 +5 =").error).toBe('read: "+5" is not a number, a $variable, a .input or an operator');
  });

  it("names registers by CodeView number only in FrameData programs ($20 = EBX, $23 = ESI)", () => {
    expect(run(FRAME_DATA_PROGRAM, "$20 $23 =", { $esi: 7 }).assigned).toEqual({ $ebx: 7 });
    expect(run(BREAKPAD_STACK_WIN, "$20 $23 =", { $esi: 7 }).error).toBe("$23 has no value");
  });

  it("assigns only to $ variables, at once, so later words see the new value", () => {
    expect(run(FRAME_DATA_PROGRAM, "$T0 5 = $T1 $T0 1 + = $T0 $T1 2 * =").assigned).toEqual({ $T0: 12, $T1: 6 });
    for (const dialect of [FRAME_DATA_PROGRAM, BREAKPAD_STACK_WIN]) expect(run(dialect, ".raSearch 1 =", { ".raSearch": 0 }).error).toBe("= assigns only to a $variable");
    expect(run(CFI64, "5 1 = 2").error).toBe("= assigns only to a $variable");
  });

  it("fails, naming why, on what every dialect refuses", () => {
    for (const [text, why] of [
      ["$T0 +", "+ needs two operands"],
      ["^", "^ needs an operand"],
      ["$T0 $nope =", "$nope has no value"],
      ["$T0 16 ^ =", "cannot read 4 bytes at 0x10"],
      ["$T0 1 0 / =", "division by zero"],
      ["$T0 1 0 % =", "division by zero"],
    ]) {
      expect(run(FRAME_DATA_PROGRAM, text!).error, text).toBe(why);
      expect(run(BREAKPAD_STACK_WIN, text!).error, text).toBe(why);
    }
    expect(run(CFI64, "16 ^").error).toBe("cannot read 8 bytes at 0x10");
  });
});

describe("the postfix limits", () => {
  const deep = `$T0 ${"1 ".repeat(MAX_POSTFIX_DEPTH + 1)}${"+ ".repeat(MAX_POSTFIX_DEPTH)}=`;
  const long = `$T0 ${"1 + ".repeat(MAX_POSTFIX_TOKENS / 2)}=`.replace("$T0 1 +", "$T0 1");

  it("refuses a text past either limit where it is read, in the STACK CFI and FrameData dialects", () => {
    expect(run(FRAME_DATA_PROGRAM, deep).error).toBe(`read: the program is an expression that stacks more than ${MAX_POSTFIX_DEPTH} values (the postfix limits)`);
    expect(run(FRAME_DATA_PROGRAM, long).error).toBe(`read: the program is an expression of more than ${MAX_POSTFIX_TOKENS} tokens (the postfix limits)`);
    expect(run(CFI64, deep.slice(4, -1)).error).toMatch(/^read: the expression is an expression that stacks more than/);
  });

  it("as Breakpad's evaluator does: too many tokens when read, a stack too deep when it grows so, keeping what was assigned before", () => {
    expect(run(BREAKPAD_STACK_WIN, long).error).toBe(`read: the program is an expression of more than ${MAX_POSTFIX_TOKENS} tokens (the postfix limits)`);
    const compiled = compilePostfix(`$T1 7 = ${deep}`, BREAKPAD_STACK_WIN);
    if (!compiled.ok) throw new Error(compiled.error.reason);
    const slots: (number | undefined)[] = compiled.code.variables.map(() => undefined);
    const flags = new Uint8Array(slots.length);
    const answer = runPostfix(compiled.code, slots, memory, flags);
    expect(isPostfixError(answer) && answer.reason).toBe(`the stack holds more than ${MAX_POSTFIX_DEPTH} values (the postfix limits)`);
    expect([slots[0], flags[0]]).toEqual([7, 1]);
    expect(run(BREAKPAD_STACK_WIN, `$T0 ${"1 ".repeat(MAX_POSTFIX_DEPTH - 1)}${"+ ".repeat(MAX_POSTFIX_DEPTH - 2)}=`).assigned).toEqual({ $T0: MAX_POSTFIX_DEPTH - 1 });
  });
});
