/**
 * The postfix limits of a STACK CFI rule set (src/formats/postfix-limits.ts), checked against the
 * rules as its comment states them, counted here over the tokens a split on white space gives: in
 * each expression (what follows a name, a token ending in `:`), more than MAX_POSTFIX_TOKENS
 * tokens, or a stack deeper than MAX_POSTFIX_DEPTH values, a `=` glued to its operand counting as
 * two tokens. Random rule sets mix names, colons inside tokens, white space of every kind the
 * split knows, and expressions short and long, deep and flat.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cfiRulesOverLimit, MAX_POSTFIX_DEPTH, MAX_POSTFIX_TOKENS } from "../../src/formats/postfix-limits.js";

const BINARY = new Set(["+", "-", "*", "/", "%", "@"]);

/** The limit `rules` passes, counted from the stated rules over `split(/\s+/)`. */
function reference(rules: string): string | undefined {
  let tokens = 0;
  let depth = 0;
  let deepest = 0;
  for (const token of rules.split(/\s+/)) {
    if (token === "") continue;
    if (token.endsWith(":")) {
      tokens = depth = deepest = 0;
      continue;
    }
    let rest = token;
    if (token.length > 1 && token.startsWith("=")) {
      tokens++;
      depth = Math.max(depth - 2, 0);
      rest = token.slice(1);
    }
    tokens++;
    if (rest.length === 1 && BINARY.has(rest)) depth = Math.max(depth - 1, 0);
    else if (rest === "=") depth = Math.max(depth - 2, 0);
    else if (rest !== "^") depth++;
    deepest = Math.max(deepest, depth);
    if (tokens > MAX_POSTFIX_TOKENS) return `an expression of more than ${MAX_POSTFIX_TOKENS} tokens`;
    if (deepest > MAX_POSTFIX_DEPTH) return `an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`;
  }
  return undefined;
}

const token = fc.constantFrom("1", "8", "sp", "$esp", ".cfa", "+", "-", "^", "=", "=x", "a:b", "16:", "x19:", ".ra:");
const space = fc.constantFrom(" ", "  ", "\t", "\u00a0", "\u3000", "\r\n");
/** An expression: a run of one token, or random tokens; long enough, at times, to pass a limit. */
const expression = fc.oneof(
  fc.array(token, { maxLength: 40 }),
  // Near the depth limit (65 operands) and the token limit (513 tokens), and anywhere between.
  fc
    .tuple(fc.constantFrom("1", "sp", "=x"), fc.oneof(fc.integer({ min: 63, max: 68 }), fc.integer({ min: 505, max: 520 }), fc.integer({ min: 1, max: 600 })))
    .map(([t, n]) => Array.from({ length: n }, () => t)),
  fc.array(fc.constantFrom("1", "sp", "+", "^", "a:b"), { minLength: 100, maxLength: 700 }),
);
const ruleSet = fc
  .tuple(fc.array(fc.tuple(fc.constantFrom(".cfa:", ".ra:", "x19:", "$ebp:", "a:b"), expression), { minLength: 1, maxLength: 6 }), fc.array(space, { minLength: 1, maxLength: 8 }))
  .map(([parts, spaces]) => {
    const words = parts.flatMap(([name, tokens]) => [name, ...tokens]);
    return words.map((w, i) => (i === 0 ? w : spaces[i % spaces.length]! + w)).join("");
  });

describe("the postfix limits of a STACK CFI rule set", () => {
  it("are the limits its expressions pass, counted token by token, whatever the rule set's length", () => {
    let passed = 0;
    fc.assert(
      fc.property(ruleSet, (rules) => {
        const why = reference(rules);
        if (why !== undefined) passed++;
        expect(cfiRulesOverLimit(rules)).toBe(why);
      }),
      { numRuns: 2000 },
    );
    // Both answers came up.
    expect(passed).toBeGreaterThan(20);
  });

  it("a long rule set of short expressions passes none; one expression of 65 operands passes the depth limit", () => {
    const registers = Array.from({ length: 30 }, (_, i) => `x${i}: .cfa -${8 * (i + 1)} + ^`).join(" ");
    expect(registers.length).toBeGreaterThan(400);
    expect(cfiRulesOverLimit(`.cfa: sp 240 + .ra: .cfa -8 + ^ ${registers}`)).toBeUndefined();
    expect(cfiRulesOverLimit(`.cfa: sp 16 + ${registers} .ra: ${"1 ".repeat(MAX_POSTFIX_DEPTH + 1)}`)).toBe(`an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`);
    // At the depth limit and one past it, the shortest expressions that can be: one-character operands.
    expect(cfiRulesOverLimit(`${registers} .cfa: ${"1 ".repeat(MAX_POSTFIX_DEPTH)}x: 1`)).toBeUndefined();
    expect(cfiRulesOverLimit(`${registers} .cfa: ${"1 ".repeat(MAX_POSTFIX_DEPTH + 1)}x: 1`)).toBe(`an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`);
    expect(cfiRulesOverLimit(`${registers} .cfa:${" 1".repeat(MAX_POSTFIX_DEPTH + 1)}`)).toBe(`an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`);
    // 129 characters, no name before them: the shortest text that passes a limit.
    expect(cfiRulesOverLimit(`${"1 ".repeat(MAX_POSTFIX_DEPTH)}1`)).toBe(`an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`);
    // A colon inside a token is no name: the expression goes on across it.
    expect(cfiRulesOverLimit(`.cfa: ${"1 ".repeat(40)}a:b ${"1 ".repeat(40)}`)).toBe(`an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`);
  });
});
