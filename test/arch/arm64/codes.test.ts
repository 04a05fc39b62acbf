/**
 * The ARM64 `unwind-info` strategy, one test per unwind code (arm64.md §1.4). Each test lays out
 * a frame on a stack — the values the prolog saved, where — puts the function's `.xdata` (the
 * code bytes as the spec gives them) in a small ARM64 image, and unwinds the frame once from the
 * body, where every code runs. The expected registers come from the layout, and every recovered
 * register is checked: nothing more, nothing less.
 */
import { describe, expect, it } from "vitest";
import { StackBuilder } from "../../support/stack-builder.js";
import { stepText } from "../../support/rules.js";
import { ARM64_CONTEXT_SIZE, CONTEXT_ARM64_FULL, CONTEXT_UNWOUND_TO_CALL, encodeContext } from "../../../src/model/context.js";
import { decodeCode } from "../../../src/formats/unwind-data/arm64-codes.js";
import { BASE, CALLER, CLOBBERED, calleeRegisters, ImageBuilder, ra, recoveredOf, snapshotArm64, STACK_BASE, stopOf, unwindStep, xdata } from "./fixture.js";

const FN = 0x2000;
/** The body: past any prolog these tests describe. */
const BODY = BASE + BigInt(FN + 4 * 24);

/** Unwinds, from the body, a function whose codes are `codes` (then `end`), with `stack` at STACK_BASE. */
function run(codes: readonly number[], stack: StackBuilder, set: Record<string, bigint> = {}, extra: { base: bigint; bytes: Uint8Array }[] = []) {
  const image = new ImageBuilder()
    .code(FN, 32)
    .fn(FN, xdata({ length: 32, codes: [...codes, 0xe4] }))
    .build();
  return unwindStep(snapshotArm64(image, stack.build(), {}, extra), calleeRegisters({ pc: BODY, sp: STACK_BASE, ...set }));
}

const stack = (): StackBuilder => new StackBuilder(STACK_BASE, 8);

describe("allocations", () => {
  it("alloc_s (000xxxxx): sp += 16·x, from 0 to 496; pc = lr", () => {
    for (const [x, size] of [[0, 0], [2, 32], [31, 496]] as const) {
      const r = run([x], stack().zeros(size + 16), { lr: ra(0) });
      expect(recoveredOf(r), `alloc_s ${size}`).toEqual({ pc: ra(0), sp: STACK_BASE + BigInt(size) });
    }
  });

  it("alloc_m (11000xxx xxxxxxxx): an 11-bit count of 16 bytes, 8000 and the largest, 32752", () => {
    for (const [bytes, size] of [[[0xc1, 0xf4], 8000], [[0xc7, 0xff], 32752]] as const) {
      const r = run(bytes, stack().zeros(size), { lr: ra(1) });
      expect(recoveredOf(r), `alloc_m ${size}`).toEqual({ pc: ra(1), sp: STACK_BASE + BigInt(size) });
    }
  });

  it("alloc_l (11100000 + 24 bits): 400000 bytes", () => {
    const r = run([0xe0, 0x00, 0x61, 0xa8], stack().zeros(400000), { lr: ra(2) });
    expect(recoveredOf(r)).toEqual({ pc: ra(2), sp: STACK_BASE + 400000n });
  });
});

