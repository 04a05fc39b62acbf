/**
 * What the fuzzer feeds: one target per parser, and targets that take a parsed input through
 * every walker, every renderer, the StackWalk64 facade and the command line's in-process entry.
 * Two more take what a symbol file meets: `server` serves the input (a `.sym` file) from symbol
 * servers on 127.0.0.1 that misbehave in a way drawn for the input (hostile-server.ts) and walks
 * with what was downloaded; `postfix` attaches `.sym` files with long, deep and garbage STACK CFI
 * rules and STACK WIN programs to a dump whose every frame uses them.
 * A target's `run` is given one input's bytes; it returns normally, or throws. Which walker,
 * renderer or command it uses is drawn from the input's own generator, so an input is still made
 * again from (target, seed, iteration) alone.
 *
 * Seeds come from test/fixtures (real dumps, symbol files, an ETW trace) and the vector
 * corpus (vectors, sweeps, the real programs' images and PDBs), some reshaped into what a target
 * reads (dumps written from vectors, ETL files of a few buffers, zips, UNWIND_INFO blobs).
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { deflateRawSync, gunzipSync } from "node:zlib";
import { InputError } from "../../src/errors.js";
import type { Rng } from "./rng.js";
import { concat, type Structure } from "./mutate.js";
import { bytesSource, minidumpSnapshot, readMinidump, type Minidump } from "../../src/formats/minidump.js";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { parseJsonInput } from "../../src/formats/input.js";
import { parseVector, type Vector } from "../../src/formats/vector.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { parsePe } from "../../src/formats/pe.js";
import { readCabinet } from "../../src/formats/cab.js";
import { writeCab } from "../support/cab-writer.js";
import { parsePdb } from "../../src/formats/pdb.js";
import { parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { attachSymbolFile, parseSymbolFile } from "../../src/formats/symbol-file.js";
import { formatBreakpadSym, symFileInput } from "../../src/formats/breakpad-sym-write.js";
import { readMappedImage } from "../../src/formats/pe-mapped.js";
import { x64ModuleCfi } from "../../src/arch/x64/cfi-from-unwind.js";
import { decompressLz77, readEtl } from "../../src/formats/etw/etl.js";
import { decodeApiFile, decodeDiskEvents, decodeStackTrace, detectItemsForm, EVENT_HEADER_EXT_TYPE, encodeApiItems } from "../../src/formats/etw/extended-data.js";
import { stitchStacks } from "../../src/formats/etw/stitch.js";
import { decodeDescriptors, decodeRuntimeFunctions, decodeUnwindInfo as decodeIa64UnwindInfo } from "../../src/formats/unwind-data/ia64.js";
import { frameStateAt } from "../../src/arch/ia64/state.js";
import { decodeUnwindInfo } from "../../src/formats/unwind-data/x64.js";
import { evaluateProgram, parseProgram } from "../../src/formats/frame-data.js";
import { cfiTable, compileExpression, evaluateExpression, rulesAt } from "../../src/arch/cfi.js";
import { RegionMemory, type MemoryRegion } from "../../src/memory/region-memory.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { walkSnapshot, walkThread, type ThreadWalk } from "../../src/walk/walk.js";
import { archWalker, strategiesFor, WALKER_NAMES, type WalkerName } from "../../src/walk/registry.js";
import { AddressMode } from "../../src/model/address.js";
import { stackWalk64Detailed } from "../../src/walk/stackwalk64.js";
import { newStackFrame64 } from "../../src/model/stackframe.js";
import { machineInfo } from "../../src/model/machine.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import { writeJson } from "../../src/render/json.js";
import { renderText } from "../../src/render/text.js";
import { renderWindbg } from "../../src/render/windbg.js";
import { breakpadReport } from "../../src/analysis/breakpad-report.js";
import { writeBreakpad, writeBreakpadMachineReadable } from "../../src/render/breakpad.js";
import { breakpadStackContents, writeBreakpadBrief } from "../../src/render/breakpad-stack.js";
import { explainSnapshot } from "../../src/analysis/explain-walk.js";
import { formatExplanation } from "../../src/render/explain.js";
import { renderSvg } from "../../src/render/svg.js";
import { renderHtml } from "../../src/render/html.js";
import { crossCheck, threadEtw } from "../../src/analysis/crosscheck.js";
import { crossCheckJson, crossCheckText } from "../../src/render/crosscheck.js";
import { walkStacks } from "../../src/testing/index.js";
import { etlInZip } from "../../src/formats/etw/etl.js";
import { inZipMember } from "../../src/formats/zip.js";
import { count, meteredSnapshot, meteredSource, type Meter } from "./meter.js";
import { downloadSymbols, parseSymbolPath } from "../../src/node/symbol-path.js";
import { hostileServers, MISBEHAVIOURS } from "./hostile-server.js";
import { cfiDump, cfiSym } from "../support/hostile-inputs.js";

/** One seed: a name (part of every input's key) and its bytes; `context` is what the target needs besides the bytes. */
export interface Seed {
  name: string;
  bytes: Uint8Array;
  context?: unknown;
}

/** What a target's run may use besides the input. */
export interface RunContext {
  /** A directory of its own, for inputs that must be files (the command line's). */
  scratch: string;
  /** Counts the run's work (and stops it past the meter's limits); the campaign runs none. */
  meter?: Meter;
}

/** A fuzz target. */
export interface Target {
  name: string;
  /** What its inputs are, for the structure-aware mutators. */
  structure: Structure;
  /** Its seeds (made once per worker). */
  seeds(): Seed[];
  /** Runs one input. Returns normally or throws; a promise for the command line. */
  run(bytes: Uint8Array, seed: Seed, rng: Rng, context: RunContext): void | Promise<void> | Promise<number>;
}

