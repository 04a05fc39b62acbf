/** `stackwalk check <vector|dir>...`: walks each vector and compares the walk with its ground truth. */
import { InputError } from "../errors.js";
import { compareWithTruth, type TruthComparison } from "../walk/compare.js";
import { walkThread } from "../walk/walk.js";
import { EXIT, expandInputs, loadInput, parseOptions, UsageError, walkerOption, type Io } from "./common.js";

/** Usage text of `check`. */
export const CHECK_USAGE = `usage: stackwalk check <vector.json|dir>... [--walker W] [--json]

Walks each vector (directories are searched for .json files) and compares the walk with the
vector's ground truth: exact when every frame's AddrPC and AddrStack (and AddrBStore on ia64)
equal the truth, frame for frame, with no extra frames. Prints one line per vector and a closing
"N passed, M failed". Exit status: 0 all exact, 1 a walk differs, 2 an input could not be used.

  --walker W   auto (default), frame-pointer, ...: the walker to check
  --json       print the results as one JSON document instead
`;

interface Result {
  file: string;
  status: "exact" | "differs" | "error";
  comparison?: TruthComparison;
  error?: string;
}

/** Runs `check`. */
export function checkCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    walker: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(CHECK_USAGE);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new UsageError("check needs at least one vector or directory");
  const walker = walkerOption(values.walker);
  const files = expandInputs(positionals);
  if (files.length === 0) throw new UsageError(`no .json vectors found under ${positionals.join(", ")}`);
  const results: Result[] = [];
  for (const file of files) {
    try {
      const vector = loadInput(file);
      const thread = vector.threads[0]!;
      if (thread.truth === undefined) throw new InputError("missing-field", "the vector has no ground truth to check against", { file, path: "$.truth" });
      const comparison = compareWithTruth(vector.machine, walkThread(vector, thread, { walker }), thread.truth);
      results.push({ file, status: comparison.exact ? "exact" : "differs", comparison });
    } catch (e) {
      if (!(e instanceof InputError)) throw e;
      results.push({ file, status: "error", error: e.message });
    }
  }
  const passed = results.filter((r) => r.status === "exact").length;
  const failed = results.length - passed;
  if (values.json) {
    io.out(JSON.stringify({ walker, passed, failed, results }, null, 2) + "\n");
  } else {
    for (const r of results) {
      if (r.status === "exact") io.out(`ok    ${r.file}: exact, ${r.comparison!.walkedFrames} frames\n`);
      else if (r.status === "differs") io.out(`FAIL  ${r.file}: ${r.comparison!.difference!.text}\n`);
      else io.out(`ERROR ${r.error}\n`);
    }
    io.out(`${passed} passed, ${failed} failed\n`);
  }
  if (results.some((r) => r.status === "error")) return EXIT.badInput;
  return failed > 0 ? EXIT.difference : EXIT.ok;
}
