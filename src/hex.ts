/**
 * Hexadecimal text, the one way every layer writes a number for people: `0x`-prefixed lower case
 * (as dbghelp, WinDbg and Breakpad print addresses), optionally zero-padded to a width. The
 * lowest layer, beside errors.ts: anything may import it.
 */

/** `0x` and the lower-case hex digits of `v` (a negative number as `-0x…`). */
export function hex(v: number | bigint): string {
  return v < 0 ? "-0x" + (-v).toString(16) : "0x" + v.toString(16);
}

/** `0x` and the lower-case hex digits of `v`, zero-padded to `digits`. */
export function hexPadded(v: number | bigint, digits: number): string {
  return "0x" + v.toString(16).padStart(digits, "0");
}

/** The upper-case hex digits of `v` without a prefix, zero-padded to `digits` (GUIDs, debug ids). */
export function hexUpper(v: number | bigint, digits: number): string {
  return v.toString(16).toUpperCase().padStart(digits, "0");
}

/** The lower-case hex digits of `v` without a prefix, zero-padded to `digits` (Breakpad's `%0*x` columns). */
export function hexDigits(v: number | bigint, digits = 0): string {
  return v.toString(16).padStart(digits, "0");
}
