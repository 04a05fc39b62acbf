/** `stackwalk walk <input>`: walks every thread (or one) and prints the frames. */
import { machineInfo } from "../model/machine.js";
import { writeJson } from "../render/json.js";
import { renderRoles, renderText } from "../render/text.js";
import { renderWindbg } from "../render/windbg.js";
import { breakpadReport } from "../analysis/breakpad-report.js";
import { writeBreakpad, writeBreakpadMachineReadable } from "../render/breakpad.js";
import { replaySweep } from "../formats/sweep.js";
import type { Minidump } from "../formats/minidump.js";
import type { Snapshot } from "../model/snapshot.js";
import { walkSnapshot, DEFAULT_MAX_FRAMES } from "../walk/walk.js";
import { attachSymbols, EXIT, loadInput, maxFramesOption, parseOptions, threadOption, UsageError, walkerOption, type Io } from "./common.js";
import { attachImageDirectories } from "../node/images.js";

/** Usage text of `walk`. */
export const WALK_USAGE = `usage: stackwalk walk <vector.json|sweep.json|dump.dmp> [--walker auto|fpo|unwind|frame-pointer]
                     [--symbols DIR]... [--images DIR]... [--thread ID|all] [--step N] [--max-frames N]
                     [--format text|json|windbg|breakpad|breakpad-m]
                     [--roles] [--registers]

Walks the stack of each thread of a snapshot and prints one row per frame: the STACKFRAME64
fields (AddrPC, AddrReturn, AddrFrame, AddrStack), the trust of the frame (how it was found),
the rule with the values it used, and where the PC is (module!function+offset).

  --walker W       auto (default): the most trusted strategy per frame, falling back down the
                   trust order, with stack scanning last; fpo (x86): FrameData programs and
                   FPO_DATA, then the EBP chain, no free scanning; unwind (x64): the unwind
                   tables, then stack scanning; frame-pointer: the EBP/RBP chain only
  --symbols DIR    where to look for PDBs (DIR/x.pdb, DIR/x.pdb/<id>/x.pdb) and Breakpad
                   .sym files (DIR/x.pdb/<id>/x.sym) for modules without unwind records;
                   repeatable; the input's own directory is searched last
  --images DIR     for a minidump: module images (DIR/<module file name>, matched by
                   SizeOfImage and TimeDateStamp) whose code and unwind tables the dump lacks;
                   repeatable
  --thread ID|all  one thread, or all of them (default), the crashed thread first
  --step N         for a sweep: the snapshot taken at instruction count N
  --max-frames N   frame cap (default ${DEFAULT_MAX_FRAMES})
  --format F       text (default), json (the documented schema), windbg (kb-style, with
                   kv's FPO notes on x86), breakpad and breakpad-m (a minidump only: Breakpad's
                   minidump_stackwalk report, human or -m pipe-delimited)
  --roles          print the machine's register-role table first
  --registers      print each frame's recovered registers (text format)
`;

const FORMATS = ["text", "json", "windbg", "breakpad", "breakpad-m"] as const;

/** Runs `walk`. */
export function walkCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    walker: { type: "string" },
    thread: { type: "string" },
    "max-frames": { type: "string" },
    format: { type: "string" },
    roles: { type: "boolean" },
    registers: { type: "boolean" },
    step: { type: "string" },
    symbols: { type: "string", multiple: true },
    images: { type: "string", multiple: true },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(WALK_USAGE);
    return EXIT.ok;
  }
  if (positionals.length !== 1) throw new UsageError(`walk takes exactly one input file (got ${positionals.length})`);
  const format = values.format ?? "text";
  if (!(FORMATS as readonly string[]).includes(format)) throw new UsageError(`--format must be one of ${FORMATS.join(", ")}, not "${format}"`);
  const thread = threadOption(values.thread, true) ?? "all";
  const maxFrames = maxFramesOption(values["max-frames"]) ?? DEFAULT_MAX_FRAMES;
  const walker = walkerOption(values.walker);
  const file = positionals[0]!;
  const symbols = values.symbols ?? [];
  const { snapshot, dump } = chooseSnapshot(file, values.step, symbols, values.images ?? [], io, format);
  if (format === "breakpad" || format === "breakpad-m") {
    if (snapshot.machine === "ia64") throw new UsageError(`--format ${format}: Breakpad's processor has no IA-64 stack walker; ${file} is an IA-64 dump`);
    const report = breakpadReport(dump!, snapshot, { walk: { walker, maxFrames }, thread, symbolPathGiven: symbols.length > 0 });
    (format === "breakpad" ? writeBreakpad : writeBreakpadMachineReadable)(report, io.out);
    return EXIT.ok;
  }
  const walks = walkSnapshot(snapshot, { walker, maxFrames, thread });
  if (format === "json") {
    writeJson(snapshot.machine, snapshot.modules, walks, io.out, dump?.notes);
    return EXIT.ok;
  }
  let text = "";
  if (values.roles) text += renderRoles([snapshot.machine]) + "\n";
  if (format === "windbg") text += renderWindbg(snapshot.machine, snapshot.modules, walks, snapshot.memory);
  else {
    const header = `${file}: ${machineInfo(snapshot.machine).title}${snapshot.description !== undefined ? ` - ${snapshot.description}` : ""}\n`;
    text += header + renderText(snapshot.machine, snapshot.modules, walks, values.registers === true || values.roles === true);
  }
  io.out(text);
  return EXIT.ok;
}

/**
 * The snapshot to walk: a vector or minidump itself, or one snapshot of a sweep chosen with
 * `--step`; with the minidump it came from, if any. The Breakpad formats need a minidump.
 */
export function chooseSnapshot(file: string, step: string | undefined, symbols: readonly string[], images: readonly string[], io: Io, format = "text"): { snapshot: Snapshot; dump?: Minidump } {
  const input = loadInput(file);
  if (input.kind !== "dump" && (format === "breakpad" || format === "breakpad-m")) {
    throw new UsageError(`--format ${format} reproduces Breakpad's report of a minidump; ${file} is a ${input.kind === "vector" ? "vector" : "sweep"}, not a .dmp`);
  }
  if (images.length > 0) {
    if (input.kind !== "dump") throw new UsageError(`--images applies to minidumps; ${file} is a ${input.kind}, which carries its images in its memory`);
    for (const n of attachImageDirectories(input.snapshot, images)) if (n.file !== undefined || !n.detail.startsWith("no ")) io.err(`images: ${n.module}: ${n.detail}\n`);
  }
  attachSymbols(input, file, symbols, io);
  if (input.kind === "dump") {
    // What the reader passed over or repaired in a damaged dump (each names the offset).
    for (const note of input.dump.notes) io.err(`note: ${file}: ${note}\n`);
    if (step !== undefined) throw new UsageError(`--step applies to sweeps; ${file} is a minidump`);
    return { snapshot: input.snapshot, dump: input.dump };
  }
  if (input.kind === "vector") {
    if (step !== undefined) throw new UsageError(`--step applies to sweeps; ${file} is a single vector`);
    return { snapshot: input.vector };
  }
  const steps = input.sweep.steps;
  if (step === undefined) {
    throw new UsageError(`${file} is a sweep of ${steps.length} snapshots (steps ${steps[0]?.step ?? "-"}..${steps.at(-1)?.step ?? "-"}): choose one with --step N`);
  }
  if (!/^\d+$/.test(step)) throw new UsageError(`--step takes an instruction count, not "${step}"`);
  const wanted = Number(step);
  for (const v of replaySweep(input.sweep)) if (v.step === wanted) return { snapshot: v };
  throw new UsageError(`${file} has no snapshot at step ${wanted}`);
}