/** The repository's root (the fuzzer is run from it) and its fixtures (test/fixtures). */
export const ROOT = process.cwd();
export const FIXTURES = join(ROOT, "test", "fixtures");

/**
 * The files under `dir` whose names pass `test`, sorted; a fixture stored gzip-compressed
 * (`NAME.gz`) is tested by, and named after, its unpacked name (`bytesOf` unpacks it).
 */
function files(dir: string, test: (name: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p, test));
    else if (test(name.endsWith(".gz") ? name.slice(0, -3) : name)) out.push(p);
  }
  return out;
}

/** A seed's name: its path under the fixtures (`fixtures/…`, as stored unpacked) or the checkout, whatever the checkout's own path. */
const rel = (p: string): string => {
  const fixture = relative(FIXTURES, p).replace(/\.gz$/, "");
  return fixture.startsWith("..") ? relative(ROOT, p) : `fixtures/${fixture}`;
};
const bytesOf = (p: string): Uint8Array => new Uint8Array(p.endsWith(".gz") ? gunzipSync(readFileSync(p)) : readFileSync(p));
const latin1Of = (p: string): string => Buffer.from(bytesOf(p)).toString("latin1");
/**
 * The path of fixture `rel` under {@link FIXTURES}, or of `rel.gz` when only that is stored
 * (`bytesOf` unpacks it). Found from the checkout, not from this file: the children run a bundle
 * of it from elsewhere.
 */
const fixture = (rel: string): string => {
  const plain = join(FIXTURES, rel);
  return existsSync(plain) || !existsSync(`${plain}.gz`) ? plain : `${plain}.gz`;
};
const text = new TextDecoder();
const encoder = new TextEncoder();

/** A writer that keeps only the count of what it is given. */
function sink(): { write: (t: string) => void; size: () => number } {
  let n = 0;
  return {
    write: (t) => {
      n += t.length;
      count("written", t.length);
    },
    size: () => n,
  };
}

// ---------------------------------------------------------------------------------------------
// Seeds.

/**
 * Vectors of the corpus small enough to fuzz (sweeps and the 1000-deep recursions left out). The
 * chain snapshots of vectors/compare are left out too: they are of the kinds the corpus already
 * has, and taking them would move the spread samples below, which the findings' keys name.
 */
function vectorFiles(): string[] {
  const compare = join(ROOT, "vectors", "compare");
  return files(join(ROOT, "vectors"), (n) => n.endsWith(".json") && !n.endsWith(".sweep.json")).filter((p) => !p.startsWith(compare) && statSync(p).size < 120_000);
}

let vectorCache: { file: string; bytes: Uint8Array; vector: Vector }[] | undefined;
function vectors(): { file: string; bytes: Uint8Array; vector: Vector }[] {
  // Other JSON files under vectors/ (program specs, call chains) are not vectors.
  vectorCache ??= vectorFiles().flatMap((file) => {
    const bytes = bytesOf(file);
    try {
      return [{ file, bytes, vector: parseVector(text.decode(bytes)) }];
    } catch {
      return [];
    }
  });
  return vectorCache;
}

/** Every n-th of a list (a spread sample). */
function sample<T>(list: readonly T[], most: number): T[] {
  if (list.length <= most) return [...list];
  const step = list.length / most;
  return Array.from({ length: most }, (_, i) => list[Math.floor(i * step)]!);
}

let dumpSeedCache: Seed[] | undefined;
/** Real dumps, and dumps written from x86 and x64 vectors (frame chains, FPO, UNWIND_INFO). */
function dumpSeeds(): Seed[] {
  if (dumpSeedCache !== undefined) return dumpSeedCache;
  const real = files(FIXTURES, (n) => n.endsWith(".dmp")).map((p) => ({ name: rel(p), bytes: bytesOf(p) }));
  const written = sample(
    vectors().filter((v) => v.vector.machine === "x86" || v.vector.machine === "x64"),
    24,
  ).flatMap((v) => {
    try {
      return [{ name: `${rel(v.file)}.dmp`, bytes: minidumpBytes(v.vector) }];
    } catch {
      return [];
    }
  });
  dumpSeedCache = [...real, ...written, ...armDumpSeeds()];
  return dumpSeedCache;
}

/** Dumps written from snapshots of the ARM sweeps (Breakpad's ARM context, packed and .xdata unwind data in the image), after the others so that their samples keep their places. */
function armDumpSeeds(): Seed[] {
  const out: Seed[] = [];
  for (const name of ["packed-shapes", "xdata-codes"]) {
    const file = join(ROOT, "vectors", "arm", "synthetic", `${name}.sweep.json`);
    // A sweep's snapshots share one memory: each is written while it is the current one.
    for (const v of replaySweep(parseSweep(text.decode(bytesOf(file))))) {
      if (v.step === 5 || v.step === 40) out.push({ name: `${rel(file)}#${v.step}.dmp`, bytes: minidumpBytes(v) });
    }
  }
  return out;
}

function jsonSeeds(): Seed[] {
  return sample(vectors(), 60).map((v) => ({ name: rel(v.file), bytes: v.bytes }));
}

function sweepSeeds(): Seed[] {
  // Sweeps are cut to their first steps: the reader and the replay see the same structure. The
  // ARM sweeps are left out: the seeds the findings' keys name stay as they were (the ARM dumps
  // written from them are the minidump target's seeds).
  const arm = join(ROOT, "vectors", "arm");
  return files(join(ROOT, "vectors"), (n) => n.endsWith(".sweep.json"))
    .filter((p) => statSync(p).size < 3_000_000 && !p.startsWith(arm + "/"))
    .slice(0, 6)
    .map((p) => {
      const json = JSON.parse(readFileSync(p, "utf8")) as { steps?: unknown[] };
      if (Array.isArray(json.steps)) json.steps = json.steps.slice(0, 12);
      return { name: rel(p), bytes: encoder.encode(JSON.stringify(json)) };
    });
}

