/**
 * The product minidump writer (src/formats/minidump-write.ts): emulator vectors written as dumps
 * and read back with the reader give the same registers, modules and memory, and the walker finds
 * the same frames on the read-back snapshot (with the modules' unwind records restored from the
 * .sym files the .sym writer makes) as on the vector itself.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { formatBreakpadSym, symFileInput } from "../../src/formats/breakpad-sym-write.js";
import { parseBreakpadSym, stackWinToFpoData, stackWinToFrameData } from "../../src/formats/breakpad-sym.js";
import { bytesSource, minidumpSnapshot, readMinidump, MINIDUMP_STREAM, PROCESSOR_ARCHITECTURE, type Minidump } from "../../src/formats/minidump.js";
import {
  bytesSink,
  encodeCodeView,
  EXCEPTION_BREAKPOINT,
  minidumpBytes,
  moduleCodeView,
  writeMinidump,
  type MinidumpWriteOptions,
} from "../../src/formats/minidump-write.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { parseVector, type Vector } from "../../src/formats/vector.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { MemoryReader } from "../../src/memory/reader.js";
import { AMD64_CONTEXT_SIZE, CONTEXT_AMD64, CONTEXT_i386, X86_CONTEXT_SIZE } from "../../src/model/context.js";
import type { Module, ModuleSymbol, Snapshot } from "../../src/model/snapshot.js";
import { walkThread } from "../../src/walk/walk.js";

const vectorFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith(".json") && !f.endsWith(".sweep.json"))
    .sort()
    .map((f) => `${dir}/${f}`);

const loadVector = (file: string): Vector => parseVector(readFileSync(file, "utf8"), file);

/** Byte arrays compared at once (toEqual walks them element by element, far too slowly for KiBs of memory). */
function expectBytes(actual: Uint8Array | undefined, expected: Uint8Array | undefined, what: string): void {
  expect(actual === undefined, `${what}: readable`).toBe(expected === undefined);
  if (actual === undefined || expected === undefined) return;
  expect(actual.length, `${what}: length`).toBe(expected.length);
  const first = actual.findIndex((b, i) => b !== expected[i]);
  expect(first, `${what}: first differing byte`).toBe(-1);
}

/** A few snapshots of each c-fpo sweep: the first, the last and evenly spaced ones between. */
function sweepSnapshots(perSweep: number): { name: string; snapshot: Snapshot }[] {
  const out: { name: string; snapshot: Snapshot }[] = [];
  for (const file of readdirSync("vectors/x86/c-fpo").filter((f) => f.endsWith(".sweep.json")).sort()) {
    const sweep = parseSweep(readFileSync(`vectors/x86/c-fpo/${file}`, "utf8"), file);
    const n = sweep.steps.length;
    const wanted = new Set(Array.from({ length: perSweep }, (_, i) => Math.round((i * (n - 1)) / (perSweep - 1))));
    let i = 0;
    for (const v of replaySweep(sweep)) {
      if (wanted.has(i)) {
        // The replayed memory moves on with the iteration: keep a copy of this step's.
        const memory = new RegionMemory(v.memory.regions.map((r) => ({ base: r.base, bytes: r.bytes.slice() })));
        out.push({ name: `${file} step ${v.step}`, snapshot: { machine: v.machine, threads: v.threads.map((t) => ({ ...t, registers: { ...t.registers } })), memory, modules: v.modules } });
      }
      i++;
    }
  }
  return out;
}

/** The read-back snapshot's modules with symbols and unwind records from the .sym files written for the original's. */
function restoreFromSym(original: Snapshot, readBack: Snapshot): void {
  readBack.modules.forEach((m, i) => {
    const input = symFileInput(original.modules[i]!, original.machine, original.memory);
    expect(input, `a .sym for ${m.name}`).toBeDefined();
    const sym = parseBreakpadSym(formatBreakpadSym(input!));
    expect(sym.module.debugId).toBe(m.debugId);
    m.unwind = { fpo: stackWinToFpoData(sym.stackWin), frameData: stackWinToFrameData(sym.stackWin), origin: "Breakpad .sym" };
    const funcs: ModuleSymbol[] = sym.functions.map((f) => ({ name: f.name, rva: BigInt(f.address), size: BigInt(f.size) }));
    const publics: ModuleSymbol[] = sym.publics.map((p) => ({ name: p.name, rva: BigInt(p.address) }));
    m.symbols = [...funcs, ...publics].sort((a, b) => (a.rva < b.rva ? -1 : a.rva > b.rva ? 1 : 0));
  });
}

