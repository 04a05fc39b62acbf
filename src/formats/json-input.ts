/**
 * Validating access to parsed JSON: every accessor knows its JSON path, and every failure is an
 * {@link InputError} naming that path (`$.context.eip`, `$.memory[2].base`).
 */
import { InputError } from "../errors.js";

/** A parsed JSON value with its JSON path: typed accessors whose errors are InputErrors naming the path. */
export class JsonNode {
  constructor(
    readonly value: unknown,
    readonly path: string,
  ) {}

  /** Parses JSON text; a syntax error is an {@link InputError} with the byte offset when the engine gives one. */
  static parse(text: string): JsonNode {
    try {
      return new JsonNode(JSON.parse(text), "$");
    } catch (e) {
      const message = e instanceof Error ? e.message : String(e);
      const at = /position (\d+)/.exec(message);
      const where: { offset?: number } = {};
      if (at !== null) where.offset = Number(at[1]);
      throw new InputError("bad-json", `not valid JSON: ${message}`, where);
    }
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
        throw new InputError("bad-value", `unknown field "${k}" (expected one of: ${allowed.join(", ")})`, { path: `${this.path}.${k}` });
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
    return Object.entries(this.object()).map(([k, v]) => [k, new JsonNode(v, `${this.path}.${k}`)]);
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
