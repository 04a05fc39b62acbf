/**
 * Limits on the postfix expressions of symbol files (issue 33): a STACK CFI rule's expression and
 * a STACK WIN or FrameData program string. Real ones are short (dump_syms writes a few tokens per
 * CFI rule; a PDB's programs run to a few dozen tokens), while one of 10,000 tokens made every
 * frame of a walk cost milliseconds. An expression or program longer than
 * {@link MAX_POSTFIX_TOKENS} tokens, or one that would stack more than {@link MAX_POSTFIX_DEPTH}
 * values, is refused where it is parsed, with a note that says which limit it passed.
 */

/** The most tokens of one expression or program. */
export const MAX_POSTFIX_TOKENS = 512;

/** The most values an expression or program may have on its stack at once. */
export const MAX_POSTFIX_DEPTH = 64;

const BINARY = new Set(["+", "-", "*", "/", "%", "@"]);

/** Texts shorter than this cannot pass a limit: more values than the depth limit take two characters each. */
const SHORT = 2 * MAX_POSTFIX_DEPTH;

/**
 * Why a postfix text passes a limit, or undefined when it does not. Tokens are split on white
 * space, a `=` glued to the next token counting as two (as Breakpad reads them); the stack depth
 * is counted as the text would run, operands pushing one value, binary operators taking two and
 * giving one, `^` taking one and giving one, `=` taking two.
 */
export function postfixOverLimit(text: string): string | undefined {
  return text.length < SHORT ? undefined : wordsOverLimit(text.split(/\s+/), false);
}

/** {@link postfixOverLimit} for each expression of a STACK CFI rule set (`name: expr name: expr …`). */
export function cfiRulesOverLimit(rules: string): string | undefined {
  return rules.length < SHORT ? undefined : wordsOverLimit(rules.split(/\s+/), true);
}

function wordsOverLimit(words: readonly string[], named: boolean): string | undefined {
  let tokens = 0;
  let depth = 0;
  let deepest = 0;
  for (const raw of words) {
    if (raw === "") continue;
    if (named && raw.endsWith(":")) {
      tokens = depth = deepest = 0;
      continue;
    }
    const glued = raw.length > 1 && raw.charCodeAt(0) === 0x3d;
    for (const w of glued ? ["=", raw.slice(1)] : [raw]) {
      tokens++;
      if (BINARY.has(w)) depth = depth > 0 ? depth - 1 : 0;
      else if (w === "=") depth = depth > 1 ? depth - 2 : 0;
      else if (w !== "^") depth++;
      if (depth > deepest) deepest = depth;
    }
    if (tokens > MAX_POSTFIX_TOKENS) return `an expression of more than ${MAX_POSTFIX_TOKENS} tokens`;
    if (deepest > MAX_POSTFIX_DEPTH) return `an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`;
  }
  return undefined;
}
