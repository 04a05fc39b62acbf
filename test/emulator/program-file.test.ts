import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emulateCommand } from "../../src/cli/emulate.js";
import { InputError } from "../../src/errors.js";
import { parseVector } from "../../src/formats/vector.js";

async function emulate(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await emulateCommand(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

function file(name: string, text: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "program-file-")), name);
  writeFileSync(path, text);
  return path;
}

const X86_SPEC = {
  format: "stackwalk-program/1",
  machine: "x86",
  name: "demo-chain",
  description: "main -> work (FPO, two saved registers) -> leaf",
  functions: [{ name: "main", frame: "ebp" }, { name: "work", frame: "fpo", locals: 2, saved: ["ebx", "esi"] }, { name: "leaf", frame: "fpo" }],
};

describe("emulate: program specs (stackwalk-program/1)", () => {
  it("builds an x86 spec with its FPO data and breaks at its capture label", async () => {
    const spec = file("chain.json", JSON.stringify(X86_SPEC));
    const out = join(spec, "..", "v.json");
    const r = await emulate(spec, "--break", "capture", "-o", out);
    expect(r.code).toBe(0);
    const v = parseVector(readFileSync(out, "utf8"));
    expect(v.threads[0]!.truth!.map((t) => t.function)).toEqual(["leaf", "work", "main"]);
    expect(v.modules[0]!.symbols.map((s) => s.name)).toEqual(["main", "work", "leaf"]);
  });

  it("runs an x64 spec with a machine frame: the interrupted frame is in the truth", async () => {
    const spec = file(
      "isr.json",
      JSON.stringify({
        format: "stackwalk-program/1",
        machine: "x64",
        name: "isr-demo",
        description: "victim is interrupted into isr",
        functions: [{ name: "main", alloc: 40 }, { name: "victim", alloc: 40 }, { name: "isr", machineFrame: "plain", alloc: 40 }],
      }),
    );
    const out = join(spec, "..", "v.json");
    expect((await emulate(spec, "--break", "capture", "-o", out)).code).toBe(0);
    const truth = parseVector(readFileSync(out, "utf8")).threads[0]!.truth!;
    expect(truth.map((t) => t.function)).toEqual(["isr", "victim", "main"]);
  });

  it("names a misspelt field by its JSON path, and a bad value by function and field", async () => {
    const typo = file("typo.json", JSON.stringify({ ...X86_SPEC, functions: [{ name: "main", frame: "fpo", lokals: 3 }] }));
    await expect(emulate(typo)).rejects.toThrow(`${typo}: $.functions[0].lokals: unknown field "lokals"`);
    const bad = file("bad.json", JSON.stringify({ ...X86_SPEC, functions: [{ name: "main", frame: "ebp", alloca: 3 }] }));
    const e = await emulate(bad).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InputError);
    expect((e as InputError).message).toBe(`${bad}: $: program "demo-chain", function "main": alloca must be a multiple of 4`);
    const vector = file("v.json", readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    await expect(emulate(vector)).rejects.toThrow(`${vector}: $.format: expected "stackwalk-program/1"`);
  });
});

describe("emulate: assembly sources", () => {
  const SOURCE = ["main:", "  push ebp", "  mov ebp, esp", "  call helper", "  pop ebp", "  ret", "helper:", "  push ebp", "  mov ebp, esp", "  mov eax, 42", "  pop ebp", "  ret", ""].join("\n");

  it("assembles, runs from main and names functions by their labels", async () => {
    const asm = file("tiny.asm", SOURCE);
    expect((await emulate(asm)).out).toBe(`${asm}: returned to the sentinel after 10 instructions; eax = 0x0000002a\n`);
    const out = join(asm, "..", "h.json");
    expect((await emulate(asm, "--break", "helper+0x3", "-o", out)).code).toBe(0);
    expect(parseVector(readFileSync(out, "utf8")).threads[0]!.truth!.map((t) => [t.function, t.pc])).toEqual([
      ["helper", 0x0040100dn],
      ["main", 0x00401008n],
    ]);
  });

  it("assembles x64 when the source says so", async () => {
    const asm = file("tiny64.asm", "# machine: x64\nmain:\n  mov rax, 0x123456789\n  ret\n");
    expect((await emulate(asm)).out).toBe(`${asm}: returned to the sentinel after 2 instructions; rax = 0x0000000123456789\n`);
  });

  it("names the line of a source that does not assemble, and writes nothing", async () => {
    const asm = file("bad.asm", "main:\n  bogus eax\n");
    await expect(emulate(asm, "--sweep")).rejects.toThrow(`${asm}: does not assemble: line 2: Invalid mnemonic (KS_ERR_ASM_MNEMONICFAIL): bogus eax`);
  });
});
