/**
 * The output formats, one table: `--format NAME` is a lookup in {@link OUTPUT_FORMATS}, and a
 * single input, a batch's worker and the playground write through the same entries. Every entry
 * has one shape: it writes what it says of one input (a {@link WalkDocument}: the input with how
 * to walk it, walked as the entry reads it) piece by piece to `out`; a batch format may also
 * write an end after every input (the summary's table).
 */
import type { WalkDocument, LoadedInput } from "../analysis/walk-document.js";
import { decodesCrashInstruction } from "../analysis/crash-info.js";
import { machineInfo } from "../model/machine.js";
import { writeBreakpad, writeBreakpadMachineReadable } from "./breakpad.js";
import { writeJson, type JsonContext } from "./json.js";
import { formatSummary, type SummaryEntry } from "./summary.js";
import { renderRoles, writeText } from "./text.js";
import { windbgProcess, writeWindbg } from "./windbg.js";

/** One output format. */
export interface OutputFormat {
  /** The name `--format` takes. */
  readonly name: string;
  /**
   * `one`: the output of one input; `batch`: the output of any number of inputs (a folder, or
   * several files), walked on worker threads.
   */
  readonly inputs: "one" | "batch";
  /** Breakpad's reports: the input must be a minidump of a machine Breakpad walks. */
  readonly minidumpOnly: boolean;
  /** The walker the format walks with unless one is chosen (Breakpad's reports: Breakpad's, which reads no images); default "auto". */
  readonly walker?: "breakpad";
  /** A batch format whose every input is a record of its own, written out in input order as the inputs finish (JSON Lines). */
  readonly records?: boolean;
  /** Writes what the format says of one input, piece by piece (one thread walked at a time). */
  write(document: WalkDocument, out: (text: string) => void): Promise<void>;
  /** A batch format's last words, after every input (the summary's table of them). */
  end?(entries: readonly SummaryEntry[], out: (text: string) => void): void;
}

/**
 * What the JSON document is told beside the walks of a loaded input: the dump and the snapshot's
 * memory (for crash_info's analysis and the threads' last errors), the disassembler when there is
 * one (else why not), the OS, where symbols came from and the threads' order; `file` is written
 * first (JSON Lines records name their dump).
 */
export async function jsonContextOf(document: WalkDocument, file?: string): Promise<JsonContext> {
  const { snapshot, dump, symbolNotes } = document.input;
  const context: JsonContext = { os: snapshot.os, symbols: symbolNotes, threadOrder: snapshot.threads };
  if (file !== undefined) context.file = file;
  if (dump === undefined) return context;
  context.dump = dump;
  context.memory = snapshot.memory;
  // The disassembler (Capstone, a WebAssembly module) is loaded only for a dump whose crash it reads.
  if (!decodesCrashInstruction(dump, snapshot.machine)) return context;
  const disassembler = await document.disassembler();
  if (disassembler !== undefined && "decoder" in disassembler) context.decoder = disassembler.decoder;
  else if (disassembler !== undefined) context.decoderMissing = disassembler.missing;
  return context;
}

/** Breakpad's report of the document's dump, through `write` (human or `-m`). */
function breakpadFormat(name: string, write: typeof writeBreakpad | typeof writeBreakpadMachineReadable): OutputFormat {
  return {
    name,
    inputs: "one",
    minidumpOnly: true,
    walker: "breakpad",
    async write(document, out) {
      const report = document.breakpadReport();
      if (report === undefined) throw new Error(`--format ${name} needs a minidump`);
      write(report, out);
    },
  };
}

/** The document's walks as JSON: pretty, or (a batch's JSON Lines) one line naming its input. */
function jsonFormat(name: string, inputs: "one" | "batch"): OutputFormat {
  return {
    name,
    inputs,
    minidumpOnly: false,
    ...(inputs === "batch" ? { records: true } : {}),
    async write(document, out) {
      const { snapshot } = document.input;
      const context = await jsonContextOf(document, inputs === "batch" ? document.input.file : undefined);
      writeJson(snapshot.machine, snapshot.modules, document.walks(), out, context, inputs === "batch" ? { indent: false } : {});
    },
  };
}

const TABLE = {
  text: {
    name: "text",
    inputs: "one",
    minidumpOnly: false,
    async write(document, out) {
      const { input, request } = document;
      const { snapshot, dump } = input;
      if (request.roles === true) out(renderRoles([snapshot.machine]) + "\n");
      out(`${input.file}: ${machineInfo(snapshot.machine).title}${snapshot.description !== undefined ? ` - ${snapshot.description}` : ""}\n`);
      const crash = dump === undefined ? undefined : await document.crashHeader();
      writeText(snapshot.machine, snapshot.modules, document.walks(), out, request.registers === true || request.roles === true, crash);
    },
  },
  json: jsonFormat("json", "one"),
  jsonl: jsonFormat("jsonl", "batch"),
  summary: {
    name: "summary",
    inputs: "batch",
    minidumpOnly: false,
    // Each input is a row of the table, made from its first thread's walk when the batch asks.
    write: async () => undefined,
    end: (entries, out) => out(formatSummary(entries)),
  },
  windbg: {
    name: "windbg",
    inputs: "one",
    minidumpOnly: false,
    async write(document, out) {
      const { snapshot, dump } = document.input;
      if (document.request.roles === true) out(renderRoles([snapshot.machine]) + "\n");
      // WinDbg's ~*k goes through the threads in the dump's order.
      writeWindbg(snapshot.machine, snapshot.modules, document.walks(true), out, snapshot.memory, dump !== undefined ? windbgProcess(dump) : { threads: snapshot.threads });
    },
  },
  breakpad: breakpadFormat("breakpad", writeBreakpad),
  "breakpad-m": breakpadFormat("breakpad-m", writeBreakpadMachineReadable),
} as const satisfies Record<string, OutputFormat>;

/** A name of {@link OUTPUT_FORMATS}. */
export type OutputFormatName = keyof typeof TABLE;

/** Every output format, by the name `--format` takes. */
export const OUTPUT_FORMATS: Readonly<Record<OutputFormatName, OutputFormat>> = TABLE;

/** Every format's name, in the table's order. */
export const OUTPUT_FORMAT_NAMES = Object.keys(OUTPUT_FORMATS) as OutputFormatName[];

/** The format `name` names, or undefined. */
export function outputFormat(name: string): OutputFormat | undefined {
  return Object.hasOwn(OUTPUT_FORMATS, name) ? OUTPUT_FORMATS[name as OutputFormatName] : undefined;
}

/** The names of the formats of one input, or of a batch. */
export function formatNames(inputs: "one" | "batch"): OutputFormatName[] {
  return OUTPUT_FORMAT_NAMES.filter((n) => OUTPUT_FORMATS[n].inputs === inputs);
}

export type { LoadedInput };
