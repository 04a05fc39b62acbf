/**
 * `npm run site [-- DIR]`: builds the playground into DIR (default dist/site), four plain files
 * that any static host serves, or a browser opens from file:// with no server at all:
 *
 * - index.html: the page (src/site/page.ts), with `stackwalk view`'s style and script inline;
 * - site.js: the page's script (src/site/app.ts);
 * - walker.js: the Web Worker's code (src/site/worker.ts: the walker core) as a string the page
 *   starts its worker from, since a page from file:// may not start a worker from a file;
 * - examples.js: the config-parser chain's snapshots (vectors/compare/, written by
 *   `npm run pictures`), loaded when an example is opened.
 *
 * Bundled by esbuild as classic scripts (a page from file:// may not load ES modules).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";
import type { CompareExample } from "./src/site/session.js";
import { sitePage } from "./src/site/page.js";

const ROOT = fileURLToPath(new URL(".", import.meta.url));

/** One file of the built site, with its size and its size gzipped (what a server compressing it sends). */
export interface SiteFileSize {
  name: string;
  bytes: number;
  gzipped: number;
}

/** Bundles one script of the site for the browser, minified, as a classic script. */
async function bundle(entry: string): Promise<string> {
  const result = await build({
    entryPoints: [join(ROOT, entry)],
    bundle: true,
    write: false,
    format: "iife",
    platform: "browser",
    target: "es2022",
    minify: true,
    legalComments: "none",
    logLevel: "warning",
  });
  return result.outputFiles[0]!.text;
}

/** The chains of vectors/compare, and their snapshots by file name. */
function examples(): { examples: CompareExample[]; files: Record<string, string> } {
  const dir = join(ROOT, "vectors", "compare");
  const chains: CompareExample[] = [];
  const files: Record<string, string> = {};
  for (const name of readdirSync(dir).sort()) {
    const text = readFileSync(join(dir, name), "utf8");
    const doc = JSON.parse(text) as { format?: string } & CompareExample;
    if (doc.format === "stackwalk-compare/1") chains.push({ name: doc.name, description: doc.description, chain: doc.chain, targets: doc.targets });
    else files[name] = text;
  }
  return { examples: chains, files };
}

/** Builds the site into `dir` (emptied first) and returns its files' sizes. */
export async function buildSite(dir: string): Promise<SiteFileSize[]> {
  const ex = examples();
  const [app, worker] = await Promise.all([bundle("src/site/app.ts"), bundle("src/site/worker.ts")]);
  const files: [string, string][] = [
    ["index.html", sitePage(ex.examples)],
    ["site.js", app],
    ["walker.js", `self.stackwalkWorker=${JSON.stringify(worker)};\n`],
    ["examples.js", `self.stackwalkExamples=${JSON.stringify(ex)};\n`],
  ];
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  return files.map(([name, text]) => {
    const bytes = Buffer.from(text, "utf8");
    writeFileSync(join(dir, name), bytes);
    return { name, bytes: bytes.length, gzipped: gzipSync(bytes, { level: 9 }).length };
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = resolve(process.argv[2] ?? join(ROOT, "dist", "site"));
  const sizes = await buildSite(dir);
  const total = (k: "bytes" | "gzipped"): string => sizes.reduce((n, f) => n + f[k], 0).toLocaleString("en-US");
  for (const f of sizes) process.stdout.write(`  ${f.name.padEnd(12)} ${f.bytes.toLocaleString("en-US").padStart(10)} bytes, ${f.gzipped.toLocaleString("en-US").padStart(9)} gzipped\n`);
  process.stdout.write(`wrote ${dir}: ${sizes.length} files, ${total("bytes")} bytes (${total("gzipped")} gzipped); open index.html in a browser\n`);
}
