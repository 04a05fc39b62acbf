/**
 * The x64 walkers as the walk loop uses them: the registry's strategy lists, whole walks with
 * their trust and FuncTableEntry, the x64 scanner and the call forms it recognises, and the
 * repairs of frames whose unwind data does not fit (a longjmp's stack switch).
 */
import { ruleText } from "../../../src/arch/rule-text.js";
import { describe, expect, it } from "vitest";
import { callBefore64 } from "../../../src/arch/x64/code.js";
import { x64Scan } from "../../../src/arch/x64/scan.js";
import { RegionMemory } from "../../../src/memory/region-memory.js";
import { strategiesFor } from "../../../src/walk/registry.js";
import { callSiteCheck, scanForReturn } from "../../../src/arch/scan.js";
import { X64_CHECKED_SCAN } from "../../../src/arch/x64/scan.js";
import type { FrameSite } from "../../../src/unwind/step.js";
import { UnwindCache } from "../../../src/unwind/cache.js";
import { runRule } from "../../support/rules.js";
import { walkThread } from "../../../src/walk/walk.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, CALLER, CLOBBERED, calleeRegisters, ImageBuilder, ra, snapshot64, STACK_BASE } from "./fixture.js";

const NOPS = new Array<number>(0x40).fill(0x90);

describe("registry", () => {
  it("x64 walkers: auto = unwind tables (the image's, then STACK CFI), then the leaf simulation and scanning on Windows, the checked RBP chain and scanning elsewhere", () => {
    const names = (w: "unwind" | "auto" | "frame-pointer" | "scan", os?: "linux"): string[] => strategiesFor("x64", w, os).map((s) => `${s.name}/${s.trust}`);
    expect(names("unwind")).toEqual(["unwind-info/unwind-info", "cfi/cfi", "scan/scan"]);
    expect(names("auto")).toEqual(["unwind-info/unwind-info", "cfi/cfi", "leaf/scan", "scan/scan"]);
    expect(names("auto", "linux")).toEqual(["unwind-info/unwind-info", "cfi/cfi", "checked-frame-pointer/frame-pointer", "scan/scan"]);
    expect(names("frame-pointer")).toEqual(["frame-pointer/frame-pointer"]);
    expect(names("scan")).toEqual(["leaf/scan", "scan/scan"]);
  });
});

