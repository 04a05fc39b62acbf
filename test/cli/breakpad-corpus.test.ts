/**
 * Breakpad's own reports of its test dumps (../shared/fixtures/breakpad-corpus: 17 Linux x86_64,
 * a Windows x64 __fastfail and a macOS Crashpad dump, no symbols): `stackwalk walk X.dmp --format
 * breakpad` and `--format breakpad-m` find the same frames, with the same registers and "Found
 * by:" texts, thread for thread (the checked RBP chain off Windows, the leaf simulation and
 * scanning on Windows, each thread through its own stack memory).
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { humanThreads, machineThreads } from "../support/breakpad-sections.js";

const CORPUS = "../shared/fixtures/breakpad-corpus";
const DUMPS = readdirSync(CORPUS).filter((f) => f.endsWith(".dmp")).sort();

async function walk(dump: string, format: string): Promise<string> {
  let out = "";
  let err = "";
  const code = await run(["walk", `${CORPUS}/${dump}`, "--format", format], { out: (t) => (out += t), err: (t) => (err += t) });
  expect(code, err).toBe(0);
  return out;
}

describe("Breakpad's test dumps: the thread sections of its reports", () => {
  it("holds the 19 dumps the corpus README lists", () => {
    expect(DUMPS).toHaveLength(19);
  });

  it.each(DUMPS)("%s", async (dump) => {
    const base = dump.replace(/\.dmp$/, "");
    const human = readFileSync(`${CORPUS}/${base}.stackwalk.out`, "utf8");
    const machine = readFileSync(`${CORPUS}/${base}.stackwalk.machine_readable.out`, "utf8");
    expect(humanThreads(human)).toMatch(/^Thread 0/);
    expect(machineThreads(machine)).toMatch(/^0\|0\|/);
    expect(humanThreads(await walk(dump, "breakpad"))).toBe(humanThreads(human));
    expect(machineThreads(await walk(dump, "breakpad-m"))).toBe(machineThreads(machine));
  });
});
