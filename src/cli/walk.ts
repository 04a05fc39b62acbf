/** `stackwalk walk <input>...`: walks every thread (or one) and prints the frames; several inputs go to batch.ts. */
import { breakpadRefusal } from "../analysis/breakpad-report.js";
import { DEFAULT_MAX_FRAMES, DEFAULT_FRAME_BUDGET, DEFAULT_WORK_BUDGET } from "../walk/walk.js";
import { EXIT, frameBudgetOption, workBudgetOption, isDirectory, noteTo, reportSymbols, maxFramesOption, pacVaBitsOption, parseOptions, SYMBOL_OPTIONS, symbolSpec, threadOption, UsageError, walkerOption, type Io } from "./common.js";
import { expandDumps, jobsOption, walkBatch, workersWorthStarting, type BatchOptions } from "./batch.js";
import { loadSnapshot, resolveThread } from "./load.js";
import { loadInstructionDecoder } from "../node/disassembler.js";
import { walkerChoices, walkerParagraph } from "./help.js";
import { walkDocument } from "../analysis/walk-document.js";
import { formatNames, OUTPUT_FORMAT_NAMES, outputFormat } from "../render/output-formats.js";

/** The formats `--format` takes: the names of render/output-formats.ts's table. */
export const FORMATS = OUTPUT_FORMAT_NAMES;

/** Usage text of `walk`. */
export const WALK_USAGE = `usage: stackwalk walk <vector.json|sweep.json|dump.dmp|folder>... [--walker ${walkerChoices()}]
                     [--symbols PATH]... [--symbols-url URL]... [--symbols-cache DIR]
                     [--symbol-download-timeout-secs S] [--symbol-download-deadline-secs S]
                     [--symbol-run-deadline-secs S] [--images DIR]... [--thread ID|all|crashed]
                     [--step N] [--max-frames N] [--frame-budget N] [--work-budget N]
                     [--pac-va-bits N] [--jobs N]
                     [--format ${FORMATS.join("|")}]
                     [--roles] [--registers]

Walks the stack of each thread of a snapshot and prints one row per frame: the STACKFRAME64
fields (AddrPC, AddrReturn, AddrFrame, AddrStack), the trust of the frame (how it was found),
the rule with the values it used, and where the PC is (module!function+offset [file:line]).
Several inputs, or a folder (searched for .dmp and .mdmp files), are walked on worker threads
and written as JSON Lines or a summary table; an input that cannot be walked is one error line
and the batch goes on (exit status 2 when any failed).

${walkerParagraph("  --walker W       ")}
  --symbols PATH   where to look for PDBs (DIR/x.pdb, DIR/x.pdb/<id>/x.pdb) and Breakpad
                   .sym files (DIR/x.pdb/<id>/x.sym); repeatable; a symbol path as debuggers
                   take it: DIR, srv*CACHE*URL, srv*URL, cache*DIR, ;-separated lists
                   (_NT_SYMBOL_PATH is read too); the input's own directory is searched last.
                   A dump's module images are looked for there too (x.dll/<TimeDateStamp>
                   <SizeOfImage>/x.dll, x.dl_, file.ptr), but not by Breakpad's walker
  --symbols-url URL  a symbol server (URL/<debug file>/<debug id>/<file>), repeatable
  --symbols-cache DIR  where downloads are kept (default ~/.cache/stackwalk-emu/symbols)
  --symbol-download-timeout-secs S  give a server up when a download gets no data for S
                   seconds (30)
  --symbol-download-deadline-secs S  give a server up when one download takes more than S
                   seconds, redirects included (300)
  --symbol-run-deadline-secs S  stop all downloads for an input after S seconds (600)
  --images DIR     for a minidump: module images (DIR/<module file name>, matched by
                   SizeOfImage and TimeDateStamp) whose code and unwind tables the dump lacks;
                   repeatable
  --thread T       a thread id, all of them (default; the crashed thread first), or crashed
  --step N         for a sweep: the snapshot taken at instruction count N
  --max-frames N   frame cap of one thread's walk (default ${DEFAULT_MAX_FRAMES})
  --frame-budget N the most frames of all of an input's threads together (default
                   ${DEFAULT_FRAME_BUDGET}); a walk that reaches it stops with frame-budget
  --work-budget N  the most work of all of an input's threads together, in units (postfix
                   tokens evaluated, stack words scanned, instructions decoded; default
                   ${DEFAULT_WORK_BUDGET}); a walk that spends it stops with work-budget
  --pac-va-bits N  arm64: the virtual-address size (64 − TxSZ, 16 to 52; default 48) at which
                   return addresses lose a pointer authentication code: bits N-63 become
                   copies of bit 55 (Breakpad's report strips as Breakpad does instead)
  --jobs N         inputs walked at once: the main thread and N - 1 worker threads
                   (default: the number of cores, the workers started only once the
                   batch has work left for them; a small batch is walked on the main
                   thread alone)
  --format F       text (default), json (the documented schema, walk.schema.json), windbg
                   (kb-style, with kv's FPO notes on x86), breakpad and breakpad-m (a minidump
                   only: Breakpad's minidump_stackwalk report, human or -m pipe-delimited);
                   for several inputs: summary (default) or jsonl (one document per line)
  --roles          print the machine's register-role table first
  --registers      print each frame's recovered registers (text format)
`;

