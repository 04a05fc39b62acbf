import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadDisassembler } from "../../emulator/disassemble.js";
import { mapPeImage, PAGE_SIZE } from "../../emulator/pe-loader.js";
import {
  EXPECTED,
  REAL_PROGRAMS,
  REAL_TARGETS,
  realProgramImage,
  runRealPrograms,
  type RealProgramRun,
} from "../../emulator/real-programs.js";
import { DEFAULT_STACKS, emulate, mapStack } from "../../emulator/run.js";
import { loadModuleSymbols } from "../../emulator/symbols.js";
import { Unicorn } from "../../emulator/unicorn.js";
import { emulateCommand } from "../../src/cli/emulate.js";
import { formatSweep, parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { parsePe } from "../../src/formats/pe.js";

const combos = REAL_TARGETS.flatMap(({ target }) => REAL_PROGRAMS.map((program) => ({ target, program })));
let runs: RealProgramRun[] = [];
const runOf = (target: string, program: string): RealProgramRun => runs.find((r) => r.target === target && r.program === program)!;

beforeAll(async () => {
  runs = await runRealPrograms();
});

describe("the real C programs under the emulator", () => {
  it.each(combos)("$target/$program returns its checksum after the README's instruction count", ({ target, program }) => {
    const { result } = runOf(target, program);
    const eax = (result.registers["eax"] ?? result.registers["rax"]!) & 0xffff_ffffn;
    expect(eax).toBe(BigInt(EXPECTED[program].checksum));
    expect(result.instructions).toBe(EXPECTED[program].instructions[target]);
    expect(result.sweep.steps).toHaveLength(EXPECTED[program].instructions[target]);
  });

  it.each(combos)("$target/$program: the committed sweep equals a fresh run, byte for byte", ({ target, program }) => {
    const run = runOf(target, program);
    expect(readFileSync(run.file, "utf8")).toBe(formatSweep(run.result.sweep));
  });

  it("every snapshot's truth starts with its context and ends in entry (with no sentinel frame)", () => {
    for (const { result } of runs) {
      const pcName = result.sweep.machine === "x64" ? "rip" : "eip";
      const spName = result.sweep.machine === "x64" ? "rsp" : "esp";
      for (const s of result.sweep.steps) {
        const truth = s.truth!;
        expect(truth[0]).toMatchObject({ pc: s.registers[pcName], sp: s.registers[spName] });
        expect(truth.at(-1)!.function).toBe("entry");
        expect(truth.every((f) => f.pc !== 0n)).toBe(true);
      }
    }
  });

  it("the longjmp discards the descend recursion in one instruction", () => {
    const { result } = runOf("x86-fp", "noreturn-longjmp");
    const depths = result.sweep.steps.map((s) => s.truth!.length);
    const deepest = Math.max(...depths);
    const at = depths.indexOf(deepest);
    expect(result.sweep.steps[at]!.truth!.map((f) => f.function)).toEqual([
      "bail_out", "fail", "descend", "descend", "descend", "descend", "descend", "descend", "descend", "guarded", "entry",
    ]);
    const drop = depths.findIndex((d, i) => i > at && d <= 2);
    expect(depths.slice(at, drop).every((d) => d === deepest)).toBe(true);
    expect(result.sweep.steps[drop]!.truth!.map((f) => f.function)).toEqual(["bail_out", "entry"]);
  });
});

describe("a sweep replays to the emulator's memory", () => {
  it.each(REAL_TARGETS.map(({ target }) => ({ target })))("$target: stack and image bytes at sampled steps", async ({ target }) => {
    const path = realProgramImage("noreturn-longjmp", target);
    const pe = parsePe(readFileSync(path));
    const mode = pe.is64 ? 64 : 32;
    const disassembler = await loadDisassembler();
    const stack = DEFAULT_STACKS[mode];
    const uc = Unicorn.open(mode);
    const image = mapPeImage(uc, pe, { name: "noreturn-longjmp.exe", symbols: loadModuleSymbols(path, pe) });
    mapStack(uc, stack);
    const sampled = new Set([0, 1, 57, 101, 150, 200]);
    const seen = new Map<number, { stack: Uint8Array; image: Uint8Array }>();
    let count = 0;
    // Added before the run's own hook, so it sees the memory the snapshot of the same step sees.
    uc.hookCode(() => {
      const step = count++;
      if (sampled.has(step)) seen.set(step, { stack: uc.memRead(stack.base, Number(stack.size)), image: uc.memRead(image.base, Number(image.size)) });
    });
    let sweepText: string;
    try {
      const result = emulate(
        {
          uc,
          entry: image.base + BigInt(pe.entryRva),
          modules: [image.module],
          regions: [
            { base: image.base, size: image.size, name: image.name },
            { base: stack.base, size: stack.size, name: "stack" },
          ],
          stack,
        },
        { sweep: true },
        (b, a, m) => disassembler.describe(b, a, m),
      );
      sweepText = formatSweep(result.sweep);
    } finally {
      uc.close();
    }
    expect(seen.size).toBe(sampled.size);
    for (const v of replaySweep(parseSweep(sweepText))) {
      const want = seen.get(v.step);
      if (want === undefined) continue;
      const stackRegion = v.memory.regions.find((r) => r.base >= stack.base && r.base < stack.base + stack.size)!;
      // The sweep's stack starts at the lowest page the run used; everything below it is zero.
      expect(stackRegion.base % PAGE_SIZE).toBe(0n);
      expect(stackRegion.bytes).toEqual(want.stack.subarray(Number(stackRegion.base - stack.base)));
      expect(want.stack.subarray(0, Number(stackRegion.base - stack.base)).every((b) => b === 0)).toBe(true);
      expect(v.memory.read(image.base, Number(image.size))).toEqual(want.image);
    }
  });
});

describe("stackwalk emulate --sweep", () => {
  it("writes the committed sweep when given the same image path", async () => {
    const out = join(mkdtempSync(join(tmpdir(), "emulate-")), "s.json");
    const image = realProgramImage("noreturn-longjmp", "x86-fpo");
    let text = "";
    const code = await emulateCommand([image, "--sweep", "-o", out], { out: (t) => (text += t), err: (t) => (text += t) });
    expect(code).toBe(0);
    expect(text).toBe(`wrote ${out}: 207 snapshots (207 instructions)\n`);
    expect(readFileSync(out, "utf8")).toBe(readFileSync("vectors/x86/c-fpo/noreturn-longjmp.sweep.json", "utf8"));
  });
});
