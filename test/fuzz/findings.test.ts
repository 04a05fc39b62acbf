/**
 * Inputs the long fuzz run found, made again from their (target, seed, iteration) — or, where the
 * input came from a seed the repository does not hold, kept as a file with the state its
 * generator had after making it — and run as the campaign runs them: each now ends in time, and
 * in output or a typed error naming its place.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Rng } from "./rng.js";
import { bytesSource, readMinidump } from "../../src/formats/minidump.js";
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

async function replay(key: string) {
  const { t, seed, bytes, rng } = inputOfKey(key);
  return runInput(t, seed, bytes, rng, { scratch: mkdtempSync(join(tmpdir(), "sw-finding-")) });
}

/** A kept input (test/fuzz/findings/FILE) of `target`, run with its generator at `rngState`. */
async function rerun(target: string, file: string, rngState: number) {
  const t = TargetsByName.get(target)!;
  const bytes = new Uint8Array(readFileSync(new URL(`./findings/${file}`, import.meta.url)));
  return runInput(t, { name: file, bytes }, bytes, new Rng(rngState), { scratch: mkdtempSync(join(tmpdir(), "sw-finding-")) });
}

describe("the long fuzz run's findings", () => {
  it("a Breakpad report with stack contents (-s) of a thread whose next frame lies far above its stack: bytes are printed up to the stack's end only (it ran for minutes)", async () => {
    // linux_write_to_nonwritable_region_math.dmp mutated (the campaign's iteration 43003).
    const r = await rerun("minidump", "breakpad-s-far-frame.dmp", 1010410958);
    expect(r.outcome).toBe("ok");
    expect(r.ms).toBeLessThan(5000);
  });

  it.each([
    ["a 1.7 MB dump listing 13,000 modules, most naming one string or none", "minidump:/breakpad-corpus/minidump_crashpad_annotation.dmp:3802", "ok", 13452],
    ["a 13 MB dump listing 83,000 modules and 322 threads", "minidump:/breakpad-corpus/minidump_crashpad_annotation.dmp:4814", "typed", 83453],
  ])("%s: read in time, its notes capped (it took 1.2 to 3.3 s)", async (_what, key, outcome, modules) => {
    const { bytes } = inputOfKey(key);
    const dump = readMinidump(bytesSource(bytes));
    expect(dump.modules).toHaveLength(modules);
    expect(dump.notes.length).toBeLessThan(260);
    expect(dump.notes).toContainEqual(expect.stringMatching(/^\d+ more note\(s\) left out: the first 256 are kept$/));
    const r = await replay(key);
    expect(r.outcome).toBe(outcome);
    expect(r.ms).toBeLessThan(1000);
  });

  it("a 28 MB dump whose thread list claims 580,000 entries, most with a refused context: 65,536 are read, their errors made without stack traces (it took 6 s)", async () => {
    const r = await replay("minidump:vectors/x64/synthetic/save-xmm128-far-xfar_prolog_3.json.dmp:35765");
    expect(r.outcome).toBe("ok");
    expect(r.ms).toBeLessThan(2000);
  });

  it.each([
    ["vectors/arm64/c/big-frames-varargs.sweep.json:559"],
    ["vectors/arm64/c/big-frames-varargs.sweep.json:871"],
    ["vectors/arm64/c-fp/big-frames-varargs.sweep.json:1792"],
  ])("an ARM64 sweep whose lr points back into a function that does not restore it (%s): the walk stops there (it took 2.5 to 6 s, each walk repeating one frame up to the budget)", async (key) => {
    const r = await replay(`sweep:${key}`);
    expect(r.outcome, r.message).toBe("ok");
    expect(r.ms).toBeLessThan(1000);
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