describe("integer saves", () => {
  it("save_r19r20_x (001zzzzz): x19, x20 from [sp], then sp += 8·Z (not Z + 1), up to 248", () => {
    for (const z of [2, 30]) {
      const r = run([0x20 | z], stack().u64(CALLER["x19"]!).u64(CALLER["x20"]!).zeros(8 * z), { lr: ra(3) });
      expect(recoveredOf(r), `Z ${z}`).toEqual({ pc: ra(3), sp: STACK_BASE + BigInt(8 * z), x19: CALLER["x19"], x20: CALLER["x20"] });
    }
    // Z = 31: 248 bytes, the largest (an sp that is then only 8-aligned is decoded, not run).
    expect(decodeCode(Uint8Array.of(0x3f), 0).code).toMatchObject({ op: "save", name: "save_r19r20_x", first: 19, count: 2, offset: 248, writeback: true });
  });

  it("save_fplr (01zzzzzz): fp, lr from [sp + 8·Z]; the caller's pc is the lr restored", () => {
    // save_fplr(16) then alloc_s(32), in the order the codes run.
    const s = stack().zeros(16).u64(CALLER["fp"]!).u64(ra(4));
    const r = run([0x42, 0x02], s);
    expect(recoveredOf(r)).toEqual({ pc: ra(4), sp: STACK_BASE + 32n, fp: CALLER["fp"], lr: ra(4) });
  });

  it("save_fplr_x (10zzzzzz): fp, lr from [sp], then sp += 8·(Z + 1), up to 512", () => {
    for (const z of [1, 63]) {
      const r = run([0x80 | z], stack().u64(CALLER["fp"]!).u64(ra(5)).zeros(8 * (z + 1) - 16));
      expect(recoveredOf(r), `Z ${z}`).toEqual({ pc: ra(5), sp: STACK_BASE + BigInt(8 * (z + 1)), fp: CALLER["fp"], lr: ra(5) });
    }
  });

  it("save_regp (110010xx xxzzzzzz): x(19+X), x(20+X) from [sp + 8·Z]; X = 10 is the fp, lr pair", () => {
    const r = run([0xc8, 0x82, 0x04], stack().zeros(16).u64(CALLER["x21"]!).u64(CALLER["x22"]!).zeros(32), { lr: ra(6) });
    expect(recoveredOf(r)).toEqual({ pc: ra(6), sp: STACK_BASE + 64n, x21: CALLER["x21"], x22: CALLER["x22"] });
    // X = 10 (0b1010): byte 0 takes X's top two bits, byte 1 its low two.
    const pair = run([0xca, 0x81, 0x01], stack().zeros(8).u64(CALLER["fp"]!).u64(ra(7)));
    expect(recoveredOf(pair)).toEqual({ pc: ra(7), sp: STACK_BASE + 16n, fp: CALLER["fp"], lr: ra(7) });
  });

  it("save_regp_x (110011xx xxzzzzzz): the pair from [sp], then sp += 8·(Z + 1)", () => {
    const r = run([0xcc, 0x03], stack().u64(CALLER["x19"]!).u64(CALLER["x20"]!).zeros(16), { lr: ra(8) });
    expect(recoveredOf(r)).toEqual({ pc: ra(8), sp: STACK_BASE + 32n, x19: CALLER["x19"], x20: CALLER["x20"] });
  });

  it("save_reg (110100xx xxzzzzzz): x(19+X) from [sp + 8·Z]; X = 11 is lr (clang's `str x30, [sp, #64]`)", () => {
    // save_reg(lr, 64), alloc_s(80): clang-14's non-leaf with locals (arm64.md Part 6).
    const r = run([0xd2, 0xc8, 0x05], stack().zeros(64).u64(ra(9)).zeros(8));
    expect(recoveredOf(r)).toEqual({ pc: ra(9), sp: STACK_BASE + 80n, lr: ra(9) });
    const x28 = run([0xd2, 0x41, 0x01], stack().zeros(8).u64(CALLER["x28"]!), { lr: ra(10) });
    expect(recoveredOf(x28)).toEqual({ pc: ra(10), sp: STACK_BASE + 16n, x28: CALLER["x28"] });
  });

  it("save_reg_x (1101010x xxxzzzzz): x(19+X) from [sp], then sp += 8·(Z + 1); `D5 61` is lr with 16 (clang's noreturn epilog)", () => {
    const r = run([0xd5, 0x61], stack().u64(ra(11)).zeros(8));
    expect(recoveredOf(r)).toEqual({ pc: ra(11), sp: STACK_BASE + 16n, lr: ra(11) });
    const big = run([0xd4, 0x3f], stack().u64(CALLER["x20"]!).zeros(248), { lr: ra(12) });
    expect(recoveredOf(big)).toEqual({ pc: ra(12), sp: STACK_BASE + 256n, x20: CALLER["x20"] });
  });

  it("save_lrpair (1101011x xxzzzzzz): x(19+2X) and lr from [sp + 8·Z]", () => {
    // x23 (X = 2) and lr at sp + 32, then alloc_s(48).
    const r = run([0xd6, 0x84, 0x03], stack().zeros(32).u64(CALLER["x23"]!).u64(ra(13)));
    expect(recoveredOf(r)).toEqual({ pc: ra(13), sp: STACK_BASE + 48n, x23: CALLER["x23"], lr: ra(13) });
  });
});