const frames = (snapshot: Snapshot) =>
  snapshot.threads.map((t) => {
    const walk = walkThread(snapshot, t);
    return { frames: walk.frames.map((f) => ({ pc: f.addrPC, sp: f.addrStack, trust: f.trust })), stop: walk.stop.reason };
  });

/** Writes, reads back and compares everything the round trip must keep. */
function roundTrip(name: string, snapshot: Snapshot, options: MinidumpWriteOptions = {}): Minidump {
  const bytes = minidumpBytes(snapshot, options);
  const dump = readMinidump(bytesSource(bytes), name);
  expect(dump.notes).toEqual([]);
  const back = minidumpSnapshot(dump);
  expect(back.machine).toBe(snapshot.machine);

  // Registers: every register of the snapshot comes back with its value.
  expect(back.threads.map((t) => t.id)).toEqual(snapshot.threads.map((t) => t.id));
  snapshot.threads.forEach((t, i) => {
    const got = back.threads[i]!;
    expect(got.crashed).toBe(t.crashed);
    for (const [reg, value] of Object.entries(t.registers)) expect(got.registers[reg], `${name}: ${reg}`).toBe(value);
  });

  // Modules: placement and identity.
  expect(back.modules.map((m) => [m.name, m.base, m.size])).toEqual(snapshot.modules.map((m) => [m.name, m.base, m.size]));
  snapshot.modules.forEach((m, i) => {
    const cv = moduleCodeView(m, snapshot.memory);
    expect(back.modules[i]!.debugId).toBe(cv?.debugId);
    expect(back.modules[i]!.debugFile).toBe(cv?.pdbName);
  });

  // Memory: every byte of every region, and nothing unmapped becomes readable.
  const regions = (snapshot.memory as RegionMemory).regions;
  for (const r of regions) {
    expectBytes(back.memory.read(r.base, r.bytes.length), r.bytes, `${name}: memory at 0x${r.base.toString(16)}`);
    expectBytes(back.memory.read(r.base - 1n, 1), snapshot.memory.read(r.base - 1n, 1), `${name}: the byte before 0x${r.base.toString(16)}`);
    const end = r.base + BigInt(r.bytes.length);
    expectBytes(back.memory.read(end, 1), snapshot.memory.read(end, 1), `${name}: the byte at 0x${end.toString(16)}`);
  }

  // The walk: the same frames, with the unwind records from the .sym files.
  restoreFromSym(snapshot, back);
  expect(frames(back), `${name}: frames`).toEqual(frames(snapshot));
  return dump;
}