/** Runs `walk`. */
export async function walkCommand(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseOptions(argv, {
    walker: { type: "string" },
    thread: { type: "string" },
    "max-frames": { type: "string" },
    "pac-va-bits": { type: "string" },
    "frame-budget": { type: "string" },
    "work-budget": { type: "string" },
    format: { type: "string" },
    roles: { type: "boolean" },
    registers: { type: "boolean" },
    step: { type: "string" },
    ...SYMBOL_OPTIONS,
    images: { type: "string", multiple: true },
    jobs: { type: "string" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(WALK_USAGE);
    return EXIT.ok;
  }
  if (positionals.length === 0) throw new UsageError("walk takes an input file (or several, or a folder)");
  const chosen = values.format === undefined ? undefined : outputFormat(values.format);
  if (values.format !== undefined && chosen === undefined) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, not "${values.format}"`);
  const batch = positionals.length > 1 || chosen?.inputs === "batch" || isDirectory(positionals[0]!);
  const format = values.format ?? (batch ? "summary" : "text");
  if (batch) {
    if (chosen !== undefined && chosen.inputs !== "batch") throw new UsageError(`several inputs (or a folder) are written as --format ${formatNames("batch").join(" or ")}, not ${format}`);
    for (const flag of ["step", "roles", "registers"] as const) if (values[flag] !== undefined) throw new UsageError(`--${flag} applies to one input, not a batch`);
    const files = expandDumps(positionals);
    if (files.length === 0) throw new UsageError(`no minidumps (.dmp, .mdmp) under ${positionals.join(", ")}`);
    const options: BatchOptions = {
      format: format as BatchOptions["format"],
      walker: walkerOption(values.walker),
      maxFrames: maxFramesOption(values["max-frames"]) ?? DEFAULT_MAX_FRAMES,
      pacVaBits: pacVaBitsOption(values["pac-va-bits"]),
      frameBudget: frameBudgetOption(values["frame-budget"]),
      workBudget: workBudgetOption(values["work-budget"]),
      thread: threadOption(values.thread, true, true) ?? "all",
      symbols: symbolSpec({ symbols: values.symbols, "symbols-url": values["symbols-url"], "symbols-cache": values["symbols-cache"], "symbol-download-timeout-secs": values["symbol-download-timeout-secs"], "symbol-download-deadline-secs": values["symbol-download-deadline-secs"], "symbol-run-deadline-secs": values["symbol-run-deadline-secs"] }),
      images: values.images ?? [],
    };
    // The symbol path's own problems (a missing directory, a Windows path) are said once.
    reportSymbols(options.symbols, [], [], noteTo(io));
    // Without --jobs, workers start only once the batch is worth them.
    return walkBatch(files, options, jobsOption(values.jobs), io, values.jobs === undefined ? workersWorthStarting : "now");
  }
  if (values.jobs !== undefined) throw new UsageError("--jobs applies to several inputs (or a folder)");
  const threadChoice = threadOption(values.thread, true, true) ?? "all";
  const maxFrames = maxFramesOption(values["max-frames"]) ?? DEFAULT_MAX_FRAMES;
  const frameBudget = frameBudgetOption(values["frame-budget"]);
  const workBudget = workBudgetOption(values["work-budget"]);
  const walker = walkerOption(values.walker);
  const pacVaBits = pacVaBitsOption(values["pac-va-bits"]);
  const file = positionals[0]!;
  const symbols = symbolSpec(values);
  const { snapshot, dump, symbolNotes } = await loadSnapshot(file, { step: values.step, symbols, images: values.images ?? [], format, walker: values.walker }, io);
  const thread = resolveThread(snapshot, threadChoice, file);
  // Every format is written as it is made, one thread walked at a time: the output of a dump
  // whose threads are deep is never one text, and only the thread being written is held.
  const output = outputFormat(format)!;
  if (output.minidumpOnly) {
    const refusal = breakpadRefusal(snapshot.machine, file);
    if (refusal !== undefined) throw new UsageError(`--format ${format}: ${refusal}`);
  }
  const request = { walker, walkerGiven: values.walker !== undefined, thread, maxFrames, frameBudget, workBudget, pacVaBits, registers: values.registers === true, roles: values.roles === true };
  // Capstone, when installed, disassembles the crashing instruction for the text header and the JSON's crash analysis.
  await output.write(walkDocument({ file, snapshot, dump, symbolNotes, symbolsGiven: symbols.given, disassembler: loadInstructionDecoder }, request), io.out);
  return EXIT.ok;
}
