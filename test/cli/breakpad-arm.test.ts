/**
 * `stackwalk minidump-stackwalk` (human, `-m` and `-s`) on ARM dumps is Breakpad's own report
 * byte for byte (test/fixtures/breakpad-arm: Breakpad's `minidump_stackwalk` run on the same
 * dumps): the chain of test/arch/arm/chain.ts stopped in every prolog, body and epilog position,
 * with and without the module image, with and without the `.sym` store whose STACK CFI comes
 * from the image's unwind data; Android and iOS dumps of Thumb code with an r7 chain, with
 * DWARF-style CFI, FUNC records only, or no symbols; a Windows ARM CONTEXT Breakpad does not
 * read; and the emulator's dumps of the real clang-16 ARM programs with the `.sym` store
 * `stackwalk emulate --dmp` writes (STACK CFI only). Breakpad's ARM walker reads no image: STACK CFI, then scanning, and on iOS its r7 step
 * instead of STACK CFI; caller frames print at pc − 2.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { armCases } from "../support/breakpad-arm.js";
import { caseFiles } from "../support/breakpad-emulated.js";
import { FIXTURES } from "../support/fixtures.js";

const reports = JSON.parse(readFileSync(join(FIXTURES, "breakpad-arm/reports.json"), "utf8")) as Record<string, string>;

describe("Breakpad's reports of ARM dumps, byte for byte", () => {
  it("every stop, human, machine-readable and with stack contents", async () => {
    const work = mkdtempSync(join(tmpdir(), "breakpad-arm-"));
    const differing: string[] = [];
    let n = 0;
    for (const c of armCases()) {
      const args = caseFiles(c, join(work, String(n)));
      for (const [suffix, flags] of [["", []], ["/-m", ["-m"]], ["/-s", ["-s"]]] as const) {
        const key = c.key + suffix;
        const want = reports[key];
        expect(want, key).toBeDefined();
        let got = "";
        const code = await run(["minidump-stackwalk", ...flags, ...args], { out: (t) => (got += t), err: () => {} });
        expect(code, key).toBe(0);
        if (got !== want) differing.push(key);
        n++;
      }
    }
    console.log(`${n - differing.length}/${n} identical`);
    expect(n).toBe(Object.keys(reports).length);
    expect(differing).toEqual([]);
  });
});
