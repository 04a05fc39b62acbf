/**
 * The emulator on AArch64: Unicorn's ARM64 engine through the wrapper, calls and returns through
 * the link register in the shadow stack, runs of assembled code and of the real clang programs
 * built for arm64, and the synthetic chains' images.
 */
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { ARM64_INSTRUCTIONS, ARM64_PROGRAMS, ARM64_TARGETS, runArm64Programs, runArm64Synthetic, type Arm64ProgramRun } from "../../emulator/arm64-programs.js";
import { loadDisassembler } from "../../emulator/disassemble.js";
import { buildArm64Program } from "../../emulator/programs/arm64-chain.js";
import { ARM64_CHAIN, ARM64_MACHINE_FRAME } from "../../emulator/programs/arm64-corpus.js";
import { ARM64_CODE, packedWord, xdataBytes } from "../../emulator/programs/arm64-unwind-encode.js";
import { EXPECTED } from "../../emulator/real-programs.js";
import { decodeArm64ControlTransfer, ShadowStack, TraceError } from "../../emulator/trace.js";
import { Unicorn } from "../../emulator/unicorn.js";
import { parsePe } from "../../src/formats/pe.js";
import { runAssembled } from "./assembled.js";

describe("the AArch64 engine", () => {
  let uc: Unicorn<"arm64"> | undefined;
  afterEach(() => uc?.close());

  it("runs A64 code and reads every register by its CONTEXT name (fp = x29, lr = x30, cpsr = NZCV)", () => {
    uc = Unicorn.open("arm64");
    uc.memMap(0x10000n, 0x1000n);
    // add x1, x0, #1; mov x29, x1; add x30, x29, #1; mov x2, sp; fmov d9, x2; cmp x0, x0; ret
    const words = [0x91000401, 0xaa0103fd, 0x910007be, 0x910003e2, 0x9e670049, 0xeb00001f, 0xd65f03c0];
    const bytes = new Uint8Array(4 * words.length);
    words.forEach((w, i) => new DataView(bytes.buffer).setUint32(4 * i, w, true));
    uc.memWrite(0x10000n, bytes);
    uc.regWrite("x0", 41n);
    uc.regWrite("sp", 0x12340n);
    const stop = uc.start(0x10000n, 0x10018n);
    expect(stop).toEqual({ reason: "until", pc: 0x10018n });
    expect([uc.regRead("x1"), uc.regRead("fp"), uc.regRead("x29"), uc.regRead("lr"), uc.regRead("x30")]).toEqual([42n, 42n, 42n, 43n, 43n]);
    expect(uc.regRead("d9")).toBe(0x12340n);
    expect(uc.sp()).toBe(0x12340n);
    expect(uc.pc()).toBe(0x10018n);
    expect(uc.regRead("cpsr")).toBe(0x6000_0000n); // Z and C after cmp x0, x0
    expect(() => uc!.regRead("rax" as never)).toThrow(/not a register of the ARM64 engine/);
  });

  it("disassembles A64 for error messages", async () => {
    const d = await loadDisassembler();
    expect(d.describe(Uint8Array.from([0xfd, 0x7b, 0xbf, 0xa9]), 0x1_4000_1000n, "arm64")).toBe("0x0000000140001000: fd 7b bf a9  stp x29, x30, [sp, #-0x10]!");
  });
});

