import { describe, expect, it } from "vitest";
import * as api from "../src/index.js";

describe("public API", () => {
  it("walks a vector parsed from text, in-process", async () => {
    const { readFileSync } = await import("node:fs");
    const v = api.parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    const [{ walk }] = api.walkSnapshot(v) as [api.ThreadWalk];
    expect(walk.frames).toHaveLength(4);
    expect(api.compareWithTruth(v.machine, walk, v.threads[0]!.truth!).exact).toBe(true);
    expect(api.STACKFRAME64_SIZE).toBe(264);
  });
});
