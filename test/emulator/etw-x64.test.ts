import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { captureX64Vectors, etwStacks } from "../../emulator/etw-capture.js";
import { buildEtwUser64Module, type EtwModule } from "../../emulator/etw-modules.js";
import { REPO_ROOT, realProgramImage } from "../../emulator/real-programs.js";
import { loadModuleSymbols } from "../../emulator/symbols.js";
import { decodeDiskItems, EVENT_HEADER_EXT_TYPE } from "../../src/formats/etw/extended-data.js";
import { parsePe } from "../../src/formats/pe.js";
import type { Vector } from "../../src/formats/vector.js";
import { captureEtwCaller } from "../support/etw-x64-caller.js";

let logger: EtwModule;
let labels: ReadonlyMap<string, bigint>;
let logged: Vector[];

beforeAll(async () => {
  logger = await buildEtwUser64Module();
  ({ vectors: logged, labels } = await captureEtwCaller());
});

describe("x64 ETW capture from the shadow stack", () => {
  it("a program that calls etwlog64.dll gets the syscall return and the logging path first (etw.md §3)", () => {
    expect(logged).toHaveLength(1);
    const v = logged[0]!;
    const truth = v.threads[0]!.truth!;
    expect(truth.map((f) => f.function)).toEqual(["work", "main"]);
    const items = decodeDiskItems(v.threads[0]!.etw![0]!.items);
    expect(items.map((i) => i.extType)).toEqual([EVENT_HEADER_EXT_TYPE.STACK_TRACE64]);
    const [trace] = etwStacks(v);
    expect(trace!.matchId).toBe(0n);
    expect(trace!.addressSize).toBe(8);
    const at = (module: EtwModule, name: string, offset: number): bigint => module.base + module.symbols.find((s) => s.name === name)!.rva + BigInt(offset);
    expect(trace!.addresses).toEqual([
      // NtTraceEvent: mov r10, rcx (3 bytes) and the 2-byte stand-in for syscall.
      at(logger, "NtTraceEvent", 5),
      // EtwpEventWriteFull and EtwEventWrite: sub rsp, 40 (4 bytes), then a 5-byte call.
      at(logger, "EtwpEventWriteFull", 9),
      at(logger, "EtwEventWrite", 9),
      labels.get("work_back")!,
      labels.get("main_back")!,
    ]);
    expect(trace!.addresses.slice(4)).toEqual(truth.slice(1).map((f) => f.pc));
    expect(trace!.addresses[3]).toBe(truth[0]!.pc + 12n);
  });

  it("a real x64 program: a profile sample at each capture is the PC and every return address", async () => {
    const path = join(REPO_ROOT, realProgramImage("recursion-callbacks", "x64"));
    const pe = parsePe(readFileSync(path));
    const vectors = await captureX64Vectors({ name: "recursion-callbacks.exe", image: pe, symbols: loadModuleSymbols(path, pe) }, { captures: ["combine"], sample: true });
    expect(vectors.length).toBeGreaterThan(1);
    for (const v of vectors) {
      const thread = v.threads[0]!;
      expect(thread.etw).toHaveLength(1);
      expect(thread.etw![0]!.description).toMatch(/^profile sample/);
      const [trace] = etwStacks(v);
      expect(trace!.addresses).toEqual(thread.truth!.map((f) => f.pc));
      expect(trace!.addresses[0]).toBe(thread.registers["rip"]);
    }
    // The deepest combine is under the six tree_sum activations of the tree's deepest path (n0, n1, n3, n6, n8, n9).
    const deepest = vectors.reduce((a, b) => (b.threads[0]!.truth!.length > a.threads[0]!.truth!.length ? b : a));
    expect(deepest.threads[0]!.truth!.map((f) => f.function)).toEqual(["combine", ...Array<string>(6).fill("tree_sum"), "entry"]);
  });
});