describe("whole walks", () => {
  // f [0x2000, 0x2040): push rbx; sub rsp,20h, calls g at 0x2010 (e8 → returns to 0x2015).
  // g [0x2080, 0x20c0): push rsi, calls a leaf at 0x2090 (returns to 0x2095). The leaf has no entry.
  const image = new ImageBuilder()
    .at(0x2000, NOPS).at(0x2010, [0xe8, 0x6b, 0x00, 0x00, 0x00]).fn(0x2000, 0x2040, [0x01, 0x05, 0x02, 0x00, 0x05, 0x32, 0x01, 0x30])
    .at(0x2080, NOPS).at(0x2090, [0xe8, 0x6b, 0x00, 0x00, 0x00]).fn(0x2080, 0x20c0, [0x01, 0x01, 0x01, 0x00, 0x01, 0x60, 0x00, 0x00])
    .at(0x2100, NOPS)
    .build();
  const stack = new StackBuilder(STACK_BASE, 8)
    .u64(BASE + 0x2095n) // leaf's return address into g
    .u64(CALLER["rsi"]!).u64(BASE + 0x2015n) // g: rsi, return into f
    .zeros(0x20).u64(CALLER["rbx"]!).u64(0) // f: 0x20 bytes, rbx, return address 0: the end
    .build();
  const snap = snapshot64(image, stack, calleeRegisters({ rip: BASE + 0x2105n, rsp: STACK_BASE }));

  it("--walker unwind: leaf, g, f, then the end of the stack; each frame's entry and trust", () => {
    const walk = walkThread(snap, snap.threads[0]!, { walker: "unwind" });
    expect(walk.frames.map((f) => [f.addrPC, f.addrStack, f.trust])).toEqual([
      [BASE + 0x2105n, STACK_BASE, "context"],
      [BASE + 0x2095n, STACK_BASE + 8n, "unwind-info"],
      [BASE + 0x2015n, STACK_BASE + 0x18n, "unwind-info"],
    ]);
    expect(walk.stop.reason).toBe("end-of-stack");
    expect(walk.frames[0]!.funcTableEntry).toBeUndefined();
    expect(walk.frames[1]!.funcTableEntry).toEqual({ kind: "runtime-function", beginRva: 0x2080n, endRva: 0x20c0n, moduleBase: BASE });
    expect(walk.frames[2]!.funcTableEntry).toEqual({ kind: "runtime-function", beginRva: 0x2000n, endRva: 0x2040n, moduleBase: BASE });
    expect(ruleText(walk.frames[1]!.rule)).toBe("leaf (no RUNTIME_FUNCTION at rva 0x2105) rsp+0x8");
    expect(ruleText(walk.frames[2]!.rule)).toBe("unwind-info rva=0x2080 ops=[push rsi] rsp+0x10");
    expect(walk.frames[2]!.registers).toEqual({ rip: BASE + 0x2015n, rsp: STACK_BASE + 0x18n, rsi: CALLER["rsi"] });
    // Callee-saved registers not restored are carried over for the next unwind.
    expect(walk.frames[2]!.unwindRegisters?.["rbx"]).toBe(CLOBBERED["rbx"]);
  });

  it("--walker auto finds the same frames", () => {
    const walk = walkThread(snap, snap.threads[0]!, { walker: "auto" });
    expect(walk.frames.map((f) => f.addrPC)).toEqual([BASE + 0x2105n, BASE + 0x2095n, BASE + 0x2015n]);
  });

  it("a deep recursion walks with rules cached per return address", () => {
    // r [0x2000, 0x2040): push rbx; sub rsp,20h; calls itself at 0x2010 (returns to 0x2015).
    const img = new ImageBuilder().at(0x2000, NOPS).at(0x2010, [0xe8, 0xeb, 0xff, 0xff, 0xff]).fn(0x2000, 0x2040, [0x01, 0x05, 0x02, 0x00, 0x05, 0x32, 0x01, 0x30]).build();
    const b = new StackBuilder(STACK_BASE, 8);
    const depth = 1000;
    for (let i = 0; i < depth; i++) b.zeros(0x20).u64(BigInt(i)).u64(i === depth - 1 ? 0n : BASE + 0x2015n);
    const s = snapshot64(img, b.build(), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE }));
    const walk = walkThread(s, s.threads[0]!, { walker: "unwind" });
    expect(walk.frames.length).toBe(depth);
    expect(walk.frames[depth - 1]!.addrStack).toBe(STACK_BASE + BigInt(0x30 * (depth - 1)));
    expect(walk.frames[500]!.registers["rbx"]).toBe(499n);
    expect(walk.stop.reason).toBe("end-of-stack");
  });
});

