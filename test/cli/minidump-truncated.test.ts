/**
 * `stackwalk walk` on cut-off copies of minidump2.dmp: exit status 2 and one line on stderr that
 * names the file and the offset, nothing on stdout.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";

const DMP = "../shared/fixtures/breakpad/minidump2.dmp";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

describe("stackwalk walk on a truncated minidump", () => {
  const all = readFileSync(DMP);
  const dir = mkdtempSync(join(tmpdir(), "truncated-dmp-"));
  // In the header, in the stream directory, and in the captured memory at the end.
  for (const [what, length] of [
    ["the header", 20],
    ["the directory", 60],
    ["the memory", all.length - 100],
  ] as const) {
    it(`cut in ${what} (${length} of ${all.length} bytes): exit 2, one line naming the file`, async () => {
      const file = join(dir, `minidump2-${length}.dmp`);
      writeFileSync(file, all.subarray(0, length));
      const r = await cli("walk", file, "--symbols", "../shared/fixtures/breakpad/symbols");
      expect(r.code).toBe(2);
      expect(r.out).toBe("");
      expect(r.err.endsWith("\n")).toBe(true);
      expect(r.err.trimEnd().split("\n")).toHaveLength(1);
      expect(r.err).toMatch(new RegExp(`^stackwalk walk: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}: offset 0x[0-9a-f]+: `));
      const offset = parseInt(/offset 0x([0-9a-f]+)/.exec(r.err)![1]!, 16);
      expect(offset).toBeLessThanOrEqual(length);
    });
  }
});