describe("floating-point saves (the low 64 bits of v8-v15)", () => {
  it("save_fregp (1101100x xxzzzzzz): d(8+X), d(9+X) from [sp + 8·Z]", () => {
    const r = run([0xd8, 0x83, 0x04], stack().zeros(24).u64(CALLER["d10"]!).u64(CALLER["d11"]!).zeros(24), { lr: ra(14) });
    expect(recoveredOf(r)).toEqual({ pc: ra(14), sp: STACK_BASE + 64n, d10: CALLER["d10"], d11: CALLER["d11"] });
  });

  it("save_fregp_x (1101101x xxzzzzzz): the pair from [sp], then sp += 8·(Z + 1)", () => {
    const r = run([0xdb, 0x81], stack().u64(CALLER["d14"]!).u64(CALLER["d15"]!), { lr: ra(15) });
    expect(recoveredOf(r)).toEqual({ pc: ra(15), sp: STACK_BASE + 16n, d14: CALLER["d14"], d15: CALLER["d15"] });
  });

  it("save_freg (1101110x xxzzzzzz): d(8+X) from [sp + 8·Z] (clang's `str d12, [sp, #40]`)", () => {
    const r = run([0xdd, 0x05, 0x03], stack().zeros(40).u64(CALLER["d12"]!), { lr: ra(16) });
    expect(recoveredOf(r)).toEqual({ pc: ra(16), sp: STACK_BASE + 48n, d12: CALLER["d12"] });
  });

  it("save_freg_x (11011110 xxxzzzzz): d(8+X) from [sp], then sp += 8·(Z + 1), up to 256", () => {
    const r = run([0xde, 0xff], stack().u64(CALLER["d15"]!).zeros(248), { lr: ra(17) });
    expect(recoveredOf(r)).toEqual({ pc: ra(17), sp: STACK_BASE + 256n, d15: CALLER["d15"] });
  });
});

describe("save_any_reg (11100111 0pxrrrrr ffoooooo)", () => {
  it("an X register alone, at o·8", () => {
    const r = run([0xe7, 0x13, 0x02, 0x02], stack().zeros(16).u64(CALLER["x19"]!).zeros(8), { lr: ra(18) });
    expect(recoveredOf(r)).toEqual({ pc: ra(18), sp: STACK_BASE + 32n, x19: CALLER["x19"] });
  });

  it("a D pair, at o·16", () => {
    const r = run([0xe7, 0x48, 0x41, 0x02], stack().zeros(16).u64(CALLER["d8"]!).u64(CALLER["d9"]!), { lr: ra(19) });
    expect(recoveredOf(r)).toEqual({ pc: ra(19), sp: STACK_BASE + 32n, d8: CALLER["d8"], d9: CALLER["d9"] });
  });

  it("a Q register pre-indexed: all 128 bits from [sp], then sp += (o + 1)·16", () => {
    const r = run([0xe7, 0x2a, 0x80], stack().u64(0x1111n).u64(0x2222n), { lr: ra(20) });
    expect(recoveredOf(r)).toEqual({ pc: ra(20), sp: STACK_BASE + 16n, d10: 0x1111n, "v10.high": 0x2222n });
  });

  it("bit 7 of the second byte set, or an SVE register (ff = 11), is rejected", () => {
    expect(stopOf(run([0xe7, 0x93, 0x02], stack().zeros(32)))).toContain("bit 7");
    expect(stopOf(run([0xe7, 0x08, 0xc0], stack().zeros(32)))).toContain("SVE");
  });
});

