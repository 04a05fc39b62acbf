/**
 * `stackwalk walk` on cut-off copies of minidump2.dmp: cut in the header or the stream directory,
 * nothing can be walked: exit status 2 and one line on stderr that names the file and the
 * offset, nothing on stdout. Cut in the captured memory, the walk goes on with what is there and
 * stderr notes name the offsets of what was lost.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { parseWalkJson } from "../support/walk-schema.js";

const DMP = "test/fixtures/breakpad/minidump2.dmp";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("stackwalk walk on a truncated minidump", () => {
  const all = readFileSync(DMP);
  const dir = mkdtempSync(join(tmpdir(), "truncated-dmp-"));
  // In the header and in the stream directory.
  for (const [what, length] of [
    ["the header", 20],
    ["the directory", 60],
  ] as const) {
    it(`cut in ${what} (${length} of ${all.length} bytes): exit 2, one line naming the file`, async () => {
      const file = join(dir, `minidump2-${length}.dmp`);
      writeFileSync(file, all.subarray(0, length));
      const r = await cli("walk", file, "--symbols", "test/fixtures/breakpad/symbols");
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err.endsWith("\n")).toBe(true);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
      expect(r.err).toMatch(new RegExp(`^stackwalk walk: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: offset 0x[0-9a-f]+: `));
      const offset = parseInt(/offset 0x([0-9a-f]+)/.exec(r.err)![1]!, 16);
      expect(offset).toBeLessThanOrEqual(length);
    });
  }

  it(`cut in the memory (the last 100 bytes missing): the walk goes on, notes on stderr, notes in JSON`, async () => {
    const file = join(dir, `minidump2-${all.length - 100}.dmp`);
    writeFileSync(file, all.subarray(0, all.length - 100));
    const r = await cli("walk", file, "--symbols", "test/fixtures/breakpad/symbols", "--format", "breakpad");
    expect(r.code).toBe(0);
    expect(r.out).toBe(readFileSync("test/fixtures/breakpad/minidump2.stackwalk.out", "utf8"));
    const notes = r.err.split("\n").filter((l) => l.startsWith("note: "));
    expect(notes).toEqual([
      `note: ${file}: offset 0x1d8: thread 1 (id 4544) Stack: the range 0x97f6e8..0x980000 (2328 bytes at file offset 0x231d) runs past the end of the file (0x2bd1 bytes); 2228 of its bytes are read`,
      `note: ${file}: offset 0x1531: MemoryList: the range 0x97f6e8..0x980000 (2328 bytes at file offset 0x231d) runs past the end of the file (0x2bd1 bytes); 2228 of its bytes are read`,
    ]);
    const json = parseWalkJson((await cli("walk", file, "--format", "json")).out) as { notes: string[]; threads: { frames: unknown[] }[] };
    expect(json.notes).toEqual(notes.map((n) => n.slice(`note: ${file}: `.length)));
    expect(json.threads[0]!.frames.length).toBeGreaterThan(1);
  });
});
