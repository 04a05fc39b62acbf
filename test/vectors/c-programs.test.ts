import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";

describe("real C programs", () => {
  it("rebuild byte-identically with clang-14 and lld-14", () => {
    const r = spawnSync("bash", ["vectors/programs/c/build.sh", "--check"], { encoding: "utf8" });
    expect(r.stderr + r.stdout).toContain("check: every output is byte-identical");
    expect(r.status).toBe(0);
  });

  it("the ARM images and llvm-readobj-16's reading of them rebuild byte-identically with clang-16 and lld-16", () => {
    const r = spawnSync("bash", ["test/fixtures/arm-clang/build.sh", "--check"], { encoding: "utf8" });
    expect(r.stderr + r.stdout).not.toContain("DIFFERS");
    expect(r.stdout.match(/^same /gm)?.length).toBe(6);
    expect(r.status).toBe(0);
  });
});
