/**
 * Inputs the long fuzz run found, made again from their (target, seed, iteration) — or, where the
 * input came from a seed the repository does not hold, kept as a file with the state its
 * generator had after making it — and run as the campaign runs them: each now ends in output or
 * a typed error naming its place. Those that were slow are run with a meter (meter.ts): the work
 * their slow path multiplied (characters written, memory or module entries read, frames, entries
 * of the file read) is counted and bounded, far below what the slow path did and whatever the
 * machine's load; a count past its bound stops the run at once and fails the test.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Rng } from "./rng.js";
import { bytesSource, readMinidump } from "../../src/formats/minidump.js";
import { MINIDUMP_LIMITS } from "../../src/formats/minidump/constants.js";
import { Meter, type Work } from "./meter.js";
import { inputOf, runInput, seedsOf, TargetsByName } from "./run-input.js";

/**
 * The input of a key as a run printed it. Keys of runs that named a fixture by a cut path
 * ("/breakpad-corpus/x.dmp" for "fixtures/breakpad-corpus/x.dmp") are made with that name, as
 * the run made them.
 */
function inputOfKey(key: string) {
  const [target, ...rest] = key.split(":");
  const iteration = Number(rest.pop());
  const name = rest.join(":");
  const t = TargetsByName.get(target!)!;
  const seed = seedsOf(t).find((s) => s.name === name) ?? seedsOf(t).find((s) => name.startsWith("/") && s.name.endsWith(name));
  expect(seed).toBeDefined();
  return { t, seed: seed!, ...inputOf(t, seed!, iteration, name) };
}

/** Runs the input of `key`, its work counted and stopped past `limits`. */
async function replay(key: string, limits: Partial<Work> = {}) {
  const { t, seed, bytes, rng } = inputOfKey(key);
  const meter = new Meter(limits);
  const result = await runInput(t, seed, bytes, rng, { scratch: mkdtempSync(join(tmpdir(), "sw-finding-")), meter });
  return { ...result, work: meter.work };
}

/** A kept input (test/fuzz/findings/FILE) of `target`, run with its generator at `rngState`, its work counted and stopped past `limits`. */
async function rerun(target: string, file: string, rngState: number, limits: Partial<Work>) {
  const t = TargetsByName.get(target)!;
  const bytes = new Uint8Array(readFileSync(new URL(`./findings/${file}`, import.meta.url)));
  const meter = new Meter(limits);
  const result = await runInput(t, { name: file, bytes }, bytes, new Rng(rngState), { scratch: mkdtempSync(join(tmpdir(), "sw-finding-")), meter });
  return { ...result, work: meter.work };
}