function peSeeds(): Seed[] {
  return files(join(ROOT, "vectors", "programs", "c", "build"), (n) => n.endsWith(".exe")).map((p) => ({ name: rel(p), bytes: bytesOf(p) }));
}

function pdbSeeds(): Seed[] {
  return files(join(ROOT, "vectors", "programs", "c", "build"), (n) => n.endsWith(".pdb"))
    .filter((p) => statSync(p).size < 400_000)
    .map((p) => ({ name: rel(p), bytes: bytesOf(p) }));
}

/** Cabinets: the fixtures (gcab's) and the C programs' images compressed with blocks that reach back (the test writer's). */
function cabSeeds(): Seed[] {
  const fixtures = files(join(FIXTURES, "cab"), (n) => n.endsWith(".cab") || n.endsWith("_")).map((p) => ({ name: rel(p), bytes: bytesOf(p) }));
  const images = peSeeds().slice(0, 4).map((s) => ({ name: `${s.name}#cab`, bytes: writeCab([{ name: "a.exe", bytes: s.bytes }, { name: "b.exe", bytes: s.bytes }]) }));
  return [...fixtures, ...images];
}

let symCache: Seed[] | undefined;
/**
 * `.sym` files: windows of the fixture's real ones (their MODULE line, then a run of records),
 * with minidump2's snapshot to attach them to; and the x64 vectors' modules written as `.sym`
 * files (STACK CFI), with their vector.
 */
function symSeeds(): Seed[] {
  if (symCache !== undefined) return symCache;
  const out: Seed[] = [];
  const dump = fixture("breakpad/minidump2.dmp");
  for (const p of files(join(FIXTURES, "breakpad", "symbols"), (n) => n.endsWith(".sym"))) {
    const lines = latin1Of(p).split("\n");
    const head = lines.filter((l) => l.startsWith("MODULE") || l.startsWith("INFO"));
    const kinds = ["FILE", "FUNC", "PUBLIC", "STACK WIN 4", "STACK WIN 0"];
    for (const kind of kinds) {
      const first = lines.findIndex((l) => l.startsWith(kind));
      if (first < 0) continue;
      const window = lines.slice(first, first + 120);
      out.push({ name: `${rel(p)}#${kind}`, bytes: encoder.encode([...head, ...window].join("\n") + "\n"), context: { dump } });
    }
  }
  for (const v of sample(vectors().filter((v) => v.vector.machine === "x64" || v.vector.machine === "x86"), 12)) {
    for (const m of v.vector.modules) {
      const input = symFileInput(m, v.vector.machine, v.vector.memory);
      if (input === undefined) continue;
      if (v.vector.machine === "x64") input.stackCfi = x64ModuleCfi(m, v.vector.memory);
      const sym = formatBreakpadSym(input);
      if (sym.length > 200_000) continue;
      out.push({ name: `${rel(v.file)}#${m.name}.sym`, bytes: encoder.encode(sym), context: { vector: v.file } });
      break;
    }
  }
  symCache = out;
  return out;
}

/** STACK CFI lines of the written `.sym` files, each with its MODULE line. */
function cfiSeeds(): Seed[] {
  return symSeeds()
    .filter((s) => text.decode(s.bytes).includes("STACK CFI"))
    .map((s) => {
      const lines = text.decode(s.bytes).split("\n");
      const cfi = lines.filter((l) => l.startsWith("STACK CFI"));
      return { name: s.name, bytes: encoder.encode([lines[0]!, ...cfi.slice(0, 200)].join("\n") + "\n"), context: s.context };
    });
}

/** FrameData programs: the fixture's STACK WIN 4 programs and the PDBs'. */
function programSeeds(): Seed[] {
  const programs = new Set<string>();
  for (const p of files(join(FIXTURES, "breakpad", "symbols"), (n) => n.endsWith(".sym"))) {
    for (const line of latin1Of(p).split("\n")) {
      if (!line.startsWith("STACK WIN 4 ")) continue;
      const fields = line.split(" ");
      if (fields.length > 13) programs.add(fields.slice(13).join(" "));
      if (programs.size > 40) break;
    }
  }
  for (const s of pdbSeeds()) {
    try {
      for (const r of parsePdb(s.bytes).frameData) if (r.program !== undefined) programs.add(r.program);
    } catch {
      // not a seed then
    }
  }
  const x86 = vectors().find((v) => v.vector.machine === "x86" && v.file.includes("c-fpo"))?.file ?? vectors().find((v) => v.vector.machine === "x86")!.file;
  return [...programs].slice(0, 80).map((p, i) => ({ name: `program-${i}`, bytes: encoder.encode(p), context: { vector: x86 } }));
}

let etlCache: { header: Uint8Array; buffers: Uint8Array[] } | undefined;
/** The fixture trace's log-file-header buffer and its first buffers (XPRESS-compressed). */
function etlParts(): { header: Uint8Array; buffers: Uint8Array[] } {
  if (etlCache !== undefined) return etlCache;
  const etl = etlInZip(bytesOf(fixture("etw/net.4.5.2.x64.etl.zip"))).bytes;
  const all = readEtl(etl).buffers;
  const header = etl.subarray(0, all[0]!.bufferSize);
  const buffers = sample(all.slice(1), 12).map((b) => etl.subarray(b.offset, b.offset + b.bufferSize));
  etlCache = { header, buffers };
  return etlCache;
}

