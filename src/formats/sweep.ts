/**
 * The sweep format `stackwalk-sweep/1`: many snapshots of one run in one file, stored compactly.
 * Memory is given once, as it was before the first snapshot; each snapshot then lists only the
 * bytes written since the previous one, its full register set and its own ground truth
 * (vectors/README.md "Sweeps"). Snapshots are read in order over one mutable memory image, so a
 * sweep of thousands of instructions costs one copy of memory, not thousands.
 */
import { InputError, readingFile } from "../errors.js";
import { RegionMemory, type MemoryRegion } from "../memory/region-memory.js";
import { formatAddress, isMachine, machineInfo, MACHINES, type Machine } from "../model/machine.js";
import type { EtwEvent, Module, Registers, TruthFrame } from "../model/snapshot.js";
import { bytesToHex, JsonNode } from "./json-input.js";
import { formatEtwEvent, formatHead, formatModule, formatRegions, formatTruthFrame, parseEtw, parseModule, parseRegion, parseRegisters, parseTruth, list, type Vector, type ZeroBudget } from "./vector.js";

/** The format identifier of sweeps. */
export const SWEEP_FORMAT = "stackwalk-sweep/1";

/** Bytes written at an address. */
export interface MemoryWrite {
  address: bigint;
  bytes: Uint8Array;
}

/** One snapshot of a sweep, as stored: a delta on the previous one. */
export interface SweepStep {
  /** The instruction count at which the snapshot was taken (0 = before the first instruction). */
  step: number;
  /** A break label, when the snapshot was taken at one. */
  label?: string;
  registers: Registers;
  /** Memory written since the previous snapshot. */
  writes: MemoryWrite[];
  truth?: TruthFrame[];
  /** ETW events logged at this snapshot. */
  etw?: EtwEvent[];
}

/** A whole sweep. Its `memory` holds the state before the first snapshot's writes. */
export interface Sweep {
  machine: Machine;
  description?: string;
  provenance?: string;
  modules: Module[];
  /** Memory before the first snapshot's writes. */
  memory: MemoryRegion[];
  steps: SweepStep[];
}

const TOP_KEYS = ["format", "machine", "description", "provenance", "modules", "memory", "snapshots"] as const;

/** Parses and validates a sweep; errors name the JSON path (and `file`, when given). */
export function parseSweep(text: string, file?: string): Sweep {
  return readingFile(file, () => sweepFromJson(JsonNode.parse(text)));
}

/** Validates parsed JSON as a sweep. */
export function sweepFromJson(root: JsonNode): Sweep {
  root.onlyKeys(TOP_KEYS);
  const format = root.get("format").string();
  if (format !== SWEEP_FORMAT) throw new InputError("bad-value", `unknown format "${format}" (expected "${SWEEP_FORMAT}")`, { path: "$.format" });
  const machineName = root.get("machine").string();
  if (!isMachine(machineName)) {
    throw new InputError("unknown-machine", `unknown machine "${machineName}" (expected one of: ${MACHINES.join(", ")})`, { path: "$.machine" });
  }
  const machine: Machine = machineName;
  const bits = machineInfo(machine).pointerSize * 8;
  const budget: ZeroBudget = { used: 0 };
  const memory = mergeAdjacent(root.get("memory").array().map((r) => parseRegion(r, bits, budget)));
  const layout = new RegionMemory(memory); // validates that regions do not overlap
  const steps = root.get("snapshots").array().map((s): SweepStep => {
    s.onlyKeys(["step", "label", "context", "writes", "truth", "etw"]);
    const step: SweepStep = { step: s.get("step").integer(), registers: parseRegisters(s.get("context"), machine), writes: [] };
    const label = s.opt("label");
    if (label !== undefined) step.label = label.string();
    for (const w of s.opt("writes")?.array() ?? []) {
      const pair = w.array();
      if (pair.length !== 2) throw new InputError("bad-value", "a write is [address, hex bytes]", { path: w.path });
      const address = pair[0]!.hex(bits);
      const bytes = pair[1]!.hexBytes();
      const at = layout.regionAt(address);
      if (at === undefined || address + BigInt(bytes.length) > at.base + BigInt(at.bytes.length)) {
        throw new InputError("bad-value", `write of ${bytes.length} bytes at ${formatAddress(machine, address)} is outside the sweep's memory regions`, { path: w.path });
      }
      step.writes.push({ address, bytes });
    }
    const truth = s.opt("truth");
    if (truth !== undefined) step.truth = parseTruth(truth, bits);
  const etw = s.opt("etw");
  if (etw !== undefined) step.etw = parseEtw(etw);
    return step;
  });
  const sweep: Sweep = { machine, modules: (root.opt("modules")?.array() ?? []).map((m) => parseModule(m, bits)), memory, steps };
  const description = root.opt("description");
  if (description !== undefined) sweep.description = description.string();
  const provenance = root.opt("provenance");
  if (provenance !== undefined) sweep.provenance = provenance.string();
  return sweep;
}

/**
 * Replays a sweep: yields one one-thread snapshot per step, in order. All yielded snapshots
 * share one memory image that moves forward as iteration goes on, so each is valid until the
 * next one is requested.
 */
