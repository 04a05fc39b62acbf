/** `stackwalk check <vector|dir>...`: walks each vector and compares the walk with its ground truth. */
import { InputError } from "../errors.js";
import { replaySweep } from "../formats/sweep.js";
import type { Vector } from "../formats/vector.js";
import { compareWithTruth, type TruthComparison } from "../walk/compare.js";
import { walkThread, type WalkOptions } from "../walk/walk.js";
import { attachSymbolDirectories, EXIT, expandInputs, loadInput, pacVaBitsOption, parseOptions, UsageError, walkerOption, type Io } from "./common.js";
import { walkerLine } from "./help.js";

/** Usage text of `check`. */
export const CHECK_USAGE = `usage: stackwalk check <vector.json|dir>... [--walker W] [--symbols DIR]... [--pac-va-bits N] [--json]

Walks each vector (directories are searched for .json files) and compares the walk with the
vector's ground truth: exact when every frame's AddrPC and AddrStack (and AddrBStore on ia64)
equal the truth, frame for frame, with no extra frames. A sweep is checked snapshot by snapshot.
Prints one line per file and a closing "N passed, M failed" that counts snapshots.
Exit status: 0 all exact, 1 a walk differs, 2 an input could not be used.

${walkerLine("  --walker W     ", "the walker to check (see walk)")}
  --symbols DIR  PDBs and Breakpad .sym files for modules without unwind records (see walk)
  --pac-va-bits N  arm64: the virtual-address size pointer authentication codes are stripped at
                 (see walk; default 48)
  --json         print the results as one JSON document instead
`;

interface Result {
  file: string;
  kind: "vector" | "sweep";
  status: "exact" | "differs" | "error";
  /** Snapshots checked: 1 for a vector, one per snapshot for a sweep. */
  snapshots: number;
  exact: number;
  /** The first difference (with its sweep step), or the only comparison of a vector. */
  comparison?: TruthComparison;
  step?: number;
  error?: string;
}

/** Walks one snapshot and compares it with its truth. */
function checkOne(vector: Vector, options: WalkOptions, file: string, path: string): TruthComparison {
  const thread = vector.threads[0]!;
  if (thread.truth === undefined) throw new InputError("missing-field", "no ground truth to check against", { file, path });
  return compareWithTruth(vector.machine, walkThread(vector, thread, options), thread.truth);
}

/** Runs `check`. */
export function checkCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    walker: { type: "string" },
    json: { type: "boolean" },
    symbols: { type: "string", multiple: true },
    "pac-va-bits": { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(CHECK_USAGE);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new UsageError("check needs at least one vector or directory");
  const walker = walkerOption(values.walker);
  const pacVaBits = pacVaBitsOption(values["pac-va-bits"]);
  const options: WalkOptions = pacVaBits === undefined ? { walker } : { walker, pacVaBits };
  const files = expandInputs(positionals);
  if (files.length === 0) throw new UsageError(`no .json vectors found under ${positionals.join(", ")}`);
  const results: Result[] = [];
  for (const file of files) {
    try {
      const input = loadInput(file);
      attachSymbolDirectories(input, file, values.symbols ?? [], io);
      if (input.kind === "dump") throw new InputError("missing-field", "a minidump has no ground truth to check against: walk it instead", { file });
      if (input.kind === "vector") {
        const comparison = checkOne(input.vector, options, file, "$.truth");
        results.push({ file, kind: "vector", status: comparison.exact ? "exact" : "differs", snapshots: 1, exact: comparison.exact ? 1 : 0, comparison });
      } else {
        const r: Result = { file, kind: "sweep", status: "exact", snapshots: 0, exact: 0 };
        let index = 0;
        for (const v of replaySweep(input.sweep)) {
          const comparison = checkOne(v, options, file, `$.snapshots[${index++}].truth`);
          r.snapshots++;
          if (comparison.exact) r.exact++;
          else if (r.comparison === undefined) {
            r.status = "differs";
            r.comparison = comparison;
            r.step = v.step;
          }
        }
        results.push(r);
      }
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      results.push({ file, kind: "vector", status: "error", snapshots: 1, exact: 0, error: e.message });
    }
  }
  const passed = results.reduce((n, r) => n + r.exact, 0);
  const failed = results.reduce((n, r) => n + r.snapshots, 0) - passed;
  // An input that cannot be checked is bad input: one line on stderr naming the file and the
  // place (the JSON document still lists it among its results).
  for (const r of results) if (r.status === "error") io.err(`stackwalk check: ${r.error}\n`);
  if (values.json) {
    io.out(JSON.stringify({ walker, passed, failed, results }, null, 2) + "\n");
  } else {
    for (const r of results) {
      const rate = `${r.exact}/${r.snapshots} snapshots exact`;
      const difference = r.comparison?.difference?.text;
      if (r.status === "error") continue;
      else if (r.kind === "vector") io.out(difference === undefined ? `ok    ${r.file}: exact, ${r.comparison!.walkedFrames} frames\n` : `FAIL  ${r.file}: ${difference}\n`);
      else io.out(difference === undefined ? `ok    ${r.file}: ${rate}\n` : `FAIL  ${r.file}: ${rate}; first difference at step ${r.step}: ${difference}\n`);
    }
    io.out(`${passed} passed, ${failed} failed\n`);
  }
  if (results.some((r) => r.status === "error")) return EXIT.badInput;
  return failed > 0 ? EXIT.difference : EXIT.ok;
}
