import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { InputError } from "../../src/errors.js";
import { formatSweep, parseSweep, replaySweep, type Sweep } from "../../src/formats/sweep.js";
import { readU32 } from "../../src/memory/reader.js";
import { parseWalkJson } from "../support/walk-schema.js";

/**
 * A three-snapshot sweep of `call f` in a frame-pointer program, laid out by hand: before the
 * call, at f's first instruction (the call pushed the return address), and after f's
 * `push ebp; mov ebp, esp`.
 */
function sample(): Sweep {
  const stack = new Uint8Array(0x20);
  const dv = new DataView(stack.buffer);
  dv.setUint32(0x18, 0, true); // main's saved EBP: 0 ends the chain
  dv.setUint32(0x1c, 0, true); // main's return address: 0
  const u32 = (v: number): Uint8Array => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, v, true);
    return b;
  };
  return {
    machine: "x86",
    description: "main calls f",
    modules: [{ name: "p.exe", base: 0x400000n, size: 0x2000n, symbols: [{ name: "main", rva: 0x1000n, size: 0x20n }, { name: "f", rva: 0x1020n, size: 0x20n }] }],
    memory: [{ base: 0x12ff00n, bytes: stack }],
    steps: [
      { step: 10, registers: { eip: 0x401008n, esp: 0x12ff18n, ebp: 0x12ff18n }, writes: [], truth: [{ pc: 0x401008n, sp: 0x12ff18n }] },
      {
        step: 11,
        label: "f",
        registers: { eip: 0x401020n, esp: 0x12ff14n, ebp: 0x12ff18n },
        writes: [{ address: 0x12ff14n, bytes: u32(0x40100d) }],
        truth: [{ pc: 0x401020n, sp: 0x12ff14n }, { pc: 0x40100dn, sp: 0x12ff18n }],
      },
      {
        step: 13,
        registers: { eip: 0x401023n, esp: 0x12ff10n, ebp: 0x12ff10n },
        writes: [{ address: 0x12ff10n, bytes: u32(0x12ff18) }],
        truth: [{ pc: 0x401023n, sp: 0x12ff10n }, { pc: 0x40100dn, sp: 0x12ff18n }],
      },
    ],
  };
}

describe("stackwalk-sweep/1", () => {
  it("round-trips through its text form", () => {
    const text = formatSweep(sample());
    const again = parseSweep(text);
    expect(again.steps).toEqual(sample().steps);
    expect(formatSweep(again)).toBe(text);
  });

  it("replays writes cumulatively over one memory image", () => {
    const seen: (bigint | undefined)[][] = [];
    for (const v of replaySweep(parseSweep(formatSweep(sample())))) seen.push([readU32(v.memory, 0x12ff10n), readU32(v.memory, 0x12ff14n)]);
    expect(seen).toEqual([
      [0n, 0n],
      [0n, 0x40100dn],
      [0x12ff18n, 0x40100dn],
    ]);
  });

  it("rejects a write outside the memory regions, naming its path", () => {
    const s = sample();
    s.steps[1]!.writes[0]!.address = 0x130000n;
    try {
      parseSweep(formatSweep(s), "s.json");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      expect((e as InputError).message).toBe("s.json: $.snapshots[1].writes[0]: write of 4 bytes at 0x00130000 is outside the sweep's memory regions");
    }
  });

  it("is checked snapshot by snapshot, and one snapshot can be walked with --step", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-sweep-"));
    const file = join(dir, "s.json");
    writeFileSync(file, formatSweep(sample()));
    let out = "";
    const io = { out: (t: string) => (out += t), err: (t: string) => (out += t) };
    // At step 11 the EBP chain still belongs to main: the frame-pointer walk misses f's caller.
    expect(await run(["check", file, "--walker", "frame-pointer"], io)).toBe(1);
    expect(out).toContain(`FAIL  ${file}: 2/3 snapshots exact; first difference at step 11: frame 1: missing, truth pc 0x0040100d; the walk stopped: end-of-stack`);
    expect(out.trimEnd().split("\n").at(-1)).toBe("2 passed, 1 failed");
    out = "";
    expect(await run(["walk", file, "--step", "13", "--format", "json"], io)).toBe(0);
    expect(parseWalkJson(out).threads[0].frames.map((f: { function: string }) => f.function)).toEqual(["f", "main"]);
    out = "";
    expect(await run(["walk", file], io)).toBe(2);
    expect(out).toContain("is a sweep of 3 snapshots (steps 10..13): choose one with --step N");
  });
});

describe("sweeps over zero pages", () => {
  it("accepts a write that spans a hex run and a zero-page run of the same memory", () => {
    const stack = new Uint8Array(0x2000);
    stack[0x0fff] = 7; // the first page is data, the second all zeros
    const s: Sweep = {
      machine: "x86",
      modules: [],
      memory: [{ base: 0x120000n, bytes: stack }],
      steps: [{ step: 0, registers: { eip: 0x401000n, esp: 0x120ffcn, ebp: 0n }, writes: [{ address: 0x120ffen, bytes: Uint8Array.from([1, 2, 3, 4]) }] }],
    };
    const text = formatSweep(s);
    expect(text).toContain(`"zeros": "0x00001000"`);
    const [v] = [...replaySweep(parseSweep(text))];
    expect([...v!.memory.read(0x120ffen, 4)!]).toEqual([1, 2, 3, 4]);
  });
});
