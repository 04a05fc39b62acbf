/**
 * The sizes docs/performance.md quotes, computed: the root entry and the testing entry bundled
 * for a browser with esbuild and minified, plain and gzipped. Each quoted figure must be within
 * 10% of what a build gives now (the package's own figures are checked by test/package).
 */
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import { describe, expect, it } from "vitest";
import { ROOT } from "../support/corpus.js";
import { docFigures } from "../support/docs.js";

async function bundleKiB(entry: string): Promise<[number, number]> {
  const out = await build({ entryPoints: [`${ROOT}${entry}`], bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
  const code = out.outputFiles[0]!.contents;
  return [code.length / 1024, gzipSync(code, { level: 9 }).length / 1024];
}

const within10 = (quoted: string, actual: number): boolean => Math.abs(Number(quoted) - actual) <= 0.1 * actual;

describe("the sizes docs/performance.md quotes", () => {
  it("the root entry and the testing entry, bundled for a browser and minified, plain and gzipped", async () => {
    const [root, rootGz] = await bundleKiB("src/index.ts");
    const [testing, testingGz] = await bundleKiB("src/testing/index.ts");
    const [qRoot, qRootGz] = docFigures("docs/performance.md", /The root entry, bundled for a browser with esbuild and minified: (\d+) KiB, (\d+) KiB gzipped/);
    const [qTesting, qTestingGz] = docFigures("docs/performance.md", /`stackwalk-emu\/testing` alone bundles to (\d+) KiB, (\d+) KiB gzipped/);
    const now = `now ${root.toFixed(0)}/${rootGz.toFixed(0)} KiB and ${testing.toFixed(0)}/${testingGz.toFixed(0)} KiB: update docs/performance.md`;
    expect([within10(qRoot!, root), within10(qRootGz!, rootGz), within10(qTesting!, testing), within10(qTestingGz!, testingGz)], now).toEqual([true, true, true, true]);
  });
});