describe("the frame pointer", () => {
  it("set_fp (11100001): sp = fp, whatever alloca did to sp", () => {
    const fp = STACK_BASE + 0x40n;
    // set_fp; save_fplr_x(16): `stp x29, lr, [sp, #-16]!; mov x29, sp`, the record at fp.
    const s = stack().zeros(0x40).u64(CALLER["fp"]!).u64(ra(21));
    const r = run([0xe1, 0x81], s, { fp });
    expect(recoveredOf(r)).toEqual({ pc: ra(21), sp: fp + 16n, fp: CALLER["fp"], lr: ra(21) });
  });

  it("add_fp (11100010 xxxxxxxx): sp = fp − 8·x (scaled by 8, not 16)", () => {
    // `sub sp, sp, #48; stp x29, x30, [sp, #32]; add x29, sp, #32`: the record at fp = sp + 32.
    const fp = STACK_BASE + 0x60n;
    const s = stack().zeros(0x60 - 32).zeros(32).u64(CALLER["fp"]!).u64(ra(22));
    // add_fp(32); save_fplr(32); alloc_s(48).
    const r = run([0xe2, 0x04, 0x44, 0x03], s, { fp });
    expect(recoveredOf(r)).toEqual({ pc: ra(22), sp: fp - 32n + 48n, fp: CALLER["fp"], lr: ra(22) });
  });
});

describe("sequence codes", () => {
  it("nop (11100011): no effect (homing stores, `mov x15`, `bl __chkstk`)", () => {
    const r = run([0xe3, 0xe3, 0x02], stack().zeros(32), { lr: ra(23) });
    expect(recoveredOf(r)).toEqual({ pc: ra(23), sp: STACK_BASE + 32n });
  });

  it("end (11100100): nothing after it runs", () => {
    const r = run([0x01, 0xe4, 0x1f], stack().zeros(16), { lr: ra(24) });
    expect(recoveredOf(r)).toEqual({ pc: ra(24), sp: STACK_BASE + 16n });
  });

  it("end_c (11100101): the region's codes end, and the parent's phantom prolog runs on from the body", () => {
    // save_regp(x21, x22, 16) end_c save_fplr_x(32) end: a shrink-wrap region (arm64.md §1.11).
    const s = stack().u64(CALLER["fp"]!).u64(ra(25)).u64(CALLER["x21"]!).u64(CALLER["x22"]!);
    const r = run([0xc8, 0x82, 0xe5, 0x83], s);
    expect(recoveredOf(r)).toEqual({ pc: ra(25), sp: STACK_BASE + 32n, fp: CALLER["fp"], lr: ra(25), x21: CALLER["x21"], x22: CALLER["x22"] });
  });

  it("save_next (11100110): each one extends the next pair code by two registers (clang's 10-register prolog)", () => {
    // 4C E6 E6 E6 E6 C8 02 07: save_fplr(96); 4×save_next + save_regp(x19, 16) → x19…x28; alloc_s(112).
    const s = stack().zeros(16);
    for (let i = 0; i < 10; i++) s.u64(CALLER[`x${19 + i}`]!);
    s.u64(CALLER["fp"]!).u64(ra(26));
    const r = run([0x4c, 0xe6, 0xe6, 0xe6, 0xe6, 0xc8, 0x02, 0x07], s);
    const xs = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`x${19 + i}`, CALLER[`x${19 + i}`]]));
    expect(recoveredOf(r)).toEqual({ pc: ra(26), sp: STACK_BASE + 112n, fp: CALLER["fp"], lr: ra(26), ...xs });
  });

  it("save_next before a code that restores no pair is an invalid sequence", () => {
    expect(stopOf(run([0xe6, 0x02], stack().zeros(32), { lr: ra(0) }))).toContain("save_next is followed by alloc");
  });

  it("pac_sign_lr (11111100): the return address in lr is stripped of its pointer authentication code", () => {
    // pacibsp's signature in bits 48-54 and 56-63 of a user address (bit 55 clear).
    const signed = ra(27) | 0x7f12_0000_0000_0000n;
    // Stored nearest the body first: save_fplr_x(16) undoes `stp x29, lr, [sp, #-16]!`, then pac_sign_lr `pacibsp`.
    const r = run([0x81, 0xfc], stack().u64(CALLER["fp"]!).u64(signed));
    expect(recoveredOf(r)).toEqual({ pc: ra(27), sp: STACK_BASE + 16n, fp: CALLER["fp"], lr: ra(27) });
  });

  it("reserved codes: 0xF8-0xFB (with 1-4 more bytes) and 0xFD-0xFF are skipped; 0xED-0xF7 and alloc_z are rejected", () => {
    const r = run([0xf8, 0xaa, 0xfb, 1, 2, 3, 4, 0xfd, 0x01], stack().zeros(16), { lr: ra(28) });
    expect(recoveredOf(r)).toEqual({ pc: ra(28), sp: STACK_BASE + 16n });
    expect(stopOf(run([0xed], stack().zeros(16)))).toContain("reserved");
    expect(stopOf(run([0xdf, 0x01], stack().zeros(16)))).toContain("alloc_z");
  });
});

