/**
 * The package as a user meets it, run by `npm run bench` (test/bench/bench.ts, after `npm run
 * build`) or alone with `tsx test/bench/bench-package.ts`:
 *
 * 1. Whole processes, on the compiled bin: `stackwalk walk minidump2.dmp --symbols <store>
 *    --format breakpad`, `stackwalk --help` and `node -e 0`, each started many times in turn; the
 *    best wall time of each (a shared machine slows some runs down), and the peak RSS of a run
 *    with an exit hook that reports its own peak (VmHWM). Targets: walk within 60 ms
 *    of `node -e 0`, --help within 30 ms, walk's peak RSS at most 60 MB.
 * 2. The core entry bundled for a browser with esbuild and minified: its size, gzipped.
 * 3. Parsing test_app.sym in a fresh process (what a command does: one parse, cold, with the
 *    bin's V8 flags), best of many: MB/s, against the 60 MB/s target.
 * 4. What `npm pack` would ship: files and bytes unpacked.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { fixtureFile } from "../support/fixtures.js";
import { build } from "esbuild";
import { BIN_V8_FLAGS } from "../../src/cli/v8-flags.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "dist/bin/stackwalk.cjs");
const CORE = join(ROOT, "dist/src/index.js");
const FIXTURES = fixtureFile("breakpad");
const SYMBOLS = join(FIXTURES, "symbols");
const TEST_APP_SYM = join(SYMBOLS, "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym");

/** Targets: process time over `node -e 0`, and peak RSS. */
export const WALK_OVER_NODE_MS = 60;
export const HELP_OVER_NODE_MS = 30;
export const WALK_RSS_BYTES = 60 * 1024 * 1024;
export const SYM_PARSE_MB_PER_S = 60;

/**
 * An exit hook printing the process's peak RSS (KiB) on stderr behind a marker: a CommonJS file
 * loaded with --require, which adds no module loader of its own to the process it measures.
 */
function rssHook(): string {
  const file = join(mkdtempSync(join(tmpdir(), "bench-rss-")), "rss-hook.cjs");
  writeFileSync(file, 'process.on("exit", () => { const fs = require("fs"); let kb = process.resourceUsage().maxRSS; try { const m = /VmHWM:\\s*(\\d+) kB/.exec(fs.readFileSync("/proc/self/status", "utf8")); if (m !== null) kb = Number(m[1]); } catch {} fs.writeSync(2, "\\n@@maxrss " + kb + "\\n"); });\n');
  return file;
}

/** One command, as `node <args>`. */
interface Command {
  name: string;
  args: string[];
}

/** Best wall time (ms) and peak RSS (bytes) of one command. */
export interface ProcessFigures {
  name: string;
  ms: number;
  rss: number;
}

function runOnce(args: string[]): { ms: number; stderr: string; status: number | null } {
  const started = performance.now();
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const ms = performance.now() - started;
  if (r.error !== undefined) throw r.error;
  return { ms, stderr: r.stderr, status: r.status };
}

