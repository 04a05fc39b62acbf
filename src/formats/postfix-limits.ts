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

/** Texts shorter than this cannot pass a limit: more values than the depth limit take two characters each. */
const SHORT = 2 * MAX_POSTFIX_DEPTH;

/**
 * Why a postfix text passes a limit, or undefined when it does not. Tokens are split on white
 * space, a `=` glued to the next token counting as two (as Breakpad reads them); the stack depth
 * is counted as the text would run, operands pushing one value, binary operators taking two and
 * giving one, `^` taking one and giving one, `=` taking two.
 */
export function postfixOverLimit(text: string): string | undefined {
  return text.length < SHORT ? undefined : overLimit(text, false);
}

/** {@link postfixOverLimit} for each expression of a STACK CFI rule set (`name: expr name: expr …`). */
export function cfiRulesOverLimit(rules: string): string | undefined {
  return rules.length < SHORT || !hasLongExpression(rules) ? undefined : overLimit(rules, true);
}

/**
 * Whether a rule set has {@link SHORT} characters or more between two of its names (tokens
 * ending in `:`, where {@link overLimit} starts counting again): only there can an expression
 * pass a limit. A long rule set of short expressions (an ARM64 frame saving a dozen registers)
 * is passed over by the engine's search for colons, not read a character at a time.
 */
function hasLongExpression(rules: string): boolean {
  let from = 0;
  for (let c = rules.indexOf(":"); c >= 0; c = rules.indexOf(":", c + 1)) {
    // A colon inside a token does not end a name.
    if (c + 1 < rules.length && !isSpace(rules.charCodeAt(c + 1))) continue;
    if (c - from >= SHORT) return true;
    from = c + 1;
  }
  return rules.length - from >= SHORT;
}

/** White space as a regular expression's `\s` matches it (the tokens' separators). */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff;
}

const PLUS = 0x2b;
const MINUS = 0x2d;
const STAR = 0x2a;
const SLASH = 0x2f;
const PERCENT = 0x25;
const AT = 0x40;
const EQUALS = 0x3d;
const CARET = 0x5e;
const COLON = 0x3a;

/** Whether a one-character token is a binary operator. */
function isBinary(c: number): boolean {
  return c === PLUS || c === MINUS || c === STAR || c === SLASH || c === PERCENT || c === AT;
}

/** Walks the tokens of `text` in place (no strings made): the limit it passes, or undefined. */
function overLimit(text: string, named: boolean): string | undefined {
  let tokens = 0;
  let depth = 0;
  let deepest = 0;
  const n = text.length;
  let i = 0;
  while (i < n) {
    while (i < n && isSpace(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    while (i < n && !isSpace(text.charCodeAt(i))) i++;
    if (named && text.charCodeAt(i - 1) === COLON) {
      tokens = depth = deepest = 0;
      continue;
    }
    // A `=` glued to the token before its operand counts as two tokens: `=` and the rest.
    let at = start;
    if (i - start > 1 && text.charCodeAt(start) === EQUALS) {
      tokens++;
      depth = depth > 1 ? depth - 2 : 0;
      at = start + 1;
    }
    tokens++;
    const c = text.charCodeAt(at);
    const single = i - at === 1;
    if (single && isBinary(c)) depth = depth > 0 ? depth - 1 : 0;
    else if (single && c === EQUALS) depth = depth > 1 ? depth - 2 : 0;
    else if (!(single && c === CARET)) depth++;
    if (depth > deepest) deepest = depth;
    if (tokens > MAX_POSTFIX_TOKENS) return `an expression of more than ${MAX_POSTFIX_TOKENS} tokens`;
    if (deepest > MAX_POSTFIX_DEPTH) return `an expression that stacks more than ${MAX_POSTFIX_DEPTH} values`;
  }
  return undefined;
}
