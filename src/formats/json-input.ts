/**
 * Validating access to parsed JSON: every accessor knows its JSON path, and every failure is an
 * {@link InputError} naming that path (`$.context.eip`, `$.memory[2].base`).
 */
import { InputError } from "../errors.js";

/**
 * The path of member `key` of the value at `path`: `.key` for a name of letters, digits and
 * underscores, else `["key"]` quoted as JSON (a key with a newline or a quote never breaks the
 * path or the one-line message that names it).
 */
export function memberPath(path: string, key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** A parsed JSON value with its JSON path: typed accessors whose errors are InputErrors naming the path. */
export class JsonNode {
  constructor(
    readonly value: unknown,
    readonly path: string,
  ) {}

  /**
   * Parses JSON text. A syntax error is an {@link InputError} naming where: the JSON path of the
   * value being read, with the line and column, and what was expected there (never the input's
   * text: a line of a megabyte-long vector would be the whole message).
   */
  static parse(text: string): JsonNode {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw jsonSyntaxError(text);
    }
    return new JsonNode(value, "$");
  }

  private fail(code: "bad-type" | "bad-value" | "missing-field" | "bad-hex", reason: string): never {
    throw new InputError(code, reason, { path: this.path });
  }

  /** The value as an object; an error when it is anything else. */
  object(): Record<string, unknown> {
    const v = this.value;
    if (typeof v !== "object" || v === null || Array.isArray(v)) this.fail("bad-type", `expected an object, found ${describe(v)}`);
    return v as Record<string, unknown>;
  }

  /** Rejects keys other than `allowed` (catches misspelt fields). */
  onlyKeys(allowed: readonly string[]): this {
    for (const k of Object.keys(this.object())) {
      if (!allowed.includes(k)) {
        throw new InputError("bad-value", `unknown field ${JSON.stringify(k)} (expected one of: ${allowed.join(", ")})`, { path: memberPath(this.path, k) });
      }
    }
    return this;
  }

  /** A required field. */
  get(key: string): JsonNode {
    const obj = this.object();
    if (!(key in obj)) throw new InputError("missing-field", `missing required field "${key}"`, { path: `${this.path}.${key}` });
    return new JsonNode(obj[key], `${this.path}.${key}`);
  }

  /** An optional field; undefined when absent. */
  opt(key: string): JsonNode | undefined {
    const obj = this.object();
    return key in obj && obj[key] !== undefined ? new JsonNode(obj[key], `${this.path}.${key}`) : undefined;
  }

  /** The value as an array of nodes. */
  array(): JsonNode[] {
    if (!Array.isArray(this.value)) this.fail("bad-type", `expected an array, found ${describe(this.value)}`);
    return (this.value as unknown[]).map((v, i) => new JsonNode(v, `${this.path}[${i}]`));
  }

  /** The entries of an object as nodes. */
  entries(): [string, JsonNode][] {
    return Object.entries(this.object()).map(([k, v]) => [k, new JsonNode(v, memberPath(this.path, k))]);
  }

  /** The value as a string. */
  string(): string {
    if (typeof this.value !== "string") this.fail("bad-type", `expected a string, found ${describe(this.value)}`);
    return this.value as string;
  }

  /** The value as a whole number in [min, max]. */
  integer(min = 0, max = Number.MAX_SAFE_INTEGER): number {
    const v = this.value;
    if (typeof v !== "number" || !Number.isInteger(v)) this.fail("bad-type", `expected a whole number, found ${describe(v)}`);
    const n = v as number;
    if (n < min || n > max) this.fail("bad-value", `${n} is outside ${min}..${max}`);
    return n;
  }

  /** The value as a boolean. */
  boolean(): boolean {
    if (typeof this.value !== "boolean") this.fail("bad-type", `expected true or false, found ${describe(this.value)}`);
    return this.value as boolean;
  }

  /** A `0x`-prefixed hex string as a bigint that fits in `bits` bits. */
  hex(bits: number): bigint {
    const s = this.string();
    if (!/^0x[0-9a-fA-F]+$/.test(s)) this.fail("bad-hex", `"${s}" is not a 0x-prefixed hex number`);
    const v = BigInt(s);
    if (v >> BigInt(bits) !== 0n) this.fail("bad-value", `${s} does not fit in ${bits} bits`);
    return v;
  }

  /** A string of hex byte pairs as bytes. */
  hexBytes(): Uint8Array {
    const s = this.string();
    if (s.length % 2 !== 0) this.fail("bad-hex", `byte string has an odd number of hex digits (${s.length})`);
    const out = new Uint8Array(s.length / 2);
    for (let i = 0; i < out.length; i++) {
      const hi = hexDigit(s.charCodeAt(2 * i));
      const lo = hexDigit(s.charCodeAt(2 * i + 1));
      if (hi < 0 || lo < 0) this.fail("bad-hex", `byte string has a non-hex character at index ${hi < 0 ? 2 * i : 2 * i + 1}`);
      out[i] = (hi << 4) | lo;
    }
    return out;
  }

  /** A base64 string as bytes. */
  base64Bytes(): Uint8Array {
    const s = this.string();
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(s) || s.length % 4 !== 0) this.fail("bad-value", "not a valid base64 string");
    const bin = atob(s);
    const out = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
    return out;
  }
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

function describe(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  if (typeof v === "string") return `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + "…" : v)}`;
  return typeof v === "object" ? "an object" : `${typeof v} ${String(v)}`;
}

/** The character codes of the two lower-case hex digits of each byte value, high digit in the high byte. */
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, b) => {
  const digit = (d: number): number => (d < 10 ? 48 + d : 87 + d);
  return (digit(b >> 4) << 8) | digit(b & 15);
});