describe("repairs when the unwind data does not fit the frame", () => {
  // guarded [0x2000, 0x2080): push rbp (1); sub rsp,30h (5); lea rbp,[rsp+20h] (0x0a); calls at 0x2040 (→ 0x2045).
  // bail_out [0x2100, 0x2110): push rbp (1); ...; jmp rax (ff e0) at 0x2108.
  const build = (): Uint8Array =>
    new ImageBuilder()
      .at(0x2000, NOPS).at(0x2040, [0xe8, 0xbb, 0x00, 0x00, 0x00]).fn(0x2000, 0x2080, [0x01, 0x0a, 0x03, 0x25, 0x0a, 0x03, 0x05, 0x52, 0x01, 0x50, 0x00, 0x00])
      .at(0x2100, [0x55, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0xff, 0xe0]).fn(0x2100, 0x2110, [0x01, 0x01, 0x01, 0x00, 0x01, 0x50, 0x00, 0x00])
      .build();
  // guarded's frame as the longjmp finds it: RSP = its fixed frame E, rbp reloaded with E (not E + 0x20).
  const stack = new StackBuilder(STACK_BASE, 8).mark("E").zeros(0x30).u64(CALLER["rbp"]!).u64(ra(0)).build();
  const E = stack.labels["E"]!;

  it("a frame register that would move RSP down belongs to another frame: RSP is taken as the establisher frame (trust scan)", () => {
    const snap = snapshot64(build(), stack, calleeRegisters({ rip: BASE + 0x2050n, rsp: E, rbp: E }));
    const walk = walkThread(snap, snap.threads[0]!, { walker: "unwind" });
    expect(walk.frames.map((f) => [f.addrPC, f.addrStack, f.trust])).toEqual([
      [BASE + 0x2050n, E, "context"],
      [ra(0), E + 0x40n, "scan"],
    ]);
    expect(ruleText(walk.frames[1]!.rule)).toContain("frame register ignored");
    expect(walk.frames[1]!.registers["rbp"]).toBe(CALLER["rbp"]);
  });

  it("the context frame at a register jump out of its function (a longjmp's jmp rax) is unwound as at the jump's target", () => {
    const snap = snapshot64(build(), stack, calleeRegisters({ rip: BASE + 0x2108n, rsp: E, rbp: E, rax: BASE + 0x2050n }));
    const walk = walkThread(snap, snap.threads[0]!, { walker: "unwind" });
    expect(walk.frames.map((f) => [f.addrPC, f.addrStack])).toEqual([
      [BASE + 0x2108n, E],
      [ra(0), E + 0x40n],
    ]);
    expect(ruleText(walk.frames[1]!.rule)).toMatch(/^jmp rax=0x140002050 leaves the function: as at 0x140002050, unwind-info rva=0x2000/);
  });

  it("a computed RIP that is not a return address is repaired by scanning from the caller's RSP (trust scan)", () => {
    // push rbx only, but the slot above holds garbage and the return address is one word higher.
    const img = new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2040, [0x01, 0x01, 0x01, 0x00, 0x01, 0x30, 0x00, 0x00]).build();
    const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["rbx"]!).u64(0x1234n).u64(ra(1)).build();
    const snap = snapshot64(img, s, calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    const walk = walkThread(snap, snap.threads[0]!, { walker: "unwind" });
    expect(walk.frames[1]!.addrPC).toBe(ra(1));
    expect(walk.frames[1]!.addrStack).toBe(STACK_BASE + 24n);
    expect(walk.frames[1]!.trust).toBe("scan");
    expect(ruleText(walk.frames[1]!.rule)).toContain("is not a return address");
  });
});

