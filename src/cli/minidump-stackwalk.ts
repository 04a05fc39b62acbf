/**
 * `stackwalk minidump-stackwalk [-m] [-s] [-c] [-b] <dump> [symbol-path ...]`: Breakpad's
 * `minidump_stackwalk` command line and output (minidump.md §6), so a script can switch by
 * changing the program name. Options as Breakpad's getopt takes them ("bchms": joined, like
 * `-cs`, and anywhere among the arguments); each symbol path is a directory or store as
 * Breakpad takes it, or anything `walk --symbols` takes (`srv*CACHE*URL`, …).
 */
import { breakpadRefusal, breakpadReport } from "../analysis/breakpad-report.js";
import { writeBreakpad, writeBreakpadMachineReadable } from "../render/breakpad.js";
import { breakpadStackContents, writeBreakpadBrief } from "../render/breakpad-stack.js";
import { EXIT, symbolSpec, UsageError, type Io } from "./common.js";
import { loadSnapshot } from "./load.js";

/** Usage text of `minidump-stackwalk` (Breakpad's, with what this one adds). */
export const MINIDUMP_STACKWALK_USAGE = `usage: stackwalk minidump-stackwalk [options] <minidump-file> [symbol-path ...]

Output a stack trace for the provided minidump, as Breakpad's minidump_stackwalk does.

Options:

  -m         Output in machine-readable format
  -s         Output stack contents
  -c         Output thread that causes crash or dump only
  -b         Brief of the thread that causes crash or dump

A symbol path is a directory or symbol store (<path>/<debug file>/<debug id>/<name>.sym, PDBs
too), or a symbol path as "stackwalk walk --symbols" takes it (srv*CACHE*URL, cache*DIR, ;
lists). _NT_SYMBOL_PATH is read when it is set.
`;

/** Runs `minidump-stackwalk`. */
export async function minidumpStackwalkCommand(argv: string[], io: Io): Promise<number> {
  const flags = new Set<string>();
  const positionals: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === "--help") flags.add("h");
    else if (arg.length > 1 && arg.startsWith("-")) {
      for (const c of arg.slice(1)) {
        if (!"bchms".includes(c)) throw new UsageError(`unknown option "-${c}" (options: -m, -s, -c, -b)`);
        flags.add(c);
      }
    } else positionals.push(arg);
  }
  if (flags.has("h")) {
    io.out(MINIDUMP_STACKWALK_USAGE);
    return EXIT.ok;
  }
  const [file, ...paths] = positionals;
  if (file === undefined) throw new UsageError("minidump-stackwalk takes a minidump file, then symbol paths");
  const symbols = symbolSpec({ symbols: paths });
  const { snapshot, dump } = await loadSnapshot(file, { symbols, images: [], format: "breakpad" }, io);
  const refusal = breakpadRefusal(snapshot.machine, file);
  if (refusal !== undefined) throw new UsageError(refusal);
  // Each thread is walked as it is written and not kept, except for -s, which reads a frame's
  // caller, and -c, whose module list still names the modules of every thread without symbols.
  const report = breakpadReport(dump!, snapshot, { symbolPathGiven: symbols.given, keepWalks: flags.has("s") || flags.has("c") });
  if (flags.has("m")) writeBreakpadMachineReadable(report, io.out);
  else if (flags.has("b")) writeBreakpadBrief(report, io.out);
  else {
    writeBreakpad(report, io.out, {
      requestingThreadOnly: flags.has("c"),
      ...(flags.has("s") ? { afterFrame: breakpadStackContents(report, snapshot) } : {}),
    });
  }
  return EXIT.ok;
}
