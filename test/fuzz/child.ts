/**
 * A fuzzing child process: takes chunks of iterations from its parent (fuzz.ts), runs each input,
 * and answers with the counts and the findings. Before each input it writes the input's
 * iteration, the CPU time the process had used and the wall time to its progress file, so that
 * the parent, which cannot ask a process stuck in a loop, can see which input is running and how
 * much CPU time it has taken (from /proc), and kill it.
 */
import { mkdirSync, openSync, writeSync } from "node:fs";
import { join } from "node:path";
import { inputOf, runInput, seedFor, TargetsByName, type Outcome } from "./run-input.js";

/** A chunk of work: iterations [from, to) of one target. */
export interface Chunk {
  id: number;
  target: string;
  from: number;
  to: number;
}

/** One input worth reporting (a foreign error, a placeless typed error). */
export interface Finding {
  target: string;
  seed: string;
  iteration: number;
  outcome: Outcome;
  placeless?: boolean;
  message: string;
  stack?: string;
}

/** What a child answers for a chunk. */
export interface ChunkDone {
  type: "done";
  chunk: number;
  counts: Record<Outcome | "placeless", number>;
  findings: Finding[];
  /** The slowest input of the chunk, in milliseconds. */
  slowest: number;
  rssMb: number;
}

const progressFile = process.env["FUZZ_PROGRESS"]!;
const scratch = process.env["FUZZ_SCRATCH"]!;
mkdirSync(join(scratch, "input"), { recursive: true });
const progress = openSync(progressFile, "w");
const record = new Float64Array(3);
const recordBytes = new Uint8Array(record.buffer);

/**
 * Writes (iteration, CPU milliseconds this process has used, wall-clock milliseconds) to the
 * progress file; iteration −1 while idle or preparing.
 */
function mark(iteration: number): void {
  const cpu = process.cpuUsage();
  record[0] = iteration;
  record[1] = (cpu.user + cpu.system) / 1000;
  record[2] = Date.now();
  writeSync(progress, recordBytes, 0, 24, 0);
}

// The command line would ask symbol servers named in the environment.
delete process.env["_NT_SYMBOL_PATH"];

mark(-1);
process.on("message", (message: Chunk) => {
  void runChunk(message).then((done) => process.send!(done));
});

async function runChunk(chunk: Chunk): Promise<ChunkDone> {
  const target = TargetsByName.get(chunk.target);
  if (target === undefined) throw new Error(`no target ${chunk.target}`);
  const counts: ChunkDone["counts"] = { ok: 0, typed: 0, foreign: 0, hang: 0, memory: 0, placeless: 0 };
  const findings: Finding[] = [];
  let slowest = 0;
  mark(-1);
  seedFor(target, 0);
  for (let i = chunk.from; i < chunk.to; i++) {
    const seed = seedFor(target, i);
    const { bytes, rng } = inputOf(target, seed, i);
    mark(i);
    const result = await runInput(target, seed, bytes, rng, { scratch: join(scratch, "input") });
    mark(-1);
    counts[result.outcome]++;
    if (result.placeless === true) counts.placeless++;
    slowest = Math.max(slowest, result.ms);
    if (result.outcome === "foreign" || result.placeless === true) {
      const finding: Finding = { target: target.name, seed: seed.name, iteration: i, outcome: result.outcome, message: result.message ?? "" };
      if (result.placeless === true) finding.placeless = true;
      if (result.stack !== undefined) finding.stack = result.stack;
      findings.push(finding);
    }
  }
  return { type: "done", chunk: chunk.id, counts, findings, slowest, rssMb: Math.round(process.memoryUsage.rss() / 2 ** 20) };
}
