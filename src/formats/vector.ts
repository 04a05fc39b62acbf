/**
 * The JSON vector format `stackwalk-vector/1` (documented field by field in vectors/README.md):
 * one thread's registers, target memory, modules with symbols, and optional ground truth.
 * Loading validates every field and names the JSON path of the first bad one.
 */
import { hex } from "../hex.js";
import { InputError, readingFile } from "../errors.js";
import { RegionMemory, type MemoryRegion } from "../memory/region-memory.js";
import { formatAddress, isMachine, machineInfo, MACHINES, type Machine } from "../model/machine.js";
import { decodeDiskItems } from "./etw.js";
import type { EtwEvent, Module, ModuleSymbol, Registers, Snapshot, TruthFrame } from "../model/snapshot.js";
import { bytesToHex, JsonNode } from "./json-input.js";
import { formatModuleUnwind, parseModuleUnwind } from "./module-unwind.js";

/** The format identifier every vector starts with. */
export const VECTOR_FORMAT = "stackwalk-vector/1";

/** A loaded vector: a one-thread snapshot plus where it came from. */
export interface Vector extends Snapshot {
  memory: RegionMemory;
  /** How the vector was made ("hand-made", "emulator: <program>", ...). */
  provenance?: string;
}

const TOP_KEYS = ["format", "machine", "description", "provenance", "context", "memory", "modules", "truth", "etw"] as const;

/** Parses a `context` object: register names to hex values, with the machine's required registers. */
export function parseRegisters(node: JsonNode, machine: Machine): Registers {
  const bits = machineInfo(machine).pointerSize * 8;
  const regs: Registers = {};
  for (const [name, value] of node.entries()) {
    if (!/^[a-z][a-z0-9_]*$/.test(name)) {
      throw new InputError("bad-value", `register names are lower-case CONTEXT names, not "${name}"`, { path: value.path });
    }
    regs[name] = value.hex(bits);
  }
  for (const r of machineInfo(machine).requiredRegisters) {
    if (!(r in regs)) {
      throw new InputError("missing-field", `an ${machine} context needs register "${r}" (required: ${machineInfo(machine).requiredRegisters.join(", ")})`, { path: `${node.path}.${r}` });
    }
  }
  return regs;
}

/** The most zero-filled memory one file may declare with `zeros` regions (they cost memory, not file size). */
export const MAX_ZERO_BYTES = 256 * 1024 * 1024;

/** Zero-filled bytes declared so far by one file's `zeros` regions. */
export interface ZeroBudget {
  used: number;
}

/** Parses one memory region `{ base, hex | base64 | zeros }`; `zeros` regions count against `budget`. */
export function parseRegion(node: JsonNode, bits: number, budget: ZeroBudget = { used: 0 }): MemoryRegion {
  node.onlyKeys(["base", "hex", "base64", "zeros", "name"]);
  const base = node.get("base").hex(bits);
  const forms = (["hex", "base64", "zeros"] as const).map((k) => node.opt(k));
  if (forms.filter((f) => f !== undefined).length !== 1) {
    throw new InputError("missing-field", 'a memory region needs exactly one of "hex", "base64" or "zeros"', { path: node.path });
  }
  const [hexText, b64, zeros] = forms;
  let bytes: Uint8Array;
  if (hexText !== undefined) bytes = hexText.hexBytes();
  else if (b64 !== undefined) bytes = b64.base64Bytes();
  else {
    const size = zeros!.hex(bits);
    if (size + BigInt(budget.used) > BigInt(MAX_ZERO_BYTES)) {
      throw new InputError("bad-value", `zero-filled regions add up to more than ${MAX_ZERO_BYTES} bytes`, { path: zeros!.path });
    }
    budget.used += Number(size);
    bytes = new Uint8Array(Number(size));
  }
  if (base + BigInt(bytes.length) > 1n << BigInt(bits)) {
    throw new InputError("bad-value", `region of ${bytes.length} bytes at ${hex(base)} runs past the end of the ${bits}-bit address space`, { path: node.path });
  }
  return { base, bytes, origin: node.path };
}

