/**
 * This project against Breakpad's `minidump_stackwalk` on the same inputs, whole processes, run
 * by `npm run bench` (after `npm run build`) or alone with `tsx test/bench/bench-breakpad.ts`.
 * Breakpad is `$BREAKPAD_MINIDUMP_STACKWALK`, else a `minidump_stackwalk` on the PATH; without
 * it only this project's side is measured.
 *
 * Each row runs both tools on the same files, paired (this project and Breakpad one after the
 * other, the order swapped every round), several rounds, and prints the medians of the CPU time
 * of the child process (user + system: a busy shared machine stretches wall time far more than
 * CPU time), its wall time and its peak RSS, and the ratios:
 *
 * 1. minidump2 with its two `.sym` files (test/fixtures/breakpad), `--format breakpad`;
 * 2. the real dumps of test/fixtures/real-dumps (the Mozilla ones among them) with their `.sym`
 *    files, `--format breakpad`;
 * 3. a generated `.sym` of about 300 MB (`BENCH_BIG_SYM_MB` to change it) with the record mix
 *    of a Windows x64 Firefox `xul.sym` (FILE, INLINE_ORIGIN, FUNC with INLINE and line
 *    records, PUBLIC, STACK CFI INIT and delta rows) and a dump whose 64 frames each hit a
 *    function of it, spread over the whole file: also the time to the first frame printed;
 * 4. a batch of 1,000 dumps (the emulator's, as bench-batch.ts writes them) in one call,
 *    `walk DIR --format jsonl`, against one Breakpad process per dump (every tenth dump timed,
 *    the mean of their times);
 * 5. a batch of 1,000 real dumps (those of rows 1 and 2, repeated) with all their symbol
 *    folders, the same way (17 processes of each dump timed).
 *
 * Every report of rows 1-3 is compared with Breakpad's, byte for byte, when Breakpad is there.
 * The CPU comes from `bash`'s `times` before and after the command (its children's CPU, to the
 * millisecond), the wall time from its clock around the command, the peak RSS from
 * `/usr/bin/time` run by it: the same for both tools.
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { RegionMemory, type Snapshot } from "../../src/index.js";
import { writeMinidumpFile } from "../../src/node/index.js";
import { fixtureDir, fixtureFile } from "../support/fixtures.js";
import { writeBatchDumps } from "./bench-batch.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const BIN = join(ROOT, "dist/bin/stackwalk.cjs");

/** Breakpad's `minidump_stackwalk`, when it is at hand: `$BREAKPAD_MINIDUMP_STACKWALK`, else the PATH's. */
export function breakpadTool(): string | undefined {
  const given = process.env["BREAKPAD_MINIDUMP_STACKWALK"];
  if (given !== undefined) return existsSync(given) ? given : undefined;
  return (process.env["PATH"] ?? "").split(delimiter).map((d) => join(d, "minidump_stackwalk")).find((p) => existsSync(p));
}

/** One process, measured. */
export interface Measured {
  /** User + system CPU of the child, ms. */
  cpuMs: number;
  wallMs: number;
  /** Peak RSS, bytes (0 when /usr/bin/time is not there to say). */
  rss: number;
  status: number;
  /** Where its standard output went. */
  out: string;
}

const HAS_TIME = existsSync("/usr/bin/time");

/**
 * Runs `command` with its standard output in `out`; its CPU, wall time and peak RSS. The CPU and
 * wall time are of the command alone; the peak RSS is from a second run under GNU time, whose own
 * start (a millisecond or two of CPU) would otherwise count against a process that takes a few.
 */
