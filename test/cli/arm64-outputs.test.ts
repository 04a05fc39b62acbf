/**
 * Every output of `walk`, `check`, `explain`, `render` and `view` for an ARM64 vector: the
 * clang-14 chain of test/arch/arm64/chain.ts with its truth from the prologs, written as a vector.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { formatVector, type Vector } from "../../src/formats/vector.js";
import type { RegionMemory } from "../../src/memory/region-memory.js";
import { chainStop } from "../arch/arm64/chain.js";
import { cli } from "../support/cli.js";

const dir = mkdtempSync(join(tmpdir(), "arm64-outputs-"));
const file = join(dir, "chain.json");

beforeAll(() => {
  const c = chainStop();
  const v: Vector = {
    machine: "arm64",
    description: "clang-14 shapes",
    threads: [{ ...c.snapshot.threads[0]!, truth: c.truth }],
    memory: c.snapshot.memory as RegionMemory,
    modules: c.snapshot.modules,
  };
  writeFileSync(file, formatVector(v));
});

describe("ARM64 outputs", () => {
  it("walk: the dbghelp fields of every frame, the .pdata rule that found it, the end of the stack", async () => {
    const r = await cli("walk", file);
    expect(r.code).toBe(0);
    expect(r.out).toContain("ARM64 (AArch64) - clang-14 shapes");
    expect(r.out).toMatch(/ 1 {2}0x0000000140003218 {2}0x000000014000311c {2}0x0000000000201fa0 {2}0x0000000000200020 {2}unwind-info +chain\.exe!bigframe\+0x18/);
    expect(r.out).toContain("rule: arm64 rva=0x3200 xdata ops=[alloc_m(0x1f40); nop; nop; save_fplr_x(fp,lr,0x10!)] sp=sp+0x1f50 pc=lr");
    expect(r.out).toContain("stop: end-of-stack");
  });

  it("check: exact against the truth", async () => {
    const r = await cli("check", file);
    expect(r.code).toBe(0);
    expect(r.out).toContain("exact, 4 frames");
  });

  it("windbg: Child-SP, RetAddr and the call site, as WinDbg's k on ARM64", async () => {
    const r = await cli("walk", file, "--format", "windbg");
    expect(r.out.split("\n").slice(0, 3)).toEqual([
      "Child-SP          RetAddr           Call Site",
      "00000000`00200000 00000001`40003218 chain!leaf_locals+0x10",
      "00000000`00200020 00000001`4000311c chain!bigframe+0x18",
    ]);
  });

  it("explain: the codes undone, the return address in lr or in the record, the signed return address stripped", async () => {
    const r = await cli("explain", file);
    expect(r.code).toBe(0);
    expect(r.out).toContain("leaf_locals never saved lr, so the return address is still in the link register where bl left it");
    expect(r.out).toContain("save_fplr_x(fp,lr,0x10!): ldp fp,lr,[sp],#0x10");
    expect(r.out).toContain("its pointer authentication code stripped");
    expect(r.out).toContain("truth: exact: all 4 frames equal the ground truth");
  });

  it("render and view: the stack picture with the return-address slots the unwind read", async () => {
    const svg = join(dir, "chain.svg");
    expect((await cli("render", file, "-o", svg)).code).toBe(0);
    const text = readFileSync(svg, "utf8");
    expect(text).toContain("ARM64 (AArch64)");
    expect(text).toContain("return address → #3");
    const html = join(dir, "chain.html");
    expect((await cli("view", file, "-o", html)).code).toBe(0);
    expect(readFileSync(html, "utf8")).toContain("leaf_locals");
  });
});