export function* replaySweep(sweep: Sweep): Generator<Vector & { step: number; label?: string }> {
  // A copy of memory to write into, made of the pages that are not zero: a sweep that declares a
  // 256 MiB zero-filled region costs the pages it writes, not 256 MiB (a new buffer is zero
  // pages the system gives on first touch).
  const regions = sweep.memory.map((r) => {
    const bytes = new Uint8Array(r.bytes.length);
    copyNonZeroPages(bytes, 0, r.bytes);
    return { base: r.base, bytes };
  });
  const memory = new RegionMemory(regions);
  for (const s of sweep.steps) {
    for (const w of s.writes) {
      const r = memory.regionAt(w.address)!;
      r.bytes.set(w.bytes, Number(w.address - r.base));
    }
    const thread: Vector["threads"][number] = { id: 0, crashed: true, registers: s.registers };
    if (s.truth !== undefined) thread.truth = s.truth;
    if (s.etw !== undefined) thread.etw = s.etw;
    const v: Vector & { step: number; label?: string } = { machine: sweep.machine, threads: [thread], memory, modules: sweep.modules, step: s.step };
    if (sweep.description !== undefined) v.description = sweep.description;
    if (s.label !== undefined) v.label = s.label;
    yield v;
  }
}

/** Serialises a sweep: one snapshot per line, deterministic. */
export function formatSweep(sweep: Sweep): string {
  const a = (x: bigint): string => JSON.stringify(formatAddress(sweep.machine, x));
  const lines: string[] = ["{", ...formatHead(SWEEP_FORMAT, sweep)];
  lines.push(`  "modules": ${list(sweep.modules.map((m) => formatModule(sweep.machine, m)))},`);
  lines.push(`  "memory": ${list(formatRegions(sweep.machine, sweep.memory).map((r) => `    ${r}`))},`);
  const steps = sweep.steps.map((s) => {
    const parts = [`"step": ${s.step}`];
    if (s.label !== undefined) parts.push(`"label": ${JSON.stringify(s.label)}`);
    parts.push(`"context": { ${Object.entries(s.registers).map(([k, v]) => `${JSON.stringify(k)}: ${a(v)}`).join(", ")} }`);
    if (s.writes.length > 0) parts.push(`"writes": [${s.writes.map((w) => `[${a(w.address)}, "${bytesToHex(w.bytes)}"]`).join(", ")}]`);
    if (s.truth !== undefined) parts.push(`"truth": [${s.truth.map((t) => formatTruthFrame(sweep.machine, t)).join(", ")}]`);
    if (s.etw !== undefined) parts.push(`"etw": [${s.etw.map(formatEtwEvent).join(", ")}]`);
    return `    { ${parts.join(", ")} }`;
  });
  lines.push(`  "snapshots": ${list(steps)}`);
  lines.push("}");
  return lines.join("\n") + "\n";
}

/**
 * Joins regions that touch (one ends where the next begins) into one, so that a write may
 * span what the file stored as separate pieces (a hex run next to a run of zero pages).
 * Overlapping regions are left for RegionMemory to reject.
 */
function mergeAdjacent(regions: MemoryRegion[]): MemoryRegion[] {
  const sorted = [...regions].sort((x, y) => (x.base < y.base ? -1 : x.base > y.base ? 1 : 0));
  const out: MemoryRegion[] = [];
  let run: MemoryRegion[] = [];
  const flush = (): void => {
    if (run.length === 1) out.push(run[0]!);
    else if (run.length > 1) {
      const bytes = new Uint8Array(run.reduce((n, r) => n + r.bytes.length, 0));
      let at = 0;
      for (const r of run) {
        copyNonZeroPages(bytes, at, r.bytes);
        at += r.bytes.length;
      }
      out.push({ base: run[0]!.base, bytes, ...(run[0]!.origin !== undefined ? { origin: run[0]!.origin } : {}) });
    }
    run = [];
  };
  for (const r of sorted) {
    const last = run[run.length - 1];
    if (last !== undefined && last.base + BigInt(last.bytes.length) !== r.base) flush();
    run.push(r);
  }
  flush();
  return out;
}

/** Bytes compared at a time when looking for pages that are not zero. */
const PAGE = 0x1000;

/**
 * Copies `source` into `target` (new, so all zeros) at `at`, page by page, leaving out the pages
 * that are all zero: a zero-filled region (`zeros` in the file) is read, never written, so the
 * system keeps it as zero pages it does not count as memory in use.
 */
function copyNonZeroPages(target: Uint8Array, at: number, source: Uint8Array): void {
  // Whole words where the bytes are aligned (a region parsed from a file always is).
  const words = source.byteOffset % 4 === 0 ? new Uint32Array(source.buffer, source.byteOffset, source.length >>> 2) : undefined;
  for (let from = 0; from < source.length; from += PAGE) {
    const to = Math.min(source.length, from + PAGE);
    let zero = true;
    let i = from;
    if (words !== undefined) {
      for (const end = to >>> 2; zero && i >>> 2 < end; i += 4) if (words[i >>> 2] !== 0) zero = false;
    }
    for (; zero && i < to; i++) if (source[i] !== 0) zero = false;
    if (!zero) target.set(source.subarray(from, to), at + from);
  }
}