describe("the long fuzz run's findings", () => {
  it("a Breakpad report with stack contents (-s) of a thread whose next frame lies far above its stack: bytes are printed up to the stack's end only (it ran for minutes)", async () => {
    // linux_write_to_nonwritable_region_math.dmp mutated (the campaign's iteration 43003). The
    // report is about 3,200 characters from about 330 memory reads; printing up to the next
    // frame's stack pointer wrote gigabytes.
    const r = await rerun("minidump", "breakpad-s-far-frame.dmp", 1010410958, { written: 100_000, memoryReads: 20_000 });
    expect(r.outcome, r.message).toBe("ok");
    expect(r.work.written).toBeGreaterThan(1000);
  });

  it.each([
    ["a 1.7 MB dump listing 13,000 modules, most naming one string or none", "minidump:/breakpad-corpus/minidump_crashpad_annotation.dmp:3802", "ok", 13452, false],
    // Its list claims more entries than the 65,536 read from one dump: 45,714 of those are modules.
    ["a 13 MB dump listing 83,000 modules and 322 threads", "minidump:/breakpad-corpus/minidump_crashpad_annotation.dmp:4814", "typed", 45714, true],
  ])("%s: its notes capped, a name many entries share decoded once, a module found by address through an index (it took 1.2 to 3.3 s)", async (_what, key, outcome, modules, capped) => {
    const { bytes } = inputOfKey(key);
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.modules).toHaveLength(modules);
    if (capped) expect(dump.notes).toContainEqual(expect.stringMatching(/ModuleList: \d+ entries; the first 65536 are read \(the limit of modules read from one dump\), the rest passed over$/));
    expect(dump.notes.length).toBeLessThan(260);
    expect(dump.notes).toContainEqual(expect.stringMatching(/^\d+ more note\(s\) left out: the first 256 are kept$/));
    // Reads of the file: about one per module (a name the entries share is decoded once; decoding
    // it per entry read the file twice per module more). Module entries looked at: a few dozen
    // passes over the list (the index, the renderers' module tables), not one pass per stack word
    // a scan reads.
    const r = await replay(key, { sourceReads: 1.5 * modules, moduleReads: 60 * modules });
    expect(r.outcome, r.message).toBe(outcome);
    expect(r.work.sourceReads).toBeGreaterThan(1000);
  });

  it("a 28 MB dump whose thread list claims 580,000 entries, most with a refused context: 65,536 are read, their errors made without stack traces (it took 6 s)", async () => {
    const key = "minidump:vectors/x64/synthetic/save-xmm128-far-xfar_prolog_3.json.dmp:35765";
    const dump = readMinidump(bytesSource(inputOfKey(key).bytes));
    expect(dump.threads).toHaveLength(65_536);
    expect(dump.notes).toContainEqual(expect.stringMatching(/ThreadList: \d{6} entries; the first 65536 are read \(the limit of threads read from one dump\), the rest passed over$/));
    const refused = dump.threads.filter((t) => t.contextError !== undefined);
    expect(refused.length).toBeGreaterThan(60_000);
    expect(refused.filter((t) => /\n\s+at /.test(t.contextError!.stack ?? "")).length).toBe(0);
    const r = await replay(key, { sourceReads: 1000, memoryReads: 10_000, frames: 1000 });
    expect(r.outcome, r.message).toBe("ok");
  });

  it("a 2.4 MB dump of 21,180 modules naming strings of up to 512 Ki characters, most of them one another's: the names one dump hands out stop at 4 Mi characters (its JSON was 1.5 GB, 8 s)", async () => {
    const key = "minidump:fixtures/breakpad-corpus/minidump_crashpad_annotation.dmp:7368";
    const dump = readMinidump(bytesSource(inputOfKey(key).bytes));
    expect(dump.modules).toHaveLength(21_180);
    const chars = dump.modules.reduce((n, m) => n + m.path.length + (m.debugFile?.length ?? 0), 0);
    expect(chars).toBeGreaterThan(MINIDUMP_LIMITS.maxNameChars / 2);
    expect(chars).toBeLessThanOrEqual(MINIDUMP_LIMITS.maxNameChars);
    // The JSON of its module list: 29 million characters, escapes and all, where it wrote 1.5 billion.
    const r = await replay(key, { written: 60_000_000 });
    expect(r.outcome, r.message).toBe("ok");
    expect(r.work.written).toBeGreaterThan(MINIDUMP_LIMITS.maxNameChars);
  });

  it("a 23 MB dump whose MemoryList claims 1.2 million ranges: 262,144 are read, the rest passed over with a note (reading it took 2 s and 530 MB)", async () => {
    const key = "minidump:fixtures/real-dumps/moz-android-aarch64/android-aarch64.dmp:22659";
    const dump = readMinidump(bytesSource(inputOfKey(key).bytes));
    expect(dump.notes).toContainEqual(expect.stringMatching(/MemoryList: 1210829 ranges; the first 262144 are read \(the limit of memory ranges read from one list\), the rest passed over$/));
    expect(dump.memory.length).toBeLessThanOrEqual(262_144);
    // Its SystemInfo names a machine the walker does not model: a typed error naming the offset.
    const r = await replay(key);
    expect(r.outcome, r.message).toBe("typed");
  });

  it.each([
    ["vectors/arm64/c/big-frames-varargs.sweep.json:559"],
    ["vectors/arm64/c/big-frames-varargs.sweep.json:871"],
    ["vectors/arm64/c-fp/big-frames-varargs.sweep.json:1792"],
  ])("an ARM64 sweep whose lr points back into a function that does not restore it (%s): the walk stops there (it took 2.5 to 6 s, each walk repeating one frame up to the budget)", async (key) => {
    // Up to 32 snapshots walked, about 70 frames in all; the loop walked 262,144 per snapshot.
    const r = await replay(`sweep:${key}`, { frames: 2000, memoryReads: 200_000 });
    expect(r.outcome, r.message).toBe("ok");
    expect(r.work.frames).toBeGreaterThan(10);
  });

  it.each([
    ["a section name with a newline", "pe:vectors/programs/c/build/x86-fp/noreturn-longjmp.exe:20858"],
    ["zip member names with control characters", "zip:net.etl#buffer-3.zip:5025"],
    ["a JSON member name with a newline, named in the path quoted as JSON", "sweep:vectors/arm64/c-fp/recursion-callbacks.sweep.json:3629"],
    ["the same through etw decode", "cli:net.etl#header.zip:35634"],
  ])("%s: a typed error on one line, naming its place", async (_what, key) => {
    const r = await replay(key);
    expect(r.outcome).toBe("typed");
    expect(r.placeless).toBeUndefined();
  });
});
