/**
 * Breakpad STACK CFI records (minidump.md §7): an INIT row that gives a code range its initial
 * unwind rules, and the delta rows that change them further into the range. The rules stay the
 * text of the record (`.cfa: $esp 4 + .ra: .cfa 4 - ^`); the CFI evaluator compiles them.
 */

/** A `STACK CFI <address> <rules>` delta row. */
export interface BreakpadCfiDelta {
  address: number;
  rules: string;
}

/** A `STACK CFI INIT <address> <size> <rules>` range with the delta rows that follow it. */
export interface BreakpadStackCfi {
  address: number;
  size: number;
  /** The initial rules, e.g. `.cfa: $esp 4 + .ra: .cfa 4 - ^`. */
  init: string;
  /** Delta rows in file order. */
  deltas: BreakpadCfiDelta[];
}
