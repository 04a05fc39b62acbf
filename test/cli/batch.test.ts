/**
 * `stackwalk walk` over many inputs: a folder of Breakpad's corpus dumps with a cut-off dump and
 * a file that is no dump among them, walked on worker threads and on one thread. JSON Lines come
 * in input order, one valid walk document (or one error record) per input, each the document
 * `walk X --format json` prints for that input alone; the summary has a row per input and the
 * totals; a bad input is one error line and the exit status 2; a progress bar is drawn only on
 * a terminal.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { MAX_RUN, runLength, walkBatch, walkOne, WORKERS_AFTER_MS, WORKERS_WORTH_MS, workersWorthStarting, type BatchOptions } from "../../src/cli/batch.js";
import { frameBudgetOption, symbolSpec, walkerOption } from "../../src/cli/common.js";
import { DEFAULT_MAX_FRAMES } from "../../src/walk/walk.js";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { cliWith } from "../support/cli.js";
import { assertWalkDocument, parseWalkJson } from "../support/walk-schema.js";

const CORPUS = "test/fixtures/breakpad-corpus";
const MINIDUMP2 = "test/fixtures/breakpad/minidump2.dmp";

const cli = cliWith;

let dir: string;
let inputs: string[];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sw-batch-"));
  for (const f of readdirSync(CORPUS).filter((f) => f.endsWith(".dmp"))) copyFileSync(join(CORPUS, f), join(dir, f));
  // Cut inside the thread list: the reader names the offset it could not read.
  writeFileSync(join(dir, "cut.dmp"), readFileSync(MINIDUMP2).subarray(0, 3000));
  writeFileSync(join(dir, "not-a-dump.dmp"), "garbage\n");
  writeFileSync(join(dir, "readme.txt"), "not a dump, and not named like one\n");
  inputs = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort().map((f) => join(dir, f));
});

describe("walk over a folder", () => {
  it("--format jsonl on two workers: one record per dump in input order, each valid and equal to the single walk's document; bad dumps are error records", async () => {
    const r = await cli(["walk", dir, "--format", "jsonl", "--jobs", "2"]);
    expect(r.code).toBe(2);
    const lines = r.out.split("\n").filter((l) => l !== "");
    expect(lines).toHaveLength(21);
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(records.map((x) => x["file"])).toEqual(inputs);
    for (const x of records) assertWalkDocument(x);
    const errors = records.filter((x) => "error" in x);
    expect(errors.map((x) => x["file"])).toEqual([join(dir, "cut.dmp"), join(dir, "not-a-dump.dmp")]);
    expect(errors[0]!["error"]).toMatch(/^offset 0x[0-9a-f]+: /);
    expect(r.err.trim().split("\n")).toEqual([
      `stackwalk walk: ${join(dir, "cut.dmp")}: ${errors[0]!["error"] as string}`,
      `stackwalk walk: ${join(dir, "not-a-dump.dmp")}: ${errors[1]!["error"] as string}`,
    ]);
    for (const name of ["tiny-exe-fastfail.dmp", "minidump_crashpad_annotation.dmp", "linux_null_read_av.dmp"]) {
      const single = parseWalkJson((await cli(["walk", join(dir, name), "--format", "json"])).out);
      expect(records.find((x) => x["file"] === join(dir, name))).toEqual({ file: join(dir, name), ...single });
    }
  });

  it("gives the same records on one thread, and with several files named instead of the folder", async () => {
    const workers = await cli(["walk", dir, "--format", "jsonl", "--jobs", "2"]);
    const one = await cli(["walk", dir, "--format", "jsonl", "--jobs", "1"]);
    expect(one.out).toBe(workers.out);
    const named = await cli(["walk", ...inputs, "--format", "jsonl"]);
    expect(named.out).toBe(workers.out);
  });

  it("the summary (the default for several inputs): a row per input, an error row for a bad one, the totals", async () => {
    const r = await cli(["walk", dir, MINIDUMP2, "--symbols", "test/fixtures/breakpad/symbols", "--thread", "crashed"]);
    expect(r.code).toBe(2);
    const rows = r.out.trimEnd().split("\n");
    expect(rows[0]).toMatch(/^input +machine +crash +threads +frames +stop +frame 0 of the crashed \(or first\) thread$/);
    expect(rows).toHaveLength(1 + 22 + 1);
    expect(rows.at(-1)).toBe("22 inputs: 20 walked, 2 failed");
    expect(rows.find((l) => l.startsWith(MINIDUMP2))).toMatch(/ x86 +EXCEPTION_ACCESS_VIOLATION_WRITE +1 +4 +end-of-stack +test_app\.exe!`anonymous namespace'::CrashFunction\+0xe$/);
    expect(rows.find((l) => l.startsWith(join(dir, "tiny-exe-fastfail.dmp")))).toMatch(/ x64 +FAST_FAIL_FATAL_APP_EXIT +1 +/);
    expect(rows.find((l) => l.startsWith(join(dir, "not-a-dump.dmp")))).toMatch(/ error: offset 0x0: not a stackwalk-vector/);
  });

  it("exits 0 when every input walks", async () => {
    const r = await cli(["walk", join(dir, "tiny-exe-fastfail.dmp"), join(dir, "linux_null_read_av.dmp"), "--format", "jsonl"]);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out.split("\n").filter((l) => l !== "")).toHaveLength(2);
  });

  it("draws a progress bar on stderr only when it is a terminal", async () => {
    const tty = await cli(["walk", dir, "--format", "jsonl", "--jobs", "1"], true);
    expect(tty.err).toContain("\r[##############################] 21/21 inputs, 2 failed");
    expect(tty.err.endsWith("\r\u001b[K")).toBe(true);
    const pipe = await cli(["walk", dir, "--format", "jsonl", "--jobs", "1"]);
    expect(pipe.err).not.toContain("\r");
  });

  it("refuses what a batch cannot do, in one line", async () => {
    for (const [argv, message] of [
      [["walk", dir, "--format", "text"], "several inputs (or a folder) are written as --format jsonl or summary, not text"],
      [["walk", dir, "--jobs", "0"], '--jobs takes a whole number ≥ 1, not "0"'],
      [["walk", join(dir, "tiny-exe-fastfail.dmp"), "--jobs", "2"], "--jobs applies to several inputs (or a folder)"],
      [["walk", dir, "--registers"], "--registers applies to one input, not a batch"],
      [["walk", mkdtempSync(join(tmpdir(), "sw-empty-"))], "no minidumps (.dmp, .mdmp) under"],
    ] as const) {
      const r = await cli([...argv]);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.err).toContain(message);
    }
  });
});

describe("a batch's inputs are sent to the workers a few at a time", () => {
  it("runs of up to 8 inputs, shorter near the end so that every worker has two", () => {
    expect(MAX_RUN).toBe(8);
    expect([1000, 40, 32, 31, 9, 4, 3, 1].map((left) => runLength(left, 2))).toEqual([8, 8, 8, 7, 2, 1, 1, 1]);
  });

  it("without --jobs, workers start once the main thread has walked for 0.1 s and what is left would take it 0.3 s more", () => {
    expect([WORKERS_AFTER_MS, WORKERS_WORTH_MS]).toEqual([100, 300]);
    const cases: [elapsedMs: number, done: number, left: number][] = [
      [50, 10, 10_000], // too soon to judge
      [100, 0, 10_000], // nothing walked yet
      [100, 50, 100], // 2 ms each, 0.2 s left: walked here
      [100, 50, 150], // 0.3 s left: workers
      [120, 40, 995], // a thousand small dumps: workers
      [400, 2, 1], // one large dump left: walked here
      [400, 2, 2], // two: workers
    ];
    expect(cases.map(([elapsed, done, left]) => workersWorthStarting(elapsed, done, left))).toEqual([false, false, false, true, true, false, true]);
  });

  it("an input's summary row is made for the summary's table alone: a JSON Lines batch makes none", async () => {
    const options = (format: BatchOptions["format"]): BatchOptions => ({ format, walker: walkerOption(undefined), maxFrames: DEFAULT_MAX_FRAMES, frameBudget: frameBudgetOption(undefined), thread: "all", symbols: symbolSpec({}, {}), images: [] });
    const record = await walkOne(MINIDUMP2, options("jsonl"), () => undefined);
    expect(record).toEqual({ ok: true });
    const row = await walkOne(MINIDUMP2, options("summary"));
    expect(row.ok && row.row).toMatchObject({ file: MINIDUMP2, machine: "x86", crash: "EXCEPTION_ACCESS_VIOLATION_WRITE", threads: 2 });
  });

  it("workers started in the middle of a batch (after the main thread's third input) give the same records", async () => {
    const options: BatchOptions = { format: "jsonl", walker: walkerOption(undefined), maxFrames: DEFAULT_MAX_FRAMES, frameBudget: frameBudgetOption(undefined), thread: "all", symbols: symbolSpec({}, {}), images: [] };
    let out = "";
    let err = "";
    const judged: number[] = [];
    const code = await walkBatch(inputs, options, 2, { out: (t) => (out += t), err: (t) => (err += t) }, (_, done, left) => {
      judged.push(left);
      return done >= 3;
    });
    // Judged after each of the main thread's inputs until the workers started, then no more.
    expect(judged).toHaveLength(3);
    expect(judged[2]!).toBeGreaterThan(0);
    const one = await cli(["walk", dir, "--format", "jsonl", "--jobs", "1"]);
    expect([code, out, err]).toEqual([one.code, one.out, one.err]);
  });

  it("records in input order, a record of over 4 Mi characters among them (written through a file), the same on workers and on one thread", async () => {
    const batch = mkdtempSync(join(tmpdir(), "sw-batch-runs-"));
    // An x86 EBP chain of 12,000 frames: its record, the crashed thread twice, is about 16 Mi characters.
    const depth = 12_000;
    const sp = 0x0100_0000n;
    const bytes = new Uint8Array(16 + depth * 8);
    const view = new DataView(bytes.buffer);
    for (let i = 0; i < depth - 1; i++) {
      view.setUint32(16 + i * 8, Number(sp) + 16 + (i + 1) * 8, true);
      view.setUint32(16 + i * 8 + 4, 0x0040_1000 + (i % 64), true);
    }
    const deep: Snapshot = { machine: "x86", threads: [{ id: 7, crashed: true, registers: { eip: 0x0040_1000n, esp: sp, ebp: sp + 16n } }], memory: new RegionMemory([{ base: sp, bytes }]), modules: [] };
    for (let k = 0; k < 19; k++) copyFileSync(MINIDUMP2, join(batch, `m${String(k).padStart(2, "0")}.dmp`));
    writeFileSync(join(batch, "m05-deep.dmp"), minidumpBytes(deep));
    const args = ["walk", batch, "--format", "jsonl", "--walker", "frame-pointer"];
    const workers = await cli([...args, "--jobs", "2"]);
    const one = await cli([...args, "--jobs", "1"]);
    expect([workers.code, workers.err]).toEqual([0, ""]);
    expect(workers.out).toBe(one.out);
    const records = workers.out.split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { file: string; threads: { frames: unknown[] }[] });
    expect(records.map((r) => r.file)).toEqual(readdirSync(batch).sort().map((f) => join(batch, f)));
    const deepRecord = records.find((r) => r.file.endsWith("m05-deep.dmp"))!;
    expect(deepRecord.threads[0]!.frames).toHaveLength(depth);
    expect(workers.out.split("\n").find((l) => l.includes("m05-deep.dmp"))!.length).toBeGreaterThan(1 << 22);
  }, 60_000);
});
