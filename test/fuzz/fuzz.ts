/**
 * `npm run fuzz`: mutated inputs through every parser, walker and renderer, the StackWalk64
 * facade and the command line's in-process entry, symbol files downloaded from servers on
 * 127.0.0.1 that misbehave and symbol files with hostile postfix programs (targets.ts), in child
 * processes watched from here: an input that takes more CPU time than the watchdog allows (1 s of its child's CPU time,
 * read from /proc, so that a loaded machine slows an input without making it a hang; and 2
 * minutes of wall time, for an input that waits instead of computing) is a hang, and one that
 * takes the child's memory over the ceiling (VmRSS) is a memory blow-up; each ends its child,
 * which is replaced. Every input is made again from its (target, seed, iteration).
 *
 *   npm run fuzz                       about 20,000 inputs (what npm test runs)
 *   npm run fuzz -- --long             1,000,000 inputs, with per-target counts
 *   npm run fuzz -- --inputs N --targets minidump,cli --jobs 2
 *   npm run fuzz -- --inputs N --first K    each target's iterations from K on (a long run in parts)
 *   npm run fuzz -- --replay minidump:fixtures/breakpad/minidump2.dmp:1234 [--write FILE]
 *   npm run fuzz -- --minimise minidump:fixtures/breakpad/minidump2.dmp:1234 --write FILE
 *
 * Exit status 0 when no input ended in a foreign error, a hang or a memory blow-up; 1 otherwise.
 */
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { build } from "esbuild";
import type { Chunk, ChunkDone, Finding } from "./child.js";

const { values } = parseArgs({
  options: {
    long: { type: "boolean" },
    inputs: { type: "string" },
    first: { type: "string" },
    targets: { type: "string" },
    jobs: { type: "string" },
    "timeout-ms": { type: "string" },
    "wall-timeout-ms": { type: "string" },
    "rss-mb": { type: "string" },
    replay: { type: "string" },
    minimise: { type: "string" },
    write: { type: "string" },
    json: { type: "string" },
    quiet: { type: "boolean" },
  },
});

/** CPU time an input may take before it is a hang. */
const TIMEOUT_MS = Number(values["timeout-ms"] ?? 1000);
/** Wall time an input may take before it is a hang (one that waits without computing). */
const WALL_TIMEOUT_MS = Number(values["wall-timeout-ms"] ?? 120_000);
/** Clock ticks per second of /proc/PID/stat's utime and stime. */
const CLOCK_TICKS = clockTicks();

function clockTicks(): number {
  try {
    const n = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
}

/** The CPU time (user + system, all threads) process `pid` has used, in milliseconds, from /proc. */
function cpuMsOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name (which may hold spaces, in parentheses): state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS;
  } catch {
    return undefined;
  }
}
const RSS_MB = Number(values["rss-mb"] ?? 1024);

type Counts = ChunkDone["counts"];
const emptyCounts = (): Counts => ({ ok: 0, typed: 0, foreign: 0, hang: 0, memory: 0, placeless: 0 });

/** Splits a key `target:seed:iteration` (the seed name may hold colons). */
function parseKey(key: string): { target: string; seed: string; iteration: number } {
  const first = key.indexOf(":");
  const last = key.lastIndexOf(":");
  if (first < 0 || last === first) throw new Error(`a key is target:seed:iteration, not "${key}"`);
  return { target: key.slice(0, first), seed: key.slice(first + 1, last), iteration: Number(key.slice(last + 1)) };
}

/**
 * The child bundle: the harness and the sources it runs, as one file a plain `node` loads quickly,
 * written into the campaign's own directory: a child started again after a kill runs the code
 * the campaign began with, whatever happens to node_modules meanwhile. It imports nothing but
 * Node's modules: the emulator's native bridge, which the command line loads only for
 * `emulate` (never fuzzed), is left out.
 */