/** Parses one module with its symbols (sorted by rva). */
export function parseModule(node: JsonNode, bits: number): Module {
  node.onlyKeys(["name", "base", "size", "symbols", "fpo", "frameData"]);
  const name = node.get("name").string();
  const base = node.get("base").hex(bits);
  const size = node.get("size").hex(bits);
  const symbols: ModuleSymbol[] = (node.opt("symbols")?.array() ?? []).map((s) => {
    s.onlyKeys(["name", "rva", "size"]);
    const sym: ModuleSymbol = { name: s.get("name").string(), rva: s.get("rva").hex(bits) };
    const sz = s.opt("size");
    if (sz !== undefined) sym.size = sz.hex(bits);
    if (sym.rva >= size) throw new InputError("bad-value", `symbol rva ${hex(sym.rva)} is outside the module (size ${hex(size)})`, { path: s.path });
    return sym;
  });
  symbols.sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0));
  const module: Module = { name, base, size, symbols };
  const unwind = parseModuleUnwind(node, size);
  if (unwind !== undefined) module.unwind = unwind;
  return module;
}

/** Parses ETW events: each `{ "hex": on-disk item chain, "description"? }`, validated by decoding the chain. */
export function parseEtw(node: JsonNode): EtwEvent[] {
  return node.array().map((e) => {
    e.onlyKeys(["hex", "description"]);
    const text = e.get("hex");
    const items = text.hexBytes();
    try {
      decodeDiskItems(items);
    } catch (err) {
      if (err instanceof InputError) throw new InputError(err.code, `ETW items: ${err.reason}`, { path: text.path, ...(err.offset !== undefined ? { offset: err.offset } : {}) });
      throw err;
    }
    const event: EtwEvent = { items };
    const d = e.opt("description");
    if (d !== undefined) event.description = d.string();
    return event;
  });
}

/** One ETW event as vector JSON. */
export function formatEtwEvent(e: EtwEvent): string {
  return `{ "hex": "${bytesToHex(e.items)}"${e.description !== undefined ? `, "description": ${JSON.stringify(e.description)}` : ""} }`;
}

/** Parses a ground-truth list. */
export function parseTruth(node: JsonNode, bits: number): TruthFrame[] {
  return node.array().map((f) => {
    f.onlyKeys(["pc", "sp", "bsp", "function"]);
    const t: TruthFrame = { pc: f.get("pc").hex(bits), sp: f.get("sp").hex(bits) };
    const bsp = f.opt("bsp");
    if (bsp !== undefined) t.bsp = bsp.hex(bits);
    const fn = f.opt("function");
    if (fn !== undefined) t.function = fn.string();
    return t;
  });
}

/** Parses and validates a vector; errors name the JSON path (and `file`, when given). */
export function parseVector(text: string, file?: string): Vector {
  return readingFile(file, () => vectorFromJson(JsonNode.parse(text)));
}

/** Validates parsed JSON as a vector. */
export function vectorFromJson(root: JsonNode): Vector {
  root.onlyKeys(TOP_KEYS);
  const format = root.get("format").string();
  if (format !== VECTOR_FORMAT) {
    throw new InputError("bad-value", `unknown format "${format}" (expected "${VECTOR_FORMAT}")`, { path: "$.format" });
  }
  const machineName = root.get("machine").string();
  if (!isMachine(machineName)) {
    throw new InputError("unknown-machine", `unknown machine "${machineName}" (expected one of: ${MACHINES.join(", ")})`, { path: "$.machine" });
  }
  const machine: Machine = machineName;
  const bits = machineInfo(machine).pointerSize * 8;
  const registers = parseRegisters(root.get("context"), machine);
  const budget: ZeroBudget = { used: 0 };
  const memory = new RegionMemory(root.get("memory").array().map((r) => parseRegion(r, bits, budget)));
  const modules = (root.opt("modules")?.array() ?? []).map((m) => parseModule(m, bits));
  const truthNode = root.opt("truth");
  const thread: Vector["threads"][number] = { id: 0, crashed: true, registers };
  if (truthNode !== undefined) thread.truth = parseTruth(truthNode, bits);
  const etwNode = root.opt("etw");
  if (etwNode !== undefined) thread.etw = parseEtw(etwNode);
  const vector: Vector = { machine, threads: [thread], memory, modules };
  const description = root.opt("description");
  if (description !== undefined) vector.description = description.string();
  const provenance = root.opt("provenance");
  if (provenance !== undefined) vector.provenance = provenance.string();
  return vector;
}

