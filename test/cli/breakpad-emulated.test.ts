/**
 * `stackwalk minidump-stackwalk` on the emulator's break dumps is Breakpad's own report byte for
 * byte (test/fixtures/breakpad-emulated: Breakpad's `minidump_stackwalk` run on the same dumps):
 * x86 built with and without frame pointers, x64 and ARM64; with and without the module images in
 * the dump, with and without the `.sym` store. Breakpad's walker reads no image, so the dumps with
 * images show that none is read; the stores exercise STACK WIN (with Breakpad's parameter-size
 * rule), STACK CFI on x64 and ARM64, and the scans' function test.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { caseFiles, emulatedCases } from "../support/breakpad-emulated.js";
import { FIXTURES } from "../support/fixtures.js";

const reports = JSON.parse(gunzipSync(readFileSync(join(FIXTURES, "breakpad-emulated/reports.json.gz"))).toString("utf8")) as Record<string, string>;

describe("Breakpad's reports of the emulator's break dumps, byte for byte", () => {
  it("every case, in every class", async () => {
    const work = mkdtempSync(join(tmpdir(), "breakpad-emulated-"));
    const differing: string[] = [];
    const classes = new Map<string, number>();
    let n = 0;
    for (const c of emulatedCases()) {
      const want = reports[c.key];
      expect(want, c.key).toBeDefined();
      let got = "";
      const code = await run(["minidump-stackwalk", ...caseFiles(c, join(work, String(n++)))], { out: (t) => (got += t), err: () => {} });
      expect(code, c.key).toBe(0);
      if (got !== want) differing.push(c.key);
      const cls = c.key.slice(0, c.key.indexOf("/"));
      classes.set(cls, (classes.get(cls) ?? 0) + 1);
    }
    console.log(`${n - differing.length}/${n} identical: ${[...classes].map(([k, v]) => `${k} ${v}`).join(", ")}`);
    expect(n).toBe(Object.keys(reports).length);
    expect(differing).toEqual([]);
  });
});
