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

/** What {@link StackCfiIndex.at} finds: an INIT record and the delta rows that apply. */
export interface StackCfiAt {
  /** The INIT record's address. */
  address: number;
  /** Its rules. */
  init: string;
  /** The rules of the delta rows from its address up to the address looked up, in address order. */
  deltas: readonly string[];
}

/**
 * A module's STACK CFI records looked up by address without reading them all: a `.sym` file's
 * index, or a list of records made ready for lookups.
 */
export interface StackCfiIndex {
  /** The number of INIT records. */
  readonly count: number;
  /**
   * The rules in effect at module-relative `rva`, as Breakpad's CFI map keeps the records: the
   * INIT record covering it (of ones that overlap, the one earlier in the file; empty ones never),
   * and the delta rows of the whole file from its address up to `rva`, one per address (the last
   * in the file); undefined when no INIT record covers `rva`.
   */
  at(rva: number): StackCfiAt | undefined;
}
