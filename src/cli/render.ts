/** `stackwalk render <input> -o FILE.svg`: the stack diagram of one thread's walk as an SVG picture. */
import { writeFileSync } from "node:fs";
import { basename, extname } from "node:path";
import { InputError } from "../errors.js";
import { renderSvg, SVG_MAX_FRAMES, SVG_MAX_ROWS } from "../render/svg.js";
import { EXIT, parseOptions, threadOption, UsageError, type Io } from "./common.js";
import { explainBudgetHelp, EXPLAIN_OPTIONS, explainInput } from "./explain.js";
import { ioReason } from "../node/file-source.js";
import { walkerLine } from "./help.js";

/** Usage text of `render`. */
export const RENDER_USAGE = `usage: stackwalk render <vector.json|sweep.json|dump.dmp> [-o FILE.svg] [--walker W] [--thread ID]
                       [--step N] [--symbols DIR]... [--images DIR]... [--max-frames N]
                       [--frame-budget N] [--work-budget N] [--pac-va-bits N]

Draws the stack of one thread as an SVG diagram: the memory stack as address-labelled rows
(lower addresses at the top, so frame 0 is at the top and its callers below), each frame's
words on a band of its own colour, return-address slots with an arrow to the frame each returns
into, saved frame pointers with back-chain arrows, and on IA-64 the backing store below it
with NaT collection words shaded and each frame's BSP marked; then the frames with their source
lines. Long names keep their innermost part, the whole name in a title shown on hover. At most
${SVG_MAX_FRAMES} frames and ${SVG_MAX_ROWS} rows per column are drawn; the picture says what it leaves out.

  -o, --output FILE  where to write the SVG (default: the input's base name + .svg in the
                     current directory; "-" writes it to standard output)
${walkerLine("  --walker W         ", "as for walk")}
  --thread ID        the thread to draw (default: the crashed thread, else the first)
  --step N           for a sweep: the snapshot taken at instruction count N
${explainBudgetHelp(21)}
  --symbols DIR, --images DIR, --max-frames N, --work-budget N, --pac-va-bits N: as for walk
`;

/** The options of `render` and `view`: those of `explain`, and where to write. */
export const VIEW_OPTIONS = { ...EXPLAIN_OPTIONS, output: { type: "string", short: "o" } } as const;

/** The default output file: the input's base name without its extension, plus `ext`, in the current directory. */
export function defaultOutput(file: string, ext: string): string {
  const name = basename(file);
  const stem = extname(name) !== "" ? name.slice(0, -extname(name).length) : name;
  return (stem === "" ? "stackwalk" : stem) + ext;
}

/** Writes a rendered document to `path` ("-": standard output) and says where it went on stdout. */
export function writeOutput(path: string, text: string, io: Io, what: string): void {
  if (path === "-") {
    io.out(text);
    return;
  }
  try {
    writeFileSync(path, text);
  } catch (e) {
    throw new InputError("io", `cannot write: ${ioReason(e)}`, { file: path });
  }
  io.out(`wrote ${path} (${Buffer.byteLength(text).toLocaleString("en-US")} bytes): ${what}\n`);
}

/** Runs `render`. */
export async function renderCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(argv, VIEW_OPTIONS);
  if (values.help) {
    io.out(RENDER_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`render takes exactly one input file (got ${positionals.length})`);
  const file = positionals[0]!;
  if (values.output === "") throw new UsageError("-o takes a file name");
  const chosen = threadOption(values.thread, false);
  const { snapshot, walks } = await explainInput(file, values, chosen ?? "first", io);
  const [walk] = walks;
  if (walk === undefined) throw new Error("render: no thread was explained");
  const svg = renderSvg(walk);
  const others = snapshot.threads.length > 1 && chosen === undefined ? `; the input has ${snapshot.threads.length} threads, choose another with --thread ID` : "";
  writeOutput(values.output ?? defaultOutput(file, ".svg"), svg, io, `thread ${walk.threadId}, ${walk.frames.length} frame${walk.frames.length === 1 ? "" : "s"}${others}`);
  return EXIT.ok;
}