describe("AArch64 calls and returns", () => {
  const word = (w: number): Uint8Array => {
    const b = new Uint8Array(4);
    new DataView(b.buffer).setUint32(0, w, true);
    return b;
  };
  const decode = (w: number) => decodeArm64ControlTransfer(word(w));

  it("decodes bl, blr and the authenticating blr forms as calls; ret Xn, retaa and retab as returns", () => {
    expect(decode(0x94000010)).toEqual({ kind: "call", form: "rel" }); // bl
    expect(decode(0x97fffff0)).toEqual({ kind: "call", form: "rel" }); // bl backwards
    expect(decode(0xd63f0100)).toEqual({ kind: "call", form: "indirect" }); // blr x8
    expect(decode(0xd63f091f)).toEqual({ kind: "call", form: "indirect" }); // blraaz x8
    expect(decode(0xd73f0901)).toEqual({ kind: "call", form: "indirect" }); // blraa x8, x1
    expect(decode(0xd65f03c0)).toEqual({ kind: "ret", release: 0, register: 30 }); // ret
    expect(decode(0xd65f0020)).toEqual({ kind: "ret", release: 0, register: 1 }); // ret x1
    expect(decode(0xd65f0bff)).toEqual({ kind: "ret", release: 0, register: 30 }); // retaa
    expect(decode(0xd65f0fff)).toEqual({ kind: "ret", release: 0, register: 30 }); // retab
  });

  it("leaves branches and everything else alone", () => {
    expect(decode(0x14000010)).toBeUndefined(); // b
    expect(decode(0xd61f0100)).toBeUndefined(); // br x8
    expect(decode(0xb4000040)).toBeUndefined(); // cbz
    expect(decode(0xd503201f)).toBeUndefined(); // nop
    expect(decodeArm64ControlTransfer(Uint8Array.from([0xc0, 0x03]))).toBeUndefined(); // truncated
  });

  it("checks that a bl left its return address in LR and kept SP", () => {
    let lr = 0n;
    const shadow = new ShadowStack("arm64", () => 0n, [], () => lr);
    shadow.before(0x1000n, 0x8000n, word(0x94000010));
    lr = 0x1004n;
    shadow.before(0x1040n, 0x8000n, word(0xd503201f));
    expect(shadow.entries).toEqual([{ slot: 0x8000n, returnAddress: 0x1004n, callSite: 0x1000n, callerSp: 0x8000n }]);
    const bad = new ShadowStack("arm64", () => 0n, [], () => 0x2000n);
    bad.before(0x1000n, 0x8000n, word(0x94000010));
    expect(() => bad.before(0x1040n, 0x8000n, word(0xd503201f))).toThrow(TraceError);
    expect(() => new ShadowStack("arm64", () => 0n)).toThrow(/register reader/);
  });

  it("a leaf's caller is a frame while its return address is still in LR, and a tail call keeps the caller's entry", async () => {
    const run = await runAssembled(
      "arm64",
      [
        "main:",
        "stp x29, x30, [sp, #-16]!",
        "mov x29, sp",
        "bl middle",
        "ldp x29, x30, [sp], #16",
        "ret",
        "middle:",
        "str x30, [sp, #-16]!",
        "bl leaf",
        "ldr x30, [sp], #16",
        "b leaf",
        "leaf:",
        "add x0, x0, #1",
        "ret",
      ],
      { functions: ["main", "middle", "leaf"], sweep: true },
    );
    const steps = run.result.sweep.steps;
    const atLeaf = steps.filter((s) => s.registers["pc"] === run.at("leaf"));
    expect(atLeaf).toHaveLength(2);
    const sp0 = run.sp0;
    // First entry: called from middle (return address in LR), middle called from main.
    expect(atLeaf[0]!.truth).toEqual([
      { pc: run.at("leaf"), sp: sp0 - 32n, function: "leaf" },
      { pc: run.at("middle") + 8n, sp: sp0 - 32n, function: "middle" },
      { pc: run.at("main") + 12n, sp: sp0 - 16n, function: "main" },
    ]);
    // Second entry: middle tail-called it; the return goes straight to main.
    expect(atLeaf[1]!.truth).toEqual([
      { pc: run.at("leaf"), sp: sp0 - 16n, function: "leaf" },
      { pc: run.at("main") + 12n, sp: sp0 - 16n, function: "main" },
    ]);
    expect(atLeaf.every((s) => s.registers["lr"] === s.truth![1]!.pc)).toBe(true);
    expect(run.result.registers["x0"]).toBe(2n);
    expect(run.result.registers["sp"]).toBe(sp0);
  });
});

describe("the real C programs built for arm64", () => {
  let runs: Arm64ProgramRun[] = [];
  beforeAll(async () => {
    runs = await runArm64Programs();
  });
  const combos = ARM64_TARGETS.flatMap(({ target }) => ARM64_PROGRAMS.map((program) => ({ target, program })));

  it.each(combos)("$target/$program returns the checksum of every other build, after its own instruction count", ({ target, program }) => {
    const run = runs.find((r) => r.target === target && r.program === program)!;
    expect(run.result.registers["x0"]! & 0xffff_ffffn).toBe(BigInt(EXPECTED[program].checksum));
    expect(run.result.sweep.steps).toHaveLength(ARM64_INSTRUCTIONS[program][target]);
    expect(run.result.sweep.machine).toBe("arm64");
  });

  it("are PE32+ images for machine 0xAA64 with .pdata, loaded at their ImageBase", () => {
    for (const run of runs) {
      expect(run.result.sweep.modules[0]!.base).toBe(0x1_4000_0000n);
      expect(run.result.sweep.modules[0]!.symbols.some((s) => s.name === "entry")).toBe(true);
    }
  });
});