export function measure(command: readonly string[], out: string): Measured {
  // bash's `times` prints its own CPU, then that of its children, to the millisecond.
  // `times` before and after: a shell started by a process may begin with children's times of
  // its own (seen when the bench runs as a background job), which the difference leaves out.
  // The wall time likewise, from the shell's clock around the command (bash 5's EPOCHREALTIME).
  const script = `times; t0=$EPOCHREALTIME; "\${@:2}" > "$1" 2>/dev/null; s=$?; t1=$EPOCHREALTIME; times; echo "$t0 $t1"; exit $s`;
  const started = performance.now();
  const r = spawnSync("bash", ["-c", script, "bash", out, ...command], { encoding: "utf8", cwd: ROOT, maxBuffer: 1 << 20 });
  let wallMs = performance.now() - started;
  const lines = r.stdout.trim().split("\n");
  const clock = /^([\d.]+) ([\d.]+)$/.exec(lines.pop() ?? "");
  if (clock !== null) wallMs = (Number(clock[2]) - Number(clock[1])) * 1000;
  const childrenMs = (line: string | undefined): number => {
    const m = /(\d+)m([\d.]+)s (\d+)m([\d.]+)s/.exec(line ?? "");
    if (m === null) throw new Error(`no CPU times from bash for ${command.join(" ")}: ${r.stdout} ${r.stderr}`);
    return (Number(m[1]) * 60 + Number(m[2]) + Number(m[3]) * 60 + Number(m[4])) * 1000;
  };
  // Lines: the shell's own times and its children's, before, then after.
  const cpuMs = childrenMs(lines[lines.length - 1]) - childrenMs(lines[1]);
  let rss = 0;
  if (HAS_TIME) {
    const rssFile = `${out}.rss`;
    spawnSync("/usr/bin/time", ["-f", "%M", "-o", rssFile, ...command], { cwd: ROOT, stdio: "ignore" });
    const text = readFileSync(rssFile, "utf8").trim().split("\n");
    rss = Number(text[text.length - 1]) * 1024;
    rmSync(rssFile, { force: true });
  }
  return { cpuMs, wallMs, rss, status: r.status ?? -1, out };
}

function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** The medians of several runs of one tool. */
export interface Figures {
  cpuMs: number;
  wallMs: number;
  rss: number;
}

function figures(runs: readonly Measured[]): Figures {
  return { cpuMs: median(runs.map((r) => r.cpuMs)), wallMs: median(runs.map((r) => r.wallMs)), rss: median(runs.map((r) => r.rss)) };
}

/**
 * A process per dump of a batch, per dump: the means of the CPU and wall time (a batch's cost
 * is their sum, and its dumps differ), the median peak RSS.
 */
function perDumpFigures(runs: readonly Measured[]): Figures {
  const mean = (values: readonly number[]): number => values.reduce((a, b) => a + b, 0) / values.length;
  return { cpuMs: mean(runs.map((r) => r.cpuMs)), wallMs: mean(runs.map((r) => r.wallMs)), rss: median(runs.map((r) => r.rss)) };
}

/** One row of the table. */
export interface Row {
  work: string;
  ours: Figures;
  breakpad?: Figures;
  /** Whether the two reports were the same bytes (undefined when not compared). */
  same?: boolean;
  note?: string;
}

/**
 * Runs this project's command and Breakpad's `rounds` times each, paired (the order swapped every
 * round); compares the last outputs when `compare`.
 */
function paired(work: string, ours: string[], theirs: string[] | undefined, rounds: number, scratch: string, compare = true): Row {
  const a: Measured[] = [];
  const b: Measured[] = [];
  for (let round = 0; round < rounds; round++) {
    const runOurs = (): void => void a.push(check(measure([process.execPath, BIN, ...ours], join(scratch, "ours.out")), work));
    const runTheirs = (): void => void (theirs === undefined ? undefined : b.push(check(measure(theirs, join(scratch, "theirs.out")), `${work} (Breakpad)`)));
    if (round % 2 === 0) {
      runOurs();
      runTheirs();
    } else {
      runTheirs();
      runOurs();
    }
  }
  const row: Row = { work, ours: figures(a) };
  if (b.length > 0) {
    row.breakpad = figures(b);
    if (compare) row.same = readFileSync(join(scratch, "ours.out")).equals(readFileSync(join(scratch, "theirs.out")));
  }
  return row;
}

function check(m: Measured, what: string): Measured {
  if (m.status !== 0) throw new Error(`${what} exited with ${m.status}`);
  return m;
}

