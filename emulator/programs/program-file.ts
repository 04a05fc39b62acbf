/**
 * Programs `stackwalk emulate` builds before it runs them: a call-chain spec in a JSON file
 * (`stackwalk-program/1`, the same fields as the corpus specs), or plain Intel-syntax assembly.
 * Either becomes a PE image with symbols and labels, so the runner treats it like any image.
 */
import { InputError, type ModuleSymbol } from "../../src/index.js";
import { JsonNode } from "../../src/entry/formats.js";
import { AssemblyError, loadAssembler, type AssembledProgram } from "../assemble.js";
import { FIRST_SECTION_RVA, SECTION_CHARACTERISTICS, writePeImage } from "../image-writer.js";
import { runImage, type RunOptions, type RunResult } from "../run.js";
import { buildX64Program, X64_IMAGE_BASE, type X64ProgramSpec } from "./x64-chain.js";
import { buildX86Program, X86_IMAGE_BASE, type X86ProgramSpec } from "./x86-chain.js";

/** The format identifier of program spec files. */
export const PROGRAM_FORMAT = "stackwalk-program/1";

/** A program ready to run: its image and what the runner needs to know about it. */
export interface BuiltProgram {
  name: string;
  /** What the program shows. */
  description: string;
  machine: "x86" | "x64";
  image: Uint8Array;
  symbols: ModuleSymbol[];
  labels: ReadonlyMap<string, bigint>;
  /** Labels where a snapshot is interesting (a spec's capture labels); empty for assembly. */
  captures: string[];
  /** Interrupt handlers entered with a machine frame (x64 specs). */
  interruptHandlers: { address: bigint; errorCode: boolean }[];
}

const X86_FUNCTION_KEYS = ["name", "frame", "locals", "saved", "params", "convention", "alloca", "recursion", "capture"];
const X64_FUNCTION_KEYS = [
  "name", "pushes", "alloc", "frame", "saves", "xmmSaves", "alloca", "epilog", "exit", "version", "leaf", "chained",
  "machineFrame", "earlyReturn", "recursion", "capture", "captureProlog", "captureEpilog", "captureProbe",
];

/**
 * Parses and builds a program spec file. Field names are checked here (a misspelt field is an
 * error naming its JSON path); values are checked by the generator, whose message names the
 * function and the field.
 */
export async function buildProgramSpec(text: string, file: string): Promise<BuiltProgram> {
  try {
    const root = JsonNode.parse(text);
    if (root.get("format").string() !== PROGRAM_FORMAT) throw new InputError("bad-value", `expected "${PROGRAM_FORMAT}"`, { path: "$.format" });
    root.onlyKeys(["format", "machine", "name", "description", "functions", "etw"]);
    const machine = root.get("machine").string();
    if (machine !== "x86" && machine !== "x64") throw new InputError("unknown-machine", `programs are built for "x86" or "x64", not "${machine}"`, { path: "$.machine" });
    root.get("name").string();
    root.get("description").string();
    if (machine === "x64" && root.opt("etw") !== undefined) throw new InputError("unsupported", "etw logging is built into x86 programs only", { path: "$.etw" });
    for (const f of root.get("functions").array()) f.onlyKeys(machine === "x86" ? X86_FUNCTION_KEYS : X64_FUNCTION_KEYS);
    return await buildSpec(machine === "x86" ? { machine, spec: root.value as X86ProgramSpec } : { machine, spec: root.value as X64ProgramSpec });
  } catch (e) {
    if (e instanceof InputError) throw e.inFile(file);
    if (e instanceof RangeError || e instanceof TypeError) throw new InputError("bad-value", e.message, { file, path: "$" });
    throw e;
  }
}

/** A built x86 or x64 call chain as the runner needs it (symbol RVAs widened, machine frames as interrupt handlers). */
export async function buildSpec(spec: { machine: "x86"; spec: X86ProgramSpec } | { machine: "x64"; spec: X64ProgramSpec }): Promise<BuiltProgram> {
  const p = spec.machine === "x86" ? await buildX86Program(spec.spec) : await buildX64Program(spec.spec);
  return {
    name: p.name,
    description: p.description,
    machine: spec.machine,
    image: p.image,
    symbols: p.symbols.map((s) => ({ name: s.name, rva: BigInt(s.rva), size: BigInt(s.size) })),
    labels: new Map(Object.entries(p.labels)),
    captures: [...p.captures],
    interruptHandlers: "machineFrames" in p ? p.machineFrames.map((m) => ({ address: p.labels[m.handler]!, errorCode: m.errorCode })) : [],
  };
}

/** Runs a built program: its image with its symbols (on the stack its SizeOfStackReserve asks for), its labels as break names, its interrupt handlers. */
export function runBuiltProgram(program: BuiltProgram, options: RunOptions): Promise<RunResult> {
  return runImage(
    { name: `${program.name}.exe`, image: program.image, symbols: program.symbols },
    {
      ...options,
      labels: program.labels,
      interruptHandlers: program.interruptHandlers,
    },
  );
}

/**
 * Assembles a plain Intel-syntax source into a one-section image: x86 unless a line says
 * `# machine: x64`; entry at the label `main` when there is one, else at the first instruction;
 * every label becomes a symbol that runs to the next label. There is no unwind data: walkers
 * see such a program as compilers without FPO or unwind tables would leave it.
 */
export async function buildAssemblyProgram(text: string, file: string, name: string): Promise<BuiltProgram> {
  const machine = /^\s*#\s*machine:\s*x64\s*$/m.test(text) ? "x64" : "x86";
  const base = machine === "x64" ? X64_IMAGE_BASE : X86_IMAGE_BASE;
  const assembler = await loadAssembler();
  let assembled: AssembledProgram;
  try {
    assembled = assembler.assembleProgram(text, { mode: machine === "x64" ? 64 : 32, address: base + BigInt(FIRST_SECTION_RVA) });
  } catch (e) {
    if (e instanceof AssemblyError) throw new InputError("bad-value", `does not assemble: ${e.message}`, { file });
    throw e;
  }
  if (assembled.bytes.length === 0) throw new InputError("bad-value", "assembles to no code", { file });
  const labels = [...assembled.labels].sort((x, y) => (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0));
  const entry = assembled.labels.get("main") ?? base + BigInt(FIRST_SECTION_RVA);
  const end = base + BigInt(FIRST_SECTION_RVA + assembled.bytes.length);
  const symbols = labels.map(([label, address], i) => ({ name: label, rva: address - base, size: (labels[i + 1]?.[1] ?? end) - address })).filter((s) => s.size > 0n);
  const image = writePeImage({
    machine,
    imageBase: base,
    entryRva: Number(entry - base),
    sections: [{ name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: assembled.bytes } }],
  });
  return { name, description: `assembly source ${file}`, machine, image: image.bytes, symbols, labels: assembled.labels, captures: [], interruptHandlers: [] };
}
