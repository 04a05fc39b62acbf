/**
 * Inputs the long fuzz run found, made again from their (target, seed, iteration) and run as the
 * campaign runs them: each now ends in time, and in output or a typed error naming its place.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
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

describe("the long fuzz run's findings", () => {
  it("a Breakpad report with stack contents (-s) of a thread whose next frame lies far above its stack: bytes are printed up to the stack's end only (it ran for minutes)", async () => {
    const r = await replay("minidump:/breakpad-corpus/linux_write_to_nonwritable_region_math.dmp:43003");
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