describe("writeMinidump round trip through readMinidump and minidumpSnapshot", () => {
  it("x86 synthetic vectors: registers, modules, memory and frames", () => {
    const files = vectorFiles("vectors/x86/synthetic");
    expect(files.length).toBeGreaterThanOrEqual(8);
    for (const file of files) roundTrip(file, loadVector(file));
  });

  it("x86 c-fpo sweeps (FrameData from the PDB): snapshots across each run", () => {
    const snapshots = sweepSnapshots(6);
    expect(snapshots.length).toBe(24);
    for (const { name, snapshot } of snapshots) roundTrip(name, snapshot);
  });

  it("x64 synthetic vectors: registers, modules, memory and frames", () => {
    const files = vectorFiles("vectors/x64/synthetic");
    expect(files.length).toBeGreaterThan(100);
    for (const file of files) roundTrip(file, loadVector(file));
  });

  it("the frames match the vectors' truth where the walk on the vector does", () => {
    // A spot check that the comparison above compares real walks: these x86 ones walk to their
    // truth (FPO_DATA and FrameData from the .sym). The x64 walker has no .pdata unwinder yet.
    const fpo = sweepSnapshots(3).filter((s) => s.name.startsWith("big-frames-varargs"));
    for (const { name, snapshot } of fpo) {
      const back = minidumpSnapshot(readMinidump(bytesSource(minidumpBytes(snapshot))));
      restoreFromSym(snapshot, back);
      const walked = walkThread(back, back.threads[0]!).frames.map((f) => [f.addrPC, f.addrStack]);
      expect(walked, name).toEqual(snapshot.threads[0]!.truth!.map((t) => [t.pc, t.sp]));
    }
    for (const file of ["vectors/x86/synthetic/fpo-leaf.json", "vectors/x86/synthetic/mixed-8.json", "vectors/x86/synthetic/fpo-usebp-capture.json"]) {
      const v = loadVector(file);
      const back = minidumpSnapshot(readMinidump(bytesSource(minidumpBytes(v))));
      restoreFromSym(v, back);
      const walked = walkThread(back, back.threads[0]!).frames.map((f) => [f.addrPC, f.addrStack]);
      expect(walked, file).toEqual(v.threads[0]!.truth!.map((t) => [t.pc, t.sp]));
    }
  });

  it("a Memory64List dump reads back the same, and the stacks point into its data", () => {
    for (const file of ["vectors/x86/synthetic/recursion-1000.json", "vectors/x64/synthetic/set-fpreg-capture.json"]) {
      const dump = roundTrip(file, loadVector(file), { memoryList: "Memory64List" });
      expect(dump.streams.map((s) => s.streamType)).toContain(MINIDUMP_STREAM.Memory64List);
      expect(dump.streams.map((s) => s.streamType)).not.toContain(MINIDUMP_STREAM.MemoryList);
      expect(dump.header.flags).toBe(2n); // MiniDumpWithFullMemory
      const stack = dump.threads[0]!.stack;
      const holder = dump.memory.find((r) => stack.start >= r.start && stack.start < r.start + r.size)!;
      expect(stack.rva).toBe(holder.rva + Number(stack.start - holder.start));
      expect(stack.start + stack.size).toBe(holder.start + holder.size);
    }
  });
});

