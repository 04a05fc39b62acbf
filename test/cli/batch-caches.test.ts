/**
 * What the inputs of a batch share (src/cli/batch.ts `BatchCaches`): the symbol files read, and
 * what the walkers worked out from them (the walk cache, src/unwind/cache.ts). An input walked
 * after others that used the same symbol files gives the record it gives walked alone, and works
 * out less: the STACK CFI rules of the addresses the others unwound are not applied again. The
 * test counts the work (src/unwind/work.ts), never times it.
 */
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { batchCaches, walkOne, type BatchCaches, type BatchOptions } from "../../src/cli/batch.js";
import { frameBudgetOption, symbolSpec, walkerOption } from "../../src/cli/common.js";
import { work } from "../../src/unwind/work.js";
import { DEFAULT_MAX_FRAMES } from "../../src/walk/walk.js";
import { FIXTURES, fixtureDir, fixtureFile } from "../support/fixtures.js";

const MINIDUMP2 = join(FIXTURES, "breakpad");

function options(symbols: string): BatchOptions {
  return { format: "jsonl", walker: walkerOption(undefined), maxFrames: DEFAULT_MAX_FRAMES, frameBudget: frameBudgetOption(undefined), thread: "all", symbols: symbolSpec({ symbols: [symbols] }, {}), images: [] };
}

/** Walks `file` as a batch's input with `caches`: its record and the work units it took. */
async function walked(file: string, symbols: string, caches: BatchCaches): Promise<{ record: string; units: number }> {
  let record = "";
  const before = work.units;
  const result = await walkOne(file, options(symbols), (text) => (record += text), caches);
  expect(result.ok).toBe(true);
  return { record, units: work.units - before };
}

describe("a batch's inputs share what was worked out from their symbol files", () => {
  it("copies of a Linux dump with STACK CFI: each record as the dump's walked alone, the later copies applying no rule again", async () => {
    // symbolicator's Linux crash: its frames are unwound by the STACK CFI of its .sym file.
    // Copies, not one file walked three times: each input is its own snapshot, as in a real batch.
    const dir = mkdtempSync(join(tmpdir(), "sw-batch-caches-"));
    const files = [0, 1, 2].map((k) => join(dir, `linux.${k}.dmp`));
    for (const f of files) copyFileSync(fixtureFile("real-dumps/symbolicator-linux/linux.dmp"), f);
    const symbols = fixtureDir("real-dumps/symbolicator-linux/symbols");
    const alone = await walked(files[0]!, symbols, batchCaches());
    const caches = batchCaches();
    const batch = [];
    for (const f of files) batch.push(await walked(f, symbols, caches));
    expect(batch.map((b) => b.record)).toEqual(files.map((f) => alone.record.replace(files[0]!, f)));
    expect(batch[0]!.units).toBe(alone.units);
    expect(batch[1]!.units).toBeLessThan(batch[0]!.units);
    expect(batch[2]!.units).toBe(batch[1]!.units);
  });

  it("minidump2 (x86, FrameData programs) after a Linux dump in one batch: the record it gives alone", async () => {
    const caches = batchCaches();
    await walked(fixtureFile("real-dumps/symbolicator-linux/linux.dmp"), fixtureDir("real-dumps/symbolicator-linux/symbols"), caches);
    const file = join(MINIDUMP2, "minidump2.dmp");
    const symbols = join(MINIDUMP2, "symbols");
    const first = await walked(file, symbols, caches);
    const again = await walked(file, symbols, caches);
    expect(first.record).toBe((await walked(file, symbols, batchCaches())).record);
    expect(again.record).toBe(first.record);
  });
});
