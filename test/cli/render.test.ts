import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { allElements, deepText, parseXml } from "../support/explained.js";
import { spawnStackwalk } from "../support/spawn-cli.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), "stackwalk-render-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const DUMP = "test/fixtures/breakpad/minidump2.dmp";
const SYMBOLS = "test/fixtures/breakpad/symbols";

describe("stackwalk render", () => {
  it.each([
    ["x86", "vectors/x86/synthetic/fpo-leaf.json", 3],
    ["x64", "vectors/x64/rbp-chain-3.json", 3],
    ["ia64", "vectors/ia64/synthetic/frame-63.json", 4],
  ])("draws a %s vector as well-formed SVG", async (machine, vector, frames) => {
    const out = join(dir, `${machine}.svg`);
    const r = await cli("render", vector, "-o", out);
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^wrote ${out.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\([\\d,]+ bytes\\): thread 0, ${frames} frames\\n$`));
    const root = parseXml(readFileSync(out, "utf8"));
    expect(root.name).toBe("svg");
    const all = allElements(root);
    const listed = all.filter((el) => el.attributes["class"] === "legend-frame").map((el) => el.attributes["data-frame"]);
    expect(listed).toEqual([...Array(frames).keys()].map(String));
    expect(all.filter((el) => el.attributes["class"] === "arrow ra").length).toBeGreaterThan(0);
    if (machine === "ia64") expect(deepText(root)).toContain("Backing store (RSE)");
  });

  it("draws the crashed thread of the Breakpad dump, with its symbols, or the thread chosen", async () => {
    const out = join(dir, "minidump2.svg");
    const r = await cli("render", DUMP, "--symbols", SYMBOLS, "-o", out);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/: thread 3060, 4 frames; the input has 2 threads, choose another with --thread ID\n$/);
    const text = deepText(parseXml(readFileSync(out, "utf8")));
    expect(text).toContain("CrashFunction");
    expect(text).toContain("frame-data");
    const other = join(dir, "minidump2-4544.svg");
    const r2 = await cli("render", DUMP, "--symbols", SYMBOLS, "--thread", "4544", "-o", other);
    expect(r2.code).toBe(0);
    expect(deepText(parseXml(readFileSync(other, "utf8")))).toContain("Stopped early");
  });

  it("writes to standard output with -o -", async () => {
    const r = await cli("render", "vectors/x86/ebp-chain-4.json", "-o", "-");
    expect(r.code).toBe(0);
    expect(parseXml(r.out).name).toBe("svg");
    expect(r.out).toContain("read_token");
  });

  it("names the default output after the input, in the current directory", () => {
    const cwd = mkdtempSync(join(tmpdir(), "stackwalk-render-cwd-"));
    const r = spawnStackwalk(["render", resolve("vectors/x86/ebp-chain-4.json")], { cwd });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^wrote ebp-chain-4\.svg \(/);
    expect(existsSync(join(cwd, "ebp-chain-4.svg"))).toBe(true);
    rmSync(cwd, { recursive: true, force: true });
  });

  it("shows a vector without truth whose walk stops early, in words", async () => {
    const v = JSON.parse(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    delete v.truth;
    // Keep the first 0x28 bytes of the stack: the second saved EBP (at 0x0012fe28) is gone.
    v.memory[0].hex = v.memory[0].hex.slice(0, 0x28 * 2);
    const file = join(dir, "cut.json");
    writeFileSync(file, JSON.stringify(v));
    const r = await cli("render", file, "-o", "-");
    expect(r.code).toBe(0);
    const text = deepText(parseXml(r.out));
    expect(text).toContain("Stopped early: The walk stopped: memory it needed");
    expect(text).toContain("The input has no ground truth");
  });

  it("bad input and usage: exit 2 with one line", async () => {
    const v = JSON.parse(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    v.machine = "arm64";
    const arm = join(dir, "arm64.json");
    writeFileSync(arm, JSON.stringify(v));
    const cases: [string[], RegExp][] = [
      [["render", arm, "-o", "-"], /arm64/],
      [["render", join(dir, "missing.json"), "-o", "-"], /missing\.json: cannot read/],
      [["render", "vectors/x86/ebp-chain-4.json", "--thread", "9", "-o", "-"], /no thread with id 9/],
      [["render", "vectors/x86/ebp-chain-4.json", "--thread", "all", "-o", "-"], /--thread takes a thread id, not "all"/],
      [["render", "vectors/x86/ebp-chain-4.json", "--walker", "magic", "-o", "-"], /--walker must be one of/],
      [["render", "vectors/x86/ebp-chain-4.json", "-o", join(dir, "no", "such", "dir.svg")], /cannot write/],
      [["render"], /exactly one input file/],
    ];
    for (const [argv, message] of cases) {
      const r = await cli(...argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.out).toBe("");
      expect(r.err.split("\n")[0]).toMatch(message);
    }
  });

  it("has --help", async () => {
    const r = await cli("render", "--help");
    expect(r.code).toBe(0);
    expect(r.out).toContain("usage: stackwalk render");
  });
});
