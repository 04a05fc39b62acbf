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
import { inputOf, runInput, seedsOf, TargetsByName } from "./run-input.js";

async function replay(key: string) {
  const [target, ...rest] = key.split(":");
  const iteration = Number(rest.pop());
  const t = TargetsByName.get(target!)!;
  const seed = seedsOf(t).find((s) => s.name === rest.join(":"))!;
  expect(seed).toBeDefined();
  const { bytes, rng } = inputOf(t, seed, iteration);
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
    ["a section name with a newline", "pe:vectors/programs/c/build/x86-fp/noreturn-longjmp.exe:20858"],
    ["zip member names with control characters", "zip:net.etl#buffer-3.zip:5025"],
    ["the same through etw decode", "cli:net.etl#header.zip:35634"],
  ])("%s: a typed error on one line, naming its place", async (_what, key) => {
    const r = await replay(key);
    expect(r.outcome).toBe("typed");
    expect(r.placeless).toBeUndefined();
  });
});
