/**
 * deep-recursion (vectors/programs/c): real clang-14/lld-14 images linked for a large stack
 * (/stack:16777216 on x86, /stack:2097152 on x64) run on the stack they were linked for, to a
 * break where the whole recursion is on the stack; `--dmp` writes the dump and its .sym store,
 * and walking the dump gives the emulator's truth frame for frame, in the Breakpad report and in
 * JSON. The x64 build runs at the depth it was built with (20,000); the x86 build at 10,000 (the
 * same image with g_depth's initial value changed): `npm run bench` walks the x86 one at its full
 * 100,000 and checks that walk against the truth too.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { FIRST_SECTION_RVA, SECTION_CHARACTERISTICS, writePeImage } from "../../emulator/image-writer.js";
import { DEEP_RECURSION, deepRecursionLimit, realProgramImage, runDeepRecursion, writeDeepRecursion, type RealTarget } from "../../emulator/real-programs.js";
import { run } from "../../src/cli/main.js";
import { parseVector, type Vector } from "../../src/formats/vector.js";
import type { TruthFrame } from "../../src/model/snapshot.js";
import { parseWalkJson } from "../support/walk-schema.js";

type Io = { code: number; out: string; err: string };

async function cli(...argv: string[]): Promise<Io> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const scratch = (): string => mkdtempSync(join(tmpdir(), "deep-recursion-"));

/** One emulated break: its vector (with the truth) and its dump, written by `stackwalk emulate --break bottom --dmp`. */
interface Capture {
  target: RealTarget;
  depth: number;
  emulate: Io;
  vector: Vector;
  dump: string;
}

async function capture(target: RealTarget, depth: number): Promise<Capture> {
  const dir = scratch();
  const built = DEEP_RECURSION.targets[target].depth;
  const exe = depth === built ? realProgramImage("deep-recursion", target) : writeDeepRecursion(dir, target, depth);
  const out = join(dir, "out");
  const emulate = await cli("emulate", exe, "--break", "bottom", "--dmp", "-o", `${out}/`, "--max-instructions", String(deepRecursionLimit(depth)));
  const files = readdirSync(out);
  const vectorFile = files.find((f) => f.endsWith(".json"));
  const dump = files.find((f) => f.endsWith(".dmp"));
  if (emulate.code !== 0 || vectorFile === undefined || dump === undefined) throw new Error(`emulate ${exe}: ${emulate.code} ${emulate.err}`);
  return { target, depth, emulate, vector: parseVector(readFileSync(join(out, vectorFile), "utf8")), dump: join(out, dump) };
}

/** Each frame of a Breakpad report: its number, location, and PC and SP as printed (eip/esp or rip/rsp). */
function reportFrames(text: string, x64: boolean): { index: number; name: string; pc: bigint; sp: bigint }[] {
  const blocks = text.split(/\n(?= ?\d+ {2}\S)/).slice(1);
  return blocks.map((block) => {
    const head = /^ ?(\d+) {2}(\S+)/.exec(block)!;
    const value = (name: string): bigint => BigInt(new RegExp(`\\b${name} = (0x[0-9a-f]+)`).exec(block)![1]!);
    return { index: Number(head[1]), name: head[2]!, pc: value(x64 ? "rip" : "eip"), sp: value(x64 ? "rsp" : "esp") };
  });
}

const hex = (v: bigint, x64: boolean): string => `0x${v.toString(16).padStart(x64 ? 16 : 8, "0")}`;

