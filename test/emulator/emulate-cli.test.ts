import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_INSTRUCTIONS as RUN_DEFAULT } from "../../emulator/run.js";
import { DEFAULT_MAX_INSTRUCTIONS, EMULATE_USAGE, emulateCommand } from "../../src/cli/emulate.js";
import { UsageError } from "../../src/cli/common.js";
import { InputError } from "../../src/errors.js";
import { parseVector } from "../../src/formats/vector.js";

const X86 = "vectors/programs/c/build/x86-fp/recursion-callbacks.exe";
const X64 = "vectors/programs/c/build/x64/recursion-callbacks.exe";

async function emulate(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await emulateCommand(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const scratch = (): string => mkdtempSync(join(tmpdir(), "emulate-cli-"));

describe("stackwalk emulate", () => {
  it("prints its usage with --help", async () => {
    expect(await emulate("--help")).toEqual({ code: 0, out: EMULATE_USAGE, err: "" });
    expect(DEFAULT_MAX_INSTRUCTIONS).toBe(RUN_DEFAULT);
  });

  it("without --sweep or --break runs the program and prints its result", async () => {
    expect(await emulate(X64)).toEqual({
      code: 0,
      out: `${X64}: returned to the sentinel after 702 instructions; rax = 0x0000000002410e65\n`,
      err: "",
    });
  });

  it("rejects usage mistakes and unknown program kinds", async () => {
    await expect(emulate()).rejects.toThrow(UsageError);
    await expect(emulate(X86, "--max-instructions", "0")).rejects.toThrow('--max-instructions takes a whole number ≥ 1, not "0"');
    await expect(emulate(X86, "--bogus")).rejects.toThrow(UsageError);
    const notProgram = join(scratch(), "notes.txt");
    writeFileSync(notProgram, "hello");
    const e = await emulate(notProgram).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).code).toBe("unsupported");
    expect((e as InputError).message).toBe(
      `${notProgram}: not a program the emulator can run (expected a PE image (.exe/.dll), or a program spec (.json, stackwalk-program/1), or an assembly source (.asm/.s))`,
    );
    await expect(emulate(X86, "--break", "nope")).rejects.toThrow(`${X86}: --break "nope": no function or label of that name`);
  });

  it("reports a runaway program with exit status 2 and writes nothing", async () => {
    const dir = scratch();
    const r = await emulate(X86, "--sweep", "--max-instructions", "100", "-o", join(dir, "s.json"));
    expect(r.code).toBe(2);
    expect(r.out).toBe("");
    expect(r.err).toMatch(new RegExp(`^stackwalk emulate: ${X86}: still running after 100 instructions; the next one is 0x[0-9a-f]{8}: `));
    expect(readdirSync(dir)).toEqual([]);
  });

  it("--break writes one vector per hit into a directory, each with its truth", async () => {
    const dir = scratch();
    const r = await emulate(X86, "--break", "ping", "--break", "op_mix", "-o", `${dir}/`);
    expect(r.code).toBe(0);
    const files = readdirSync(dir).sort();
    expect(files.filter((f) => f.startsWith("recursion-callbacks.ping."))).toHaveLength(4);
    expect(files.filter((f) => f.startsWith("recursion-callbacks.op_mix."))).toHaveLength(4);
    expect(r.out.trim().split("\n").at(-1)).toBe("8 vectors (926 instructions)");
    const first = files.find((f) => f.startsWith("recursion-callbacks.ping."))!;
    const v = parseVector(readFileSync(join(dir, first), "utf8"));
    expect(v.threads[0]!.truth!.map((t) => t.function)).toEqual(["ping", "entry"]);
    expect(v.provenance).toBe(`emulator: stackwalk emulate ${X86} --break ping --break op_mix (Unicorn 2; truth from the shadow call stack)`);
  });

  it("--break with a pattern names files by hit number; a plain name takes exactly one hit", async () => {
    const dir = scratch();
    expect((await emulate(X86, "--break", "ping", "-o", join(dir, "hit-{n}.json"))).code).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(["hit-1.json", "hit-2.json", "hit-3.json", "hit-4.json"]);
    const other = scratch();
    await expect(emulate(X86, "--break", "ping", "-o", join(other, "one.json"))).rejects.toThrow("names one file, but the breaks were hit 4 times");
    expect(readdirSync(other)).toEqual([]);
    expect((await emulate(X86, "--break", "call_conventions", "-o", join(other, "one.json"))).code).toBe(0);
    expect(readdirSync(other)).toEqual(["one.json"]);
  });

  it("--sweep with --break keeps only the break snapshots, labelled", async () => {
    const out = join(scratch(), "pings.json");
    const r = await emulate(X86, "--sweep", "--break", "ping", "-o", out);
    expect(r.out).toBe(`wrote ${out}: 4 snapshots (926 instructions)\n`);
    const text = readFileSync(out, "utf8");
    expect(text.match(/"label": "ping"/g)).toHaveLength(4);
  });
});