function etlSeeds(): Seed[] {
  const { header, buffers } = etlParts();
  const out: Seed[] = [{ name: "net.etl#header", bytes: header }];
  buffers.forEach((b, i) => out.push({ name: `net.etl#buffer-${i}`, bytes: concat(header, b) }));
  out.push({ name: "net.etl#buffers-0-2", bytes: concat(header, ...buffers.slice(0, 3)) });
  return out;
}

/** A zip archive of one member (methods 0 stored and 8 deflate), as PKWARE's APPNOTE lays it out. */
export function zipOf(name: string, data: Uint8Array, method: 0 | 8): Uint8Array {
  const body = method === 8 ? new Uint8Array(deflateRawSync(data)) : data;
  const nameBytes = encoder.encode(name);
  const local = new Uint8Array(30 + nameBytes.length);
  const lv = new DataView(local.buffer);
  lv.setUint32(0, 0x04034b50, true);
  lv.setUint16(4, 20, true);
  lv.setUint16(8, method, true);
  lv.setUint32(18, body.length, true);
  lv.setUint32(22, data.length, true);
  lv.setUint16(26, nameBytes.length, true);
  local.set(nameBytes, 30);
  const central = new Uint8Array(46 + nameBytes.length);
  const cv = new DataView(central.buffer);
  cv.setUint32(0, 0x02014b50, true);
  cv.setUint16(4, 20, true);
  cv.setUint16(6, 20, true);
  cv.setUint16(10, method, true);
  cv.setUint32(20, body.length, true);
  cv.setUint32(24, data.length, true);
  cv.setUint16(28, nameBytes.length, true);
  cv.setUint32(42, 0, true);
  central.set(nameBytes, 46);
  const end = new Uint8Array(22);
  const ev = new DataView(end.buffer);
  ev.setUint32(0, 0x06054b50, true);
  ev.setUint16(8, 1, true);
  ev.setUint16(10, 1, true);
  ev.setUint32(12, central.length, true);
  ev.setUint32(16, local.length + body.length, true);
  return concat(local, body, central, end);
}

function zipSeeds(): Seed[] {
  return etlSeeds()
    .slice(0, 5)
    .flatMap((s, i) => [
      { name: `${s.name}.zip`, bytes: zipOf("trace.etl", s.bytes, 8) },
      ...(i < 2 ? [{ name: `${s.name}.stored.zip`, bytes: zipOf("trace.etl", s.bytes, 0) }] : []),
    ]);
}

/** LZ77 payloads of the trace's compressed buffers: the output length (u32) then the compressed bytes. */
function lz77Seeds(): Seed[] {
  return etlParts().buffers.map((b, i) => {
    const v = new DataView(b.buffer, b.byteOffset, b.byteLength);
    const out = new Uint8Array(4 + b.length - 0x48);
    new DataView(out.buffer).setUint32(0, v.getUint32(4, true) - 0x48, true);
    out.set(b.subarray(0x48), 4);
    return { name: `net.etl#buffer-${i}.lz77`, bytes: out };
  });
}

/** Extended data items of the ETW vectors, in the on-disk form and in the API form. */
function itemSeeds(): Seed[] {
  const out: Seed[] = [];
  for (const v of vectors()) {
    for (const t of v.vector.threads) {
      for (const [i, e] of (t.etw ?? []).entries()) {
        out.push({ name: `${rel(v.file)}#event-${i}`, bytes: e.items });
        try {
          const items = decodeDiskEvents(e.items).flat();
          const api = encodeApiItems(items, 0n);
          out.push({ name: `${rel(v.file)}#event-${i}.api`, bytes: concat(api.headers, api.data) });
        } catch {
          // the on-disk form alone
        }
      }
    }
  }
  return out.slice(0, 40);
}