describe("deep-recursion: a program linked for a large stack, its dump and the walk of it", () => {
  const captures: Capture[] = [];
  beforeAll(async () => {
    captures.push(await capture("x86-fpo", 10_000), await capture("x64", DEEP_RECURSION.targets.x64.depth));
  });

  it("runs on the stack SizeOfStackReserve asks for, placed clear of the image, to a break with the whole recursion", () => {
    for (const c of captures) {
      const truth = c.vector.threads[0]!.truth!;
      expect(truth, c.target).toHaveLength(c.depth + 2);
      expect(truth.map((t) => t.function)).toEqual(["bottom", ...new Array<string>(c.depth).fill("descend"), "entry"]);
      const stack = c.vector.memory.regions.find((r) => r.base < 0x4000_0000n && r.base !== c.vector.modules[0]!.base)!;
      const top = stack.base + BigInt(stack.bytes.length);
      const image = c.vector.modules[0]!;
      if (c.target === "x64") {
        // 2 MiB fits below the x64 stack top: 0x00100000..0x00300000.
        expect(top).toBe(0x30_0000n);
        expect(stack.base).toBeGreaterThanOrEqual(0x10_0000n);
      } else {
        // 16 MiB does not fit below 0x00130000: it starts 64 KiB past the image.
        expect(image.base + image.size).toBeLessThanOrEqual(0x41_0000n);
        expect(top).toBe(0x42_0000n + 0x100_0000n);
      }
      // The vector holds the stack the program used, not the whole reserve.
      expect(BigInt(stack.bytes.length)).toBeLessThan(BigInt(c.depth) * (c.target === "x64" ? 96n : 48n) + 0x2000n);
      expect(c.emulate.out).toMatch(/^wrote .*\.json\nwrote .*\.dmp\nwrote .*deep-recursion\.pdb\/[0-9A-F]+\/deep-recursion\.sym\n1 vector, 1 minidump \(\d+ instructions\)\n$/);
    }
  });

  it("walking the dump gives the truth frame for frame: the Breakpad report and the JSON walk", async () => {
    for (const c of captures) {
      const x64 = c.target === "x64";
      const truth: TruthFrame[] = c.vector.threads[0]!.truth!;
      const report = await cli("walk", c.dump, "--format", "breakpad");
      expect(report.code, report.err).toBe(0);
      const frames = reportFrames(report.out.slice(0, report.out.indexOf("\nLoaded modules:")), x64);
      expect(frames.map((f) => f.index)).toEqual(truth.map((_, i) => i));
      expect(frames.map((f) => [f.pc, f.sp])).toEqual(truth.map((t) => [t.pc, t.sp]));
      expect(frames[1]!.name).toBe("deep-recursion.exe!descend");
      expect(report.out).toContain("Found by: call frame info");

      const json = await cli("walk", c.dump, "--format", "json");
      expect(json.code, json.err).toBe(0);
      const walked = (parseWalkJson(json.out) as { threads: { frames: { addrPC: string; addrStack: string; function: string | null }[]; stop: { reason: string } }[] }).threads[0]!;
      expect(walked.frames.map((f) => [f.addrPC, f.addrStack])).toEqual(truth.map((t) => [hex(t.pc, x64), hex(t.sp, x64)]));
      expect(walked.frames.map((f) => f.function)).toEqual(truth.map((t) => t.function));
      expect(walked.stop.reason).toBe("end-of-stack");
    }
  });

  it("every build ends with the checksum of the C code and breaks with the whole recursion on the stack", async () => {
    const dir = scratch();
    for (const target of ["x86-fpo", "x86-fp", "x64"] as const) {
      mkdirSync(join(dir, target));
      const { result, vector } = await runDeepRecursion(writeDeepRecursion(join(dir, target), target, 1_000), target, 1_000);
      expect(Number((result.registers["eax"] ?? result.registers["rax"]!) & 0xffff_ffffn)).toBe(DEEP_RECURSION.checksums[1_000]);
      expect(vector.threads[0]!.truth).toHaveLength(1_002);
    }
  });

  it("--max-instructions still bounds the run", async () => {
    const r = await cli("emulate", realProgramImage("deep-recursion", "x86-fpo"), "--max-instructions", "5000");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^stackwalk emulate: vectors\/programs\/c\/build\/x86-fpo\/deep-recursion\.exe: still running after 5000 instructions; the next one is 0x[0-9a-f]{8}: /);
  });

  it("a SizeOfStackReserve above 256 MiB is refused, naming the value and the limit", async () => {
    for (const machine of ["x86", "x64"] as const) {
      const image = writePeImage({
        machine,
        imageBase: machine === "x64" ? 0x1_4000_0000n : 0x40_0000n,
        entryRva: FIRST_SECTION_RVA,
        stackReserve: 0x2000_0000,
        sections: [{ name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: Uint8Array.of(0xc3) } }],
      });
      const file = join(scratch(), "huge-stack.exe");
      writeFileSync(file, image.bytes);
      const r = await cli("emulate", file);
      expect(r.code).toBe(2);
      expect(r.err).toBe(
        `stackwalk emulate: ${file}: SizeOfStackReserve 0x20000000 (536870912 bytes) is more than the emulator maps for a stack: at most 0x10000000 (256 MiB)\n`,
      );
    }
  });
});
