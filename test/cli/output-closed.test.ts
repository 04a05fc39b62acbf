/**
 * `stackwalk walk … | head`: when the reader of standard output goes away (EPIPE), the command
 * ends at its next write, quietly and with exit 0, for one dump and for a folder walked by
 * workers.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { craftedDump } from "../support/crafted-dump.js";

const TSX = pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href;
const BIN = fileURLToPath(new URL("../../src/cli/stackwalk.ts", import.meta.url));

/** Runs stackwalk, reads its first chunk of output, then closes the pipe as `head` does. */
function firstChunkThenClose(args: string[]): Promise<{ code: number | null; signal: string | null; first: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", TSX, BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
    let first = "";
    let err = "";
    child.stderr.on("data", (d: Buffer) => (err += d.toString()));
    child.stdout.once("data", (d: Buffer) => {
      first = d.toString();
      child.stdout.destroy();
    });
    child.on("close", (code, signal) => resolve({ code, signal, first, err }));
  });
}

describe("a reader that goes away", () => {
  const dir = mkdtempSync(join(tmpdir(), "sw-epipe-"));
  // 20 threads listing one 20,000-deep chain: far more output than a pipe holds.
  const dump = craftedDump({ threads: 20, depth: 20_000 });
  writeFileSync(join(dir, "deep.dmp"), dump);
  mkdirSync(join(dir, "folder"));
  writeFileSync(join(dir, "folder", "a.dmp"), dump);
  writeFileSync(join(dir, "folder", "b.dmp"), dump);

  it.each([
    ["walk, text", ["walk", join(dir, "deep.dmp")], "deep.dmp: x86 (I386)"],
    ["walk --format json", ["walk", join(dir, "deep.dmp"), "--format", "json"], `"machine": "x86"`],
    ["minidump-stackwalk", ["minidump-stackwalk", join(dir, "deep.dmp")], "Operating system:"],
    ["a folder on two workers, JSON Lines", ["walk", join(dir, "folder"), "--format", "jsonl", "--jobs", "2"], '{"file":'],
  ])("%s: exit 0, nothing on stderr", async (_what, args, start) => {
    const r = await firstChunkThenClose(args);
    expect(r.first).toContain(start);
    expect([r.code, r.signal, r.err]).toEqual([0, null, ""]);
  });
});
