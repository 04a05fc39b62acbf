/**
 * Breakpad's own reports of its test dumps (../shared/fixtures/breakpad-corpus: 17 Linux x86_64
 * dumps, a Windows x64 `__fastfail` dump and a macOS Crashpad dump; and minidump2 with its
 * symbols): `stackwalk walk X.dmp --format breakpad` and `--format breakpad-m` print everything
 * but the frame lines byte for byte as `X.stackwalk.out` and `X.stackwalk.machine_readable.out`:
 * OS and CPU lines, crash reason, address and parameters, uptime, thread headers and their order,
 * the module list with versions, main module and debug file and id columns.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { splitHuman, splitMachine } from "../support/breakpad-report.js";

const CORPUS = "../shared/fixtures/breakpad-corpus";
const BREAKPAD = "../shared/fixtures/breakpad";

async function report(dump: string, format: "breakpad" | "breakpad-m", symbols?: string): Promise<string> {
  let out = "";
  let err = "";
  const argv = ["walk", dump, "--format", format, ...(symbols === undefined ? [] : ["--symbols", symbols])];
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  expect(err.split("\n").filter((l) => l.startsWith("note:"))).toEqual([]);
  expect(code).toBe(0);
  return out;
}

const dumps: [string, string, string | undefined][] = [
  ...readdirSync(CORPUS)
    .filter((f) => f.endsWith(".dmp"))
    .sort()
    .map((f): [string, string, string | undefined] => [f.slice(0, -4), CORPUS, undefined]),
  ["minidump2", BREAKPAD, `${BREAKPAD}/symbols`],
];

describe("Breakpad's reports of its test dumps, all but the frames", () => {
  it("finds the 19 dumps of the corpus and minidump2", () => {
    expect(dumps).toHaveLength(20);
  });

  for (const [name, dir, symbols] of dumps) {
    it(`${name}: --format breakpad and breakpad-m`, async () => {
      const human = splitHuman(await report(`${dir}/${name}.dmp`, "breakpad", symbols));
      const expected = splitHuman(readFileSync(`${dir}/${name}.stackwalk.out`, "utf8"));
      expect(expected.nonFrames).toMatch(/^Operating system: [^]*\nCPU: [^]*\nThread \d+ \(crashed\)\n[^]*\nLoaded modules:\n0x/);
      expect(expected.threads.length).toBeGreaterThan(0);
      expect(human.nonFrames).toBe(expected.nonFrames);
      const machine = splitMachine(await report(`${dir}/${name}.dmp`, "breakpad-m", symbols));
      const expectedMachine = splitMachine(readFileSync(`${dir}/${name}.stackwalk.machine_readable.out`, "utf8"));
      expect(expectedMachine.nonFrames).toMatch(/^OS\|.*\nCPU\|.*\nGPU\|\|\|\nCrash\|.*\|0\n(Module\|.*\n)+threads: 0(,\d+)*\n$/);
      expect(machine.nonFrames).toBe(expectedMachine.nonFrames);
      // Every thread has a frame 0 from its context, the same in both.
      expect(human.threads.map((t) => t.frames.split("\n")[0])).toEqual(expected.threads.map((t) => t.frames.split("\n")[0]));
      expect(machine.threads.map((t) => t.frames.split("\n")[0])).toEqual(expectedMachine.threads.map((t) => t.frames.split("\n")[0]));
    });
  }
});
