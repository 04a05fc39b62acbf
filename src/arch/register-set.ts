/**
 * The register set a caller frame starts from when its callee's lacks some registers (see
 * `Registers` in model/snapshot.ts: a walker makes them with constructors).
 */
import type { Registers } from "../model/snapshot.js";

/** A register set whose names are not known in advance (made by a constructor all the same: see `Registers`). */
class RegisterSet {
  [name: string]: bigint;
}

/**
 * A caller's starting register set when `from` lacks some of `names` (the usual, complete case
 * has a class of its own per machine): `first` set to 0, to be set next and kept first in this
 * order, then each register of `names` that `from` has.
 */
export function registersFrom(from: Registers, names: readonly string[], first: readonly string[] = []): Registers {
  const out: Registers = new RegisterSet();
  for (const name of first) out[name] = 0n;
  for (const name of names) {
    const v = from[name];
    if (v !== undefined) out[name] = v;
  }
  return out;
}