describe("the x64 scanner", () => {
  it("takes the first word from RSP whose value − 1 lies in a module (Breakpad's validation); the unwinder's repairs also want a call before it", () => {
    const image = new ImageBuilder().build();
    const s = new StackBuilder(STACK_BASE, 8).u64(0).u64(BASE + 0x1003n).u64(0x7fff_0000_0000n).u64(ra(3)).u64(ra(4)).build();
    const snap = snapshot64(image, s, {});
    const registers = calleeRegisters({ rip: BASE + 0x5000n, rsp: STACK_BASE, rbp: 0n });
    const site: FrameSite = { machine: "x64", index: 0, interrupted: false, registers, pc: registers["rip"]!, lookupPc: registers["rip"]!, modules: snap.modules, images: snap.memory, calleeParams: 0, cache: new UnwindCache() };
    const r = runRule(x64Scan.ruleFor(site)!, registers, snap.memory);
    expect(r.ok && [r.registers["rip"], r.registers["rsp"], r.recovered]).toEqual([BASE + 0x1003n, STACK_BASE + 16n, ["rip", "rsp"]]);
    const checked = scanForReturn(X64_CHECKED_SCAN, new UnwindCache(), snap.memory, { check: callSiteCheck(site), start: STACK_BASE, words: 40 });
    expect(checked).toEqual({ slot: STACK_BASE + 24n, value: ra(3) });
  });

  it("carries RBP over as Breakpad does: the saved RBP below the return address when it points above it, an RBP above the caller's RSP as it is", () => {
    const image = new ImageBuilder().build();
    const s = new StackBuilder(STACK_BASE, 8).u64(0).mark("saved").u64(STACK_BASE + 0x100n).u64(ra(1)).fill(40, 0).build();
    const snap = snapshot64(image, s, {});
    const run = (rbp: bigint, recovered?: readonly string[]) => {
      const registers = calleeRegisters({ rip: BASE + 0x5000n, rsp: STACK_BASE, rbp });
      const site: FrameSite = { machine: "x64", index: 1, interrupted: false, registers, pc: registers["rip"]!, lookupPc: registers["rip"]!, modules: snap.modules, images: snap.memory, calleeParams: 0, cache: new UnwindCache() };
      const r = runRule(x64Scan.ruleFor(site)!, registers, snap.memory, { recovered });
      return r.ok ? [r.registers["rbp"], r.recovered] : r.stop.detail;
    };
    expect(run(STACK_BASE + 8n)).toEqual([STACK_BASE + 0x100n, ["rip", "rsp", "rbp"]]);
    expect(run(STACK_BASE + 0x200n)).toEqual([STACK_BASE + 0x200n, ["rip", "rsp", "rbp"]]);
    expect(run(STACK_BASE + 0x10n)).toEqual([STACK_BASE + 0x10n, ["rip", "rsp"]]);
    // Not valid in the callee: never valid in the caller.
    expect(run(STACK_BASE + 0x200n, ["rip", "rsp"])).toEqual([STACK_BASE + 0x200n, ["rip", "rsp"]]);
  });

  it("recognises every call form: e8 rel32, and ff /2 with and without REX in each addressing form", () => {
    const forms: [string, number[]][] = [
      ["call rel32", [0xe8, 1, 2, 3, 4]],
      ["call rax", [0xff, 0xd0]],
      ["call r9", [0x41, 0xff, 0xd1]],
      ["call [rax]", [0xff, 0x10]],
      ["call [rip+disp32]", [0xff, 0x15, 1, 2, 3, 4]],
      ["call [rax+8]", [0xff, 0x50, 0x08]],
      ["call [rbp-0x60] (clang's *-96(%rbp))", [0xff, 0x55, 0xa0]],
      ["call [rax+disp32]", [0xff, 0x90, 1, 2, 3, 4]],
      ["call [r9+rax*8]", [0x41, 0xff, 0x14, 0xc1]],
      ["call [rsp+8]", [0xff, 0x54, 0x24, 0x08]],
      ["call [rsp+disp32]", [0xff, 0x94, 0x24, 1, 2, 3, 4]],
      ["call [rax*8+disp32]", [0xff, 0x14, 0xc5, 1, 2, 3, 4]],
      ["call [r12+disp8]", [0x41, 0xff, 0x54, 0x24, 0x10]],
    ];
    for (const [name, bytes] of forms) {
      const code = new Uint8Array(16).fill(0x90);
      code.set(bytes, 16 - bytes.length);
      const memory = new RegionMemory([{ base: 0x1000n, bytes: code }]);
      expect(callBefore64(memory, 0x1010n), name).toBe(true);
    }
    for (const [name, bytes] of [["nops", [0x90, 0x90]], ["jmp rax", [0xff, 0xe0]], ["push [rax]", [0xff, 0x30]], ["ret", [0xc3]]] as const) {
      const code = new Uint8Array(16).fill(0x90);
      code.set(bytes, 16 - bytes.length);
      expect(callBefore64(new RegionMemory([{ base: 0x1000n, bytes: code }]), 0x1010n), name).toBe(false);
    }
  });
});
