/**
 * Epilogs (x64-unwind.md §1.5, §1.6): version-1 detection by the instruction bytes at the PC
 * and emulation of the add or lea, the pops and the return; version-2 EPILOG codes. Each test
 * puts the epilog's bytes at the context frame's PC, lays out the stack the epilog would see
 * there, and checks every recovered register.
 */
import { describe, expect, it } from "vitest";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, CALLER, calleeRegisters, ImageBuilder, ra, recoveredOf, snapshot64, STACK_BASE, unwindStep } from "./fixture.js";

const NOPS = new Array<number>(0x60).fill(0x90);

/** UNWIND_INFO v1: push rbx (1); push rsi (2); sub rsp,28h (6). */
const PUSH_PUSH_ALLOC = [0x01, 0x06, 0x03, 0x00, 0x06, 0x42, 0x02, 0x60, 0x01, 0x30, 0x00, 0x00];

/**
 * An UNWIND_INFO v1 without codes (with FrameRegister `fr`): undoing its prolog restores nothing,
 * so whatever a test finds restored was found by epilog detection and emulation.
 */
const noCodes = (fr = 0, frameOffset16 = 0): number[] => [0x01, 0x00, 0x00, fr | (frameOffset16 << 4), 0x00, 0x00, 0x00, 0x00];

/** A function [0x2000, 0x2060) with `info`, nops, and `epilog` at 0x2040 (the context frame's PC). */
function withEpilog(epilog: readonly number[], info: readonly number[] = PUSH_PUSH_ALLOC): ImageBuilder {
  return new ImageBuilder().at(0x2000, NOPS).at(0x2040, epilog).fn(0x2000, 0x2060, info);
}

const AT_EPILOG = BASE + 0x2040n;

/** The stack of PUSH_PUSH_ALLOC's body: 0x28 bytes, rsi, rbx, the return address. */
function bodyStack(): ReturnType<StackBuilder["build"]> {
  return new StackBuilder(STACK_BASE, 8).zeros(0x28).u64(CALLER["rsi"]!).u64(CALLER["rbx"]!).u64(ra(0)).build();
}
const BODY_RESULT = { rip: ra(0), rsp: STACK_BASE + 0x40n, rsi: CALLER["rsi"], rbx: CALLER["rbx"] };

/** The stack seen after `add rsp`: rsi, rbx, the return address. */
function popStack(): ReturnType<StackBuilder["build"]> {
  return new StackBuilder(STACK_BASE + 0x28n, 8).u64(CALLER["rsi"]!).u64(CALLER["rbx"]!).u64(ra(0)).build();
}

function unwindAt(image: Uint8Array, stack: ReturnType<StackBuilder["build"]>, registers: Record<string, bigint>): Record<string, bigint> {
  return recoveredOf(unwindStep(snapshot64(image, stack, {}), calleeRegisters(registers)));
}