/** Mapped images of vectors of `machine` with an exception directory: the image bytes, with the vector. */
function imageSeeds(machine: "x64" | "ia64"): Seed[] {
  const out: Seed[] = [];
  for (const v of sample(vectors().filter((v) => v.vector.machine === machine), 40)) {
    const m = v.vector.modules[0];
    if (m === undefined) continue;
    const region = v.vector.memory.regions.find((r) => r.base === m.base);
    if (region === undefined || region.bytes.length > 200_000) continue;
    out.push({ name: `${rel(v.file)}#${m.name}`, bytes: region.bytes, context: { vector: v.file } });
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Running: walkers, renderers and analyses over a parsed snapshot.

function vectorFrom(file: string): Vector {
  return vectors().find((v) => v.file === file)!.vector;
}

/** The walkers of a machine, named; `auto` first. */
function walkers(snapshot: Snapshot): WalkerName[] {
  return WALKER_NAMES.filter((w) => {
    try {
      return strategiesFor(snapshot.machine, w, snapshot.os).length > 0;
    } catch {
      return false;
    }
  });
}

/** One renderer or analysis, drawn by the generator, over the walks of a snapshot. */
function render(rng: Rng, snapshot: Snapshot, walks: ThreadWalk[], dump?: Minidump): void {
  const out = sink();
  const choice = rng.below(dump !== undefined ? 11 : 8);
  switch (choice) {
    case 0:
      out.write(renderText(snapshot.machine, snapshot.modules, walks, rng.chance(0.5)));
      break;
    case 1:
      writeJson(snapshot.machine, snapshot.modules, walks, out.write, dump === undefined ? {} : { dump });
      break;
    case 2:
      out.write(renderWindbg(snapshot.machine, snapshot.modules, walks, snapshot.memory));
      break;
    case 3: {
      const explained = explainSnapshot(snapshot, { walker: rng.pick(walkers(snapshot)), maxFrames: 200 });
      for (const e of explained) out.write(formatExplanation(e));
      break;
    }
    case 4: {
      const explained = explainSnapshot(snapshot, { thread: snapshot.threads[0]?.id ?? "all", maxFrames: 200 });
      for (const e of explained) out.write(renderSvg(e));
      break;
    }
    case 5:
      out.write(renderHtml(explainSnapshot(snapshot, { maxFrames: 200 })));
      break;
    case 6: {
      for (const { thread, walk } of walks) {
        if (thread.truth !== undefined) compareWithTruth(snapshot.machine, walk, thread.truth);
        const etw = threadEtw(snapshot, thread);
        const report = crossCheck(snapshot, walk, etw.stacks, thread.truth === undefined ? {} : { truth: thread.truth });
        out.write(crossCheckText(report, "fuzz"));
        out.write(JSON.stringify(crossCheckJson(report)));
      }
      break;
    }
    case 7:
      walkStacks(snapshot);
      break;
    default: {
      if (snapshot.machine === "ia64") return;
      const report = breakpadReport(dump!, snapshot, { walk: { walker: rng.pick(walkers(snapshot)) } });
      if (choice === 8) writeBreakpad(report, out.write, rng.chance(0.5) ? { afterFrame: breakpadStackContents(report, snapshot) } : {});
      else if (choice === 9) writeBreakpadMachineReadable(report, out.write);
      else writeBreakpadBrief(report, out.write);
    }
  }
}

/** Walks a snapshot with a walker drawn by the generator, then renders it. */
function walkAndRender(rng: Rng, given: Snapshot, dump?: Minidump): void {
  const snapshot = meteredSnapshot(given);
  const walker = rng.pick(walkers(snapshot).length > 0 ? walkers(snapshot) : (["auto"] as WalkerName[]));
  const walks = walkSnapshot(snapshot, { walker });
  count("frames", walks.reduce((n, w) => n + w.walk.frames.length, 0));
  render(rng, snapshot, walks, dump);
}

/** Runs the StackWalk64 facade from each thread's context, up to `calls` calls per thread. */
function facade(snapshot: Snapshot, calls: number, rng: Rng): void {
  const info = machineInfo(snapshot.machine);
  const arch = archWalker(snapshot.machine);
  for (const thread of snapshot.threads.slice(0, 4)) {
    const frame = newStackFrame64();
    const registers = { ...thread.registers };
    const flat = (offset: bigint | undefined): { offset: bigint; segment: number; mode: AddressMode } => ({ offset: offset ?? 0n, segment: 0, mode: AddressMode.Flat });
    frame.addrPC = flat(arch.pcOf(registers));
    frame.addrStack = flat(arch.spOf(registers));
    frame.addrFrame = flat(arch.fpOf(registers));
    if (rng.chance(0.1)) frame.addrFrame = flat(BigInt(rng.u32()));
    const compatibility = rng.chance(0.5) ? "native" : "wine";
    for (let i = 0; i < calls; i++) {
      if (!stackWalk64Detailed(info.imageFileMachine, snapshot, frame, { registers }, { compatibility }).ok) break;
    }
  }
}

/** A vector with `bytes` in place of the region at `base`. */
function withRegion(vector: Vector, base: bigint, bytes: Uint8Array): Vector {
  const regions: MemoryRegion[] = vector.memory.regions.map((r) => (r.base === base ? { ...r, bytes } : r));
  return { ...vector, memory: new RegionMemory(regions), modules: vector.modules.map((m) => ({ ...m })) };
}

function u32(b: Uint8Array, at: number): number {
  return at >= 0 && at + 4 <= b.length ? new DataView(b.buffer, b.byteOffset, b.byteLength).getUint32(at, true) : 0;
}

/** The exception directory of a mapped image (RVA and size), or undefined. */
function exceptionDirectory(image: Uint8Array): { rva: number; size: number } | undefined {
  const lfanew = u32(image, 0x3c);
  const opt = lfanew + 24;
  if (opt + 2 > image.length) return undefined;
  const magic = image[opt]! | (image[opt + 1]! << 8);
  const dirs = opt + (magic === 0x20b ? 112 : 96);
  return { rva: u32(image, dirs + 3 * 8), size: u32(image, dirs + 3 * 8 + 4) };
}

// ---------------------------------------------------------------------------------------------
// The targets.

/**
 * Attaches the .sym file `bytes` to `snapshot`; false when it belongs to no module (a file whose
 * MODULE line was changed: a typed error, and the end of the input).
 */
function attachedTo(snapshot: Snapshot, bytes: Uint8Array): boolean {
  try {
    attachSymbolFile(snapshot, parseSymbolFile(bytes, { skipMalformed: true }));
    return true;
  } catch (e) {
    if (e instanceof InputError) return false;
    throw e;
  }
}

const SYM_DUMPS = new Map<string, Uint8Array>();

/** The snapshot of the dump a `.sym` seed belongs to, read anew (its bytes read once). */
function symDump(file: string): { dump: Minidump; snapshot: Snapshot } {
  let bytes = SYM_DUMPS.get(file);
  if (bytes === undefined) SYM_DUMPS.set(file, (bytes = bytesOf(file)));
  const dump = readMinidump(bytesSource(bytes));
  return { dump, snapshot: minidumpSnapshot(dump) };
}

/**
 * The limits the `server` target downloads within: short, so that a server that stalls or drips
 * costs a fraction of a second of waiting (the CPU-time watchdog does not count waiting).
 */
const SERVER_LIMITS = { timeoutMs: 200, downloadDeadlineMs: 300, runDeadlineMs: 1500, concurrency: 3, maxBytes: 1 << 20, shareBytes: 256 << 10, maxRedirects: 5 } as const;

/** Where a redirect that climbs out of the cache would write: it must never exist. */
const OUTSIDE = "/tmp/hostile.sym";

let serverInputs = 0;

/**
 * Programs for STACK CFI rules and STACK WIN records that hurt: long (past the postfix limits or
 * just within them), deep (values stacked, then the operators), garbage (any tokens), and
 * assignment chains; each a few hundred to twenty thousand tokens.
 */
function hostileProgram(rng: Rng, win: boolean): string {
  const vocabulary = ["$esp", "$ebp", "$eip", "$ebx", ".cfa", ".ra", "$T0", "$T1", "$T2", ".raSearch", ".cbSavedRegs", ".cbParams", "+", "-", "*", "/", "%", "@", "^", "=", "0", "4", "8", "-4", "0xffffffff", "4294967295", "18446744073709551615", "1e3", "$", "=$eip", "..", ""];
  switch (rng.below(5)) {
    case 0: {
      const pairs = rng.pick([100, 253, 254, 255, 256, 1000, 4998, 9999]);
      return `${win ? "$T0" : "$esp"} 4 +${" 0 +".repeat(pairs)}${win ? " =" : ""}`;
    }
    case 1: {
      const depth = rng.pick([30, 63, 64, 65, 66, 200, 2000]);
      return `${win ? "$T0 " : ""}${"1 ".repeat(depth)}${"+ ".repeat(depth - 1)}${win ? "=" : ""}`.trim();
    }
    case 2:
      return Array.from({ length: rng.between(1, 600) }, () => rng.pick(vocabulary)).join(" ");
    case 3:
      return "$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = ".repeat(rng.between(1, 60)).trim();
    default:
      return `$esp ${"$esp ^ ".repeat(rng.between(1, 250))}4 +`;
  }
}

/** The dump the `postfix` target attaches its files to: two threads of 600 frames, each returning into app.exe+0x1010 (test/support/hostile-inputs.ts). */
let postfixDump: Uint8Array | undefined;

export const TARGETS: readonly Target[] = [
  {
    name: "minidump",
    structure: "minidump",
    seeds: dumpSeeds,
    run(bytes, _seed, rng) {
      const dump = readMinidump(meteredSource(bytesSource(bytes)));
      const snapshot = minidumpSnapshot(dump);
      walkAndRender(rng, snapshot, dump);
    },
  },
  {
    name: "vector",
    structure: "json",
    seeds: jsonSeeds,
    run(bytes, _seed, rng) {
      const input = parseJsonInput(text.decode(bytes));
      if (input.kind === "vector") walkAndRender(rng, input.vector);
      else for (const v of replaySweep(input.sweep)) walkSnapshot(v);
    },
  },
  {
    name: "sweep",
    structure: "json",
    seeds: sweepSeeds,
    run(bytes, _seed, rng) {
      const sweep = parseSweep(text.decode(bytes));
      // At most 32 snapshots walked, spread over the sweep (a long sweep stays well inside the watchdog).
      const every = Math.max(4, Math.ceil(sweep.steps.length / 32));
      let i = 0;
      for (const v of replaySweep(sweep)) {
        if (i++ % every === 0) walkAndRender(rng, v);
      }
    },
  },
  {
    name: "pe",
    structure: "bytes",
    seeds: peSeeds,
    run(bytes) {
      const image = parsePe(bytes);
      const mapped = image.mapped();
      readMappedImage(new RegionMemory([{ base: 0x400000n, bytes: mapped }]), 0x400000n);
      parseSymbolFile(bytes);
    },
  },
  {
    name: "cab",
    structure: "bytes",
    seeds: cabSeeds,
    run(bytes) {
      const cab = readCabinet(bytes, { maxBytes: 1 << 22 });
      for (const f of cab.files) if (cab.extract(f).length !== f.size) throw new Error(`${f.name}: extracted to another size than the ${f.size} declared`);
    },
  },
  {
    name: "pdb",
    structure: "bytes",
    seeds: pdbSeeds,
    run(bytes) {
      const pdb = parsePdb(bytes);
      const all = pdb.symbols();
      // Looked up by address in a fresh parse: each symbol made alone, its lines and inline sites read as asked.
      const index = parsePdb(bytes).symbolIndex();
      for (const s of all.slice(0, 16)) {
        if (s.size === 0) continue;
        const found = index.at(s.rva);
        if (found === undefined || found.rva !== s.rva) throw new Error(`${s.name} at ${s.rva}: looked up by address, found ${found?.name}`);
        void found.lines;
        void found.inlines?.at(BigInt(s.rva));
      }
      const file = parseSymbolFile(bytes, { name: "fuzz.pdb" });
      void file;
    },
  },
  {
    name: "sym",
    structure: "text",
    seeds: symSeeds,
    run(bytes, seed, rng) {
      const sym = parseBreakpadSym(bytes, { skipMalformed: rng.chance(0.5) });
      void sym.functions.length;
      void sym.publics.length;
      void sym.stackWin.length;
      void sym.files.size;
      for (const f of sym.functions.slice(0, 8)) void f.lines.length;
      const context = seed.context as { dump?: string; vector?: string };
      let snapshot: Snapshot;
      let dump: Minidump | undefined;
      if (context.dump !== undefined) ({ dump, snapshot } = symDump(context.dump));
      else snapshot = { ...vectorFrom(context.vector!) };
      if (!attachedTo(snapshot, bytes)) return;
      walkAndRender(rng, snapshot, dump);
    },
  },
  {
    name: "etl",
    structure: "etl",
    seeds: etlSeeds,
    run(bytes) {
      readEtl(bytes);
    },
  },
  {
    name: "zip",
    structure: "zip",
    seeds: zipSeeds,
    run(bytes) {
      // As the command line reads it: an error in the member is named at the member's data.
      const member = etlInZip(bytes);
      try {
        readEtl(member.bytes);
      } catch (e) {
        throw e instanceof InputError ? inZipMember(e, member) : e;
      }
    },
  },
  {
    name: "lz77",
    structure: "bytes",
    seeds: lz77Seeds,
    run(bytes) {
      const length = u32(bytes, 0);
      decompressLz77(bytes.subarray(4), Math.min(length, 1 << 20), 4);
    },
  },
  {
    name: "etw-items",
    structure: "bytes",
    seeds: itemSeeds,
    run(bytes) {
      const form = detectItemsForm(bytes);
      const events = form === "api" ? [decodeApiFile(bytes)] : decodeDiskEvents(bytes);
      const items = events.flat().flatMap((item, i) =>
        item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 || item.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64 ? [{ trace: decodeStackTrace(item), source: `item ${i}` }] : [],
      );
      stitchStacks(items);
    },
  },
  {
    name: "ia64-descriptors",
    structure: "bytes",
    seeds: () => imageSeeds("ia64"),
    run(bytes, seed, rng) {
      const vector = vectorFrom((seed.context as { vector: string }).vector);
      const m = vector.modules[0]!;
      const dir = exceptionDirectory(bytes);
      if (dir !== undefined && dir.rva < bytes.length) {
        const entries = decodeRuntimeFunctions(bytes.subarray(dir.rva, Math.min(bytes.length, dir.rva + Math.min(dir.size, 12 * 64))), dir.rva);
        for (const e of entries.slice(0, 16)) {
          if (e.unwindInfo >= bytes.length) continue;
          const info = decodeIa64UnwindInfo(bytes.subarray(e.unwindInfo), e.unwindInfo);
          frameStateAt(info.records, rng.below(64));
          decodeDescriptors(bytes.subarray(e.unwindInfo + 8, e.unwindInfo + 8 + rng.small(10)), e.unwindInfo + 8);
        }
      }
      const changed = withRegion(vector, m.base, bytes);
      walkAndRender(rng, changed);
      facade(changed, 200, rng);
    },
  },
  {
    name: "unwind-info",
    structure: "bytes",
    seeds: () => imageSeeds("x64"),
    run(bytes, seed, rng) {
      const vector = vectorFrom((seed.context as { vector: string }).vector);
      const m = vector.modules[0]!;
      const dir = exceptionDirectory(bytes);
      if (dir !== undefined) {
        const read = (rva: number, size: number): Uint8Array | undefined => (rva >= 0 && size >= 0 && rva + size <= bytes.length ? bytes.subarray(rva, rva + size) : undefined);
        for (let i = 0; i < 16 && dir.rva + 12 * i + 12 <= bytes.length; i++) decodeUnwindInfo(read, u32(bytes, dir.rva + 12 * i + 8));
      }
      const changed = withRegion(vector, m.base, bytes);
      walkAndRender(rng, changed);
      facade(changed, 200, rng);
    },
  },
  {
    name: "frame-data",
    structure: "text",
    seeds: programSeeds,
    run(bytes, seed, rng) {
      const parsed = parseProgram(text.decode(bytes));
      if (!parsed.ok) return;
      const vector = vectorFrom((seed.context as { vector: string }).vector);
      const regs = vector.threads[0]!.registers;
      const inputs: Record<string, bigint> = { $eip: regs["eip"] ?? 0n, $esp: regs["esp"] ?? 0n, $ebp: regs["ebp"] ?? 0n, ".raSearch": (regs["esp"] ?? 0n) + BigInt(rng.below(64)), ".cbCalleeParams": BigInt(rng.below(16)) };
      evaluateProgram(parsed.program, inputs, vector.memory);
    },
  },
  {
    name: "stack-cfi",
    structure: "text",
    seeds: cfiSeeds,
    run(bytes, seed, rng) {
      const sym = parseBreakpadSym(bytes, { skipMalformed: true });
      const table = cfiTable(sym.stackCfi);
      const vector = vectorFrom((seed.context as { vector: string }).vector);
      const names = new Map(Object.entries(vector.threads[0]!.registers).map(([k, v]) => [`$${k}`, v]));
      for (const r of sym.stackCfi.slice(0, 8)) {
        const at = rulesAt(table, r.address + rng.below(Math.max(1, r.size)), 8);
        if (at === undefined) continue;
        for (const expression of [at.set.cfa, at.set.ra, ...at.set.registers.values()]) {
          if (expression !== undefined) evaluateExpression(expression, names, vector.memory);
        }
        for (const d of r.deltas.slice(0, 4)) {
          const e = compileExpression(d.rules, 8);
          if (e !== undefined) evaluateExpression(e, names, vector.memory);
        }
      }
      const snapshot = { ...vector };
      if (!attachedTo(snapshot, bytes)) return;
      for (const t of snapshot.threads) walkThread(snapshot, t, { walker: "auto" });
    },
  },
  {
    name: "stackwalk64",
    structure: "json",
    seeds: jsonSeeds,
    run(bytes, _seed, rng) {
      const input = parseJsonInput(text.decode(bytes));
      if (input.kind !== "vector") return;
      facade(input.vector, 300, rng);
    },
  },
  {
    name: "server",
    structure: "text",
    // The minidump's own .sym files (windows of them), served by symbol servers that misbehave.
    seeds: () => symSeeds().filter((s) => (s.context as { dump?: string }).dump !== undefined),
    async run(bytes, seed, rng, context) {
      const servers = await hostileServers();
      const behaviour = rng.pick(MISBEHAVIOURS);
      servers.set(behaviour, bytes);
      const cache = join(context.scratch, `cache-${serverInputs++}`);
      const { dump, snapshot } = symDump((seed.context as { dump: string }).dump);
      try {
        const result = await downloadSymbols(snapshot, parseSymbolPath([`srv*${cache}*${servers.front}`]), SERVER_LIMITS);
        count("written", result.notes.length + result.warnings.length);
      } finally {
        servers.quiet();
        rmSync(cache, { recursive: true, force: true });
      }
      if (existsSync(OUTSIDE)) throw new Error(`a download wrote ${OUTSIDE}, outside the cache (${behaviour})`);
      walkAndRender(rng, snapshot, dump);
    },
  },
  {
    name: "postfix",
    structure: "text",
    // .sym files for the dump's app.exe: a STACK CFI rule, or a STACK WIN 4 program, each
    // ordinary or hostile; the run adds one hostile rule or program more.
    seeds: () => {
      const win = (program: string): string => ["MODULE windows x86 000000011111222233334444555566661 app.pdb", "FUNC 1000 100 0 recurse", `STACK WIN 4 1000 100 4 0 0 0 0 0 1 ${program}`, ""].join("\n");
      return [
        { name: "cfi-ordinary", bytes: encoder.encode(cfiSym(3)) },
        { name: "cfi-501", bytes: encoder.encode(cfiSym(501)) },
        { name: "cfi-9999", bytes: encoder.encode(cfiSym(9_999)) },
        { name: "win-ordinary", bytes: encoder.encode(win("$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =")) },
        { name: "win-long", bytes: encoder.encode(win(`$T0 .raSearch =${" $T0 $T0 0 + =".repeat(200)} $eip $T0 ^ = $esp $T0 4 + =`)) },
        { name: "win-deep", bytes: encoder.encode(win(`$T0 ${"1 ".repeat(70)}${"+ ".repeat(69)}= $eip $T0 ^ = $esp $T0 4 + =`)) },
      ];
    },
    run(bytes, _seed, rng) {
      postfixDump ??= cfiDump(600, 2);
      const dump = readMinidump(bytesSource(postfixDump));
      const snapshot = minidumpSnapshot(dump);
      const win = rng.chance(0.5);
      const line = win
        ? `STACK WIN 4 ${rng.pick(["1000 100", "1004 fc", "1000 1"])} 4 0 0 0 0 0 1 ${hostileProgram(rng, true)}`
        : rng.chance(0.5)
          ? `STACK CFI INIT 1000 100 .cfa: ${hostileProgram(rng, false)} .ra: ${rng.chance(0.5) ? ".cfa 4 - ^" : hostileProgram(rng, false)}`
          : `STACK CFI 1008 .cfa: ${hostileProgram(rng, false)} ${rng.pick(["$ebp", ".ra", "$T0"])}: ${hostileProgram(rng, false)}`;
      const file = `${text.decode(bytes).replace(/\n*$/, "\n")}${line}\n`;
      if (!attachedTo(snapshot, encoder.encode(file))) return;
      walkAndRender(rng, snapshot, dump);
    },
  },
  {
    name: "cli",
    structure: "bytes",
    seeds: () => [
      ...sample(dumpSeeds(), 12).map((s) => ({ ...s, context: "dmp" })),
      ...sample(jsonSeeds(), 12).map((s) => ({ ...s, context: "json" })),
      ...etlSeeds().slice(0, 3).map((s) => ({ ...s, context: "etl" })),
      ...zipSeeds().slice(0, 2).map((s) => ({ ...s, context: "zip" })),
      ...itemSeeds().slice(0, 4).map((s) => ({ ...s, context: "bin" })),
    ],
    async run(bytes, seed, rng, context) {
      const kind = seed.context as string;
      const file = join(context.scratch, `input.${kind}`);
      writeFileSync(file, bytes);
      const { run } = await import("../../src/cli/main.js");
      const commands: string[][] =
        kind === "dmp" || kind === "json"
          ? [
              ["walk", file],
              ["walk", file, "--format", "json"],
              ["walk", file, "--format", "windbg"],
              ["walk", file, "--format", "jsonl", "--jobs", "1"],
              ["walk", file, "--format", rng.pick(["breakpad", "breakpad-m", "text"]), "--walker", rng.pick(WALKER_NAMES)],
              ["walk", file, "--registers", "--thread", "all", "--max-frames", String(rng.small(12))],
              ["minidump-stackwalk", rng.pick(["-m", "-s", "-c", "-b", "-cs"]), file],
              ["explain", file],
              ["render", file, "-o", join(context.scratch, "out.svg")],
              ["view", file, "-o", join(context.scratch, "out.html")],
              ["crosscheck", file],
              ["check", file],
            ]
          : [
              ["etw", "decode", file],
              ["etw", "decode", file, "--json"],
              ["etw", "decode", file, "--summary"],
            ];
      const argv = rng.pick(commands);
      const err: string[] = [];
      const code = await run(argv, { out: () => undefined, err: (t) => void err.push(t) });
      if (code === 3) throw new ForeignFromCli(err.join("").trim());
      if (code === 2) throw new TypedFromCli(err.join("").trim());
    },
  },
];

/** The command line answered "internal error" (exit 3): what the fuzzer counts as a foreign error. */
export class ForeignFromCli extends Error {
  override name = "CliInternalError";
}

/** The command line answered "bad input" (exit 2) with this stderr. */
export class TypedFromCli extends Error {
  override name = "CliBadInput";
}

/** The targets by name. */
export const TargetsByName: ReadonlyMap<string, Target> = new Map(TARGETS.map((t) => [t.name, t]));