describe("synthetic ARM64 chains", () => {
  it("encode the documented check values: packed 0x416101ED, G1 0x01000025, and G4's header", () => {
    expect(packedWord(123, { cr: 3, regI: 1, frameSize: 2080 })).toBe(0x416101ed);
    expect(packedWord(9, { cr: 0, frameSize: 32 })).toBe(0x01000025);
    const g4 = xdataBytes({ length: 13, codes: [...ARM64_CODE.alloc_m(8000), 0xe3, 0xe3, ...ARM64_CODE.save_fplr_x(16), 0xe4, 0xc1, 0x00, 0xc0, 0xf4, 0x81, 0xe4], scopes: [{ start: 9, index: 6 }] });
    expect(Array.from(g4.subarray(0, 8))).toEqual([0x0d, 0x00, 0x40, 0x18, 0x09, 0x00, 0x80, 0x01]);
    expect(() => ARM64_CODE.alloc_s(520)).toThrow(RangeError);
  });

  it("write a PE32+ ARM64 image whose .pdata covers every function but the bare leaf, fragments included", async () => {
    const program = await buildArm64Program(ARM64_CHAIN);
    const pe = parsePe(program.image);
    expect(pe.machine).toBe(0xaa64);
    expect(pe.is64).toBe(true);
    expect(pe.dataDirectories[3]!.size).toBe(8 * (ARM64_CHAIN.functions.length - 1));
    expect(program.symbols.map((s) => s.name)).not.toContain("fg_mid");
  });

  it("run to the sentinel with the truth at every instruction", async () => {
    const result = await runArm64Synthetic(ARM64_CHAIN);
    expect(result.sweep.steps.length).toBe(result.instructions);
    const deepest = Math.max(...result.sweep.steps.map((s) => s.truth!.length));
    expect(deepest).toBe(10); // leaf_locals ← ff_fregs ← fg_frag ← fe_pac ← fd ← fc ← fb ← fa ← fh ← entry
  });
});

describe("an ARM64 interrupt handler entered through a machine frame", () => {
  it("puts the interrupted frame in the truth at the interrupted PC and SP, between the handler and the interrupted function's caller", async () => {
    const program = await buildArm64Program(ARM64_MACHINE_FRAME);
    const result = await runArm64Synthetic(ARM64_MACHINE_FRAME);
    const at = (label: string): bigint => program.labels.get(label)!;
    const steps = result.sweep.steps;
    expect(steps.map((s) => s.label)).toEqual(["handler", "handler_record", "leaf_bare", "handler_epilog"]);
    const [handler, , leaf] = steps;
    // At the handler's entry SP points at the machine frame: [SP] the interrupted SP, [SP+8] the resume PC.
    const interruptedSp = handler!.registers["sp"]! + 16n;
    expect(handler!.truth!.map((t) => [t.function, t.pc])).toEqual([
      ["handler", at("handler")],
      ["interrupted", at("interrupted_resume")],
      ["entry", at("entry") + 16n],
    ]);
    expect(handler!.truth![1]!.sp).toBe(interruptedSp);
    expect(leaf!.truth!.map((t) => t.function)).toEqual(["leaf_bare", "handler", "interrupted", "entry"]);
    expect(() => new ShadowStack("arm64", () => 0n, [{ address: 0n, errorCode: true }], () => 0n)).toThrow(/no error code/);
  });
});

describe("the ARM64 walk bench", () => {
  it("walks a packed-unwind recursion exactly before timing it", async () => {
    const { benchArm64UnwindWalk } = await import("../bench/bench-arm64.js");
    const r = await benchArm64UnwindWalk(200, 1);
    expect(r.frames).toBe(203);
    expect(r.perSecond).toBeGreaterThan(0);
  });
});