describe("version 1: epilog detection by the instruction bytes", () => {
  it("add rsp, imm8 (48 83 c4 ib); pops; ret", () => {
    const image = withEpilog([0x48, 0x83, 0xc4, 0x28, 0x5e, 0x5b, 0xc3]).build();
    expect(unwindAt(image, bodyStack(), { rip: AT_EPILOG, rsp: STACK_BASE })).toEqual(BODY_RESULT);
    // At the pops: the allocation is already given back.
    expect(unwindAt(image, popStack(), { rip: AT_EPILOG + 4n, rsp: STACK_BASE + 0x28n })).toEqual(BODY_RESULT);
    expect(unwindAt(image, new StackBuilder(STACK_BASE + 0x30n, 8).u64(CALLER["rbx"]!).u64(ra(0)).build(), { rip: AT_EPILOG + 5n, rsp: STACK_BASE + 0x30n })).toEqual({
      rip: ra(0),
      rsp: STACK_BASE + 0x40n,
      rbx: CALLER["rbx"],
    });
    expect(unwindAt(image, new StackBuilder(STACK_BASE + 0x38n, 8).u64(ra(0)).build(), { rip: AT_EPILOG + 6n, rsp: STACK_BASE + 0x38n })).toEqual({ rip: ra(0), rsp: STACK_BASE + 0x40n });
  });

  it("add rsp, imm8 is sign-extended: 48 83 c4 f8 is add rsp, -8", () => {
    // Not compiler output, but the epilog is emulated as the CPU would run it.
    const image = withEpilog([0x48, 0x83, 0xc4, 0xf8, 0xc3], noCodes()).build();
    const s = new StackBuilder(STACK_BASE, 8).u64(ra(1)).u64(0).build();
    expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE + 8n })).toEqual({ rip: ra(1), rsp: STACK_BASE + 8n });
  });

  it("add rsp, imm32 (48 81 c4 id); pops; ret", () => {
    const image = withEpilog([0x48, 0x81, 0xc4, 0x00, 0x01, 0x00, 0x00, 0x5e, 0xc3], noCodes()).build();
    const s = new StackBuilder(STACK_BASE, 8).zeros(0x100).u64(CALLER["rsi"]!).u64(ra(2)).build();
    expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE })).toEqual({ rip: ra(2), rsp: STACK_BASE + 0x110n, rsi: CALLER["rsi"] });
  });

  describe("lea rsp, [frame register + d]", () => {
    // MinGW's alloca frame (push rbp; push rbx; sub rsp,28h; lea rbp,[rsp+20h]), its codes left out.
    it("disp8: 48 8d 65 08 5b 5d c3 reads the frame register, then pops", () => {
      const image = withEpilog([0x48, 0x8d, 0x65, 0x08, 0x5b, 0x5d, 0xc3], noCodes(5, 2)).build();
      // RSP was lowered by alloca; rbp = E + 0x20 where E is the fixed frame.
      const s = new StackBuilder(STACK_BASE, 8).fill(8).mark("E").zeros(0x28).u64(CALLER["rbx"]!).u64(CALLER["rbp"]!).u64(ra(3)).build();
      const E = s.labels["E"]!;
      expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE, rbp: E + 0x20n })).toEqual({ rip: ra(3), rsp: E + 0x40n, rbx: CALLER["rbx"], rbp: CALLER["rbp"] });
    });

    it("disp32: 48 8d a5 80 00 00 00 5b 5d c3 (W1's epilog)", () => {
      const image = withEpilog([0x48, 0x8d, 0xa5, 0x80, 0x00, 0x00, 0x00, 0x5b, 0x5d, 0xc3], noCodes(5, 8)).build();
      const s = new StackBuilder(STACK_BASE, 8).fill(8).mark("E").zeros(0x100).u64(CALLER["rbx"]!).u64(CALLER["rbp"]!).u64(ra(4)).build();
      const E = s.labels["E"]!;
      expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE, rbp: E + 0x80n })).toEqual({ rip: ra(4), rsp: E + 0x118n, rbx: CALLER["rbx"], rbp: CALLER["rbp"] });
    });

    it("an R13 frame: 49 8d 65 10 41 5d c3", () => {
      // push r13; sub rsp,20h; lea r13,[rsp+10h]: FrameRegister r13, FrameOffset 1.
      const image = withEpilog([0x49, 0x8d, 0x65, 0x10, 0x41, 0x5d, 0xc3], noCodes(13, 1)).build();
      const s = new StackBuilder(STACK_BASE, 8).fill(2).mark("E").zeros(0x20).u64(CALLER["r13"]!).u64(ra(5)).build();
      const E = s.labels["E"]!;
      expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE, r13: E + 0x10n })).toEqual({ rip: ra(5), rsp: E + 0x30n, r13: CALLER["r13"] });
    });

    it("a lea through a register that is not the frame register is not an epilog", () => {
      // lea rsp,[rbx+8] in a function whose frame register is rbp: the (empty) prolog is undone instead.
      const image = withEpilog([0x48, 0x8d, 0x63, 0x08, 0x5b, 0x5d, 0xc3], noCodes(5, 2)).build();
      const s = new StackBuilder(STACK_BASE, 8).u64(ra(3)).build();
      expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE, rbp: STACK_BASE + 0x20n, rbx: STACK_BASE })).toEqual({ rip: ra(3), rsp: STACK_BASE + 8n });
    });
  });

  it("pops only, with REX pops of r12-r15 (41 5c ...)", () => {
    const image = withEpilog([0x41, 0x5d, 0x41, 0x5c, 0x5b, 0xc3], noCodes()).build();
    const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["r13"]!).u64(CALLER["r12"]!).u64(CALLER["rbx"]!).u64(ra(6)).build();
    expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE })).toEqual({ rip: ra(6), rsp: STACK_BASE + 32n, r13: CALLER["r13"], r12: CALLER["r12"], rbx: CALLER["rbx"] });
  });

  describe("terminators", () => {
    // At the pops (0x2044), after the add: undoing the prolog instead would give back 0x28 bytes twice.
    const epilogWith = (terminator: readonly number[]): Record<string, bigint> =>
      unwindAt(withEpilog([0x48, 0x83, 0xc4, 0x28, 0x5e, 0x5b, ...terminator]).build(), popStack(), { rip: AT_EPILOG + 4n, rsp: STACK_BASE + 0x28n });

    it("ret (c3), rep ret (f3 c3), bnd ret (f2 c3)", () => {
      expect(epilogWith([0xc3])).toEqual(BODY_RESULT);
      expect(epilogWith([0xf3, 0xc3])).toEqual(BODY_RESULT);
      expect(epilogWith([0xf2, 0xc3])).toEqual(BODY_RESULT);
    });

    it("ret imm16 (c2 10 00): emulated as a plain return, as Windows does", () => {
      expect(epilogWith([0xc2, 0x10, 0x00])).toEqual(BODY_RESULT);
    });

    it("a tail call: jmp rel32 / rel8 out of the function (W6: add, pop, jmp)", () => {
      // The jump is at 0x2046 (after add and two pops): e9 rel32 to 0x5000, eb rel8 to 0x2060 (End, outside).
      expect(epilogWith([0xe9, ...le32(0x5000 - 0x204b)])).toEqual(BODY_RESULT);
      expect(epilogWith([0xeb, 0x2060 - 0x2048])).toEqual(BODY_RESULT);
    });

    it("jmp qword ptr [rip+disp32] (ff 25, an import thunk's tail call)", () => {
      expect(epilogWith([0xff, 0x25, 0x00, 0x10, 0x00, 0x00])).toEqual(BODY_RESULT);
    });

    it("REX.W jmp r/m64 (... 5e 48 ff e0 = pop rsi; jmp rax): a tail call, at the pop and at the jmp", () => {
      const image = withEpilog([0x5e, 0x48, 0xff, 0xe0], [0x01, 0x01, 0x01, 0x00, 0x01, 0x60, 0x00, 0x00]).build();
      const s = new StackBuilder(STACK_BASE, 8).u64(CALLER["rsi"]!).u64(ra(7)).build();
      expect(unwindAt(image, s, { rip: AT_EPILOG, rsp: STACK_BASE, rax: BASE + 0x5000n })).toEqual({ rip: ra(7), rsp: STACK_BASE + 16n, rsi: CALLER["rsi"] });
      expect(unwindAt(image, s, { rip: AT_EPILOG + 1n, rsp: STACK_BASE + 8n, rax: BASE + 0x5000n })).toEqual({ rip: ra(7), rsp: STACK_BASE + 16n });
    });

    it("a jmp to the function's own start is a recursive tail call", () => {
      expect(epilogWith([0xe9, ...le32(0x2000 - 0x204b)])).toEqual(BODY_RESULT);
    });

    it("not epilogs: a jmp inside the function (W7), jmp rax without REX.W inside it, iretq, leave", () => {
      for (const terminator of [[0xeb, 0xf3], [0xff, 0xe0], [0x48, 0xcf], [0xc9, 0xc3]]) {
        const image = withEpilog([0x48, 0x83, 0xc4, 0x28, 0x5e, 0x5b, ...terminator]).build();
        // The body's stack: undoing the prolog is right; treating the bytes as an epilog would not be.
        const r = unwindAt(image, bodyStack(), { rip: AT_EPILOG + 4n, rsp: STACK_BASE, rax: BASE + 0x2010n });
        expect(r, terminator.map((b) => b.toString(16)).join(" ")).toEqual(BODY_RESULT);
      }
    });
  });
});