async function bundle(dir: string): Promise<string> {
  const out = join(dir, "child.mjs");
  await build({
    entryPoints: [join(process.cwd(), "test", "fuzz", "child.ts")],
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    outfile: out,
    sourcemap: "inline",
    logLevel: "error",
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
    plugins: [
      {
        name: "no-native-bridge",
        setup(b) {
          b.onResolve({ filter: /^koffi$/ }, () => ({ path: "koffi", namespace: "left-out" }));
          b.onLoad({ filter: /.*/, namespace: "left-out" }, () => ({ contents: "export default new Proxy({}, { get() { throw new Error('koffi is left out of the fuzzer'); } });", loader: "js" }));
        },
      },
    ],
  });
  return out;
}

/** Runs one input here, in this process (replay and minimisation). */
async function replay(key: string): Promise<void> {
  const { TargetsByName } = await import("./targets.js");
  const { inputOf, runInput, seedsOf } = await import("./run-input.js");
  const { target: name, seed: seedName, iteration } = parseKey(key);
  const target = TargetsByName.get(name);
  if (target === undefined) throw new Error(`no target ${name}`);
  const seed = seedsOf(target).find((s) => s.name === seedName);
  if (seed === undefined) throw new Error(`target ${name} has no seed ${seedName}`);
  const scratch = mkdtempSync(join(tmpdir(), "stackwalk-fuzz-"));
  const context = { scratch };
  const { bytes, rng } = inputOf(target, seed, iteration);
  if (values.minimise !== undefined) {
    const first = await runInput(target, seed, bytes, rng, context);
    const same = async (b: Uint8Array): Promise<boolean> => {
      const { rng: r } = inputOf(target, seed, iteration);
      const res = await runInput(target, seed, b, r, context);
      return res.outcome === first.outcome && res.message === first.message;
    };
    let best = bytes;
    // Delta debugging: remove chunks, halving their size, while the outcome stays the same.
    for (let size = best.length >> 1; size >= 1; size >>= 1) {
      for (let at = 0; at + size <= best.length; ) {
        const cut = new Uint8Array(best.length - size);
        cut.set(best.subarray(0, at));
        cut.set(best.subarray(at + size), at);
        if (await same(cut)) best = cut;
        else at += size;
      }
    }
    console.log(`minimised ${bytes.length} → ${best.length} bytes: ${first.outcome}: ${first.message ?? ""}`);
    if (values.write !== undefined) writeFileSync(values.write, best);
  } else {
    const result = await runInput(target, seed, bytes, rng, context);
    console.log(`${key}: ${bytes.length} bytes, ${result.outcome}${result.placeless === true ? " (placeless)" : ""} in ${result.ms.toFixed(1)} ms${result.message !== undefined ? `: ${result.message}` : ""}`);
    if (result.stack !== undefined) console.log(result.stack);
    if (values.write !== undefined) writeFileSync(values.write, bytes);
  }
  rmSync(scratch, { recursive: true, force: true });
}

interface Running {
  child: ChildProcess;
  progress: string;
  chunk: Chunk | undefined;
  /** The chunk is a retry of one input that went past the watchdog once. */
  retry: boolean;
  peakMb: number;
  gone: boolean;
}