const latin1 = new TextDecoder("latin1");

/**
 * Bytes as a lower-case hex string. The digits are laid out as character codes and decoded once,
 * so that a stack of megabytes becomes one flat string rather than a chain of millions of pieces.
 */
export function bytesToHex(bytes: Uint8Array): string {
  const codes = new Uint8Array(bytes.length * 2);
  for (let i = 0; i < bytes.length; i++) {
    const pair = HEX_PAIRS[bytes[i]!]!;
    codes[2 * i] = pair >> 8;
    codes[2 * i + 1] = pair & 0xff;
  }
  return latin1.decode(codes);
}

/** One open container while JSON text is scanned for its first syntax error. */
interface OpenContainer {
  kind: "object" | "array";
  /** The member being read (objects) or the element's index (arrays). */
  key: string | undefined;
  index: number;
}

/** The JSON path of the value being read inside `open` (JsonNode's spelling), its middle left out when deep. */
function openPath(open: readonly OpenContainer[]): string {
  const part = (c: OpenContainer): string => (c.kind === "array" ? `[${c.index}]` : c.key === undefined ? "" : `.${c.key.length > 40 ? `${c.key.slice(0, 40)}…` : c.key}`);
  if (open.length <= 16) return `$${open.map(part).join("")}`;
  return `$${open.slice(0, 4).map(part).join("")}…(${open.length - 10} levels)…${open.slice(-6).map(part).join("")}`;
}

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING_BODY = /(?:[^"\\\u0000-\u001f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*/y;

/**
 * The error for JSON text that `JSON.parse` rejected: scans it (RFC 8259's grammar, with an
 * explicit stack, so any nesting depth is fine) to the first place it breaks and says, in one
 * line, the JSON path being read, the line and column, and what was expected.
 */
export function jsonSyntaxError(text: string): InputError {
  const open: OpenContainer[] = [];
  let i = 0;
  const n = text.length;
  const ws = (): void => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
  };
  const fail = (expected: string): InputError => {
    let line = 1;
    let lineStart = 0;
    for (let k = text.indexOf("\n"); k >= 0 && k < i; k = text.indexOf("\n", k + 1)) {
      line++;
      lineStart = k + 1;
    }
    const found = i >= n ? "the end of the input" : describeChar(text.charCodeAt(i));
    return new InputError("bad-json", `not valid JSON: line ${line}, column ${i - lineStart + 1}: expected ${expected}, found ${found}`, { path: openPath(open) });
  };
  /** Reads a string at i (the opening quote); returns its text, or undefined after an error is due. */
  const string = (): string | undefined => {
    const start = i + 1;
    STRING_BODY.lastIndex = start;
    STRING_BODY.exec(text);
    const end = STRING_BODY.lastIndex;
    if (end >= n || text.charCodeAt(end) !== 0x22) {
      i = end;
      return undefined;
    }
    i = end + 1;
    return text.slice(start, end);
  };
  for (;;) {
    // A value.
    ws();
    const c = text.charCodeAt(i);
    let done = true;
    if (c === 0x7b || c === 0x5b) {
      i++;
      ws();
      if (c === 0x7b) {
        open.push({ kind: "object", key: undefined, index: 0 });
        if (text.charCodeAt(i) === 0x7d) i++;
        else {
          if (text.charCodeAt(i) !== 0x22) throw fail("a member name in double quotes or \"}\"");
          const key = string();
          if (key === undefined) throw fail("a closing quote (a control character or a bad escape ends the string)");
          open.at(-1)!.key = key;
          ws();
          if (text.charCodeAt(i) !== 0x3a) throw fail(`":" after the member name`);
          i++;
          done = false;
        }
      } else {
        open.push({ kind: "array", key: undefined, index: 0 });
        if (text.charCodeAt(i) === 0x5d) i++;
        else done = false;
      }
      if (done) open.pop();
      else continue;
    } else if (c === 0x22) {
      if (string() === undefined) throw fail("a closing quote (a control character or a bad escape ends the string)");
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      NUMBER.lastIndex = i;
      if (NUMBER.exec(text) === null) throw fail("a number");
      i = NUMBER.lastIndex;
    } else if (text.startsWith("true", i)) i += 4;
    else if (text.startsWith("false", i)) i += 5;
    else if (text.startsWith("null", i)) i += 4;
    else throw fail("a value");
    // After a value: the container goes on or closes.
    for (;;) {
      ws();
      const top = open.at(-1);
      if (top === undefined) {
        if (i < n) throw fail("the end of the input after the JSON value");
        return new InputError("bad-json", "not valid JSON (the engine rejected it where this reader's scan finds no fault)", { path: "$" });
      }
      const d = text.charCodeAt(i);
      if (top.kind === "object") {
        if (d === 0x7d) {
          i++;
          open.pop();
          continue;
        }
        if (d !== 0x2c) throw fail(`"," or "}" after the member's value`);
        i++;
        ws();
        if (text.charCodeAt(i) !== 0x22) throw fail("a member name in double quotes");
        const key = string();
        if (key === undefined) throw fail("a closing quote (a control character or a bad escape ends the string)");
        top.key = key;
        ws();
        if (text.charCodeAt(i) !== 0x3a) throw fail(`":" after the member name`);
        i++;
        break;
      }
      if (d === 0x5d) {
        i++;
        open.pop();
        continue;
      }
      if (d !== 0x2c) throw fail(`"," or "]" after the element`);
      i++;
      top.index++;
      break;
    }
  }
}

function describeChar(c: number): string {
  if (c >= 0x21 && c <= 0x7e) return JSON.stringify(String.fromCharCode(c));
  return `character U+${c.toString(16).toUpperCase().padStart(4, "0")}`;
}