describe("version 2: EPILOG codes (x64-unwind.md §1.6, W3)", () => {
  // 02 06 05 00 | 03 16 | 0F 06 | 06 42 | 02 70 | 01 60 | 00 00: push rsi (1); push rdi (2); sub rsp,28h (6);
  // epilogs (3 bytes, from the first pop) at End − 0xf and at End.
  const W3 = [0x02, 0x06, 0x05, 0x00, 0x03, 0x16, 0x0f, 0x06, 0x06, 0x42, 0x02, 0x70, 0x01, 0x60, 0x00, 0x00];
  // [0x2000, 0x2030): the early epilog's add at 0x201d, its pops at 0x2021 (= End − 0xf); the last at 0x2029/0x202d.
  const code = [0x56, 0x57, 0x48, 0x83, 0xec, 0x28];
  const early = [0x48, 0x83, 0xc4, 0x28, 0x5f, 0x5e, 0xc3];
  const image = new ImageBuilder().at(0x2000, NOPS.slice(0, 0x30)).at(0x2000, code).at(0x201d, early).at(0x2029, early).fn(0x2000, 0x2030, W3).build();
  const stackFrom = (skip: number, values: bigint[]): ReturnType<StackBuilder["build"]> => {
    const b = new StackBuilder(STACK_BASE + BigInt(skip), 8);
    for (const v of values) b.u64(v);
    return b.build();
  };
  const at = (rva: number, rsp: bigint, stack: ReturnType<StackBuilder["build"]>): Record<string, bigint> => unwindAt(image, stack, { rip: BASE + BigInt(rva), rsp });
  const TOP = STACK_BASE + 0x40n;

  it("at the epilog's start: pop rdi, pop rsi, ret", () => {
    expect(at(0x2021, STACK_BASE + 0x28n, stackFrom(0x28, [CALLER["rdi"]!, CALLER["rsi"]!, ra(8)]))).toEqual({ rip: ra(8), rsp: TOP, rdi: CALLER["rdi"], rsi: CALLER["rsi"] });
  });

  it("one byte in: rdi is popped already", () => {
    expect(at(0x2022, STACK_BASE + 0x30n, stackFrom(0x30, [CALLER["rsi"]!, ra(8)]))).toEqual({ rip: ra(8), rsp: TOP, rsi: CALLER["rsi"] });
  });

  it("at its ret (offset 2): both pops are skipped", () => {
    expect(at(0x2023, STACK_BASE + 0x38n, stackFrom(0x38, [ra(8)]))).toEqual({ rip: ra(8), rsp: TOP });
  });

  it("the epilog that ends at EndAddress (header OpInfo bit 0)", () => {
    expect(at(0x202d, STACK_BASE + 0x28n, stackFrom(0x28, [CALLER["rdi"]!, CALLER["rsi"]!, ra(8)]))).toEqual({ rip: ra(8), rsp: TOP, rdi: CALLER["rdi"], rsi: CALLER["rsi"] });
  });

  it("the add rsp before the pops is body: the full prolog walk applies", () => {
    const s = stackFrom(0, [...new Array<bigint>(5).fill(0n), CALLER["rdi"]!, CALLER["rsi"]!, ra(8)]);
    expect(at(0x201d, STACK_BASE, s)).toEqual({ rip: ra(8), rsp: TOP, rdi: CALLER["rdi"], rsi: CALLER["rsi"] });
  });

  it("the instruction bytes are not looked at: nops where the epilog is listed still unwind as pops", () => {
    const blank = new ImageBuilder().at(0x2000, NOPS.slice(0, 0x30)).fn(0x2000, 0x2030, W3).build();
    const r = recoveredOf(unwindStep(snapshot64(blank, stackFrom(0x28, [CALLER["rdi"]!, CALLER["rsi"]!, ra(8)]), {}), calleeRegisters({ rip: BASE + 0x2021n, rsp: STACK_BASE + 0x28n })));
    expect(r).toEqual({ rip: ra(8), rsp: TOP, rdi: CALLER["rdi"], rsi: CALLER["rsi"] });
  });

  it("a v2 epilog of REX pops counts two bytes each (pop r13 at offset 0, pop r12 at 2, pop rbx at 4)", () => {
    // push rbx (1); push r12 (3); push r13 (5); epilog 41 5d 41 5c 5b c3 (6 bytes) at End.
    const info = [0x02, 0x05, 0x05, 0x00, 0x06, 0x16, 0x00, 0x06, 0x05, 0xd0, 0x03, 0xc0, 0x01, 0x30, 0x00, 0x00];
    const img = new ImageBuilder().at(0x2000, NOPS.slice(0, 0x20)).at(0x201a, [0x41, 0x5d, 0x41, 0x5c, 0x5b, 0xc3]).fn(0x2000, 0x2020, info).build();
    const top = STACK_BASE + 32n;
    const cases: [number, bigint[], Record<string, bigint>][] = [
      [0, [CALLER["r13"]!, CALLER["r12"]!, CALLER["rbx"]!, ra(9)], { r13: CALLER["r13"]!, r12: CALLER["r12"]!, rbx: CALLER["rbx"]! }],
      [2, [CALLER["r12"]!, CALLER["rbx"]!, ra(9)], { r12: CALLER["r12"]!, rbx: CALLER["rbx"]! }],
      [4, [CALLER["rbx"]!, ra(9)], { rbx: CALLER["rbx"]! }],
      [5, [ra(9)], {}],
    ];
    for (const [offset, values, restored] of cases) {
      const b = new StackBuilder(top - BigInt(8 * values.length), 8);
      for (const v of values) b.u64(v);
      const r = recoveredOf(unwindStep(snapshot64(img, b.build(), {}), calleeRegisters({ rip: BASE + 0x201an + BigInt(offset), rsp: top - BigInt(8 * values.length) })));
      expect(r, `offset ${offset}`).toEqual({ rip: ra(9), rsp: top, ...restored });
    }
  });
});

