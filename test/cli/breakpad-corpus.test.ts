/**
 * Breakpad's own reports of its test dumps (test/fixtures/breakpad-corpus: 17 Linux x86_64
 * dumps, a Windows x64 `__fastfail` dump and a macOS Crashpad dump, no symbols; and minidump2
 * with its symbols): `stackwalk walk X.dmp --format breakpad` and `--format breakpad-m` are
 * byte-identical to `X.stackwalk.out` and `X.stackwalk.machine_readable.out`: OS and CPU lines,
 * crash reason, address and parameters, uptime, every thread's frames with their registers and
 * "Found by:" texts (the checked RBP chain off Windows, the leaf simulation and scanning on
 * Windows, each thread through its own stack memory), and the module list.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";

const CORPUS = "test/fixtures/breakpad-corpus";
const BREAKPAD = "test/fixtures/breakpad";

async function report(dump: string, format: "breakpad" | "breakpad-m", symbols?: string): Promise<string> {
  let out = "";
  let err = "";
  const argv = ["walk", dump, "--format", format, ...(symbols === undefined ? [] : ["--symbols", symbols])];
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  expect(code, err).toBe(0);
  expect(err.split("\n").filter((l) => l.startsWith("note:"))).toEqual([]);
  return out;
}

const dumps: [string, string, string | undefined][] = [
  ...readdirSync(CORPUS)
    .filter((f) => f.endsWith(".dmp"))
    .sort()
    .map((f): [string, string, string | undefined] => [f.slice(0, -4), CORPUS, undefined]),
  ["minidump2", BREAKPAD, `${BREAKPAD}/symbols`],
];

describe("Breakpad's reports of its test dumps, byte for byte", () => {
  it("finds the 19 dumps of the corpus and minidump2", () => {
    expect(dumps).toHaveLength(20);
  });

  for (const [name, dir, symbols] of dumps) {
    it(`${name}: --format breakpad and breakpad-m`, async () => {
      expect(await report(`${dir}/${name}.dmp`, "breakpad", symbols)).toBe(readFileSync(`${dir}/${name}.stackwalk.out`, "utf8"));
      expect(await report(`${dir}/${name}.dmp`, "breakpad-m", symbols)).toBe(readFileSync(`${dir}/${name}.stackwalk.machine_readable.out`, "utf8"));
    });
  }
});