/** The real dumps of test/fixtures/real-dumps with their symbol folders (unpacked into a temporary folder). */
function realDumps(): { name: string; dump: string; symbols: string }[] {
  const out: { name: string; dump: string; symbols: string }[] = [];
  for (const name of readdirSync(fixtureFile("real-dumps")).sort()) {
    const dir = join(fixtureFile("real-dumps"), name);
    if (!statSync(dir).isDirectory()) continue;
    const unpacked = fixtureDir(`real-dumps/${name}`);
    const dump = readdirSync(unpacked).find((f) => f.endsWith(".dmp"));
    if (dump !== undefined && existsSync(join(unpacked, "symbols"))) out.push({ name, dump: join(unpacked, dump), symbols: join(unpacked, "symbols") });
  }
  return out;
}

/** The module the generated symbol file describes. */
const BIG = { debugFile: "xul.pdb", debugId: "44E4EC8C2F41492B9369D6B9A059577C2", name: "xul.dll", base: 0x1_8000_0000n };
/** Function k starts at rva 0x1000 + k · 0x100 and is 0xf0 bytes long. */
const FUNC_STRIDE = 0x100;
const funcRva = (k: number): number => 0x1000 + k * FUNC_STRIDE;
/** The frame size below the saved registers of function k (its `sub rsp`). */
const frameSize = (k: number): number => 0x20 + 0x10 * (k % 4);

/**
 * Writes a `.sym` file of about `bytes` with the records of a Windows x64 Firefox `xul.sym` in
 * their usual proportions, into `dir` as a symbol store; returns its path and how many functions
 * it describes.
 */
export function writeBigSym(dir: string, bytes: number): { path: string; functions: number } {
  const functions = Math.round(bytes / 470);
  const files = Math.ceil(functions / 20);
  const origins = Math.ceil(functions / 4);
  const folder = join(dir, BIG.debugFile, BIG.debugId);
  mkdirSync(folder, { recursive: true });
  const path = join(folder, "xul.sym");
  const fd = openSync(path, "w");
  let buffer: string[] = [];
  let size = 0;
  const put = (line: string): void => {
    buffer.push(line);
    size += line.length + 1;
    if (size > 1 << 20) flush();
  };
  const flush = (): void => {
    writeSync(fd, `${buffer.join("\n")}\n`);
    buffer = [];
    size = 0;
  };
  const hex = (n: number): string => n.toString(16);
  put(`MODULE windows x86_64 ${BIG.debugId} ${BIG.debugFile}`);
  put(`INFO CODE_ID 5F1E2D3C${hex(funcRva(functions) + 0x1000)} ${BIG.name}`);
  put("INFO GENERATOR mozilla/dump_syms 2.3.4");
  for (let f = 0; f < files; f++) put(`FILE ${f} hg:hg.mozilla.org/mozilla-central:dom/module${f % 97}/src/Source${f}.cpp:4f0a1c2d3e4b5a697887a6b5c4d3e2f1a0b9c8d7`);
  for (let o = 0; o < origins; o++) put(`INLINE_ORIGIN ${o} mozilla::detail::Inlined${o}<nsTArray<RefPtr<mozilla::dom::Element>>>::Get() const`);
  for (let k = 0; k < functions; k++) {
    const at = funcRva(k);
    put(`FUNC ${hex(at)} f0 0 mozilla::dom::Component${k}::HandleEvent${k % 89}(mozilla::dom::Event*, nsTArray<RefPtr<nsIContent>> const&)`);
    const file = (k * 7) % files;
    if (k % 3 === 0) put(`INLINE 0 ${40 + (k % 300)} ${file} ${k % origins} ${hex(at + 0x40)} 20`);
    for (let l = 0; l < 8; l++) put(`${hex(at + l * 0x1e)} 1e ${100 + (k % 900) + l} ${file}`);
  }
  for (let p = 0; p < functions; p += 10) put(`PUBLIC ${hex(funcRva(p) + 0xf0)} 0 ?thunk${p}@@YAXXZ`);
  for (let k = 0; k < functions; k++) {
    const at = funcRva(k);
    put(`STACK CFI INIT ${hex(at)} f0 .cfa: $rsp 8 + .ra: .cfa 8 - ^`);
    put(`STACK CFI ${hex(at + 1)} .cfa: $rsp 16 + $rbx: .cfa 16 - ^`);
    put(`STACK CFI ${hex(at + 5)} .cfa: $rsp ${frameSize(k) + 16} +`);
  }
  flush();
  closeSync(fd);
  return { path, functions };
}

