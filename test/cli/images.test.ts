/**
 * `walk --images`: an x64 minidump that holds only the stack (as most dumps do) cannot be
 * unwound from tables it lacks; with the real clang-built image beside it, matched by file name,
 * SizeOfImage and TimeDateStamp, every frame agrees with the emulator's truth.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { readFileSync } from "node:fs";
import { parseWalkJson } from "../support/walk-schema.js";

const SWEEP = "vectors/x64/c/recursion-callbacks.sweep.json";
const IMAGES = "vectors/programs/c/build/x64";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

/** A dump of the deepest snapshot of the sweep, with only the stack's memory in it. */
function stackOnlyDump(): { file: string; truth: [string, string][] } {
  const sweep = parseSweep(readFileSync(SWEEP, "utf8"), SWEEP);
  let best: { bytes: Uint8Array; truth: [string, string][] } | undefined;
  let depth = 0;
  for (const v of replaySweep(sweep)) {
    const truth = v.threads[0]!.truth!;
    if (truth.length <= depth) continue;
    depth = truth.length;
    const image = v.modules[0]!;
    const ranges = v.memory.regions
      .filter((r) => r.base + BigInt(r.bytes.length) <= image.base || r.base >= image.base + image.size)
      .map((r) => ({ start: r.base, size: BigInt(r.bytes.length) }));
    const hex = (x: bigint): string => "0x" + x.toString(16).padStart(16, "0");
    best = { bytes: minidumpBytes(v, { ranges }), truth: truth.map((t) => [hex(t.pc), hex(t.sp)]) };
  }
  const file = join(mkdtempSync(join(tmpdir(), "sw-images-")), "rc.dmp");
  writeFileSync(file, best!.bytes);
  return { file, truth: best!.truth };
}

describe("walk --images", () => {
  it("finds the unwind tables in the image on disk for a stack-only x64 dump", async () => {
    const { file, truth } = stackOnlyDump();
    expect(truth.length).toBeGreaterThan(3);
    const frames = (r: { out: string }): [string, string][] =>
      (parseWalkJson(r.out).threads[0].frames as { addrPC: string; addrStack: string }[]).map((f) => [f.addrPC, f.addrStack]);
    const without = await cli("walk", file, "--walker", "unwind", "--format", "json");
    expect(without.code).toBe(0);
    expect(frames(without)).not.toEqual(truth);
    const withImages = await cli("walk", file, "--walker", "unwind", "--format", "json", "--images", IMAGES);
    expect(withImages.code).toBe(0);
    expect(withImages.err).toContain(`image from ${join(IMAGES, "recursion-callbacks.exe")}`);
    expect(frames(withImages)).toEqual(truth);
    const trusts = (parseWalkJson(withImages.out).threads[0].frames as { foundBy: string }[]).slice(1).map((f) => f.foundBy);
    expect(trusts.every((t) => t === "unwind-info")).toBe(true);
  });

  it("passes over an image of another build (SizeOfImage differs) and says why", async () => {
    const { file } = stackOnlyDump();
    const dir = mkdtempSync(join(tmpdir(), "sw-images-other-"));
    writeFileSync(join(dir, "recursion-callbacks.exe"), readFileSync(join(IMAGES, "big-frames-varargs.exe")));
    const r = await cli("walk", file, "--walker", "unwind", "--format", "json", "--images", dir);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/has (SizeOfImage|TimeDateStamp)/);
  });

  it("is a usage error for vectors, which carry their images", async () => {
    const r = await cli("walk", "vectors/x64/rbp-chain-3.json", "--images", IMAGES);
    expect(r.code).toBe(2);
    expect(r.err).toContain("--images applies to minidumps");
  });
});
