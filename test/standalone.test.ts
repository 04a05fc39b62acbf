/**
 * A clone stands alone: what the tests, the fuzzer, the benches, the emulator and CI read is in
 * the repository. No file names a path into a folder beside the checkout (the project's old
 * `shared` sibling), every fixture folder says where its files come from and under which licence,
 * and every document the code cites is in the repository. `.ci/run` proves the whole suite in a
 * clone with nothing beside it; this test keeps a path to the sibling from coming back.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

/** Every file under `dir` (relative to the root), skipping fixture data and build output. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        if (name === "node_modules" || name === "dist" || p === join(ROOT, "test", "fixtures")) continue;
        walk(p);
      } else out.push(relative(ROOT, p));
    }
  };
  if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir));
  return out;
}

/** The text files a run reads or runs: code, configs and scripts. */
const CODE = /\.(ts|mts|cts|mjs|cjs|js|json|jsonc|sh)$/;
const sources = (): string[] => [
  ...["src", "test", "emulator", ".ci"].flatMap(filesUnder).filter((f) => CODE.test(f) || f.startsWith(".ci/")),
  ...readdirSync(ROOT).filter((f) => CODE.test(f) && statSync(join(ROOT, f)).isFile()),
];

/** A path that leaves the checkout for its sibling `shared`: written out with `..`, or joined from parts. */
const SIBLING = [/\.\.[\\/]+shared\b/, /["'`]\.\.["'`]\s*,\s*["'`]shared["'`]/];

describe("a clone stands alone", () => {
  it("no source, test, emulator, CI or config file names a path into the sibling folder", () => {
    const files = sources();
    expect(files.length).toBeGreaterThan(300);
    const hits: string[] = [];
    for (const f of files) {
      const lines = readFileSync(join(ROOT, f), "utf8").split("\n");
      lines.forEach((line, i) => {
        if (SIBLING.some((re) => re.test(line))) hits.push(`${f}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(hits).toEqual([]);
  });

  it("the guard sees a path into the sibling however it is spelt", () => {
    const spelt = [`readFileSync("${".."}/shared/fixtures/x.dmp")`, `join(ROOT, "${".."}", "shared", "fixtures")`, `new URL("../${".."}/shared/", import.meta.url)`];
    for (const s of spelt) expect(SIBLING.some((re) => re.test(s)), s).toBe(true);
    expect(SIBLING.some((re) => re.test("the walks share a budget; shared bytes"))).toBe(false);
  });

  it("every fixture folder has a README that names its origin and its licence", () => {
    const fixtures = join(ROOT, "test", "fixtures");
    const folders = readdirSync(fixtures).filter((n) => statSync(join(fixtures, n)).isDirectory());
    expect(folders.length).toBeGreaterThan(0);
    for (const folder of folders) {
      const readme = join(fixtures, folder, "README.md");
      expect(existsSync(readme), `test/fixtures/${folder}/README.md`).toBe(true);
      const text = readFileSync(readme, "utf8");
      expect(text, `test/fixtures/${folder}/README.md names a licence`).toMatch(/licen[cs]e|\bMIT\b|BSD|MPL|Apache/i);
      expect(text, `test/fixtures/${folder}/README.md names where its files come from`).toMatch(/origin|from /i);
    }
  });

  it("every document the code cites is in the repository (docs/spec, docs, the root)", () => {
    const cited = new Set<string>();
    for (const f of [...["src", "test", "emulator"].flatMap(filesUnder), "vectors/README.md"].filter((f) => /\.(ts|mjs|md)$/.test(f))) {
      const text = readFileSync(join(ROOT, f), "utf8");
      for (const m of text.matchAll(/\bdocs\/spec\/([\w./-]+\.md)\b/g)) cited.add(`docs/spec/${m[1]}`);
      for (const m of text.matchAll(/(?<![\w./-])([\w-]+\.md)\b/g)) cited.add(m[1]!);
    }
    expect(cited.size).toBeGreaterThan(5);
    const missing = [...cited].filter((c) => !(c.includes("/") ? [c] : [c, `docs/${c}`, `docs/spec/${c}`]).some((p) => existsSync(join(ROOT, p))));
    expect(missing).toEqual([]);
  });
});
