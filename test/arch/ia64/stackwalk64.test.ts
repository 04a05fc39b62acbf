/**
 * The IA-64 StackWalk64 facade (stackwalk64.md §8, ia64.md §5.3) over the model executor's
 * vectors: each call performs one unwind step, AddrPC/AddrStack/AddrBStore equal the model's
 * truth frame for frame, AddrFrame is 0, Params are r32-r35 from the backing store, and
 * FuncTableEntry points at the IMAGE_IA64_RUNTIME_FUNCTION_ENTRY (in the target's memory) of the
 * frame's function.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseVector, type Vector } from "../../../src/formats/vector.js";
import { readU32, readU64 } from "../../../src/memory/reader.js";
import { AddressMode } from "../../../src/model/address.js";
import { IMAGE_FILE_MACHINE } from "../../../src/model/machine.js";
import { moduleAt } from "../../../src/model/snapshot.js";
import { newStackFrame64, type StackFrame64 } from "../../../src/model/stackframe.js";
import { stackWalk64Detailed, stackWalk32Detailed } from "../../../src/walk/stackwalk64.js";
import { newStackFrame32 } from "../../../src/model/stackframe.js";
import { skipRegs } from "../../../src/arch/ia64/rse.js";

const DIR = new URL("../../../vectors/ia64/synthetic/", import.meta.url).pathname;
const names = readdirSync(DIR).filter((f) => f.endsWith(".json")).sort();
const load = (name: string): Vector => parseVector(readFileSync(join(DIR, name), "utf8"), name);

function walk(vector: Vector): { rows: StackFrame64[]; last: ReturnType<typeof stackWalk64Detailed>; context: Record<string, bigint> } {
  const f = newStackFrame64();
  const context = { registers: { ...vector.threads[0]!.registers } };
  const rows: StackFrame64[] = [];
  for (;;) {
    const r = stackWalk64Detailed(IMAGE_FILE_MACHINE.IA64, vector, f, context);
    if (!r.ok) return { rows, last: r, context: context.registers };
    rows.push(structuredClone(f));
    if (rows.length > 5000) throw new Error("no end");
  }
}

describe("StackWalk64 for IA64", () => {
  it("walks every IA-64 vector frame for frame like the truth: AddrPC, AddrStack and AddrBStore", () => {
    expect(names.length).toBeGreaterThanOrEqual(10);
    for (const name of names) {
      const vector = load(name);
      const { rows, last } = walk(vector);
      const truth = vector.threads[0]!.truth!;
      expect(rows.map((f) => [f.addrPC.offset, f.addrStack.offset, f.addrBStore.offset]), name).toEqual(truth.map((t) => [t.pc, t.sp, t.bsp]));
      expect(last.reason, name).toBe("done");
      for (const f of rows) {
        expect(f.addrFrame.offset).toBe(0n);
        expect([f.addrPC.mode, f.addrStack.mode, f.addrBStore.mode, f.addrReturn.mode]).toEqual([AddressMode.Flat, AddressMode.Flat, AddressMode.Flat, AddressMode.Flat]);
      }
      expect(rows.slice(0, -1).map((f) => f.addrReturn.offset), name).toEqual(truth.slice(1).map((t) => t.pc));
      expect(rows.at(-1)!.addrReturn.offset).toBe(0n);
    }
  });

  it("reads Params from r32-r35 of each frame in the backing store, within the frame's sof", () => {
    const vector = load("mixed-8.json");
    const { rows } = walk(vector);
    for (const f of rows.slice(1)) {
      const bsp = f.addrBStore.offset;
      // Caller frames here all have sof ≥ 4.
      expect(f.params).toEqual([0, 1, 2, 3].map((i) => readU64(vector.memory, skipRegs(bsp, i))!));
    }
  });

  it("points FuncTableEntry at the IMAGE_IA64_RUNTIME_FUNCTION_ENTRY covering the frame's function", () => {
    const vector = load("call-last-bundle.json");
    const { rows } = walk(vector);
    rows.forEach((f, k) => {
      const entry = f.funcTableEntry;
      expect(entry, `frame ${k}`).not.toBe(0n);
      const module = moduleAt(vector.modules, entry)!;
      const begin = BigInt(readU32(vector.memory, entry)!);
      const end = BigInt(readU32(vector.memory, entry + 4n)!);
      // A caller frame's function is the one holding its call bundle: return address − 1.
      const at = f.addrPC.offset - (k === 0 ? 0n : 1n) - module.base;
      expect(at >= begin && at < end, `frame ${k}`).toBe(true);
    });
    // a's return address is a's end (b's start): the entry is still a's.
    const a = vector.modules[0]!.symbols.find((s) => s.name === "a")!;
    expect(rows[1]!.addrPC.offset).toBe(vector.modules[0]!.base + a.rva + a.size!);
  });

  it("rewrites the CONTEXT to the last frame's caller: StIIP, IntSp, RsBSP, StIFS, RsPFS, BrRp", () => {
    const vector = load("rp-after-save.json");
    const { rows, context } = walk(vector);
    const last = rows.at(-1)!;
    expect([context["stiip"], context["intsp"], context["rsbsp"]]).toEqual([last.addrPC.offset, last.addrStack.offset, last.addrBStore.offset]);
    expect(context["stifs"]! >> 63n).toBe(1n);
  });

  it("needs a CONTEXT, and ends for good once it has ended", () => {
    const vector = load(names[0]!);
    expect(stackWalk64Detailed(IMAGE_FILE_MACHINE.IA64, vector, newStackFrame64()).reason).toBe("invalid-parameter");
    const f = newStackFrame64();
    const context = { registers: { ...vector.threads[0]!.registers } };
    while (stackWalk64Detailed(IMAGE_FILE_MACHINE.IA64, vector, f, context).ok);
    expect(stackWalk64Detailed(IMAGE_FILE_MACHINE.IA64, vector, f, context).reason).toBe("done");
  });

  it("reports nothing for a context whose return address cannot be computed", () => {
    const vector = load("rp-after-save.json");
    // RsBSP is not 8-byte aligned: frame 0 cannot be unwound, so it is not reported (as for AMD64).
    const regs = { ...vector.threads[0]!.registers, rsbsp: vector.threads[0]!.registers["rsbsp"]! + 4n };
    expect(stackWalk64Detailed(IMAGE_FILE_MACHINE.IA64, vector, newStackFrame64(), { registers: regs })).toMatchObject({ ok: false, reason: "unwind-failed" });
  });

  it("the 32-bit StackWalk runs the same backend (addresses truncated on the way out)", () => {
    const vector = load("leaf-last-slot.json");
    const f = newStackFrame32();
    const context = { registers: { ...vector.threads[0]!.registers } };
    const rows: bigint[] = [];
    while (stackWalk32Detailed(IMAGE_FILE_MACHINE.IA64, vector, f, context).ok) rows.push(f.addrBStore.offset);
    expect(rows).toEqual(vector.threads[0]!.truth!.map((t) => t.bsp! & 0xffff_ffffn));
  });
});
