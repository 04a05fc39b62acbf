/**
 * The walk's cache (src/unwind/cache.ts) keys what it learns from images by the image memory as
 * well as by the module: one cache given to walks of two snapshots that share their module
 * objects but map different images must find each snapshot's own unwind data.
 */
import { describe, expect, it } from "vitest";
import { debugSection, SECTION_CHARACTERISTICS, writePeImage } from "../../emulator/image-writer.js";
import { parsePe } from "../../src/formats/pe.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { FRAME_FPO, type FpoData } from "../../src/model/fpo-data.js";
import type { Module, Snapshot } from "../../src/model/snapshot.js";
import { UnwindCache } from "../../src/unwind/cache.js";
import { walkThread } from "../../src/walk/walk.js";
import { BASE, calleeRegisters, CALLER, ImageBuilder, MODULE, ra, STACK_BASE } from "../arch/x64/fixture.js";
import { StackBuilder } from "../support/stack-builder.js";

const NOPS = new Array<number>(0x40).fill(0x90);

/** Two snapshots of one thread: the same module objects, each with its own image and stack. */
function twoImageSets(modules: Module[], a: { image: Uint8Array; stack: { base: bigint; bytes: Uint8Array } }, b: typeof a, base: bigint, registers: Record<string, bigint>, machine: "x86" | "x64"): [Snapshot, Snapshot] {
  const snapshot = (s: typeof a): Snapshot => ({
    machine,
    modules,
    memory: new RegionMemory([{ base, bytes: s.image }, s.stack]),
    threads: [{ id: 0, crashed: true, registers }],
  });
  return [snapshot(a), snapshot(b)];
}

describe("one cache, two image sets", () => {
  it("x64: each snapshot's RUNTIME_FUNCTIONs and UNWIND_INFOs, whichever was walked first", () => {
    // g at [0x2080, 0x20c0), the PC at 0x2090: in A its prolog is `push rbx`, in B `push rbx; sub rsp, 20h`.
    const imageA = new ImageBuilder().at(0x2080, NOPS).fn(0x2080, 0x20c0, [0x01, 0x01, 0x01, 0x00, 0x01, 0x30, 0x00, 0x00]).build().slice();
    const imageB = new ImageBuilder().at(0x2080, NOPS).fn(0x2080, 0x20c0, [0x01, 0x05, 0x02, 0x00, 0x05, 0x32, 0x01, 0x30]).build().slice();
    const stackA = new StackBuilder(STACK_BASE, 8).u64(CALLER["rbx"]!).u64(ra(1)).u64(0).build();
    const stackB = new StackBuilder(STACK_BASE, 8).zeros(0x20).u64(CALLER["rbx"]!).u64(ra(1)).u64(0).build();
    const modules = [{ ...MODULE }];
    const [a, b] = twoImageSets(modules, { image: imageA, stack: stackA }, { image: imageB, stack: stackB }, BASE, calleeRegisters({ rip: BASE + 0x2090n, rsp: STACK_BASE }), "x64");
    const cache = new UnwindCache();
    for (const [first, second] of [[a, b], [b, a]] as const) {
      for (const s of [first, second]) {
        const walk = walkThread(s, s.threads[0]!, { walker: "unwind", cache });
        const sp = s === a ? STACK_BASE + 0x10n : STACK_BASE + 0x30n;
        expect(walk.frames.slice(0, 2).map((f) => [f.addrPC, f.addrStack, f.trust, f.registers["rbx"]])).toEqual([
          [BASE + 0x2090n, STACK_BASE, "context", calleeRegisters({})["rbx"]],
          [ra(1), sp, "unwind-info", CALLER["rbx"]],
        ]);
      }
    }
  });

  it("x86: each snapshot's FPO_DATA from its own image's debug directory", () => {
    const base = 0x0040_0000n;
    const record = (cdwLocals: number): FpoData => ({ ulOffStart: 0x1000, cbProcSize: 0x20, cdwLocals, cdwParams: 0, cbProlog: 0, cbRegs: 0, fHasSEH: false, fUseBP: false, reserved: 0, cbFrame: FRAME_FPO });
    // f at 0x1000 (nops), its caller at 0x1100: `call f`, returning to 0x1105.
    const code = new Uint8Array(0x200).fill(0x90);
    code.set([0xe8, 0xfb, 0xfe, 0xff, 0xff], 0x100);
    const image = (cdwLocals: number): Uint8Array =>
      parsePe(
        writePeImage({
          machine: "x86",
          imageBase: base,
          entryRva: 0x1000,
          sections: [{ name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: code } }, debugSection({ fpo: [record(cdwLocals)] })],
        }).bytes,
      ).mapped();
    const ret = base + 0x1105n;
    const stack = 0x0012_f000n;
    // A: 8 bytes of locals below the return address; B: none.
    const stackA = new StackBuilder(stack).u32(0x1111_1111).u32(0x2222_2222).u32(ret).u32(0).build();
    const stackB = new StackBuilder(stack).u32(ret).u32(0).u32(0).u32(0).build();
    const modules: Module[] = [{ name: "f.exe", base, size: 0x10000n, symbols: [] }];
    const [a, b] = twoImageSets(modules, { image: image(2), stack: stackA }, { image: image(0), stack: stackB }, base, { eip: base + 0x1008n, esp: stack, ebp: 0x0012_ff00n }, "x86");
    const cache = new UnwindCache();
    for (const s of [a, b, a]) {
      const walk = walkThread(s, s.threads[0]!, { walker: "fpo", cache });
      expect(walk.frames[1]!.trust).toBe("fpo");
      expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([ret, stack + (s === a ? 12n : 4n)]);
    }
  });
});
