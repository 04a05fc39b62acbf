/**
 * The `stackwalk` command line: loads the one command it runs (so `walk` never loads the
 * emulator or a native module) and maps errors to exit codes.
 */
import { readFileSync, writeSync } from "node:fs";
import { createRequire } from "node:module";
import { InputError } from "../errors.js";
import { MACHINES } from "../model/machine.js";
import { EXIT, UsageError, type Io } from "./io.js";

/** A command: its usage text and how to run it. */
interface Command {
  usage: string;
  run(argv: string[], io: Io): number | Promise<number>;
}

/** The packages the emulator needs: optional dependencies, which a plain walk never loads. */
export const EMULATOR_PACKAGES = ["koffi", "@alexaltea/capstone-js", "@alexaltea/keystone-js"] as const;

/** Each command, loaded when it runs; `needs` lists the optional packages it cannot run without. */
const COMMANDS: Record<string, { load: () => Promise<Command>; needs?: readonly string[] }> = {
  walk: { load: async () => import("./walk.js").then((m) => ({ usage: m.WALK_USAGE, run: m.walkCommand })) },
  "minidump-stackwalk": { load: async () => import("./minidump-stackwalk.js").then((m) => ({ usage: m.MINIDUMP_STACKWALK_USAGE, run: m.minidumpStackwalkCommand })) },
  check: { load: async () => import("./check.js").then((m) => ({ usage: m.CHECK_USAGE, run: m.checkCommand })) },
  roles: { load: async () => import("./roles.js").then((m) => ({ usage: m.ROLES_USAGE, run: m.rolesCommand })) },
  emulate: { load: async () => import("./emulate.js").then((m) => ({ usage: m.EMULATE_USAGE, run: m.emulateCommand })), needs: EMULATOR_PACKAGES },
  crosscheck: { load: async () => import("./crosscheck.js").then((m) => ({ usage: m.CROSSCHECK_USAGE, run: m.crossCheckCommand })) },
  etw: { load: async () => import("./etw.js").then((m) => ({ usage: m.ETW_USAGE, run: m.etwCommand })) },
  explain: { load: async () => import("./explain.js").then((m) => ({ usage: m.EXPLAIN_USAGE, run: m.explainCommand })) },
  render: { load: async () => import("./render.js").then((m) => ({ usage: m.RENDER_USAGE, run: m.renderCommand })) },
  view: { load: async () => import("./view.js").then((m) => ({ usage: m.VIEW_USAGE, run: m.viewCommand })) },
  compare: { load: async () => import("./compare.js").then((m) => ({ usage: m.COMPARE_USAGE, run: m.compareCommand })), needs: EMULATOR_PACKAGES },
};

/** The commands `run` knows (the top-level usage lists each). */
export const COMMAND_NAMES: readonly string[] = Object.keys(COMMANDS);

/** Top-level usage text. */
export const USAGE = `usage: stackwalk <command> [options]

Reconstructs call stacks from memory snapshots the way dbghelp's StackWalk64 does.

commands:
  walk <input>...           walk the stack(s) of snapshots (files or folders) and print the frames
  minidump-stackwalk <dmp>  Breakpad's minidump_stackwalk: its options (-m -s -c -b) and output
  check <vector|dir>...     walk vectors and compare each walk with its ground truth
  roles                     which register plays each STACKFRAME role, per machine
  explain <input>           every frame with the rule that found it and the memory it read
  render <input> -o F.svg   the stack diagram of one thread: frames as bands, return and back-chain arrows
  view <input>              one self-contained HTML page stepping through the walk frame by frame
  compare <chain.json>      one call chain on every machine (${MACHINES.join(", ")}), side by side
  emulate <program.exe>     run a program on the emulated CPU and write vectors or a sweep
  crosscheck <vector|dmp>   align a walk with the ETW stacks recorded for it and explain each difference
  etw decode <file>         decode ETW extended data items (either form) or an .etl trace

Run "stackwalk <command> --help" for a command's options, "stackwalk --version" for the version.
Exit status: 0 success, 1 a check found a difference, 2 bad input or usage, 3 an internal error.
`;

const stdio: Io = {
  out: (text) => writeOut(text),
  err: (text) => process.stderr.write(text),
  errIsTty: process.stderr.isTTY === true,
};

/** Standard output was closed by its reader (`stackwalk walk … | head`): the command ends quietly. */
class OutputClosed extends Error {}

let stdoutReady = false;

/**
 * Writes to standard output synchronously, made blocking when it is a pipe (Node leaves pipes
 * non-blocking and queues what the reader has not taken yet): a long report is written piece by
 * piece as it is made, a slow reader holds the writer back rather than let a queue fill memory,
 * and a reader that goes away (EPIPE) is noticed at the write, which ends the command.
 */
function writeOut(text: string): void {
  if (!stdoutReady) {
    stdoutReady = true;
    (process.stdout as { _handle?: { setBlocking?: (blocking: boolean) => unknown } })._handle?.setBlocking?.(true);
  }
  let bytes = Buffer.from(text);
  while (bytes.length > 0) {
    try {
      bytes = bytes.subarray(writeSync(1, bytes));
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === "EPIPE") throw new OutputClosed("standard output was closed");
      if (code !== "EAGAIN") throw e;
    }
  }
}

/** The package's version, from the package.json above this file (src/cli, or dist/bin in the built bin). */
export function packageVersion(): string {
  for (const up of ["../../package.json", "../../../package.json"]) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(up, import.meta.url), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "stackwalk-emu" && pkg.version !== undefined) return pkg.version;
    } catch {
      // not this level
    }
  }
  return "unknown";
}

/** The packages of `names` that cannot be found from this file. */
export function missingPackages(names: readonly string[]): string[] {
  const require = createRequire(import.meta.url);
  return names.filter((name) => {
    try {
      require.resolve(name);
      return false;
    } catch {
      return true;
    }
  });
}

/** Runs the CLI with `argv` (without the node and script names); returns the exit code. */
export async function run(argv: string[], io: Io = stdio): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.out(USAGE);
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  if (name === "--version" || name === "-V") {
    io.out(`stackwalk-emu ${packageVersion()}\n`);
    return EXIT.ok;
  }
  const entry = COMMANDS[name];
  if (entry === undefined) {
    io.err(`stackwalk: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(", ")})\n`);
    return EXIT.badInput;
  }
  const missing = missingPackages(entry.needs ?? []);
  if (missing.length > 0) {
    io.err(`stackwalk ${name}: needs the emulator's packages, which are not installed: npm install ${missing.join(" ")}\n`);
    return EXIT.badInput;
  }
  try {
    const command = await entry.load();
    return await command.run(rest, io);
  } catch (e) {
    // The reader of the output went away: nothing is wrong with the input or the command.
    if (e instanceof OutputClosed) return EXIT.ok;
    if (e instanceof UsageError) {
      io.err(`stackwalk ${name}: ${e.message}\n`);
      return EXIT.badInput;
    }
    if (e instanceof InputError) {
      io.err(`stackwalk ${name}: ${e.message}\n`);
      return EXIT.badInput;
    }
    const message = e instanceof Error ? e.message : String(e);
    io.err(`stackwalk ${name}: internal error (a bug; STACKWALK_DEBUG=1 prints where): ${message}\n`);
    if (process.env["STACKWALK_DEBUG"] !== undefined && e instanceof Error) io.err(`${e.stack}\n`);
    return EXIT.internal;
  }
}
