/**
 * The AMD64 StackWalk64 facade (stackwalk64.md §7) over the emulator's x64 vectors: every frame
 * a dbghelp caller loops over equals the shadow stack's truth, AddrFrame is the unwound RBP,
 * Params are 0, and FuncTableEntry points at the RUNTIME_FUNCTION (in the target's memory) that
 * covers the callee frame.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readU32 } from "../../src/memory/reader.js";
import { parseVector, type Vector } from "../../src/formats/vector.js";
import { AddressMode } from "../../src/model/address.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import { moduleAt } from "../../src/model/snapshot.js";
import { newStackFrame64, type StackFrame64 } from "../../src/model/stackframe.js";
import { stackWalk64Detailed } from "../../src/walk/stackwalk64.js";

const DIR = new URL("../../vectors/x64/synthetic/", import.meta.url).pathname;
const vectors = readdirSync(DIR).filter((f) => f.endsWith(".json")).sort();

function walk(vector: Vector): { rows: StackFrame64[]; last: ReturnType<typeof stackWalk64Detailed> } {
  const t = vector.threads[0]!;
  const f = newStackFrame64();
  f.addrPC = { offset: 0n, segment: 0, mode: AddressMode.Flat };
  f.addrFrame = { offset: 0n, segment: 0, mode: AddressMode.Flat };
  f.addrStack = { offset: 0n, segment: 0, mode: AddressMode.Flat };
  const context = { registers: { ...t.registers } };
  const rows: StackFrame64[] = [];
  for (;;) {
    const r = stackWalk64Detailed(IMAGE_FILE_MACHINE.AMD64, vector, f, context);
    if (!r.ok) return { rows, last: r };
    rows.push(structuredClone(f));
    if (rows.length > 5000) throw new Error("no end");
  }
}

describe("StackWalk64 for AMD64", () => {
  it("walks every synthetic x64 vector frame for frame like the truth", () => {
    expect(vectors.length).toBe(188);
    let frames = 0;
    for (const name of vectors) {
      const vector = parseVector(readFileSync(join(DIR, name), "utf8"), name);
      const truth = vector.threads[0]!.truth!;
      const { rows, last } = walk(vector);
      expect(rows.map((f) => [f.addrPC.offset, f.addrStack.offset]), name).toEqual(truth.map((t) => [t.pc, t.sp]));
      expect(last.reason, name).not.toBe("invalid-parameter");
      for (const f of rows) expect(f.params).toEqual([0n, 0n, 0n, 0n]);
      frames += rows.length;
    }
    expect(frames).toBeGreaterThan(1000);
  });

  it("the first call takes PC, stack and frame from the CONTEXT and writes no FuncTableEntry; later ones point at the callee's RUNTIME_FUNCTION", () => {
    const name = vectors.find((v) => !v.includes("leaf") && !v.includes("machframe")) ?? vectors[0]!;
    const vector = parseVector(readFileSync(join(DIR, name), "utf8"), name);
    const t = vector.threads[0]!;
    const { rows } = walk(vector);
    expect(rows.length).toBeGreaterThan(2);
    expect([rows[0]!.addrPC.offset, rows[0]!.addrStack.offset, rows[0]!.addrFrame.offset]).toEqual([t.registers["rip"], t.registers["rsp"], t.registers["rbp"]]);
    expect(rows[0]!.funcTableEntry).toBe(0n);
    let checked = 0;
    for (let k = 1; k < rows.length; k++) {
      const entry = rows[k]!.funcTableEntry;
      if (entry === 0n) continue;
      const callee = rows[k - 1]!;
      const module = moduleAt(vector.modules, entry)!;
      const begin = readU32(vector.memory, entry)!;
      const end = readU32(vector.memory, entry + 4n)!;
      const pc = callee.addrPC.offset - (k - 1 === 0 ? 0n : 1n) - module.base;
      expect(pc >= begin && pc < end, `${name} frame ${k}`).toBe(true);
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });

  it("a NULL CONTEXT is refused, as the port's contract says", () => {
    const vector = parseVector(readFileSync(join(DIR, vectors[0]!), "utf8"), vectors[0]!);
    expect(stackWalk64Detailed(IMAGE_FILE_MACHINE.AMD64, vector, newStackFrame64()).reason).toBe("invalid-parameter");
  });
});
