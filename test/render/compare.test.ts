import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parseChainSpec, runCompareTargets, type TargetRun } from "../../emulator/compare.js";
import { run } from "../../src/cli/main.js";
import { decodeDiskItems, decodeStackTrace } from "../../src/formats/etw/extended-data.js";
import { compareWithTruth } from "../../src/walk/compare.js";
import { walkThread } from "../../src/walk/walk.js";
import { ROOT } from "../support/corpus.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const CHAINS = ["config-parser", "deep-leaf"];
const chainFile = (name: string): string => `${ROOT}vectors/programs/chains/${name}.json`;

describe("compare", () => {
  for (const name of CHAINS) {
    it(`builds ${name} for all six targets, each walked exactly by its table walker, and prints the committed comparison`, async () => {
      const spec = parseChainSpec(readFileSync(chainFile(name), "utf8"), chainFile(name));
      const runs = await runCompareTargets(spec);
      expect(runs.map((r) => r.target)).toEqual(["x86-fp", "x86-fpo", "x64", "arm64", "arm", "ia64"]);
      const best = { "x86-fp": "fpo", "x86-fpo": "fpo", x64: "unwind", arm64: "unwind", arm: "unwind", ia64: "ia64" } as const;
      for (const r of runs) {
        const thread = r.vector.threads[0]!;
        // Every target runs the same chain: the truth names the functions innermost first.
        const names = thread.truth!.map((t) => t.function);
        expect(names.slice(0, spec.functions.length)).toEqual(spec.functions.map((f) => f.name).reverse());
        expect(compareWithTruth(r.vector.machine, walkThread(r.vector, thread, { walker: best[r.target] }), thread.truth!).exact).toBe(true);
      }
      const { code, out } = await cli("compare", chainFile(name));
      expect(code).toBe(0);
      await expect(out).toMatchFileSnapshot(`compare/${name}.txt`);
    });
  }

  it("agrees with the emulated CPU's RtlWalkFrameChain: the frames the EBP-chain walker finds are the frames ETW recorded", async () => {
    for (const name of CHAINS) {
      const spec = parseChainSpec(readFileSync(chainFile(name), "utf8"), chainFile(name));
      const runs: TargetRun[] = (await runCompareTargets(spec)).filter((r) => r.target.startsWith("x86"));
      for (const r of runs) {
        const thread = r.vector.threads[0]!;
        const etw = decodeStackTrace(decodeDiskItems(thread.etw![0]!.items)[0]!).addresses;
        const walk = walkThread(r.vector, thread, { walker: "frame-pointer" });
        const byChain = thread.truth!.slice(1).map((t) => walk.frames.some((f) => f.addrPC === t.pc && f.addrStack === t.sp));
        const byEtw = thread.truth!.slice(1).map((t) => etw.includes(t.pc));
        expect(byChain, `${name} ${r.target}`).toEqual(byEtw);
      }
      // The frame-pointer build keeps every frame; frame-pointer omission loses all callers.
      expect(runs[0]!.vector.threads[0]!.truth!.length).toBe(spec.functions.length + 1);
    }
  });

  it("rejects a malformed chain file naming the JSON path", async () => {
    const { code, err } = await cli("compare", `${ROOT}vectors/x86/ebp-chain-4.json`);
    expect(code).toBe(2);
    expect(err).toMatch(/ebp-chain-4\.json/);
  });
});