describe("writeMinidump layout (minidump.md §3.4)", () => {
  const x86 = loadVector("vectors/x86/synthetic/fpo-leaf.json");
  const x64 = loadVector("vectors/x64/synthetic/chained-capture.json");

  it("header, directory, SystemInfo, contexts, modules and exception as the spec lays them out", () => {
    for (const [v, arch, ctxSize, cpu] of [
      [x86, PROCESSOR_ARCHITECTURE.INTEL, X86_CONTEXT_SIZE, CONTEXT_i386],
      [x64, PROCESSOR_ARCHITECTURE.AMD64, AMD64_CONTEXT_SIZE, CONTEXT_AMD64],
    ] as const) {
      const bytes = minidumpBytes(v);
      const dump = readMinidump(bytesSource(bytes));
      expect(dump.header.version & 0xffff).toBe(0xa793);
      expect(dump.header.directoryRva).toBe(32);
      expect(dump.streams.map((s) => s.streamType)).toEqual([
        MINIDUMP_STREAM.SystemInfo,
        MINIDUMP_STREAM.ThreadList,
        MINIDUMP_STREAM.ModuleList,
        MINIDUMP_STREAM.Exception,
        MINIDUMP_STREAM.MiscInfo,
        MINIDUMP_STREAM.MemoryList,
      ]);
      for (const s of dump.streams) expect(s.location.rva % 4).toBe(0);
      expect(dump.systemInfo!.processorArchitecture).toBe(arch);
      expect([dump.systemInfo!.majorVersion, dump.systemInfo!.minorVersion, dump.systemInfo!.buildNumber, dump.systemInfo!.platformId]).toEqual([10, 0, 19045, 2]);
      expect(dump.systemInfo!.csdVersion).toBe("");
      const t = dump.threads[0]!;
      expect(t.contextLocation.dataSize).toBe(ctxSize);
      expect(t.contextLocation.rva % 16).toBe(0);
      expect((t.context!.contextFlags & 0xffffff00) >>> 0).toBe(cpu);
      expect(t.context!.contextFlags & 0x7).toBe(0x7); // CONTROL | INTEGER | SEGMENTS
      const sp = v.threads[0]!.registers[v.machine === "x86" ? "esp" : "rsp"]!;
      expect(t.stack.start).toBe(sp - (sp % 16n));
      for (const r of dump.memory) expect(r.rva % 16).toBe(0);
      // Module entries are 108 bytes; the CodeView record is RSDS ending in NUL.
      const m = dump.modules[0]!;
      expect(m.codeView?.format).toBe("RSDS");
      expect(bytes[m.cvRecord.rva + m.cvRecord.dataSize - 1]).toBe(0);
      expect(m.cvRecord.dataSize).toBe(24 + m.debugFile!.length + 1);
      expect(m.codeId).toBe(m.codeId.toUpperCase().slice(0, 8) + m.size.toString(16));
      const e = dump.exception!;
      expect([e.threadId, e.code, e.address, e.numberParameters]).toEqual([0, EXCEPTION_BREAKPOINT, v.threads[0]!.registers[v.machine === "x86" ? "eip" : "rip"], 0]);
      expect(e.contextLocation).toEqual(t.contextLocation);
      expect(dump.miscInfo).toMatchObject({ sizeOfInfo: 24, version: 1, flags1: 1, processId: 0x1000 });
    }
  });

  it("module paths, versions and code ids given on the module are written", () => {
    const m: Module = { ...x86.modules[0]!, path: "C:\\apps\\fpo-leaf.exe", version: "1.2.3.4", codeId: "5A1B2C3D3000" };
    const dump = readMinidump(bytesSource(minidumpBytes({ ...x86, modules: [m] })));
    expect(dump.modules[0]).toMatchObject({ path: "C:\\apps\\fpo-leaf.exe", name: "fpo-leaf.exe", version: "1.2.3.4", codeId: "5A1B2C3D3000", timeDateStamp: 0x5a1b2c3d });
    const back = minidumpSnapshot(dump).modules[0]!;
    expect([back.path, back.version, back.codeId]).toEqual([m.path, m.version, m.codeId]);
  });

  it("debug file and id on the module win over the image's; NB10 identities are written as NB10", () => {
    const rsds: Module = { ...x86.modules[0]!, debugFile: "c:\\sym\\other.pdb", debugId: "0123456789ABCDEF0123456789ABCDEF1a" };
    const nb10: Module = { ...x86.modules[0]!, debugFile: "old.pdb", debugId: "3A4B5C6D2" };
    const a = readMinidump(bytesSource(minidumpBytes({ ...x86, modules: [rsds] }))).modules[0]!;
    // The id is the one readers form from the record: a lower-case GUID or a padded age would not find the .sym.
    expect(moduleCodeView({ ...rsds, debugId: "0123456789abcdef0123456789abcdef01a" }, x86.memory)?.debugId).toBe("0123456789ABCDEF0123456789ABCDEF1a");
    expect([a.debugFile, a.debugId, a.codeView?.guid, a.codeView?.age]).toEqual(["c:\\sym\\other.pdb", "0123456789ABCDEF0123456789ABCDEF1a", "0123456789ABCDEF0123456789ABCDEF", 0x1a]);
    const b = readMinidump(bytesSource(minidumpBytes({ ...x86, modules: [nb10] }))).modules[0]!;
    expect([b.codeView?.format, b.debugFile, b.debugId]).toEqual(["NB10", "old.pdb", "3A4B5C6D2"]);
    expect(encodeCodeView({ format: "NB10", pdbName: "x.pdb", guid: "3A4B5C6D", age: 2, debugId: "3A4B5C6D2" }).length).toBe(16 + 6);
  });

  it("a module without any identity gets no CodeView record, and says so", () => {
    const memory = new RegionMemory([{ base: 0x130000n, bytes: new Uint8Array(0x100) }]);
    const snapshot: Snapshot = { machine: "x86", threads: [{ id: 7, crashed: false, registers: { eip: 0x401000n, esp: 0x130010n } }], memory, modules: [{ name: "bare.exe", base: 0x400000n, size: 0x1000n, symbols: [] }] };
    const sink = bytesSink();
    const result = writeMinidump(snapshot, sink);
    expect(result.modulesWithoutCodeView).toEqual(["bare.exe"]);
    expect(result.size).toBe(sink.size);
    const dump = readMinidump(bytesSource(sink.bytes()));
    expect(dump.modules[0]!.cvRecord).toEqual({ dataSize: 0, rva: 0 });
    expect(dump.exception).toBeUndefined(); // no crashed thread
    expect(minidumpSnapshot(dump).threads[0]).toMatchObject({ id: 7, crashed: false });
  });

  it("an explicit exception, or none", () => {
    const withAv = readMinidump(bytesSource(minidumpBytes(x86, { exception: { code: 0xc0000005, address: 0x45n, parameters: [1n, 0x45n] } })));
    expect(withAv.exception).toMatchObject({ threadId: 0, code: 0xc0000005, address: 0x45n, parameters: [1n, 0x45n] });
    const without = readMinidump(bytesSource(minidumpBytes(x86, { exception: false })));
    expect(without.exception).toBeUndefined();
    expect(minidumpSnapshot(without).threads[0]!.crashed).toBe(false);
    expect(() => minidumpBytes(x86, { exception: { code: 1, threadId: 99 } })).toThrow(RangeError);
  });

  it("streams memory in chunks through the sink, and is deterministic", () => {
    const chunks: number[] = [];
    const parts: Uint8Array[] = [];
    const result = writeMinidump(x86, { write: (c) => (chunks.push(c.byteLength), parts.push(c.slice())) }, { chunkSize: 1000 });
    expect(Math.max(...chunks.slice(1))).toBeLessThanOrEqual(1000);
    const joined = new Uint8Array(result.size);
    let at = 0;
    for (const p of parts) joined.set(p, (at += p.length) - p.length);
    expectBytes(joined, minidumpBytes(x86), "chunked");
  });

  it("a memory reader that is not a RegionMemory: its extents, or the ranges given", () => {
    const inner = x86.memory;
    const withExtents: MemoryReader & { extents: { start: bigint; end: bigint }[] } = {
      read: (a, n) => inner.read(a, n),
      extents: inner.regions.map((r) => ({ start: r.base, end: r.base + BigInt(r.bytes.length) })),
    };
    expectBytes(minidumpBytes({ ...x86, memory: withExtents }), minidumpBytes(x86), "extents");
    const plain: MemoryReader = { read: (a, n) => inner.read(a, n) };
    expect(() => minidumpBytes({ ...x86, memory: plain })).toThrow(/cannot list its ranges/);
    const ranges = inner.regions.map((r) => ({ start: r.base, size: BigInt(r.bytes.length) }));
    expectBytes(minidumpBytes({ ...x86, memory: plain }, { ranges }), minidumpBytes(x86), "ranges");
  });

  it("refuses what it cannot write", () => {
    const ia64: Snapshot = { machine: "ia64", threads: [], memory: new RegionMemory([]), modules: [] };
    const e = (() => {
      try {
        minidumpBytes(ia64);
      } catch (x) {
        return x;
      }
      return undefined;
    })();
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).code).toBe("unsupported");
    const plain: MemoryReader = { read: () => undefined };
    expect(() => minidumpBytes({ ...x86, memory: plain }, { ranges: [{ start: 0x1000n, size: 0x10n }] })).toThrow(/cannot read 16 byte\(s\) at 0x1000/);
    expect(() => minidumpBytes({ ...x86, memory: plain }, { ranges: [{ start: 0x1000n, size: 0x10n }, { start: 0x1008n, size: 0x10n }] })).toThrow(/overlap/);
    expect(() => minidumpBytes({ ...x86, memory: plain }, { ranges: [{ start: 0xffff_fff0n, size: 0x20n }] })).toThrow(/outside the x86 address space/);
  });
});
