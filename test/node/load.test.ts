/**
 * stackwalk-emu/node's loadSnapshot: the one loading function of the command line and library
 * users. Inputs by path (a vector, a sweep's step, a minidump with its symbol store), the notes
 * it says, and the typed errors for options that do not fit the input.
 */
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { loadSnapshot, LoadOptionError } from "../../src/node/index.js";
import { replaySweep } from "../../src/formats/sweep.js";
import { parseJsonInput } from "../../src/formats/input.js";
import { readFileSync } from "node:fs";
import { fixtureFile } from "../support/fixtures.js";

const DUMP = fixtureFile("breakpad/minidump2.dmp");
const STORE = fixtureFile("breakpad/symbols");
const VECTOR = "vectors/x86/ebp-chain-4.json";
const SWEEP = "vectors/arm64/synthetic/arm64-chain.sweep.json";

/** The error `run` rejects with. */
async function failure(run: Promise<unknown>): Promise<unknown> {
  return run.then(
    () => undefined,
    (e: unknown) => e,
  );
}

describe("loadSnapshot(path, options)", () => {
  it("loads a minidump by position with its symbol store, says what the search found, and closes", async () => {
    const notes: string[] = [];
    const input = await loadSnapshot(DUMP, { symbols: [STORE], onNote: (line) => notes.push(line) });
    expect(input.dump).toBeDefined();
    expect(input.symbolsGiven).toBe(true);
    expect(input.snapshot.modules.find((m) => m.name.endsWith("test_app.exe"))?.symbols?.length).toBeGreaterThan(0);
    expect(notes.filter((n) => n.startsWith("symbols: test_app.exe: unwind records from"))).toHaveLength(1);
    expect(notes.at(-1)).toMatch(/^symbols: no symbol file for 11 module\(s\): ntdll\.dll/);
    expect(input.symbolNotes.find((n) => n.module === "kernel32.dll")?.file).toMatch(/kernel32\.sym$/);
    input.close();
  });

  it("says nothing of symbols when no symbol path is given, and looks only beside the input", async () => {
    const notes: string[] = [];
    const input = await loadSnapshot(VECTOR, { onNote: (line) => notes.push(line) });
    expect(input.symbolsGiven).toBe(false);
    expect(input.dump).toBeUndefined();
    expect(input.snapshot.threads.length).toBeGreaterThan(0);
    expect(notes).toEqual([]);
  });

  it("takes a sweep's snapshot at a step: the one the sweep's own replay gives", async () => {
    const sweep = parseJsonInput(readFileSync(SWEEP, "utf8"), SWEEP);
    if (sweep.kind !== "sweep") throw new Error("not a sweep");
    const snapshots = [...replaySweep(sweep.sweep)];
    const wanted = snapshots[7]!;
    const input = await loadSnapshot(SWEEP, { step: wanted.step });
    expect(input.snapshot.threads[0]!.registers).toEqual(wanted.threads[0]!.registers);
  });

  it("an option that does not fit the input is a LoadOptionError naming it, in words the caller can name it by", async () => {
    const cases: [Promise<unknown>, string, string][] = [
      [loadSnapshot(DUMP, { step: 3 }), "step", `--step applies to sweeps; ${DUMP} is a minidump`],
      [loadSnapshot(VECTOR, { step: 3 }), "step", `--step applies to sweeps; ${VECTOR} is a single vector`],
      [loadSnapshot(SWEEP), "step", "choose one with --step N"],
      [loadSnapshot(SWEEP, { step: 99_999_999 }), "step", `${SWEEP} has no snapshot at step 99999999`],
      [loadSnapshot(VECTOR, { images: ["."] }), "images", `--images applies to minidumps; ${VECTOR} is a vector`],
      [loadSnapshot(VECTOR, { minidumpOnly: true }), "minidump", `--format breakpad reproduces Breakpad's report of a minidump; ${VECTOR} is a vector, not a .dmp`],
    ];
    for (const [run, option, words] of cases) {
      const e = await failure(run);
      expect(e).toBeInstanceOf(LoadOptionError);
      const error = e as LoadOptionError;
      expect(error.option).toBe(option);
      expect(error.message).toContain(option === "minidump" ? "minidump reproduces" : "");
      expect(error.words(option === "minidump" ? "--format breakpad" : `--${option}`)).toContain(words);
    }
  });

  it("a bad input is an InputError naming the file and the offset", async () => {
    const e = await failure(loadSnapshot(fixtureFile("breakpad/README.md")));
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).file).toBe(fixtureFile("breakpad/README.md"));
    expect((e as InputError).offset).toBe(0);
  });
});