describe("custom stacks (0 instructions; the caller's pc comes from the stack, an interrupted one)", () => {
  it("MSFT_OP_MACHINE_FRAME (11101001): sp, pc = [sp], [sp + 8]", () => {
    const interruptedSp = STACK_BASE + 0x100n;
    const r = run([0xe9], stack().u64(interruptedSp).u64(ra(29)));
    expect(recoveredOf(r)).toEqual({ pc: ra(29), sp: interruptedSp });
    expect(r?.ok === true && r.interrupted).toBe(true);
    expect(stepText(r)).toContain(`pc from the machine-frame@[${"0x" + (STACK_BASE + 8n).toString(16)}]`);
  });

  it("MSFT_OP_CONTEXT (11101010): every register from the ARM64_NT_CONTEXT at sp, UNWOUND_TO_CALL from its flags", () => {
    for (const flags of [CONTEXT_ARM64_FULL, CONTEXT_ARM64_FULL | CONTEXT_UNWOUND_TO_CALL]) {
      const regs: Record<string, bigint> = { pc: ra(30), sp: STACK_BASE + 0x1000n, fp: CALLER["fp"]!, lr: CALLER["lr"]!, x19: CALLER["x19"]!, d8: CALLER["d8"]!, cpsr: 0x6000_0000n };
      const ctx = encodeContext({ machine: "arm64", contextFlags: flags, registers: regs });
      expect(ctx.length).toBe(ARM64_CONTEXT_SIZE);
      const image = new ImageBuilder().code(FN, 32).fn(FN, xdata({ length: 32, codes: [0xea, 0xe4] })).build();
      const snap = snapshotArm64(image, { base: STACK_BASE, bytes: ctx, labels: {} }, {});
      const r = unwindStep(snap, calleeRegisters({ pc: BODY, sp: STACK_BASE }));
      const got = recoveredOf(r);
      expect(got).toMatchObject({ pc: ra(30), sp: STACK_BASE + 0x1000n, fp: CALLER["fp"], lr: CALLER["lr"], x19: CALLER["x19"], d8: CALLER["d8"], cpsr: 0x6000_0000n });
      expect(r?.ok === true && r.interrupted === true, `flags 0x${flags.toString(16)}`).toBe((flags & CONTEXT_UNWOUND_TO_CALL) === 0);
    }
  });

  it("MSFT_OP_TRAP_FRAME (11101000): X0-X18, Sp, Lr, Fp, Pc and Spsr from the ARM64_KTRAP_FRAME at sp; V0-V31 only with a valid VfpState", () => {
    const trap = new Uint8Array(0x150);
    const v = new DataView(trap.buffer);
    const vfpAt = STACK_BASE + 0x1000n;
    v.setBigUint64(0x10, vfpAt, true);
    v.setUint32(0x90, 0x2000_0000, true);
    v.setBigUint64(0x98, STACK_BASE + 0x800n, true);
    for (let k = 0; k < 19; k++) v.setBigUint64(0xa0 + 8 * k, 0x1000n + BigInt(k), true);
    v.setBigUint64(0x138, CALLER["lr"]!, true);
    v.setBigUint64(0x140, CALLER["fp"]!, true);
    v.setBigUint64(0x148, ra(31), true);
    const vfp = new Uint8Array(16 + 32 * 16);
    const vv = new DataView(vfp.buffer);
    vv.setUint32(8, 0x0300_0000, true);
    vv.setUint32(12, 0x10, true);
    vv.setBigUint64(16 + 8 * 16, CALLER["d8"]!, true);
    const image = new ImageBuilder().code(FN, 32).fn(FN, xdata({ length: 32, codes: [0xe8, 0xe4] })).build();
    const snap = snapshotArm64(image, { base: STACK_BASE, bytes: trap, labels: {} }, {}, [{ base: vfpAt, bytes: vfp }]);
    const r = unwindStep(snap, calleeRegisters({ pc: BODY, sp: STACK_BASE }));
    expect(recoveredOf(r)).toMatchObject({ pc: ra(31), sp: STACK_BASE + 0x800n, lr: CALLER["lr"], fp: CALLER["fp"], x0: 0x1000n, x18: 0x1012n, cpsr: 0x2000_0000n });
    expect(r?.ok === true && r.registers["d8"]).toBe(CALLER["d8"]);
    expect(r?.ok === true && r.registers["fpcr"]).toBe(0x0300_0000n);
    expect(r?.ok === true && r.interrupted).toBe(true);
  });

  it("MSFT_OP_CLEAR_UNWOUND_TO_CALL (11101100): pc = lr, an interrupted pc", () => {
    const r = run([0xec], stack().zeros(16), { lr: ra(32) });
    expect(recoveredOf(r)).toEqual({ pc: ra(32), sp: STACK_BASE });
    expect(r?.ok === true && r.interrupted).toBe(true);
  });

  it("MSFT_OP_EC_CONTEXT (11101011): an ARM64EC context is not modelled, so the frame stops", () => {
    expect(stopOf(run([0xeb], stack().zeros(16)))).toContain("ARM64EC");
  });
});

describe("what is carried and what is checked", () => {
  it("preserved registers no code restores keep the callee's values; a caller sp that is not 16-aligned stops", () => {
    const r = run([0x01], stack().zeros(16), { lr: ra(0) });
    expect(r?.ok === true && r.registers["x25"]).toBe(CLOBBERED["x25"]);
    // save_r19r20_x(8): sp += 8 leaves it 8-aligned.
    expect(stopOf(run([0x21], stack().zeros(16), { lr: ra(0) }))).toContain("not 16-byte aligned");
  });

  it("a save past the last register is an invalid sequence (save_next from x27 runs past x30)", () => {
    expect(stopOf(run([0xe6, 0xe6, 0xca, 0x00], stack().zeros(64), { lr: ra(0) }))).toContain("past the last X register");
  });
});
