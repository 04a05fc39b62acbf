import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { parseXml } from "../support/explained.js";
import { spawnStackwalk } from "../support/spawn-cli.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), "stackwalk-view-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("stackwalk view", () => {
  it.each([
    ["x86", "vectors/x86/synthetic/fpo-leaf.json", 3],
    ["x64", "vectors/x64/rbp-chain-3.json", 3],
    ["ia64", "vectors/ia64/synthetic/frame-63.json", 4],
  ])("writes one page for a %s vector", async (machine, vector, frames) => {
    const out = join(dir, `${machine}.html`);
    const r = await cli("view", vector, "-o", out);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`\\): 1 thread, ${frames} frames\\n$`));
    const html = readFileSync(out, "utf8");
    expect(html.match(/<li class="frame"/g)).toHaveLength(frames);
    const svgs = [...html.matchAll(/<svg[\s\S]*?<\/svg>/g)].map((m) => m[0]);
    expect(svgs).toHaveLength(1);
    expect(parseXml(svgs[0]!).name).toBe("svg");
    expect(html).toContain("Ground truth:");
  });

  it("shows every thread of the Breakpad dump with a picker, the crashed thread first", async () => {
    const out = join(dir, "minidump2.html");
    const r = await cli("view", "test/fixtures/breakpad/minidump2.dmp", "--symbols", "test/fixtures/breakpad/symbols", "-o", out);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/: 2 threads, 7 frames\n$/);
    const html = readFileSync(out, "utf8");
    expect(html).toContain(`<select id="thread-picker">`);
    expect(html.indexOf(`data-thread="3060"`)).toBeLessThan(html.indexOf(`data-thread="4544"`));
    expect(html).toContain("CrashFunction");
    // The source lines the .sym file's line records give.
    expect(html).toContain(`<span class="loc">test_app.exe!\`anonymous namespace&#39;::CrashFunction+0xe</span>`);
    expect(html).toContain(`<p class="src" title="source file and line">c:\\test_app.cc:58</p>`);
    expect(html).toContain("Stopped early:");
    expect(html).toContain("The input has no ground truth");
  });

  it("--thread picks one thread", async () => {
    const r = await cli("view", "test/fixtures/breakpad/minidump2.dmp", "--thread", "4544", "-o", "-");
    expect(r.code).toBe(0);
    expect(r.out.match(/<section class="walk"/g)).toHaveLength(1);
    expect(r.out).not.toContain(`<select id="thread-picker">`);
  });

  it("names the default output after the input, in the current directory, and prints the path", () => {
    const cwd = mkdtempSync(join(tmpdir(), "stackwalk-view-cwd-"));
    const r = spawnStackwalk(["view", resolve("vectors/x86/ebp-chain-4.json")], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^wrote ebp-chain-4\.html \([\d,]+ bytes\): 1 thread, 4 frames\n$/);
    expect(existsSync(join(cwd, "ebp-chain-4.html"))).toBe(true);
    rmSync(cwd, { recursive: true, force: true });
  });

  it("bad input: exit 2 with one line, and no page", async () => {
    const out = join(dir, "bad.html");
    const r = await cli("view", "README.md", "-o", out);
    expect(r.code).toBe(2);
    expect(r.err.trim().split("\n")).toHaveLength(1);
    expect(r.err).toMatch(/README\.md: .*not a stackwalk-vector\/1/);
    expect(existsSync(out)).toBe(false);
    const bad = await cli("view", "vectors/x86/ebp-chain-4.json", "--thread", "x");
    expect(bad.code).toBe(2);
    expect(bad.err.split("\n")[0]).toMatch(/--thread takes a thread id or "all", not "x"/);
  });
});
