/**
 * Real dumps from other projects (test/fixtures/real-dumps: Windows x86 and Linux x86_64 Breakpad
 * client dumps from Sentry's test data, Mozilla's Linux x86 and Android ARM64 crash dumps), with
 * their symbols: `stackwalk minidump-stackwalk [-m] DUMP SYMBOLS` and `stackwalk walk DUMP
 * --symbols SYMBOLS --format breakpad[-m]` are byte-identical with Breakpad's own reports, and
 * without symbols where the folder has Breakpad's report without them. The walk is Breakpad's
 * (`--walker breakpad`, the Breakpad formats' default): its STACK WIN evaluator, its scan test,
 * its order of strategies and its rules for ending a walk, per CPU.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { FIXTURES, fixtureDir, fixtureFile } from "../support/fixtures.js";

async function stackwalk(argv: string[]): Promise<string> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  expect(code, err).toBe(0);
  return out;
}

const ROOT = join(FIXTURES, "real-dumps");
const folders = readdirSync(ROOT, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

describe("real dumps of other projects: Breakpad's reports byte for byte", () => {
  it("finds the dumps", () => {
    expect(folders).toEqual(expect.arrayContaining(["moz-android-aarch64", "moz-linux-x86", "symbolicator-linux", "symbolicator-windows"]));
  });

  for (const folder of folders) {
    const files = readdirSync(join(ROOT, folder));
    const dumpName = files.find((f) => f.endsWith(".dmp") || f.endsWith(".dmp.gz"))!.replace(/\.gz$/, "");
    const base = dumpName.slice(0, -4);
    const dump = (): string => fixtureFile(`real-dumps/${folder}/${dumpName}`);
    const expected = (name: string): string => readFileSync(join(ROOT, folder, name), "utf8");
    for (const [flag, format, suffix] of [["", "breakpad", "stackwalk.out"], ["-m", "breakpad-m", "stackwalk.machine_readable.out"]] as const) {
      it(`${folder} ${flag || "human"}, with symbols`, async () => {
        const symbols = fixtureDir(`real-dumps/${folder}/symbols`);
        const want = expected(`${base}.${suffix}`);
        expect(await stackwalk(["minidump-stackwalk", ...(flag === "" ? [] : [flag]), dump(), symbols])).toBe(want);
        expect(await stackwalk(["walk", dump(), "--symbols", symbols, "--format", format])).toBe(want);
      });
      if (files.includes(`${base}.nosyms.${suffix}`)) {
        it(`${folder} ${flag || "human"}, without symbols`, async () => {
          const want = expected(`${base}.nosyms.${suffix}`);
          expect(await stackwalk(["minidump-stackwalk", ...(flag === "" ? [] : [flag]), dump()])).toBe(want);
          expect(await stackwalk(["walk", dump(), "--format", format])).toBe(want);
        });
      }
    }
  }
});