/**
 * A Windows x64 dump of one thread whose 64 frames are in functions of the generated file,
 * spread from its start to its end (each at 0x20 into its function, past the prolog the STACK
 * CFI rows describe); the outermost returns to 0.
 */
export function writeBigDump(path: string, functions: number): void {
  const depth = 64;
  const chosen = Array.from({ length: depth }, (_, i) => Math.floor(((depth - 1 - i) * (functions - 1)) / (depth - 1)));
  const stackTop = 0x7ff_0000_0000n;
  let sp = stackTop - 0x10000n;
  const stackBase = sp;
  const words = new Map<bigint, bigint>();
  for (let i = 0; i < depth; i++) {
    const k = chosen[i]!;
    const cfa = sp + BigInt(frameSize(k) + 16);
    words.set(cfa - 8n, i + 1 < depth ? BIG.base + BigInt(funcRva(chosen[i + 1]!) + 0x20) : 0n);
    words.set(cfa - 16n, 0x1000n + BigInt(i));
    sp = cfa;
  }
  const bytes = new Uint8Array(Number(stackTop - stackBase));
  const view = new DataView(bytes.buffer);
  for (const [at, value] of words) view.setBigUint64(Number(at - stackBase), value, true);
  const snapshot: Snapshot = {
    machine: "x64",
    threads: [{ id: 1, crashed: true, registers: { rip: BIG.base + BigInt(funcRva(chosen[0]!) + 0x20), rsp: stackBase, rbp: 0n, rbx: 0x1000n } }],
    memory: new RegionMemory([{ base: stackBase, bytes }]),
    modules: [{ name: BIG.name, path: `C:\\Program Files\\Mozilla Firefox\\${BIG.name}`, base: BIG.base, size: BigInt(funcRva(functions) + 0x1000), symbols: [], debugFile: BIG.debugFile, debugId: BIG.debugId }],
  };
  writeMinidumpFile(path, snapshot);
}

/** Milliseconds from the start of `command` to the first line of its standard output that `first` matches. */
function timeToFirst(command: readonly string[], first: RegExp): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ["ignore", "pipe", "ignore"] });
    let seen: number | undefined;
    let text = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk: string) => {
      if (seen !== undefined) return;
      text += chunk;
      if (first.test(text)) seen = performance.now() - started;
    });
    child.on("error", reject);
    child.on("close", () => (seen === undefined ? reject(new Error(`${command.join(" ")} printed no first frame`)) : resolve(seen)));
  });
}

/** The generated-file row: both tools, and each one's time to its first frame. */
async function bigSymRow(breakpad: string | undefined, scratch: string, rounds: number): Promise<{ row: Row; fileBytes: number; firstOurs: number; firstTheirs?: number }> {
  const mb = Number(process.env["BENCH_BIG_SYM_MB"] ?? 300);
  const store = join(scratch, "big-symbols");
  const { path, functions } = writeBigSym(store, mb * 1e6);
  const dump = join(scratch, "big.dmp");
  writeBigDump(dump, functions);
  const fileBytes = statSync(path).size;
  const work = `generated xul.sym (${(fileBytes / 1e6).toFixed(0)} MB, ${functions.toLocaleString("en-US")} functions), a 64-frame dump`;
  const row = paired(work, ["walk", dump, "--symbols", store, "--format", "breakpad"], breakpad === undefined ? undefined : [breakpad, dump, store], rounds, scratch);
  // The first frame line of Breakpad's human report: " 0  xul.dll!…".
  const frame0 = /\n ?0 {2}xul\.dll!/;
  const firstOurs = median([await timeToFirst([process.execPath, BIN, "walk", dump, "--symbols", store, "--format", "breakpad"], frame0), await timeToFirst([process.execPath, BIN, "walk", dump, "--symbols", store, "--format", "breakpad"], frame0)]);
  const firstTheirs = breakpad === undefined ? undefined : await timeToFirst([breakpad, dump, store], frame0);
  return firstTheirs === undefined ? { row, fileBytes, firstOurs } : { row, fileBytes, firstOurs, firstTheirs };
}

