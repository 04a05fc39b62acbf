/**
 * The hostile-input bench, run by `npm run bench` (test/bench/bench.ts) or alone with
 * `tsx test/bench/bench-hostile.ts` (after `npm run build`): each crafted input of
 * test/support/hostile-inputs.ts and crafted-dump.ts, given to the built command line as a user
 * gives it, in every output format that takes it (walk's text, JSON, JSON Lines, summary, WinDbg,
 * Breakpad and Breakpad -m; explain of every thread; view), the output going to a file. Each run
 * is one child process reporting its own CPU time (user + system) and peak RSS; the targets are
 * 10 s of CPU and 300 MB for every run. CPU time, not wall time: the machine may be shared.
 *
 * The inputs:
 *   deep        a dump of under 1 MB whose 100 thread entries all point at one 960 KB stack
 *               holding a 120,000-deep EBP chain
 *   modules     a dump of 60,000 overlapping modules and 20 threads (12 MB)
 *   cut         the Breakpad corpus's largest dump with 0x124 bytes deleted
 *   cfi-10000   a dump whose 262,144 stack words each return into a function with a 10,000-token
 *               STACK CFI rule in its .sym file (left out: the postfix limits)
 *   cfi-511     the same with a 511-token rule (kept: the work budget ends the walk)
 *   zeros       a vector whose stack is a 256 MiB zero-filled region
 *   zeros-sweep a sweep of 50 snapshots over a 256 MiB zero-filled region
 */
import { spawnSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { craftedDump } from "../support/crafted-dump.js";
import { CFI_SYM_PATH, cfiDump, cfiSym, corpusDumpCut, manyModulesDump, zeroSweep, zeroVector } from "../support/hostile-inputs.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const CLI = join(ROOT, "dist/bin/stackwalk.cjs");

/** The targets of every run. */
export const HOSTILE_TARGETS = { cpuSeconds: 10, rssMb: 300 } as const;

/**
 * An exit hook printing the process's CPU time (user + system, every thread, µs) and its peak RSS
 * (VmHWM, KiB; getrusage's would count the bench it was forked from) on stderr behind a marker.
 */
const USAGE_HOOK = `data:text/javascript,${encodeURIComponent(
  'import { readFileSync } from "node:fs"; process.on("exit", () => { const u = process.resourceUsage(); let kb = u.maxRSS; try { const m = /VmHWM:\\s*(\\d+) kB/.exec(readFileSync("/proc/self/status", "utf8")); if (m !== null) kb = Number(m[1]); } catch {} process.stderr.write("\\n@@usage " + (u.userCPUTime + u.systemCPUTime) + " " + kb + "\\n"); });',
)}`;

export interface HostileRun {
  input: string;
  command: string;
  /** CPU time of the process, seconds. */
  cpuSeconds: number;
  /** Peak RSS, MB. */
  peakMb: number;
  outputBytes: number;
  /** The exit status (2 for an input a format refuses, which is not run). */
  status: number;
}

/** Runs the built CLI with `args`, standard output to `out`. */
function runCli(args: string[], out: string): { cpuSeconds: number; peakMb: number; status: number; stderr: string } {
  const fd = openSync(out, "w");
  const r = spawnSync(process.execPath, ["--import", USAGE_HOOK, CLI, ...args], { cwd: ROOT, stdio: ["ignore", fd, "pipe"], encoding: "utf8", maxBuffer: 64 << 20 });
  closeSync(fd);
  if (r.error !== undefined) throw r.error;
  const marker = /@@usage (\d+) (\d+)/.exec(r.stderr ?? "");
  if (marker === null) throw new Error(`stackwalk ${args.join(" ")}: no usage line (exit ${r.status}): ${(r.stderr ?? "").slice(-500)}`);
  return { cpuSeconds: Number(marker[1]) / 1e6, peakMb: Number(marker[2]) / 1024, status: r.status ?? -1, stderr: r.stderr.replace(/\n?@@usage \d+ \d+\n/, "") };
}

/** The inputs, written under `dir`: name, file, extra arguments, and whether it is a minidump. */
function inputs(dir: string): { name: string; file: string; extra: string[]; dump: boolean; sweep?: boolean }[] {
  const write = (name: string, data: Uint8Array | string): string => {
    const file = join(dir, name);
    writeFileSync(file, data);
    return file;
  };
  const symbols = (tokens: number): string => {
    const store = join(dir, `symbols-${tokens}`);
    mkdirSync(join(store, CFI_SYM_PATH[0], CFI_SYM_PATH[1]), { recursive: true });
    writeFileSync(join(store, ...CFI_SYM_PATH), cfiSym(tokens));
    return store;
  };
  const cfi = write("cfi.dmp", cfiDump(1 << 18));
  return [
    { name: "deep", file: write("deep.dmp", craftedDump({ threads: 100, depth: 120_000 })), extra: [], dump: true },
    { name: "modules", file: write("modules.dmp", manyModulesDump({ modules: 60_000, threads: 20 })), extra: [], dump: true },
    { name: "cut", file: write("cut.dmp", corpusDumpCut()), extra: [], dump: true },
    { name: "cfi-10000", file: cfi, extra: ["--symbols", symbols(9_999)], dump: true },
    { name: "cfi-511", file: cfi, extra: ["--symbols", symbols(511)], dump: true },
    { name: "zeros", file: write("zeros.json", zeroVector()), extra: [], dump: false },
    { name: "zeros-sweep", file: write("zeros.sweep.json", zeroSweep(50)), extra: ["--step", "49"], dump: false, sweep: true },
  ];
}

/** Runs every input in every format. */
export function benchHostile(): HostileRun[] {
  const dir = mkdtempSync(join(tmpdir(), "stackwalk-hostile-"));
  try {
    const out = join(dir, "out");
    const results: HostileRun[] = [];
    for (const input of inputs(dir)) {
      const commands: [string, string[]][] = [
        // JSON Lines and the summary are the batch formats, which take no sweep (they take no --step).
        ...["text", "json", ...(input.sweep === true ? [] : ["jsonl", "summary"]), "windbg", ...(input.dump ? ["breakpad", "breakpad-m"] : [])].map((f): [string, string[]] => [f, ["walk", input.file, "--format", f, ...input.extra]]),
        ["explain", ["explain", input.file, "--thread", "all", ...input.extra]],
        ["view", ["view", input.file, "-o", out, ...input.extra]],
        ...(input.sweep === true ? [["check", ["check", input.file]] as [string, string[]]] : []),
      ];
      for (const [command, args] of commands) {
        const r = runCli(args, out);
        if (r.status !== 0) throw new Error(`stackwalk ${args.join(" ")} exited with ${r.status}: ${r.stderr.trim().slice(-500)}`);
        results.push({ input: input.name, command, cpuSeconds: r.cpuSeconds, peakMb: r.peakMb, outputBytes: statSync(out).size, status: r.status });
        if (process.env["BENCH_PROGRESS"] !== undefined) process.stderr.write(`${input.name} ${command}: ${r.cpuSeconds.toFixed(2)} s, ${Math.round(r.peakMb)} MB\n`);
      }
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The bench's table: one row per input, one column per format (CPU s / peak MB), and the verdict. */
export function formatHostileBench(results: readonly HostileRun[]): string {
  const commands = [...new Set(results.map((r) => r.command))];
  const names = [...new Set(results.map((r) => r.input))];
  const cell = (r: HostileRun | undefined): string => (r === undefined ? "-" : `${r.cpuSeconds.toFixed(2)} s ${Math.round(r.peakMb)} MB`);
  const rows = [["input", ...commands], ...names.map((n) => [n, ...commands.map((c) => cell(results.find((r) => r.input === n && r.command === c)))])];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const lines = rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ").trimEnd());
  const cpu = Math.max(...results.map((r) => r.cpuSeconds));
  const rss = Math.max(...results.map((r) => r.peakMb));
  const over = results.filter((r) => r.cpuSeconds > HOSTILE_TARGETS.cpuSeconds || r.peakMb > HOSTILE_TARGETS.rssMb);
  lines.push(
    `${results.length} runs (CPU time, user + system, and peak RSS of each process); the most: ${cpu.toFixed(2)} s ≤ ${HOSTILE_TARGETS.cpuSeconds} s ${cpu <= HOSTILE_TARGETS.cpuSeconds ? "yes" : "NO"}, ${Math.round(rss)} MB ≤ ${HOSTILE_TARGETS.rssMb} MB ${rss <= HOSTILE_TARGETS.rssMb ? "yes" : "NO"}${over.length > 0 ? `; over: ${over.map((r) => `${r.input} ${r.command}`).join(", ")}` : ""}`,
  );
  return `hostile inputs (test/bench/bench-hostile.ts):\n${lines.map((l) => `  ${l}`).join("\n")}\n`;
}

export function printHostileBench(): void {
  process.stdout.write(formatHostileBench(benchHostile()));
}

if (process.argv[1] !== undefined && fileURLToPath(import.meta.url) === process.argv[1]) printHostileBench();
