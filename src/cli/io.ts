/** What the dispatcher and every command share: exit codes, usage errors, output, option parsing. */
import { parseArgs, type ParseArgsConfig } from "node:util";

/**
 * Exit codes of the contract: 0 success, 1 a check found a difference, 2 bad input or usage,
 * 3 an internal error (a bug: the message says so, and STACKWALK_DEBUG=1 prints the stack).
 */
export const EXIT = { ok: 0, difference: 1, badInput: 2, internal: 3 } as const;

/** Marks UsageErrors (see InputError: the dispatcher and each command bundle have their own copy). */
const USAGE_ERROR = Symbol.for("stackwalk-emu.UsageError");

/** A usage mistake (exit 2), printed as one line. */
export class UsageError extends Error {
  static override [Symbol.hasInstance](value: unknown): boolean {
    return typeof value === "object" && value !== null && USAGE_ERROR in value;
  }

  constructor(message: string) {
    super(message);
    this.name = "UsageError";
    Object.defineProperty(this, USAGE_ERROR, { value: true });
  }
}

/** Where a command writes; tests pass collectors. */
export interface Io {
  out(text: string): void;
  err(text: string): void;
  /** Standard error is a terminal (a progress bar may be drawn on it). */
  errIsTty?: boolean;
}

type Options = NonNullable<ParseArgsConfig["options"]>;

/**
 * Checks `argv` against `options` and says what is wrong in one line: an unknown option, a
 * missing value, a value given to a flag. A value that starts with "-" followed by a digit
 * (`--max-frames -1`) is taken as the option's value, so the option's own check can say why it
 * is wrong. Returns the arguments with such values joined (`--max-frames=-1`).
 */
function checkArguments(argv: readonly string[], options: Options): string[] {
  const out: string[] = [];
  const byShort = new Map<string, string>();
  for (const [name, o] of Object.entries(options)) if (o.short !== undefined) byShort.set(o.short, name);
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (arg.length < 2 || !arg.startsWith("-")) {
      out.push(arg);
      continue;
    }
    let name: string;
    let spelled: string;
    let inline: string | undefined;
    if (arg.startsWith("--")) {
      const eq = arg.indexOf("=");
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      spelled = `--${name}`;
      if (eq >= 0) inline = arg.slice(eq + 1);
      if (options[name] === undefined) throw new UsageError(`unknown option ${JSON.stringify(spelled)}`);
    } else {
      const long = byShort.get(arg[1]!);
      spelled = arg.slice(0, 2);
      if (long === undefined) throw new UsageError(`unknown option ${JSON.stringify(spelled)}`);
      name = long;
      if (arg.length > 2) inline = arg.slice(2);
    }
    const option = options[name]!;
    if (option.type === "boolean") {
      if (inline !== undefined) throw new UsageError(`${spelled} takes no value`);
      out.push(`--${name}`);
      continue;
    }
    if (inline === undefined) {
      const next = argv[i + 1];
      if (next === undefined || (next.length > 1 && next.startsWith("-") && !/^-\d/.test(next))) throw new UsageError(`${spelled} needs a value`);
      inline = next;
      i++;
    }
    out.push(`--${name}=${inline}`);
  }
  return out;
}

/** Parses options strictly; unknown options, missing values and values given to flags are one-line usage errors. */
export function parseOptions<T extends Options>(argv: string[], options: T): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>> {
  const args = checkArguments(argv, options);
  try {
    return parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError(e instanceof Error ? e.message.split("\n")[0]! : String(e));
  }
}