/** This project's walk of a batch folder in one call (`walk DIR ARGS…`), three times: its medians per dump. */
function oneCallPerDump(dir: string, args: readonly string[], dumps: number, scratch: string): Figures {
  const runs: Measured[] = [];
  for (let i = 0; i < 3; i++) runs.push(check(measure([process.execPath, BIN, "walk", dir, ...args], join(scratch, "batch.out")), `batch walk of ${dir}`));
  const f = figures(runs);
  return { cpuMs: f.cpuMs / dumps, wallMs: f.wallMs / dumps, rss: f.rss };
}

/** A Breakpad process for each of `names` in `dir`, given `symbols`: per dump (see {@link perDumpFigures}). */
function processPerDump(breakpad: string, dir: string, names: readonly string[], symbols: readonly string[], scratch: string): Figures {
  return perDumpFigures(names.map((d) => check(measure([breakpad, join(dir, d), ...symbols], join(scratch, "theirs.out")), `Breakpad on ${d}`)));
}

/**
 * The batch rows: 1,000 emulator dumps in one call, with each of `jobs` (`--jobs N`), against one
 * Breakpad process per dump (every tenth timed, once for all the rows; their mean).
 */
function batchRows(breakpad: string | undefined, scratch: string, jobs: readonly number[]): Row[] {
  const dir = join(scratch, "batch");
  mkdirSync(dir);
  const { dumps } = writeBatchDumps(dir);
  const theirs = breakpad === undefined ? undefined : processPerDump(breakpad, dir, dumps.filter((_, i) => i % 10 === 0), [dir], scratch);
  return jobs.map((n) => {
    const ours = oneCallPerDump(dir, ["--symbols", dir, "--format", "jsonl", "--jobs", String(n)], dumps.length, scratch);
    const row: Row = { work: `${dumps.length} emulator dumps in one call (--format jsonl --jobs ${n}), per dump`, ours };
    if (theirs !== undefined) {
      row.breakpad = theirs;
      row.note = `Breakpad: one process per dump, ${Math.ceil(dumps.length / 10)} of them timed (every tenth), their mean`;
    }
    return row;
  });
}

/**
 * The batch row of real dumps: those of rows 1 and 2 (minidump2 and test/fixtures/real-dumps),
 * repeated to 1,000 (links to the unpacked files, in turn), walked in one call with every symbol
 * folder (`--jobs 1`), against one Breakpad process per dump given the same folders: the first
 * 17 of each dump timed (the batch's mix), their mean.
 */
function realBatchRow(breakpad: string | undefined, scratch: string, kinds: readonly { dump: string; symbols: string }[]): Row {
  const dir = join(scratch, "real-batch");
  mkdirSync(dir);
  const dumps = Array.from({ length: 1000 }, (_, i) => {
    const name = `${String(i).padStart(4, "0")}.dmp`;
    symlinkSync(kinds[i % kinds.length]!.dump, join(dir, name));
    return name;
  });
  const symbols = [...new Set(kinds.map((k) => k.symbols))];
  const ours = oneCallPerDump(dir, [...symbols.flatMap((s) => ["--symbols", s]), "--format", "jsonl", "--jobs", "1"], dumps.length, scratch);
  const row: Row = { work: `${dumps.length} real dumps (the ${kinds.length} above, repeated) in one call (--format jsonl --jobs 1), per dump`, ours };
  if (breakpad !== undefined) {
    const timed = dumps.slice(0, 17 * kinds.length);
    row.breakpad = processPerDump(breakpad, dir, timed, symbols, scratch);
    row.note = `Breakpad: one process per dump, ${timed.length} of them timed (17 of each dump), their mean`;
  }
  return row;
}