/** Serialises a one-thread snapshot as a vector; output is deterministic (fixed key order, one region per line). */
export function formatVector(v: Vector): string {
  const thread = v.threads[0];
  if (thread === undefined || v.threads.length !== 1) throw new InputError("bad-value", "a vector holds exactly one thread");
  const a = (x: bigint): string => JSON.stringify(formatAddress(v.machine, x));
  const lines: string[] = ["{", ...formatHead(VECTOR_FORMAT, v)];
  const regs = Object.entries(thread.registers).map(([k, x]) => `${JSON.stringify(k)}: ${a(x)}`);
  lines.push(`  "context": { ${regs.join(", ")} },`);
  const regions = formatRegions(v.machine, v.memory.regions).map((r) => `    ${r}`);
  lines.push(`  "memory": ${list(regions)},`);
  const modules = v.modules.map((m) => formatModule(v.machine, m));
  const truth = (thread.truth ?? []).map((t) => `    ${formatTruthFrame(v.machine, t)}`);
  const tail: string[] = [`  "modules": ${list(modules)}`];
  if (thread.truth !== undefined) tail.push(`  "truth": ${list(truth)}`);
  if (thread.etw !== undefined) tail.push(`  "etw": ${list(thread.etw.map((e) => `    ${formatEtwEvent(e)}`))}`);
  lines.push(tail.join(",\n"));
  lines.push("}");
  return lines.join("\n") + "\n";
}

/** The keys a vector and a sweep begin with, one line each (after the opening brace). */
export function formatHead(format: string, doc: { machine: Machine; description?: string | undefined; provenance?: string | undefined }): string[] {
  const lines = [`  "format": ${JSON.stringify(format)},`, `  "machine": ${JSON.stringify(doc.machine)},`];
  if (doc.description !== undefined) lines.push(`  "description": ${JSON.stringify(doc.description)},`);
  if (doc.provenance !== undefined) lines.push(`  "provenance": ${JSON.stringify(doc.provenance)},`);
  return lines;
}

/** A top-level list, one item per line (items already indented), or `[]`. */
export function list(items: readonly string[]): string {
  return items.length === 0 ? "[]" : `[\n${items.join(",\n")}\n  ]`;
}

/** Whole 4 KiB pages of zeros are written as `zeros` regions; everything else as hex. */
const ZERO_PAGE = 0x1000;

/**
 * Memory regions as JSON objects, one per line: each region is cut at page boundaries, and
 * runs of whole pages that are all zero become `{ "base", "zeros": size }` (a stack is mostly
 * untouched zeros), while the rest stays `{ "base", "hex" }`. Reading back gives the same bytes.
 */
export function formatRegions(machine: Machine, regions: readonly MemoryRegion[]): string[] {
  const a = (x: bigint): string => JSON.stringify(formatAddress(machine, x));
  const out: string[] = [];
  for (const r of regions) {
    const runs: { zero: boolean; from: number; to: number }[] = [];
    let at = 0;
    while (at < r.bytes.length) {
      const next = Math.min(r.bytes.length, at + ZERO_PAGE - Number((r.base + BigInt(at)) % BigInt(ZERO_PAGE)));
      const wholePage = next - at === ZERO_PAGE;
      const zero = wholePage && r.bytes.subarray(at, next).every((b) => b === 0);
      const last = runs[runs.length - 1];
      if (last !== undefined && last.zero === zero) last.to = next;
      else runs.push({ zero, from: at, to: next });
      at = next;
    }
    for (const run of runs) {
      const base = a(r.base + BigInt(run.from));
      out.push(run.zero ? `{ "base": ${base}, "zeros": ${a(BigInt(run.to - run.from))} }` : `{ "base": ${base}, "hex": "${bytesToHex(r.bytes.subarray(run.from, run.to))}" }`);
    }
  }
  return out;
}

/** One module as vector JSON (indented for a list). */
export function formatModule(machine: Machine, m: Module): string {
  const a = (x: bigint): string => JSON.stringify(formatAddress(machine, x));
  const syms = m.symbols.map((s) => `{ "name": ${JSON.stringify(s.name)}, "rva": ${a(s.rva)}${s.size !== undefined ? `, "size": ${a(s.size)}` : ""} }`);
  const symbols = syms.length === 0 ? "[]" : `[\n        ${syms.join(",\n        ")}\n      ]`;
  return `    { "name": ${JSON.stringify(m.name)}, "base": ${a(m.base)}, "size": ${a(m.size)}, "symbols": ${symbols}${formatModuleUnwind(m.unwind)} }`;
}

/** One truth frame as vector JSON. */
export function formatTruthFrame(machine: Machine, t: TruthFrame): string {
  const a = (x: bigint): string => JSON.stringify(formatAddress(machine, x));
  return `{ "pc": ${a(t.pc)}, "sp": ${a(t.sp)}${t.bsp !== undefined ? `, "bsp": ${a(t.bsp)}` : ""}${t.function !== undefined ? `, "function": ${JSON.stringify(t.function)}` : ""} }`;
}
