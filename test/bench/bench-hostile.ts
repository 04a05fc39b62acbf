/**
 * The hostile-dump bench, run by `npm run bench` (emulator/bench.ts) or alone with
 * `tsx emulator/bench-hostile.ts` (after `npm run build`): a minidump of under 1 MB whose 100
 * thread entries all point at one 960 KB stack holding a 120,000-deep EBP chain
 * (test/support/crafted-dump.ts), walked by the built command line as a user runs it, in each
 * output format, the output going to a file. Printed: the dump's size, each format's wall time
 * (best of three) and peak RSS (the highest of the three), the output's size, how the threads'
 * walks stopped, and whether the targets hold (every thread stopped by the cap, the budget or
 * the end of its stack; peak RSS ≤ 300 MB; wall ≤ 10 s).
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { craftedDump } from "../support/crafted-dump.js";
import { RSS_HOOK } from "./bench-dump.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/bin/stackwalk.cjs");

/** The crafted dump's shape and the targets. */
export const HOSTILE = { threads: 100, depth: 120_000, rssTargetMb: 300, wallTargetS: 10 } as const;

export interface HostileRun {
  format: string;
  /** Best wall time of the runs, seconds. */
  seconds: number;
  /** Highest peak RSS of the runs, MB. */
  peakMb: number;
  outputBytes: number;
  /** Threads by the reason their walk stopped (from the text output). */
  stops?: Record<string, number>;
}

/** Runs the built CLI with `args`, standard output to `out`; wall time and peak RSS. */
function runCli(args: string[], out: string): { seconds: number; peakMb: number } {
  const fd = openSync(out, "w");
  const started = performance.now();
  const r = spawnSync(process.execPath, ["--import", RSS_HOOK, CLI, ...args], { cwd: ROOT, stdio: ["ignore", fd, "pipe"], encoding: "utf8" });
  const seconds = (performance.now() - started) / 1000;
  closeSync(fd);
  if (r.error !== undefined) throw r.error;
  const marker = /@@maxrss (\d+)/.exec(r.stderr ?? "");
  const stderr = (r.stderr ?? "").replace(/\n?@@maxrss \d+\n/, "").trim();
  if (r.status !== 0 || marker === null) throw new Error(`stackwalk ${args.join(" ")} exited with ${r.status}: ${stderr}`);
  return { seconds, peakMb: Number(marker[1]) / 1024 };
}

/** Walks the crafted dump in every format; `runs` runs each. */
export function benchHostile(runs = 3): { dumpBytes: number; results: HostileRun[] } {
  const dir = mkdtempSync(join(tmpdir(), "stackwalk-hostile-"));
  try {
    const dump = join(dir, "hostile.dmp");
    const bytes = craftedDump({ threads: HOSTILE.threads, depth: HOSTILE.depth });
    writeFileSync(dump, bytes);
    const out = join(dir, "out");
    const cases: [string, string[]][] = [
      ["text", ["walk", dump]],
      ["json", ["walk", dump, "--format", "json"]],
      ["jsonl", ["walk", dump, "--format", "jsonl"]],
      ["breakpad", ["minidump-stackwalk", dump]],
    ];
    const results = cases.map(([format, args]): HostileRun => {
      let seconds = Infinity;
      let peakMb = 0;
      for (let i = 0; i < runs; i++) {
        const r = runCli(args, out);
        seconds = Math.min(seconds, r.seconds);
        peakMb = Math.max(peakMb, r.peakMb);
      }
      const result: HostileRun = { format, seconds, peakMb, outputBytes: statSync(out).size };
      if (format === "text") {
        const stops: Record<string, number> = {};
        for (const m of readFileSync(out, "utf8").matchAll(/^ {2}stop: ([a-z-]+):/gm)) stops[m[1]!] = (stops[m[1]!] ?? 0) + 1;
        result.stops = stops;
      }
      return result;
    });
    return { dumpBytes: bytes.length, results };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's lines. */
export function formatHostileBench({ dumpBytes, results }: ReturnType<typeof benchHostile>): string {
  const lines = [`hostile dump: ${dumpBytes} bytes, ${HOSTILE.threads} threads listing one ${HOSTILE.depth}-deep EBP chain (default --max-frames and --frame-budget)`];
  for (const r of results) {
    lines.push(`  ${r.format.padEnd(8)} ${r.seconds.toFixed(2)} s (best of 3), peak RSS ${Math.round(r.peakMb)} MB, ${(r.outputBytes / 2 ** 20).toFixed(1)} MiB written`);
  }
  const text = results.find((r) => r.format === "text");
  const stops = text?.stops ?? {};
  const stopped = Object.values(stops).reduce((a, b) => a + b, 0);
  lines.push(`  threads by stop reason: ${Object.entries(stops).map(([k, v]) => `${k} ${v}`).join(", ")} (${stopped} of ${HOSTILE.threads})`);
  const bounded = stopped === HOSTILE.threads && Object.keys(stops).every((k) => k === "frame-budget" || k === "max-frames" || k === "end-of-stack");
  const rss = Math.max(...results.map((r) => r.peakMb));
  const wall = Math.max(...results.map((r) => r.seconds));
  lines.push(
    `  targets: every thread stopped by the cap, the budget or its stack's end ${bounded ? "yes" : "NO"}; peak RSS ${Math.round(rss)} MB ≤ ${HOSTILE.rssTargetMb} MB ${rss <= HOSTILE.rssTargetMb ? "yes" : "NO"}; wall ${wall.toFixed(2)} s ≤ ${HOSTILE.wallTargetS} s ${wall <= HOSTILE.wallTargetS ? "yes" : "NO"}`,
  );
  return lines.join("\n") + "\n";
}

export function printHostileBench(): void {
  process.stdout.write(formatHostileBench(benchHostile()));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) printHostileBench();
