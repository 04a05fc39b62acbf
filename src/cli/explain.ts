/** `stackwalk explain <input>`: every frame with the rule that found it and the memory it read, in plain words. */
import { basename } from "node:path";
import { explainSnapshot, formatExplanation } from "../render/explain.js";
import { EXIT, parseOptions, UsageError, walkerOption, type Io } from "./common.js";
import { chooseSnapshot } from "./walk.js";

/** Usage text of `explain`. */
export const EXPLAIN_USAGE = `usage: stackwalk explain <vector.json|sweep.json|dump.dmp> [--walker W] [--thread ID|all]
                        [--step N] [--symbols DIR]... [--images DIR]... [--max-frames N]

Walks the stack and explains every frame: the rule that found it and the memory the rule read,
in plain words with addresses and values ("[EBP+4] = 0x00401040 → return address"), each
UNWIND_INFO operation undone, each FPO_DATA or FrameData record used, and where the
frame-pointer chain (what ETW and naive debuggers follow) would go wrong instead.

  --walker W       as for walk (default auto)
  --thread ID|all  one thread, or all of them (default), the crashed thread first
  --step N         for a sweep: the snapshot taken at instruction count N
  --symbols DIR, --images DIR, --max-frames N: as for walk
`;

/** Runs `explain`. */
export function explainCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    walker: { type: "string" },
    thread: { type: "string" },
    step: { type: "string" },
    "max-frames": { type: "string" },
    symbols: { type: "string", multiple: true },
    images: { type: "string", multiple: true },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(EXPLAIN_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`explain takes exactly one input file (got ${positionals.length})`);
  let thread: number | "all" = "all";
  if (values.thread !== undefined && values.thread !== "all") {
    if (!/^\d+$/.test(values.thread)) throw new UsageError(`--thread takes a thread id or "all", not "${values.thread}"`);
    thread = Number(values.thread);
  }
  let maxFrames: number | undefined;
  if (values["max-frames"] !== undefined) {
    if (!/^[1-9]\d*$/.test(values["max-frames"]) || !Number.isSafeInteger(Number(values["max-frames"]))) {
      throw new UsageError(`--max-frames takes a whole number ≥ 1, not "${values["max-frames"]}"`);
    }
    maxFrames = Number(values["max-frames"]);
  }
  const file = positionals[0]!;
  const { snapshot } = chooseSnapshot(file, values.step, values.symbols ?? [], values.images ?? [], io);
  if (thread !== "all" && !snapshot.threads.some((t) => t.id === thread)) {
    throw new UsageError(`no thread with id ${thread} (threads: ${snapshot.threads.map((t) => t.id).join(", ")})`);
  }
  const walks = explainSnapshot(snapshot, {
    walker: walkerOption(values.walker),
    thread,
    title: snapshot.description !== undefined && snapshot.description !== file ? `${basename(file)} - ${snapshot.description}` : basename(file),
    ...(maxFrames !== undefined ? { maxFrames } : {}),
  });
  io.out(walks.map(formatExplanation).join("\n"));
  return EXIT.ok;
}
