/** `stackwalk explain <input>`: every frame with the rule that found it and the memory it read, in plain words. */
import { InputError } from "../errors.js";
import type { Snapshot } from "../model/snapshot.js";
import type { ExplainedWalk } from "../analysis/explain-model.js";
import { EXPLAIN_FRAME_BUDGET } from "../analysis/explain-walk.js";
import { writeExplanation } from "../render/explain.js";
import { EXIT, frameBudgetOption, maxFramesOption, pacVaBitsOption, parseOptions, SYMBOL_OPTIONS, symbolSpec, threadOption, UsageError, walkerOption, workBudgetOption, type Io, type SymbolValues } from "./common.js";
import { loadSnapshot } from "./load.js";
import { walkerLine } from "./help.js";
import { explainLoaded } from "../analysis/walk-document.js";

/** The help of `--frame-budget` for `explain`, `render` and `view` (whose default is not `walk`'s), its text from column `at`. */
export function explainBudgetHelp(at: number): string {
  const pad = " ".repeat(at);
  return `  ${"--frame-budget N".padEnd(at - 2)}the most frames of the explained threads together
${pad}(default ${EXPLAIN_FRAME_BUDGET}); a walk that reaches it stops with frame-budget`;
}

/** Usage text of `explain`. */
export const EXPLAIN_USAGE = `usage: stackwalk explain <vector.json|sweep.json|dump.dmp> [--walker W] [--thread ID|all]
                        [--step N] [--symbols DIR]... [--images DIR]... [--max-frames N]
                        [--frame-budget N] [--work-budget N] [--pac-va-bits N]

Walks the stack and explains every frame: the rule that found it and the memory the rule read,
in plain words with addresses and values ("[EBP+4] = 0x00401040 → return address"), each
UNWIND_INFO operation undone, each FPO_DATA or FrameData record used, and where the
frame-pointer chain (what ETW and naive debuggers follow) would go wrong instead.

${walkerLine("  --walker W       ", "as for walk")}
  --thread ID|all  one thread, or all of them (default), the crashed thread first
  --step N         for a sweep: the snapshot taken at instruction count N
${explainBudgetHelp(19)}
  --symbols DIR, --images DIR, --max-frames N, --work-budget N, --pac-va-bits N: as for walk
`;

/** The options `explain` shares with `render` and `view`. */
export const EXPLAIN_OPTIONS = {
  walker: { type: "string" },
  thread: { type: "string" },
  step: { type: "string" },
  "max-frames": { type: "string" },
  "frame-budget": { type: "string" },
  "work-budget": { type: "string" },
  "pac-va-bits": { type: "string" },
  ...SYMBOL_OPTIONS,
  images: { type: "string", multiple: true },
  help: { type: "boolean", short: "h" },
} as const;

/** Parsed values of {@link EXPLAIN_OPTIONS}. */
export interface ExplainValues extends SymbolValues {
  walker?: string | undefined;
  thread?: string | undefined;
  step?: string | undefined;
  "max-frames"?: string | undefined;
  "frame-budget"?: string | undefined;
  "work-budget"?: string | undefined;
  "pac-va-bits"?: string | undefined;
  images?: string[] | undefined;
}

/**
 * Loads an input as `walk` does (vectors, sweeps with `--step`, minidumps with `--symbols` and
 * `--images`) and explains the chosen threads, the crashed thread first; `"first"` is the
 * crashed thread, else the first one. The explanations are made as they are read.
 */
export async function explainInput(file: string, values: ExplainValues, choice: number | "all" | "first", io: Io): Promise<{ snapshot: Snapshot; walks: Iterable<ExplainedWalk> }> {
  const maxFrames = maxFramesOption(values["max-frames"]);
  const frameBudget = frameBudgetOption(values["frame-budget"], EXPLAIN_FRAME_BUDGET);
  const workBudget = workBudgetOption(values["work-budget"]);
  const pacVaBits = pacVaBitsOption(values["pac-va-bits"]);
  const walker = walkerOption(values.walker);
  const { snapshot } = await loadSnapshot(file, { step: values.step, symbols: symbolSpec(values), images: values.images ?? [], walker: values.walker }, io);
  if (snapshot.threads.length === 0) throw new InputError("bad-value", "the input has no threads to walk", { file });
  const thread = choice === "first" ? (snapshot.threads.find((t) => t.crashed) ?? snapshot.threads[0]!).id : choice;
  if (thread !== "all" && !snapshot.threads.some((t) => t.id === thread)) {
    throw new UsageError(`no thread with id ${thread} (threads: ${snapshot.threads.map((t) => t.id).join(", ")})`);
  }
  const walks = explainLoaded({ file, snapshot }, { walker, thread, maxFrames, pacVaBits, frameBudget, workBudget });
  return { snapshot, walks };
}

/** Runs `explain`. */
export async function explainCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(argv, EXPLAIN_OPTIONS);
  if (values.help) {
    io.out(EXPLAIN_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`explain takes exactly one input file (got ${positionals.length})`);
  const { walks } = await explainInput(positionals[0]!, values, threadOption(values.thread, true) ?? "all", io);
  // Each thread's explanation is written as it is made, the next one walked after.
  let first = true;
  for (const walk of walks) {
    if (!first) io.out("\n");
    writeExplanation(walk, io.out);
    first = false;
  }
  return EXIT.ok;
}
