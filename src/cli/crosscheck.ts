/**
 * `stackwalk crosscheck <vector|dmp>`: walks a snapshot and aligns the walk with the ETW stacks
 * recorded for it (its own `etw` events and `--etw` files), stitched by MatchId, explaining every
 * difference (src/analysis/crosscheck.ts).
 */
import { InputError } from "../errors.js";
import { crossCheck, threadStackItems, type CrossCheckReport } from "../analysis/crosscheck.js";
import { crossCheckJson, crossCheckText } from "../render/crosscheck.js";
import { stitchStacks, type EtwStackItem } from "../formats/etw.js";
import { replaySweep } from "../formats/sweep.js";
import { machineInfo } from "../model/machine.js";
import type { Snapshot, ThreadSnapshot } from "../model/snapshot.js";
import { walkThread } from "../walk/walk.js";
import { attachSymbolDirectories, EXIT, expandInputs, loadInput, pacVaBitsOption, parseOptions, UsageError, walkerOption, type Io } from "./common.js";
import { etwStackItems, loadEtwFile } from "./etw.js";
import { walkerLine } from "./help.js";

/** Usage text of `crosscheck`. */
export const CROSSCHECK_USAGE = `usage: stackwalk crosscheck <vector.json|sweep.json|dump.dmp|dir>... [--etw FILE]... [--walker W]
                           [--thread ID] [--symbols DIR]... [--pac-va-bits N] [--json]

Walks the snapshot and aligns the walk with the ETW stack address arrays recorded for it: the
input's own ETW events (a vector's "etw") and the STACK_TRACE items of each --etw file (raw
extended data items, or an .etl trace, whose stacks of the walked thread are used). Items are
stitched by MatchId (kernel part first, then user part). The logging path's frames at the start
of each array are skipped (the ETW write path, kernel frames); then every frame is matched,
ETW-only (ETW followed a garbage EBP) or walk-only (ETW skipped it, or stopped), and every
difference is explained in words: on x86 by re-running ETW's EBP-chain capture on the snapshot
(docs/spec/x86-fpo.md §6), with the ground truth as a witness when the input has one. A
difference nothing explains is marked UNEXPLAINED.
Exit status: 0 the walk and ETW agree past the logging prefix, 1 they differ (explained or
not), 2 bad input (no ETW stack to compare, an unreadable item: the message names the offset).

  --etw FILE     more ETW stacks (repeatable): raw items in either form, .etl, or a .zip holding one
${walkerLine("  --walker W     ", "the walker to cross-check (see walk)")}
  --thread ID    for a minidump: the thread to walk (default: the crashed thread)
  --symbols DIR  PDBs and Breakpad .sym files for modules without unwind records (see walk)
  --pac-va-bits N  arm64: the virtual-address size pointer authentication codes are stripped at
                 (see walk; default 48)
  --json         print the results as one JSON document
`;

interface Checked {
  file: string;
  step?: number;
  report: CrossCheckReport;
}

