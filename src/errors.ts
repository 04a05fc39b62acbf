/**
 * The one error class every parser and loader throws. It names where the input went wrong:
 * a byte offset for binary formats, a JSON path for JSON, and the file when one is known.
 */

/** Machine-readable error codes; the message says the rest in words. */
export type InputErrorCode =
  | "truncated"
  | "bad-magic"
  | "bad-value"
  | "bad-json"
  | "missing-field"
  | "bad-type"
  | "bad-hex"
  | "unknown-machine"
  | "overlap"
  | "unsupported"
  | "io";

/** Where in the input an error was found. */
export interface InputLocation {
  /** Byte offset into a binary input. */
  offset?: number;
  /** JSON path such as `$.threads[0].context.eip`. */
  path?: string;
  /** The file the input came from, when it came from a file. */
  file?: string;
}

/** Marks InputErrors, so that one made by another copy of this module is still recognised. */
const INPUT_ERROR = Symbol.for("stackwalk-emu.InputError");

/** A bad input: carries a code and the location (byte offset or JSON path) where it went wrong. */
export class InputError extends Error {
  /**
   * `instanceof InputError` holds for an InputError from any copy of this module: the command
   * line's bundles each carry one, and an application may load the package twice.
   */
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && INPUT_ERROR in value;
  }


  readonly code: InputErrorCode;
  readonly offset: number | undefined;
  readonly path: string | undefined;
  file: string | undefined;
  /** The message without the location prefix. */
  readonly reason: string;

  constructor(code: InputErrorCode, reason: string, where: InputLocation = {}) {
    super(InputError.compose(reason, where));
    this.name = "InputError";
    Object.defineProperty(this, INPUT_ERROR, { value: true });
    this.code = code;
    this.reason = reason;
    this.offset = where.offset;
    this.path = where.path;
    this.file = where.file;
  }

  /** Returns the same error attributed to `file` (used by the edges that know file names). */
  inFile(file: string): InputError {
    const located: InputLocation = { file };
    if (this.offset !== undefined) located.offset = this.offset;
    if (this.path !== undefined) located.path = this.path;
    return new InputError(this.code, this.reason, located);
  }

  private static compose(reason: string, where: InputLocation): string {
    const parts: string[] = [];
    if (where.file !== undefined) parts.push(where.file);
    if (where.offset !== undefined) parts.push(`offset 0x${where.offset.toString(16)}`);
    if (where.path !== undefined) parts.push(where.path);
    return parts.length > 0 ? `${parts.join(": ")}: ${reason}` : reason;
  }
}

/** Runs `read`; an {@link InputError} it throws that names no file yet is thrown naming `file`, when one is given. */
export function readingFile<T>(file: string | undefined, read: () => T): T {
  try {
    return read();
  } catch (e) {
    if (e instanceof InputError && file !== undefined && e.file === undefined) throw e.inFile(file);
    throw e;
  }
}

/**
 * Runs `f` with errors made without a stack trace (V8's `Error.stackTraceLimit`; other engines
 * ignore it): for readers that keep many InputErrors as data, one per damaged entry.
 */
export function withoutStackTraces<T>(f: () => T): T {
  const errors = Error as { stackTraceLimit?: number };
  const limit = errors.stackTraceLimit;
  errors.stackTraceLimit = 0;
  try {
    return f();
  } finally {
    if (limit === undefined) delete errors.stackTraceLimit;
    else errors.stackTraceLimit = limit;
  }
}