/** Runs the commands `rounds` times in turn; the best time of each, and the median peak RSS of five hooked runs. */
export function measureProcesses(commands: readonly Command[], rounds = 15): ProcessFigures[] {
  const hook = rssHook();
  const best = commands.map(() => Infinity);
  for (let round = 0; round < rounds; round++) {
    commands.forEach((c, i) => {
      const r = runOnce(c.args);
      if (r.status !== 0) throw new Error(`${c.name} exited with ${r.status}: ${r.stderr.trim()}`);
      best[i] = Math.min(best[i]!, r.ms);
    });
  }
  return commands.map((c, i) => {
    const rss: number[] = [];
    for (let k = 0; k < 5; k++) {
      // Through a shell that starts node as its own child: a process forked straight from this
      // one would count this process's RSS at the fork in its peak (Linux keeps the old peak
      // across exec).
      const quoted = [process.execPath, "--require", hook, ...c.args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
      const r = spawnSync("sh", ["-c", `${quoted}; exit $?`], { cwd: ROOT, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
      const marker = /@@maxrss (\d+)/.exec(r.stderr);
      if (marker === null) throw new Error(`${c.name} reported no peak RSS`);
      rss.push(Number(marker[1]) * 1024);
    }
    return { name: c.name, ms: best[i]!, rss: rss.sort((a, b) => a - b)[2]! };
  });
}

/** The core entry bundled for a browser, minified: bytes and gzipped bytes. */
export async function coreBundleSize(): Promise<{ bytes: number; gzipped: number }> {
  const out = await build({ entryPoints: [CORE], bundle: true, minify: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
  const code = out.outputFiles[0]!.contents;
  return { bytes: code.length, gzipped: gzipSync(code, { level: 9 }).length };
}

/** Parses a .sym file once in a fresh process, `rounds` times; the best MB/s. */
export function symParseRate(file: string, rounds = 15): { mbPerS: number; ms: number; bytes: number } {
  // With the V8 flags the bin sets for itself: the parse as the command line makes it.
  const script = `import { readFileSync } from "node:fs";
import { setFlagsFromString } from "node:v8";
setFlagsFromString(${JSON.stringify(BIN_V8_FLAGS)});
const { parseBreakpadSym } = await import(${JSON.stringify(pathToFileURL(join(ROOT, "dist/src/formats/breakpad-sym.js")).href)});
const bytes = readFileSync(${JSON.stringify(file)});
const started = performance.now();
parseBreakpadSym(bytes, { skipMalformed: true });
process.stdout.write(String(performance.now() - started));`;
  let ms = Infinity;
  for (let i = 0; i < rounds; i++) {
    const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`parsing ${file}: ${r.stderr}`);
    ms = Math.min(ms, Number(r.stdout));
  }
  const bytes = statSync(file).size;
  return { mbPerS: bytes / 1e6 / (ms / 1000), ms, bytes };
}

/** What `npm pack` would put in the tarball (of the build already made). */
export function packContents(): { files: number; unpackedSize: number; size: number } {
  const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: ROOT, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm pack --dry-run: ${r.stderr}`);
  const [pack] = JSON.parse(r.stdout.slice(r.stdout.search(/^\[/m))) as { entryCount: number; unpackedSize: number; size: number }[];
  return { files: pack!.entryCount, unpackedSize: pack!.unpackedSize, size: pack!.size };
}

const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
const mib = (n: number): string => `${(n / 1024 / 1024).toFixed(1)} MiB`;
const verdict = (ok: boolean): string => (ok ? "within" : "OVER");

/** Measures and prints the package figures. */
export async function printPackageBench(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  const [node, help, walk] = measureProcesses([
    { name: "node -e 0", args: ["-e", "0"] },
    { name: "stackwalk --help", args: [BIN, "--help"] },
    { name: "stackwalk walk", args: [BIN, "walk", join(FIXTURES, "minidump2.dmp"), "--symbols", SYMBOLS, "--format", "breakpad"] },
  ]) as [ProcessFigures, ProcessFigures, ProcessFigures];
  const bundle = await coreBundleSize();
  const sym = symParseRate(TEST_APP_SYM);
  const pack = packContents();
  const lines = [
    `node -e 0 (process):             ${Math.round(node.ms)} ms, peak RSS ${mib(node.rss)} (best of 15)`,
    `stackwalk --help (process):      ${Math.round(help.ms)} ms, node + ${Math.round(help.ms - node.ms)} ms (${verdict(help.ms - node.ms <= HELP_OVER_NODE_MS)} the +${HELP_OVER_NODE_MS} ms target), peak RSS ${mib(help.rss)}`,
    `stackwalk walk minidump2.dmp --symbols --format breakpad (process): ${Math.round(walk.ms)} ms, node + ${Math.round(walk.ms - node.ms)} ms (${verdict(walk.ms - node.ms <= WALK_OVER_NODE_MS)} the +${WALK_OVER_NODE_MS} ms target)`,
    `stackwalk walk peak RSS:         ${mib(walk.rss)} (${verdict(walk.rss <= WALK_RSS_BYTES)} the ${WALK_RSS_BYTES / 1024 / 1024} MiB target)`,
    `core bundle (browser, minified): ${(bundle.bytes / 1024).toFixed(0)} KiB, ${(bundle.gzipped / 1024).toFixed(0)} KiB gzipped`,
    `npm pack:                        ${pack.files} files, ${mb(pack.unpackedSize)} unpacked, ${mb(pack.size)} packed`,
    `.sym parse, test_app.sym, cold:  ${sym.mbPerS.toFixed(0)} MB/s (${sym.ms.toFixed(1)} ms for ${mb(sym.bytes)}, one parse in a fresh process, best of 15; ${verdict(sym.mbPerS >= SYM_PARSE_MB_PER_S)} the ${SYM_PARSE_MB_PER_S} MB/s target)`,
  ];
  process.stdout.write(lines.join("\n") + "\n");
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printPackageBench();
