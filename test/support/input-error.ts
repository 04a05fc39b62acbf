/** The InputError a bad-input test expects `fn` to throw (any other outcome fails the test). */
import { InputError } from "../../src/errors.js";

export function inputError(fn: () => unknown): InputError {
  try {
    fn();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error("expected an InputError, but nothing was thrown");
}