async function campaign(): Promise<number> {
  const { TARGETS, TargetsByName } = await import("./targets.js");
  const { seedFor } = await import("./run-input.js");
  const chosen = values.targets === undefined ? TARGETS.map((t) => t.name) : values.targets.split(",");
  for (const name of chosen) if (!TARGETS.some((t) => t.name === name)) throw new Error(`no target ${name} (targets: ${TARGETS.map((t) => t.name).join(", ")})`);
  const total = Number(values.inputs ?? (values.long ? 1_000_000 : 20_000));
  const jobs = Math.max(1, Number(values.jobs ?? availableParallelism()));
  const started = performance.now();
  const work = mkdtempSync(join(tmpdir(), "stackwalk-fuzz-"));
  const script = await bundle(work);

  // Every target gets the same number of inputs, in chunks; chunks of different targets interleave.
  const queue: Chunk[] = [];
  const per = Math.floor(total / chosen.length);
  // Each target's iterations start here: a long run split in parts, each part a range of them.
  const first = Number(values.first ?? 0);
  if (!Number.isSafeInteger(first) || first < 0) throw new Error(`--first takes a whole number ≥ 0, not ${values.first}`);
  // The command line's inputs and the servers' (which wait on their sockets) take longer each.
  const chunkSize = (t: string): number => (t === "cli" || t === "server" ? 20 : 100);
  let id = 0;
  const perTarget = chosen.map((t, i) => {
    const n = per + (i < total - per * chosen.length ? 1 : 0);
    const chunks: Chunk[] = [];
    for (let from = first; from < first + n; from += chunkSize(t)) chunks.push({ id: id++, target: t, from, to: Math.min(first + n, from + chunkSize(t)) });
    return chunks;
  });
  // Round by round, each target's next 100 inputs (five chunks of a target that takes 20 at a
  // time): every target is as far along as the others whenever the campaign is stopped.
  while (perTarget.some((c) => c.length > 0)) {
    for (const c of perTarget) {
      for (let taken = 0; taken < 100 && c.length > 0; ) {
        const chunk = c.shift()!;
        taken += chunk.to - chunk.from;
        queue.push(chunk);
      }
    }
  }

  const counts = new Map<string, Counts>(chosen.map((t) => [t, emptyCounts()]));
  const slowest = new Map<string, number>(chosen.map((t) => [t, 0]));
  const findings: Finding[] = [];
  let retried = 0;
  let done = 0;
  let peakMb = 0;
  const retries: Chunk[] = [];
  /** A line on stderr, as it happens, when stderr is not a terminal (a long run's log). */
  const log = (line: string): void => {
    if (!values.quiet && !process.stderr.isTTY) process.stderr.write(`${line}\n`);
  };

  const next = (): { chunk: Chunk; retry: boolean } | undefined => {
    const r = retries.shift();
    if (r !== undefined) return { chunk: r, retry: true };
    const c = queue.shift();
    return c === undefined ? undefined : { chunk: c, retry: false };
  };

  return new Promise((resolve) => {
    const children: Running[] = [];
    const spawn = (k: number): void => {
      const progress = join(work, `progress-${k}-${Date.now()}`);
      const child = fork(script, [], {
        env: { ...process.env, FUZZ_PROGRESS: progress, FUZZ_SCRATCH: join(work, `scratch-${k}`) },
        execArgv: [`--max-old-space-size=${RSS_MB}`, "--stack-size=4000"],
        stdio: ["ignore", "ignore", "pipe", "ipc"],
      });
      let stderr = "";
      child.stderr!.on("data", (d: Buffer) => {
        stderr = (stderr + d.toString()).slice(-4000);
      });
      const running: Running = { child, progress, chunk: undefined, retry: false, peakMb: 0, gone: false };
      children[k] = running;
      child.on("message", (m: ChunkDone) => {
        const chunk = running.chunk!;
        const c = counts.get(chunk.target)!;
        for (const key of Object.keys(c) as (keyof Counts)[]) c[key] += m.counts[key];
        findings.push(...m.findings);
        for (const f of m.findings) log(`${f.outcome}${f.placeless === true ? " (placeless)" : ""}: ${f.target}:${f.seed}:${f.iteration}: ${f.message}`);
        slowest.set(chunk.target, Math.max(slowest.get(chunk.target)!, m.slowest));
        done += chunk.to - chunk.from;
        running.chunk = undefined;
        feed(k);
      });
      child.on("exit", () => {
        running.gone = true;
        const chunk = running.chunk;
        if (chunk === undefined) return;
        if (!existsSync(progress)) {
          // The child died before it could start (its progress file is written first thing): no
          // input's doing. Its chunk goes back to the queue and a child is started again a
          // second later; a campaign whose children cannot start at all ends.
          running.chunk = undefined;
          queue.unshift(chunk);
          log(`a child could not start (${stderr.trim().split("\n").slice(-2).join(" / ") || "no message"}); starting another`);
          if (++startFailures > 20) {
            log("children cannot be started: the campaign ends");
            stop();
            return;
          }
          setTimeout(() => {
            spawn(k);
            feed(k);
          }, 1000);
          return;
        }
        startFailures = 0;
        // The child died on its own (V8's heap limit, an abort): its current input is a memory
        // blow-up when the heap ran out, else a foreign error.
        const iteration = currentIteration(running);
        const outcome = /heap out of memory|Allocation failed/i.test(stderr) ? "memory" : "foreign";
        lose(running, chunk, iteration, outcome, `the child process died: ${stderr.trim().split("\n").slice(-3).join(" / ") || "no message"}`);
        spawn(k);
        feed(k);
      });
      void child;
    };
    const currentIteration = (r: Running): number => {
      try {
        const b = readFileSync(r.progress);
        if (b.length < 16) return -1;
        return new Float64Array(b.buffer, b.byteOffset, 2)[0]!;
      } catch {
        return -1;
      }
    };
    /** Counts the input at `iteration` as `outcome`, and queues the rest of the chunk. */
    const lose = (r: Running, chunk: Chunk, iteration: number, outcome: "hang" | "memory" | "foreign", message: string): void => {
      r.chunk = undefined;
      const at = iteration >= chunk.from && iteration < chunk.to ? iteration : chunk.from;
      log(`${outcome === "hang" && !r.retry ? "run again alone" : outcome}: ${chunk.target}:${seedFor(TargetsByName.get(chunk.target)!, at).name}:${at}: ${message}`);
      if (outcome === "hang" && !r.retry) {
        // A loaded machine can hold one input back: it is run again once, in a fresh child (with twice the CPU time).
        retried++;
        retries.push({ id: id++, target: chunk.target, from: at, to: at + 1 });
      } else {
        counts.get(chunk.target)![outcome]++;
        done++;
        findings.push({ target: chunk.target, seed: seedFor(TargetsByName.get(chunk.target)!, at).name, iteration: at, outcome, message });
      }
      // The child reports a chunk only at its end: the inputs it ran before this one are run
      // again, so that every input of the campaign is counted once.
      if (at + 1 < chunk.to) queue.unshift({ id: id++, target: chunk.target, from: at + 1, to: chunk.to });
      if (at > chunk.from) queue.unshift({ id: id++, target: chunk.target, from: chunk.from, to: at });
    };
    const feed = (k: number): void => {
      const r = children[k]!;
      if (r.gone) return;
      const n = next();
      if (n === undefined) {
        r.child.kill();
        r.gone = true;
        if (children.every((c) => c.gone)) finish();
        return;
      }
      r.chunk = n.chunk;
      r.retry = n.retry;
      r.child.send(n.chunk);
    };
    const watchdog = setInterval(() => {
      const now = Date.now();
      for (let k = 0; k < children.length; k++) {
        const r = children[k]!;
        if (r.gone || r.chunk === undefined) continue;
        let rss = 0;
        let hwm = 0;
        try {
          const status = readFileSync(`/proc/${r.child.pid}/status`, "utf8");
          rss = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
          hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
        } catch {
          continue;
        }
        r.peakMb = Math.max(r.peakMb, hwm);
        peakMb = Math.max(peakMb, hwm);
        let b: Buffer;
        try {
          b = readFileSync(r.progress);
        } catch {
          continue;
        }
        if (b.length < 24) continue;
        const [iteration, cpuSince, since] = new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + 24));
        const cpu = cpuMsOf(r.child.pid!);
        const cpuSpent = cpu === undefined ? 0 : cpu - cpuSince!;
        // A retry runs in a fresh child, whose code is compiled anew: it is given twice the CPU time.
        const limit = r.retry ? 2 * TIMEOUT_MS : TIMEOUT_MS;
        const hang = iteration! >= 0 && (cpuSpent > limit || now - since! > WALL_TIMEOUT_MS);
        const over = rss > RSS_MB ? "memory" : hang ? "hang" : undefined;
        if (over === undefined) continue;
        const chunk = r.chunk;
        r.gone = true;
        r.child.removeAllListeners("exit");
        r.child.kill("SIGKILL");
        const why = cpuSpent > limit ? `still running after ${limit} ms of CPU time` : `still running after ${WALL_TIMEOUT_MS} ms`;
        lose(r, chunk, iteration!, over, over === "hang" ? why : `the child's RSS reached ${Math.round(rss)} MB (ceiling ${RSS_MB} MB)`);
        spawn(k);
        feed(k);
      }
      if (!values.quiet && process.stderr.isTTY) process.stderr.write(`\r${done}/${total} inputs, ${findings.length} findings   `);
      if (now - lastProgress >= 60_000) {
        lastProgress = now;
        log(`${done}/${total} inputs, ${findings.length} findings, ${((performance.now() - started) / 1000).toFixed(0)} s`);
      }
    }, 50);
    let lastProgress = Date.now();
    let startFailures = 0;

    // Stopped (SIGINT, SIGTERM): the inputs of the chunks that finished are the campaign's table.
    const stop = (): void => {
      queue.length = 0;
      retries.length = 0;
      for (const r of children) {
        if (r === undefined || r.gone) continue;
        r.gone = true;
        r.child.removeAllListeners("exit");
        r.child.kill("SIGKILL");
      }
      log(`stopped: the table counts the ${done} inputs of the chunks that finished`);
      finish();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);

    const finish = (): void => {
      clearInterval(watchdog);
      if (!values.quiet && process.stderr.isTTY) process.stderr.write("\n");
      const seconds = (performance.now() - started) / 1000;
      const all = emptyCounts();
      const rows = chosen.map((t) => {
        const c = counts.get(t)!;
        for (const key of Object.keys(all) as (keyof Counts)[]) all[key] += c[key];
        return [t, c.ok + c.typed + c.foreign + c.hang + c.memory, c.ok, c.typed, c.placeless, c.foreign, c.hang, c.memory, Math.round(slowest.get(t)!)] as const;
      });
      const sum = all.ok + all.typed + all.foreign + all.hang + all.memory;
      const header = ["target", "inputs", "ok", "typed error", "placeless", "foreign error", "hang", "memory", "slowest ms"];
      const table = [header, ...rows.map((r) => r.map(String)), ["total", sum, all.ok, all.typed, all.placeless, all.foreign, all.hang, all.memory, Math.round(Math.max(...slowest.values()))].map(String)];
      const widths = header.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
      const lines = table.map((r) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  "));
      console.log(lines.join("\n"));
      console.log(`${sum} inputs in ${seconds.toFixed(1)} s on ${jobs} child process(es); watchdog ${TIMEOUT_MS} ms of CPU time (${WALL_TIMEOUT_MS} ms of wall time) per input (${retried} input(s) run again after passing it once); RSS ceiling ${RSS_MB} MB per child, peak ${Math.round(peakMb)} MB`);
      const shown = findings.slice(0, 40);
      for (const f of shown) {
        console.log(`${f.outcome}${f.placeless === true ? " (placeless)" : ""}: ${f.target}:${f.seed}:${f.iteration}: ${f.message}`);
        if (f.stack !== undefined) console.log(f.stack.replace(/^/gm, "    "));
      }
      if (findings.length > shown.length) console.log(`… and ${findings.length - shown.length} more`);
      if (values.json !== undefined) writeFileSync(values.json, JSON.stringify({ seconds, jobs, total: all, targets: Object.fromEntries(counts), findings, peakMb }, null, 2));
      rmSync(work, { recursive: true, force: true });
      resolve(all.foreign + all.hang + all.memory > 0 ? 1 : 0);
    };
    for (let k = 0; k < jobs; k++) spawn(k);
    for (let k = 0; k < jobs; k++) feed(k);
  });
}

if (values.replay !== undefined || values.minimise !== undefined) {
  await replay((values.replay ?? values.minimise)!);
} else {
  process.exitCode = await campaign();
}
