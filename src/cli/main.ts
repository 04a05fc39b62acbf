/** The `stackwalk` command line: dispatches to one file per command and maps errors to exit codes. */
import { InputError } from "../errors.js";
import { CHECK_USAGE, checkCommand } from "./check.js";
import { COMPARE_USAGE, compareCommand } from "./compare.js";
import { CROSSCHECK_USAGE, crossCheckCommand } from "./crosscheck.js";
import { EMULATE_USAGE, emulateCommand } from "./emulate.js";
import { EXIT, UsageError, type Io } from "./common.js";
import { ETW_USAGE, etwCommand } from "./etw.js";
import { EXPLAIN_USAGE, explainCommand } from "./explain.js";
import { RENDER_USAGE, renderCommand } from "./render.js";
import { ROLES_USAGE, rolesCommand } from "./roles.js";
import { VIEW_USAGE, viewCommand } from "./view.js";
import { WALK_USAGE, walkCommand } from "./walk.js";

const COMMANDS: Record<string, { run: (argv: string[], io: Io) => number | Promise<number>; usage: string }> = {
  walk: { run: walkCommand, usage: WALK_USAGE },
  check: { run: checkCommand, usage: CHECK_USAGE },
  roles: { run: rolesCommand, usage: ROLES_USAGE },
  emulate: { run: emulateCommand, usage: EMULATE_USAGE },
  crosscheck: { run: crossCheckCommand, usage: CROSSCHECK_USAGE },
  etw: { run: etwCommand, usage: ETW_USAGE },
  explain: { run: explainCommand, usage: EXPLAIN_USAGE },
  render: { run: renderCommand, usage: RENDER_USAGE },
  view: { run: viewCommand, usage: VIEW_USAGE },
  compare: { run: compareCommand, usage: COMPARE_USAGE },
};

/** Top-level usage text. */
export const USAGE = `usage: stackwalk <command> [options]

Reconstructs call stacks from memory snapshots the way dbghelp's StackWalk64 does.

commands:
  walk <vector.json>        walk the stack(s) of a snapshot and print the frames
  check <vector|dir>...     walk vectors and compare each walk with its ground truth
  roles                     which register plays each STACKFRAME role, per machine
  explain <input>           every frame with the rule that found it and the memory it read
  render <input> -o F.svg   the stack diagram of one thread: frames as bands, return and back-chain arrows
  view <input>              one self-contained HTML page stepping through the walk frame by frame
  compare <chain.json>      one call chain on x86 (EBP and FPO), x64 and IA-64, side by side
  emulate <program.exe>     run a program on the emulated CPU and write vectors or a sweep
  crosscheck <vector|dmp>   align a walk with the ETW stacks recorded for it and explain each difference
  etw decode <file>         decode ETW extended data items (either form) or an .etl trace

Run "stackwalk <command> --help" for a command's options.
Exit status: 0 success, 1 a check found a difference, 2 bad input or usage.
`;

const stdio: Io = {
  out: (text) => stdout().write(text),
  err: (text) => process.stderr.write(text),
};

let stdoutReady = false;

/**
 * Standard output, made blocking when it is a pipe (Node leaves pipes non-blocking and queues
 * what the reader has not taken yet): a long report is written piece by piece as it is made, and
 * a slow reader must hold the writer back rather than let the queue fill memory.
 */
function stdout(): NodeJS.WriteStream {
  if (!stdoutReady) {
    stdoutReady = true;
    (process.stdout as { _handle?: { setBlocking?: (blocking: boolean) => unknown } })._handle?.setBlocking?.(true);
  }
  return process.stdout;
}

/** Runs the CLI with `argv` (without the node and script names); returns the exit code. */
export async function run(argv: string[], io: Io = stdio): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.out(USAGE);
    return name === undefined ? EXIT.badInput : EXIT.ok;
  }
  const command = COMMANDS[name];
  if (command === undefined) {
    io.err(`stackwalk: unknown command "${name}" (commands: ${Object.keys(COMMANDS).join(", ")})\n`);
    return EXIT.badInput;
  }
  try {
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`stackwalk ${name}: ${e.message}\n${command.usage.split("\n\n")[0]}\n`);
      return EXIT.badInput;
    }
    if (e instanceof InputError) {
      io.err(`stackwalk ${name}: ${e.message}\n`);
      return EXIT.badInput;
    }
    const message = e instanceof Error ? e.message : String(e);
    io.err(`stackwalk ${name}: internal error: ${message}\n`);
    if (process.env["STACKWALK_DEBUG"] !== undefined && e instanceof Error) io.err(`${e.stack}\n`);
    return 3;
  }
}
