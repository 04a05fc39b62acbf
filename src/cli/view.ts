/** `stackwalk view <input>`: one self-contained HTML page that steps through the walk frame by frame. */
import { renderHtml } from "../render/html.js";
import { EXIT, parseOptions, threadOption, UsageError, type Io } from "./common.js";
import { explainBudgetHelp, explainInput } from "./explain.js";
import { defaultOutput, VIEW_OPTIONS, writeOutput } from "./render.js";
import { walkerLine } from "./help.js";

/** Usage text of `view`. */
export const VIEW_USAGE = `usage: stackwalk view <vector.json|sweep.json|dump.dmp> [-o FILE.html] [--walker W] [--thread ID|all]
                     [--step N] [--symbols DIR]... [--images DIR]... [--max-frames N]
                     [--frame-budget N] [--work-budget N] [--pac-va-bits N]

Writes one self-contained HTML page (inline CSS and script, no network) that steps through the
walk frame by frame: the stack diagram of "stackwalk render" beside each frame's explanation
(the rule that found it, the memory it read, where the frame-pointer chain goes wrong). Next and
Previous, or the arrow keys, move the highlight from frame to frame; several threads get a
picker, the crashed thread first. Open the page in any browser.

  -o, --output FILE  where to write the page (default: the input's base name + .html in the
                     current directory; "-" writes it to standard output)
${walkerLine("  --walker W         ", "as for walk")}
  --thread ID|all    one thread, or all of them (default)
  --step N           for a sweep: the snapshot taken at instruction count N
${explainBudgetHelp(21)}
  --symbols DIR, --images DIR, --max-frames N, --work-budget N, --pac-va-bits N: as for walk
`;

/** Runs `view`. */
export async function viewCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(argv, VIEW_OPTIONS);
  if (values.help) {
    io.out(VIEW_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`view takes exactly one input file (got ${positionals.length})`);
  const file = positionals[0]!;
  if (values.output === "") throw new UsageError("-o takes a file name");
  const walks = [...(await explainInput(file, values, threadOption(values.thread, true) ?? "all", io)).walks];
  const frames = walks.reduce((n, w) => n + w.frames.length, 0);
  const what = `${walks.length} thread${walks.length === 1 ? "" : "s"}, ${frames} frame${frames === 1 ? "" : "s"}`;
  writeOutput(values.output ?? defaultOutput(file, ".html"), renderHtml(walks), io, what);
  return EXIT.ok;
}