/** Runs `crosscheck`. */
export function crossCheckCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    etw: { type: "string", multiple: true },
    walker: { type: "string" },
    thread: { type: "string" },
    symbols: { type: "string", multiple: true },
    "pac-va-bits": { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(CROSSCHECK_USAGE);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new UsageError("crosscheck needs a vector, a sweep or a minidump");
  const walker = walkerOption(values.walker);
  const pacVaBits = pacVaBitsOption(values["pac-va-bits"]);
  let threadId: number | undefined;
  if (values.thread !== undefined) {
    if (!/^\d+$/.test(values.thread)) throw new UsageError(`--thread takes a thread id, not "${values.thread}"`);
    threadId = Number(values.thread);
  }
  const files = expandInputs(positionals);
  if (files.length === 0) throw new UsageError(`no .json inputs found under ${positionals.join(", ")}`);
  if ((values.etw ?? []).length > 0 && files.length > 1) throw new UsageError("--etw applies to one input: give one vector or minidump with it");
  const etwFiles = (values.etw ?? []).map((f) => loadEtwFile(f));

  const checked: Checked[] = [];
  for (const file of files) {
    const input = loadInput(file);
    attachSymbolDirectories(input, file, values.symbols ?? [], io);
    if (input.kind === "dump") for (const note of input.dump.notes) io.err(`note: ${file}: ${note}\n`);
    const one = (snapshot: Snapshot, thread: ThreadSnapshot, step?: number, optional = false): void => {
      const notes: string[] = [];
      let items: EtwStackItem[];
      try {
        items = threadStackItems(thread, notes);
      } catch (e) {
        if (e instanceof InputError && e.file === undefined) throw new InputError(e.code, `ETW items${step !== undefined ? ` of the snapshot at step ${step}` : ""}: ${e.reason}`, { file, ...(e.offset !== undefined ? { offset: e.offset } : {}) });
        throw e;
      }
      let pointerSize: 4 | 8 = machineInfo(snapshot.machine).pointerSize === 4 ? 4 : 8;
      for (const loaded of etwFiles) {
        const got = etwStackItems(loaded, loaded.kind === "etl" && snapshot.threads.length > 0 && input.kind === "dump" ? thread.id : undefined);
        items.push(...got.items);
        notes.push(...got.notes);
        if (got.pointerSize !== undefined) pointerSize = got.pointerSize;
      }
      if (items.length === 0) {
        if (optional) return;
        throw new InputError("missing-field", `no ETW stack to compare: ${input.kind === "dump" ? "a minidump carries none" : 'the input has no "etw" events with STACK_TRACE items'}; give --etw FILE`, { file });
      }
      const stacks = stitchStacks(items, { pointerSize });
      const walk = walkThread(snapshot, thread, pacVaBits === undefined ? { walker } : { walker, pacVaBits });
      const options = thread.truth === undefined ? { notes } : { notes, truth: thread.truth };
      const c: Checked = { file, report: crossCheck(snapshot, walk, stacks, options) };
      if (step !== undefined) c.step = step;
      checked.push(c);
    };
    if (input.kind === "vector") one(input.vector, input.vector.threads[0]!);
    else if (input.kind === "dump") {
      const threads = input.snapshot.threads;
      const thread = threadId === undefined ? (threads.find((t) => t.crashed) ?? threads[0]) : threads.find((t) => t.id === threadId);
      if (thread === undefined) throw new InputError("missing-field", threadId === undefined ? "the minidump has no thread" : `the minidump has no thread ${threadId}`, { file });
      one(input.snapshot, thread);
    } else {
      const before = checked.length;
      for (const v of replaySweep(input.sweep)) one(v, v.threads[0]!, v.step, true);
      if (checked.length === before) throw new InputError("missing-field", 'no snapshot of the sweep has "etw" events with STACK_TRACE items', { file });
    }
  }

  const agrees = checked.every((c) => c.report.agrees);
  const unexplained = checked.reduce((n, c) => n + c.report.unexplained, 0);
  if (values.json) {
    io.out(
      JSON.stringify(
        { walker, agrees, unexplained, inputs: checked.map((c) => ({ file: c.file, step: c.step ?? null, ...(crossCheckJson(c.report) as object) })) },
        (_k, v: unknown) => (typeof v === "bigint" ? v.toString() : v),
        2,
      ) + "\n",
    );
  } else {
    checked.forEach((c, i) => {
      if (i > 0) io.out("\n");
      io.out(crossCheckText(c.report, `${c.file}${c.step !== undefined ? ` (step ${c.step})` : ""}: ${machineInfo(c.report.machine).title}, walker ${walker}`));
    });
    const summary = checked.map((c) => summaryLine(c)).join("\n");
    io.out(`\n${summary}\n`);
  }
  return agrees && unexplained === 0 ? EXIT.ok : EXIT.difference;
}

/** One line per input: the counts over its stacks and the verdict. */
function summaryLine(c: Checked): string {
  const r = c.report;
  const compared = r.stacks.filter((s) => s.comparable);
  const sum = (f: (s: (typeof compared)[number]) => number): number => compared.reduce((n, s) => n + f(s), 0);
  const verdict = r.agrees && r.unexplained === 0 ? "agree" : r.unexplained > 0 ? "DIFFER, not all explained" : "differ, all explained";
  return `${c.file}${c.step !== undefined ? ` (step ${c.step})` : ""}: ${compared.length} of ${r.stacks.length} ETW stack${r.stacks.length === 1 ? "" : "s"} compared: ${sum((s) => s.matched)} matched, ${sum((s) => s.etwOnly)} etw-only, ${sum((s) => s.walkOnly)} walk-only, ${r.unexplained} unexplained: ${verdict}`;
}
