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
import { readFileSync } from "node:fs";
import { stackOnlyDump as stackOnly } from "../support/image-server.js";
import { parseWalkJson } from "../support/walk-schema.js";

const IMAGES = "vectors/programs/c/build/x64";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const stackOnlyDump = (): { file: string; truth: [string, string][] } => stackOnly(mkdtempSync(join(tmpdir(), "sw-images-")));

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