describe("version 2: an interrupt handler's epilog (pop; popfq; iretq)", () => {
  // [machine frame at 0]; pushfq (1, ALLOC_SMALL 8); push rbx (2). Epilog 5b 9d 48 cf (4 bytes) at End.
  const info = [0x02, 0x02, 0x05, 0x00, 0x04, 0x16, 0x00, 0x06, 0x02, 0x30, 0x01, 0x02, 0x00, 0x0a, 0x00, 0x00];
  const image = new ImageBuilder().at(0x2000, NOPS.slice(0, 0x20)).at(0x201c, [0x5b, 0x9d, 0x48, 0xcf]).fn(0x2000, 0x2020, info).build();
  const interrupted = BASE + 0x3005n;
  const machineFrame = [interrupted, 0x33n, 0x246n, 0x0020_0000n, 0x2bn];
  for (const [offset, below] of [[0, [CALLER["rbx"]!, 0x202n]], [1, [0x202n]], [2, []]] as const) {
    it(`at epilog offset ${offset}`, () => {
      const values = [...below, ...machineFrame];
      const b = new StackBuilder(STACK_BASE, 8);
      for (const v of values) b.u64(v);
      const r = unwindStep(snapshot64(image, b.build(), {}), calleeRegisters({ rip: BASE + 0x201cn + BigInt(offset), rsp: STACK_BASE }));
      expect(recoveredOf(r)).toEqual({ rip: interrupted, rsp: 0x0020_0000n, ...(offset === 0 ? { rbx: CALLER["rbx"] } : {}) });
      expect(r!.ok && r!.interrupted).toBe(true);
    });
  }
});

function le32(v: number): number[] {
  return [v & 0xff, (v >>> 8) & 0xff, (v >>> 16) & 0xff, (v >>> 24) & 0xff];
}