const ms = (n: number): string => (n >= 1000 ? `${(n / 1000).toFixed(2)} s` : `${n.toFixed(n < 10 ? 1 : 0)} ms`);
const mb = (n: number): string => (n === 0 ? "-" : `${(n / 1e6).toFixed(0)} MB`);
const ratio = (a: number, b: number | undefined): string => (b === undefined || b === 0 ? "-" : `${(a / b).toFixed(2)}×`);

/** The table, in Markdown: one line per row, with the ratios (this project ÷ Breakpad). */
export function formatTable(rows: readonly Row[]): string {
  const lines = [
    "| work | this project: CPU, wall, peak RSS | Breakpad: CPU, wall, peak RSS | CPU ratio | RSS ratio | reports |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of rows) {
    const b = r.breakpad;
    const same = r.same === undefined ? "-" : r.same ? "identical" : "DIFFER";
    lines.push(`| ${r.work} | ${ms(r.ours.cpuMs)}, ${ms(r.ours.wallMs)}, ${mb(r.ours.rss)} | ${b === undefined ? "-" : `${ms(b.cpuMs)}, ${ms(b.wallMs)}, ${mb(b.rss)}`} | ${ratio(r.ours.cpuMs, b?.cpuMs)} | ${ratio(r.ours.rss, b?.rss)} | ${same} |`);
  }
  return lines.join("\n") + "\n";
}

/** Runs every row and prints the table and the targets' verdicts. */
export async function printBreakpadBench(): Promise<void> {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: run npm run build first`);
  const breakpad = breakpadTool();
  const out = (text: string): void => void process.stdout.write(text);
  out(breakpad === undefined ? "Breakpad's minidump_stackwalk is not at hand (set BREAKPAD_MINIDUMP_STACKWALK to its path): this project's side only\n" : `against Breakpad's ${breakpad}\n`);
  const scratch = mkdtempSync(join(tmpdir(), "bench-breakpad-"));
  try {
    const rounds = Number(process.env["BENCH_ROUNDS"] ?? 7);
    const rows: Row[] = [];
    const node = figures(Array.from({ length: rounds }, () => measure([process.execPath, "-e", "0"], join(scratch, "node.out"))));
    const md2 = fixtureDir("breakpad");
    rows.push(paired("minidump2 + its 2 .sym files, --format breakpad", ["walk", join(md2, "minidump2.dmp"), "--symbols", join(md2, "symbols"), "--format", "breakpad"], breakpad === undefined ? undefined : [breakpad, join(md2, "minidump2.dmp"), join(md2, "symbols")], rounds, scratch));
    const reals = realDumps();
    for (const d of reals) {
      const syms = readdirSync(d.symbols).length;
      rows.push(paired(`${d.name} (${syms} .sym), --format breakpad`, ["walk", d.dump, "--symbols", d.symbols, "--format", "breakpad"], breakpad === undefined ? undefined : [breakpad, d.dump, d.symbols], rounds, scratch));
    }
    const big = await bigSymRow(breakpad, scratch, Math.max(3, Math.min(rounds, 3)));
    rows.push(big.row);
    rows.push(...batchRows(breakpad, scratch, [1, 2]));
    rows.push(realBatchRow(breakpad, scratch, [{ dump: join(md2, "minidump2.dmp"), symbols: join(md2, "symbols") }, ...reals]));
    out(formatTable(rows));
    out(`node -e 0: ${ms(node.cpuMs)} CPU, ${ms(node.wallMs)} wall, ${mb(node.rss)} (medians of ${rounds})\n`);
    const first = big.firstTheirs === undefined ? "" : `, Breakpad ${ms(big.firstTheirs)}`;
    out(`generated .sym: first frame printed after ${ms(big.firstOurs)}${first}; peak RSS ${mb(big.row.ours.rss)} = ${(big.row.ours.rss / big.fileBytes).toFixed(2)}× the file's ${mb(big.fileBytes)}\n`);
    for (const batch of rows.slice(-3)) if (batch.note !== undefined) out(`${batch.work}: ${batch.note}\n`);
    out(`medians of ${rounds} paired runs (3 for the generated file and the batches), CPU = user + system of the child process\n`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await printBreakpadBench();
