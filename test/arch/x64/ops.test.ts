/**
 * The x64 `unwind-info` strategy, one test per unwind op (x64-unwind.md §1.3). Each test lays out
 * a frame on a stack — the values the prolog saved, where, and the return address — puts the
 * function's UNWIND_INFO in a small PE32+ image (raw bytes, as the spec gives them), and unwinds
 * the frame once. The expected registers come from the layout ("rbx was pushed at slot X"), and
 * every recovered register is checked: nothing more, nothing less.
 */
import { stepText } from "../../support/rules.js";
import { describe, expect, it } from "vitest";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, CALLER, CLOBBERED, calleeRegisters, ImageBuilder, ra, recoveredOf, snapshot64, STACK_BASE, unwindStep } from "./fixture.js";

const NOPS = new Array<number>(0x40).fill(0x90);

/** A function at `rva` whose body is nops, with the given UNWIND_INFO bytes. */
function imageWith(rva: number, info: readonly number[], size = 0x40): ImageBuilder {
  return new ImageBuilder().at(rva, NOPS.slice(0, size)).fn(rva, rva + size, info);
}

describe("one unwind per op, every recovered register checked", () => {
  it("UWOP_PUSH_NONVOL: rbx and r12 (a REX push) come from their slots, RIP from above them", () => {
    // push rbx (ends at 1); push r12 (41 54, ends at 3). Stored in reverse prolog order.
    const image = imageWith(0x2000, [0x01, 0x03, 0x02, 0x00, 0x03, 0xc0, 0x01, 0x30]).build();
    const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["r12"]!).u64(CALLER["rbx"]!).u64(ra(0)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(0), rsp: STACK_BASE + 24n, rbx: CALLER["rbx"], r12: CALLER["r12"] });
    // The callee-saved registers it did not restore are carried over unchanged.
    expect(r!.ok && r!.registers["rsi"]).toBe(CLOBBERED["rsi"]);
  });

  it("UWOP_ALLOC_LARGE, 2-slot form: the next slot × 8 (0x9c8 → 0x4e40)", () => {
    // W2's prolog: push rsi (1); mov eax,4e40h; call __chkstk; sub rsp,rax (ends at 0x0e).
    const image = imageWith(0x2000, [0x01, 0x0e, 0x03, 0x00, 0x0e, 0x01, 0xc8, 0x09, 0x01, 0x60, 0x00, 0x00]).build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x4e40).u64(CALLER["rsi"]!).u64(ra(1)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(1), rsp: STACK_BASE + 0x4e40n + 16n, rsi: CALLER["rsi"] });
  });

  it("UWOP_ALLOC_LARGE, 3-slot form: the next two slots as an unscaled u32, for every non-zero OpInfo", () => {
    for (const opInfo of [1, 2, 15]) {
      // sub rsp, 0x80008 (ends at 7): 0x80008 = low 0x0008, high 0x0008.
      const image = imageWith(0x2000, [0x01, 0x07, 0x03, 0x00, 0x07, 0x01 | (opInfo << 4), 0x08, 0x00, 0x08, 0x00, 0x00, 0x00]).build();
      const s = new StackBuilder(STACK_BASE, 8).zeros(0x80008).u64(ra(2)).build();
      const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
      expect(recoveredOf(r), `OpInfo ${opInfo}`).toEqual({ rip: ra(2), rsp: STACK_BASE + 0x80008n + 8n });
    }
  });

  it("UWOP_ALLOC_SMALL: OpInfo·8 + 8, from 8 (OpInfo 0) to 128 (OpInfo 15)", () => {
    for (const [opInfo, size] of [[0, 8], [4, 40], [15, 128]] as const) {
      const image = imageWith(0x2000, [0x01, 0x04, 0x01, 0x00, 0x04, 0x02 | (opInfo << 4), 0x00, 0x00]).build();
      const s = new StackBuilder(STACK_BASE, 8).zeros(size).u64(ra(3)).build();
      const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
      expect(recoveredOf(r), `size ${size}`).toEqual({ rip: ra(3), rsp: STACK_BASE + BigInt(size) + 8n });
    }
  });

  it("UWOP_SET_FPREG: RSP = frame register − 16·FrameOffset, whatever alloca did to RSP", () => {
    // push rbp (1); sub rsp,30h (5); lea rbp,[rsp+20h] (0x0a): FrameRegister rbp, FrameOffset 2 (0x20).
    const image = imageWith(0x2000, [0x01, 0x0a, 0x03, 0x25, 0x0a, 0x03, 0x05, 0x52, 0x01, 0x50, 0x00, 0x00]).build();
    // The body did `sub rsp, 0x40` (alloca) below the fixed frame E.
    const s = new StackBuilder(STACK_BASE, 8).fill(8).mark("E").fill(6).u64(CALLER["rbp"]!).u64(ra(4)).build();
    const E = s.labels["E"]!;
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE, rbp: E + 0x20n }));
    expect(recoveredOf(r)).toEqual({ rip: ra(4), rsp: E + 0x30n + 16n, rbp: CALLER["rbp"] });
  });

  it("UWOP_SAVE_NONVOL: the offset (× 8) is from the establisher frame, not the live RSP (W1, after alloca)", () => {
    // W1: push rbp (1); push rbx (2); sub rsp,100h (9); lea rbp,[rsp+80h] (0x11); mov [rsp+20h],rsi (0x16).
    // Codes: 16 SAVE_NONVOL rsi 0x20 (slot 4); 11 SET_FPREG; 09 ALLOC_LARGE 0x100 (slot 0x20); 02 PUSH rbx; 01 PUSH rbp.
    const image = imageWith(0x2000, [0x01, 0x16, 0x07, 0x85, 0x16, 0x64, 0x04, 0x00, 0x11, 0x03, 0x09, 0x01, 0x20, 0x00, 0x02, 0x30, 0x01, 0x50]).build();
    // alloca of 0x40 below E; [RSP + 0x20] holds a decoy, [E + 0x20] the saved rsi.
    const s = new StackBuilder(STACK_BASE, 8).fill(4).u64(0xdec0_dec0n).fill(3).mark("E").fill(4).u64(CALLER["rsi"]!).fill(27).u64(CALLER["rbx"]!).u64(CALLER["rbp"]!).u64(ra(5)).build();
    const E = s.labels["E"]!;
    expect(E - STACK_BASE).toBe(0x40n);
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2030n, rsp: STACK_BASE, rbp: E + 0x80n }));
    expect(recoveredOf(r)).toEqual({ rip: ra(5), rsp: E + 0x118n, rsi: CALLER["rsi"], rbx: CALLER["rbx"], rbp: CALLER["rbp"] });
  });

  it("UWOP_SAVE_NONVOL_FAR: an unscaled u32 offset (0x80010), beside a near one scaled by 8 (0xffff → 0x7fff8)", () => {
    // push rbx (1); sub rsp,80020h (8); mov [rsp+7fff8h],rdi (0x10); mov [rsp+80010h],rsi (0x18).
    const image = imageWith(0x2000, [
      0x01, 0x18, 0x09, 0x00,
      0x18, 0x65, 0x10, 0x00, 0x08, 0x00, // SAVE_NONVOL_FAR rsi 0x00080010
      0x10, 0x74, 0xff, 0xff, //             SAVE_NONVOL rdi 0xffff × 8
      0x08, 0x11, 0x20, 0x00, 0x08, 0x00, // ALLOC_LARGE 0x80020 (32-bit form)
      0x01, 0x30, 0x00, 0x00, //             PUSH_NONVOL rbx, pad
    ]).build();
    const b = new StackBuilder(STACK_BASE, 8).zeros(0x7fff8).u64(CALLER["rdi"]!).u64(0).u64(0).u64(CALLER["rsi"]!).u64(0);
    const s = b.u64(CALLER["rbx"]!).u64(ra(6)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(6), rsp: STACK_BASE + 0x80020n + 16n, rsi: CALLER["rsi"], rdi: CALLER["rdi"], rbx: CALLER["rbx"] });
  });

  it("UWOP_SAVE_XMM128: the offset × 16, both halves of the register", () => {
    // sub rsp,48h (4); movaps [rsp+20h],xmm6 (9); movaps [rsp+30h],xmm7 (0x0e).
    const image = imageWith(0x2000, [0x01, 0x0e, 0x05, 0x00, 0x0e, 0x78, 0x03, 0x00, 0x09, 0x68, 0x02, 0x00, 0x04, 0x82]).build();
    const s = new StackBuilder(STACK_BASE, 8).fill(4).u64(0x6666_0000_0000_0001n).u64(0x6666_0000_0000_0002n).u64(0x7777_0000_0000_0001n).u64(0x7777_0000_0000_0002n).fill(1).u64(ra(7)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({
      rip: ra(7),
      rsp: STACK_BASE + 0x50n,
      "xmm6.low": 0x6666_0000_0000_0001n,
      "xmm6.high": 0x6666_0000_0000_0002n,
      "xmm7.low": 0x7777_0000_0000_0001n,
      "xmm7.high": 0x7777_0000_0000_0002n,
    });
  });

  it("UWOP_SAVE_XMM128_FAR: an unscaled u32 offset (0x100010), beside a near one scaled by 16 (0xffff → 0xffff0)", () => {
    // sub rsp,100028h (7); movaps [rsp+0ffff0h],xmm8 (0x10); movaps [rsp+100010h],xmm7 (0x18).
    const image = imageWith(0x2000, [
      0x01, 0x18, 0x08, 0x00,
      0x18, 0x79, 0x10, 0x00, 0x10, 0x00, // SAVE_XMM128_FAR xmm7 0x00100010
      0x10, 0x88, 0xff, 0xff, //             SAVE_XMM128 xmm8 0xffff × 16
      0x07, 0x11, 0x28, 0x00, 0x10, 0x00, // ALLOC_LARGE 0x100028
      0x00, 0x00,
    ]).build();
    const b = new StackBuilder(STACK_BASE, 8).zeros(0xffff0).u64(0x8888n).u64(0x8889n).fill(2).u64(0x7777n).u64(0x7778n).fill(1);
    const s = b.u64(ra(8)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2020n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(8), rsp: STACK_BASE + 0x100028n + 8n, "xmm7.low": 0x7777n, "xmm7.high": 0x7778n, "xmm8.low": 0x8888n, "xmm8.high": 0x8889n });
  });

  it("UWOP_PUSH_MACHFRAME without error code: RIP = [RSP], RSP = [RSP+24], no return address popped; the next PC is an interrupted one", () => {
    // [machine frame at 0]; push rbp (1); sub rsp,20h (5).
    const image = imageWith(0x2000, [0x01, 0x05, 0x03, 0x00, 0x05, 0x32, 0x01, 0x50, 0x00, 0x0a, 0x00, 0x00]).build();
    const interrupted = BASE + 0x3005n; // not after a call: an interrupted instruction
    const s = new StackBuilder(STACK_BASE, 8).fill(4).u64(CALLER["rbp"]!).u64(interrupted).u64(0x33).u64(0x246).u64(0x0020_0000n).u64(0x2b).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: interrupted, rsp: 0x0020_0000n, rbp: CALLER["rbp"] });
    expect(r!.ok && r!.interrupted).toBe(true);
    expect(stepText(r)).toBe("unwind-info rva=0x2000 ops=[machframe; push rbp; alloc 0x20] [rsp+0x40]: rip@[0x100028]");
  });

  it("UWOP_PUSH_MACHFRAME with error code (W5): rbp = [X+0x20], RIP = [X+0x30], RSP = [X+0x48]", () => {
    const image = imageWith(0x2000, [0x01, 0x05, 0x03, 0x00, 0x05, 0x32, 0x01, 0x50, 0x00, 0x1a, 0x00, 0x00]).build();
    const interrupted = BASE + 0x3005n;
    const s = new StackBuilder(STACK_BASE, 8).fill(4).u64(CALLER["rbp"]!).u64(6).u64(interrupted).u64(0x33).u64(0x246).u64(0x0020_0000n).u64(0x2b).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: interrupted, rsp: 0x0020_0000n, rbp: CALLER["rbp"] });
    expect(r!.ok && r!.interrupted).toBe(true);
  });

  it("after a machine frame the PC is unwound like the context frame: at a function's first byte nothing has run", () => {
    // f at 0x3000 (push rbx at 1); the code before it has its own unwind data (sub rsp,28h).
    const image = new ImageBuilder()
      .at(0x2f00, NOPS).fn(0x2f00, 0x3000, [0x01, 0x04, 0x01, 0x00, 0x04, 0x42, 0x00, 0x00])
      .at(0x3000, [0x53, ...NOPS]).fn(0x3000, 0x3040, [0x01, 0x01, 0x01, 0x00, 0x01, 0x30, 0x00, 0x00])
      .build();
    const s = new StackBuilder(STACK_BASE, 8).u64(ra(9)).build();
    const registers = calleeRegisters({ rip: BASE + 0x3000n, rsp: STACK_BASE });
    const interruptedFrame = unwindStep(snapshot64(image, s, {}), registers, { index: 1, interrupted: true });
    expect(recoveredOf(interruptedFrame)).toEqual({ rip: ra(9), rsp: STACK_BASE + 8n });
    // As a return address the same PC would belong to the function before it.
    const returned = unwindStep(snapshot64(image, new StackBuilder(STACK_BASE, 8).zeros(0x28).u64(ra(9)).build(), {}), registers, { index: 1 });
    expect(recoveredOf(returned)).toEqual({ rip: ra(9), rsp: STACK_BASE + 0x30n });
  });

  it("the rule reads as the prolog it undoes and the caller's RSP", () => {
    // push rbp (1); sub rsp,28h (5).
    const image = imageWith(0x2000, [0x01, 0x05, 0x02, 0x00, 0x05, 0x42, 0x01, 0x50]).build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x28).u64(CALLER["rbp"]!).u64(ra(11)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    expect(stepText(r)).toBe("unwind-info rva=0x2000 ops=[push rbp; alloc 0x28] rsp+0x38");
    const partial = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2001n, rsp: STACK_BASE + 0x28n }));
    expect(stepText(partial)).toBe("unwind-info rva=0x2000 prolog+0x1 ops=[push rbp] rsp+0x10");
  });

  it("UWOP_EPILOG codes are skipped by the prolog walk (2 slots each)", () => {
    // The v2 info of x64-unwind.md §1.6; the PC is in the body.
    const image = new ImageBuilder().at(0x2000, NOPS).fn(0x2000, 0x2030, [0x02, 0x06, 0x05, 0x00, 0x03, 0x16, 0x0f, 0x06, 0x06, 0x42, 0x02, 0x70, 0x01, 0x60, 0x00, 0x00]).build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x28).u64(CALLER["rdi"]!).u64(CALLER["rsi"]!).u64(ra(10)).build();
    const r = unwindStep(snapshot64(image, s, {}), calleeRegisters({ rip: BASE + 0x2010n, rsp: STACK_BASE }));
    expect(recoveredOf(r)).toEqual({ rip: ra(10), rsp: STACK_BASE + 0x40n, rdi: CALLER["rdi"], rsi: CALLER["rsi"] });
  });
});
