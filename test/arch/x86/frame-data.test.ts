/**
 * The x86 FrameData strategy (x86-fpo.md §2, §3, §8): one test per program-string feature, each
 * on an assembled module (return addresses follow real calls) and a stack built to match the
 * code at the PC, walked with walker "fpo". Expected values come from the construction.
 */
import { ruleText } from "../../../src/arch/rule-text.js";
import { describe, expect, it } from "vitest";
import type { FrameData } from "../../../src/formats/frame-data.js";
import { FRAME_TRAP } from "../../../src/model/fpo-data.js";
import type { Module, Registers } from "../../../src/model/snapshot.js";
import type { Walk } from "../../../src/walk/frame.js";
import { walkThread } from "../../../src/walk/walk.js";
import { snapshotOf } from "../../support/snapshots.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { assembleX86, frameDataRecord, hexOf, loadX86Assembler, MODULE_BASE, x86Module, type X86Code } from "../../support/x86-code.js";

await loadX86Assembler();

const STACK = 0x0012_f000n;
/** The standard FPO program (LLVM's, x86-fpo.md §2.3). */
const FPO_PROGRAM = "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + =";
/** An EBP value that cannot be read, so the EBP chain cannot stand in for a failed program. */
const NO_EBP = 0x0000_2000n;

const CALLER = { ebx: 0xb1b1_0001n, esi: 0x5151_0002n, edi: 0xd1d1_0003n, ebp: 0x0012_fe00n } as const;
const CLOBBER = { ebx: 0x0bad_0001n, esi: 0x0bad_0002n, edi: 0x0bad_0003n, ebp: 0x0bad_0004n } as const;

function walkFd(code: X86Code, module: Module, stack: StackBuilder, registers: (labels: Record<string, bigint>) => Registers): { walk: Walk; labels: Record<string, bigint> } {
  const built = stack.build();
  const snap = snapshotOf("x86", registers(built.labels), [code.region, built], [module]);
  return { walk: walkThread(snap, snap.threads[0]!, { walker: "fpo" }), labels: built.labels };
}

/** records[k] is frame k's record: its funcTableEntry, and frame k+1's trust and rule. */
function expectFoundBy(walk: Walk, records: readonly FrameData[]): void {
  records.forEach((r, k) => {
    expect(walk.frames[k]!.funcTableEntry, `frame ${k} funcTableEntry`).toEqual({
      kind: "frame-data",
      beginRva: BigInt(r.rvaStart),
      endRva: BigInt(r.rvaStart + r.codeSize),
      moduleBase: MODULE_BASE,
    });
    const caller = walk.frames[k + 1];
    if (caller === undefined) return;
    expect(caller.trust, `frame ${k + 1} trust`).toBe("frame-data");
    expect(ruleText(caller.rule), `frame ${k + 1} rule`).toContain(`frame-data rva=${hexOf(r.rvaStart)}`);
  });
}

function regsOf(walk: Walk, k: number, names: readonly string[]): Record<string, bigint | undefined> {
  const f = walk.frames[k]!;
  // What the walk carries on (recovered plus callee-saved registers passed through).
  const registers = f.unwindRegisters ?? f.registers;
  return Object.fromEntries(names.map((n) => [n, registers[n]]));
}

/**
 * The usual shape: main calls f; f saved ebx and esi and has 12 bytes of locals
 * (`push ebx; push esi; sub esp, 12`), and the PC is at its `call g`. The return address is at
 * esp+20. main's own return address is 0 (the end of the stack).
 */
function basic(program: string | undefined, options: { ebp?: bigint; extra?: Partial<FrameData> } = {}) {
  const code = assembleX86([
    "main:", "call f", "main_ret_f:", "ret", "main_end:",
    "f:", "push ebx", "push esi", "sub esp, 12", "f_body:", "call g", "add esp, 12", "pop esi", "pop ebx", "ret", "f_end:",
    "g:", "ret", "g_end:",
  ]);
  const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
  const f = frameDataRecord(code, "f", "f_end", { localSize: 12, savedRegsSize: 8, ...(program === undefined ? {} : { program }), ...options.extra });
  const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, f] });
  const s = new StackBuilder(STACK);
  s.mark("esp0").fill(3).mark("saved_esi").u32(CALLER.esi).mark("saved_ebx").u32(CALLER.ebx)
    .mark("ra0").u32(code.at("main_ret_f"))
    .mark("esp1").u32(0);
  const result = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: options.ebp ?? CALLER.ebp, ebx: CLOBBER.ebx, esi: CLOBBER.esi }));
  return { ...result, code, records: [f, main] };
}

/** Checks that the walk of {@link basic} found main exactly with f's record. */
function expectBasicCaller(r: ReturnType<typeof basic>): void {
  expect(r.walk.frames).toHaveLength(2);
  expect(r.walk.frames[1]!.addrPC).toBe(r.code.at("main_ret_f"));
  expect(r.walk.frames[1]!.addrStack).toBe(r.labels["esp1"]);
  expect(r.labels["esp1"]).toBe(r.labels["ra0"]! + 4n);
  expect(r.walk.stop.reason).toBe("end-of-stack");
  expectFoundBy(r.walk, r.records);
}

describe("FrameData programs: operators (x86-fpo.md §3)", () => {
  it.each([
    ["+", "$T0 $esp 20 + = $eip $T0 ^ = $esp $T0 4 + ="],
    ["-", "$T0 $esp 24 + = $eip $T0 4 - ^ = $esp $T0 ="],
    ["*", "$T0 $esp 5 4 * + = $eip $T0 ^ = $esp $T0 4 + ="],
    ["/", "$T0 $esp 60 3 / + = $eip $T0 ^ = $esp $T0 4 + ="],
    ["%", "$T0 $esp 120 100 % + = $eip $T0 ^ = $esp $T0 4 + ="],
    ["@", "$T0 $esp 23 + 4 @ = $eip $T0 ^ = $esp $T0 4 + ="],
    ["^", "$T0 $esp 20 + = $eip $T0 ^ = $esp $T0 4 + = $ebx $T0 4 - ^ ="],
    ["=", "$T0 $esp 16 + = $T0 $T0 4 + = $eip $T0 ^ = $esp $T0 4 + ="],
    ["= glued to its name (Breakpad's =$name)", "$T0 $esp 20 + = $eip $T0 ^ =$esp $T0 4 + ="],
  ])("%s: %s", (_op, program) => {
    const r = basic(program);
    expectBasicCaller(r);
    expect(ruleText(r.walk.frames[1]!.rule)).toContain(`frame-data rva=${hexOf(r.code.rva("f"))}`);
  });

  it("^ reads the saved registers: ebx and esi restored from the slots the test filled", () => {
    const r = basic("$T0 $esp 20 + = $eip $T0 ^ = $esp $T0 4 + = $ebx $T0 4 - ^ = $esi $T0 8 - ^ =");
    expectBasicCaller(r);
    expect(regsOf(r.walk, 1, ["ebx", "esi"])).toEqual({ ebx: CALLER.ebx, esi: CALLER.esi });
  });

  it("= assigns at once: later tokens see the new value", () => {
    // $T1 keeps the callee's $eip; $esi, read after $eip is assigned, gets the caller's.
    const r = basic("$T0 $esp 20 + = $T1 $eip = $eip $T0 ^ = $esp $T0 4 + = $ebx $T1 = $esi $eip =");
    expectBasicCaller(r);
    expect(regsOf(r.walk, 1, ["ebx", "esi"])).toEqual({ ebx: r.code.at("f_body"), esi: r.code.at("main_ret_f") });
  });

  it("a record without a program string runs Breakpad's default FPO program on .raSearchStart", () => {
    expectBasicCaller(basic(undefined));
  });

  it("FrameData is preferred to an FPO_DATA record for the same function (x86-fpo.md §1.3)", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebx", "push esi", "sub esp, 12", "f_body:", "call g", "add esp, 12", "pop esi", "pop ebx", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 12, savedRegsSize: 8, program: FPO_PROGRAM });
    // Were the FPO_DATA record used, the walk would stop at a "trap frame".
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], {
      frameData: [main, f],
      fpo: [{ ulOffStart: f.rvaStart, cbProcSize: f.codeSize, cdwLocals: 3, cdwParams: 0, cbProlog: 0, cbRegs: 2, fHasSEH: false, fUseBP: false, reserved: 0, cbFrame: FRAME_TRAP }],
    });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(3).u32(CALLER.esi).u32(CALLER.ebx).mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: CALLER.ebp }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });
});

describe("FrameData programs: variables", () => {
  it("$T0 $T1 $T2 are independent temporaries", () => {
    const r = basic("$T2 $esp = $T1 $T2 12 + = $T0 $T1 8 + = $eip $T0 ^ = $esp $T0 4 + = $esi $T1 ^ = $ebx $T1 4 + ^ =");
    expectBasicCaller(r);
    expect(regsOf(r.walk, 1, ["ebx", "esi"])).toEqual({ ebx: CALLER.ebx, esi: CALLER.esi });
  });

  it("$eip reads the callee's PC before the program assigns it", () => {
    const r = basic("$T1 $eip = $T0 $esp 20 + = $eip $T0 ^ = $esp $T0 4 + = $ebx $T1 =");
    expectBasicCaller(r);
    expect(r.walk.frames[1]!.registers["ebx"]).toBe(r.code.at("f_body"));
  });

  /**
   * f saves ebp, ebx, esi and edi, has 8 bytes of locals, copies ESP into `base` and then pushes
   * two call arguments, so ESP is 8 bytes below the frame base the program starts from.
   */
  it.each(["ebp", "ebx", "esi", "edi"] as const)("$%s as the frame base, and $ebp $ebx $esi $edi restored", (base) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebp", "push ebx", "push esi", "push edi", "sub esp, 8", `mov ${base}, esp`, "push 1", "push 2", "f_body:", "call g",
      "add esp, 16", "pop edi", "pop esi", "pop ebx", "pop ebp", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const program = `$T0 $${base} 24 + = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = $ebx $T0 8 - ^ = $esi $T0 12 - ^ = $edi $T0 16 - ^ =`;
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 8, savedRegsSize: 16, program });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").u32(2).u32(1).mark("base").fill(2).u32(CALLER.edi).u32(CALLER.esi).u32(CALLER.ebx).u32(CALLER.ebp)
      .mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ...CLOBBER, [base]: l["base"]! }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(regsOf(walk, 1, ["ebp", "ebx", "esi", "edi"])).toEqual({ ...CALLER });
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });

  it("numeric CodeView registers $20 $23 $24 restore EBX, ESI and EDI", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebx", "push esi", "push edi", "sub esp, 8", "f_body:", "call g", "add esp, 8", "pop edi", "pop esi", "pop ebx", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const program = "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $20 $T0 4 - ^ = $23 $T0 8 - ^ = $24 $T0 12 - ^ =";
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 8, savedRegsSize: 12, program });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(2).u32(CALLER.edi).u32(CALLER.esi).u32(CALLER.ebx).mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: CALLER.ebp, ebx: CLOBBER.ebx, esi: CLOBBER.esi, edi: CLOBBER.edi }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(regsOf(walk, 1, ["ebx", "esi", "edi", "ebp"])).toEqual({ ...CALLER });
    expectFoundBy(walk, [f, main]);
  });
});

describe("FrameData programs: .raSearch and the record inputs (x86-fpo.md §3.1)", () => {
  /** f: `push ebx; push esi; sub esp, 12`, then two call arguments; the PC before or after pushing them. */
  function searchCase(search: string, below: 0 | 8) {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebx", "push esi", "sub esp, 12", "f_args:", "push 1", "push 2", "f_call:", "call g", "add esp, 20", "pop esi", "pop ebx", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const program = `$T0 ${search} = $eip $T0 ^ = $esp $T0 4 + = $ebx $T0 4 - ^ = $esi $T0 8 - ^ =`;
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 12, savedRegsSize: 8, program });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("args").u32(2).u32(1).mark("locals").fill(3).u32(CALLER.esi).u32(CALLER.ebx).mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const r = walkFd(code, module, s, (l) => ({
      eip: code.at(below === 0 ? "f_args" : "f_call"), esp: below === 0 ? l["locals"]! : l["args"]!, ebp: CALLER.ebp, ebx: CLOBBER.ebx, esi: CLOBBER.esi,
    }));
    return { ...r, code, records: [f, main] };
  }

  it.each([".raSearch", ".raSearchStart"])("%s = esp + locals + savedRegs when ESP is where the record says", (search) => {
    const { walk, labels, code, records } = searchCase(search, 0);
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(regsOf(walk, 1, ["ebx", "esi"])).toEqual({ ebx: CALLER.ebx, esi: CALLER.esi });
    expect(ruleText(walk.frames[1]!.rule)).toContain("ra@esp+20");
    expect(ruleText(walk.frames[1]!.rule)).not.toContain("found");
    expectFoundBy(walk, records);
  });

  it.each([".raSearch", ".raSearchStart"])("%s is a search start: with two call arguments pushed (ESP 8 bytes low) the real return address is found", (search) => {
    const { walk, labels, code, records } = searchCase(search, 8);
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    // The program's other reads are relative to the found slot.
    expect(regsOf(walk, 1, ["ebx", "esi"])).toEqual({ ebx: CALLER.ebx, esi: CALLER.esi });
    expect(ruleText(walk.frames[1]!.rule)).toContain("found 8 bytes above");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, records);
  });

  it(".cbLocals and .cbSavedRegs are the record's sizes", () => {
    expectBasicCaller(basic("$T0 $esp .cbLocals + .cbSavedRegs + = $eip $T0 ^ = $esp $T0 4 + ="));
  });

  it(".cbParams is the record's parameter bytes: the last argument is at ra + .cbParams", () => {
    const code = assembleX86([
      "main:", "push 0x22222222", "push 0x11111111", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebx", "push esi", "sub esp, 12", "f_body:", "call g", "add esp, 12", "pop esi", "pop ebx", "ret 8", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const program = "$T0 $esp .cbLocals + .cbSavedRegs + = $eip $T0 ^ = $esp $T0 4 + = $esi $T0 .cbParams + ^ =";
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 12, savedRegsSize: 8, paramsSize: 8, program });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(3).u32(CALLER.esi).u32(CALLER.ebx).mark("ra0").u32(code.at("main_ret_f"))
      .mark("esp1").u32(0x11111111).mark("last_arg").u32(0x22222222).u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: CALLER.ebp }));
    expect(labels["last_arg"]).toBe(labels["ra0"]! + 8n);
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(walk.frames[1]!.registers["esi"]).toBe(0x22222222n);
    // main's .raSearch skips f's 8 bytes of arguments (calleeParams) to its return address 0.
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });

  it(".cbCalleeParams is the parameter bytes of the frame unwound before (g's 8)", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebx", "push esi", "sub esp, 12", "push 2", "push 1", "call g", "f_ret_g:", "add esp, 12", "pop esi", "pop ebx", "ret", "f_end:",
      "g:", "sub esp, 4", "g_body:", "call h", "add esp, 4", "ret 8", "g_end:",
      "h:", "ret", "h_end:",
    ]);
    const program = "$T0 $esp .cbCalleeParams + .cbLocals + .cbSavedRegs + = $eip $T0 ^ = $esp $T0 4 + =";
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 12, savedRegsSize: 8, program });
    const g = frameDataRecord(code, "g", "g_end", { localSize: 4, paramsSize: 8, program: "$T0 $esp 4 + = $eip $T0 ^ = $esp $T0 4 + =" });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"], ["h", "h_end"]], { frameData: [main, f, g] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(1).mark("ra0").u32(code.at("f_ret_g"))
      .mark("esp1").u32(1).u32(2).fill(3).u32(CALLER.esi).u32(CALLER.ebx)
      .mark("ra1").u32(code.at("main_ret_f")).mark("esp2").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("g_body"), esp: l["esp0"]!, ebp: CALLER.ebp }));
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack])).toEqual([
      [code.at("g_body"), labels["esp0"]],
      [code.at("f_ret_g"), labels["esp1"]],
      [code.at("main_ret_f"), labels["esp2"]],
    ]);
    expect(labels["ra1"]).toBe(labels["esp1"]! + 8n + 12n + 8n);
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [g, f, main]);
  });

  it("a realigned frame (@ in the program) takes .raSearch from ebp + 4, not from the record's sizes", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebp", "mov ebp, esp", "push esi", "and esp, -32", "sub esp, 32", "f_body:", "call g",
      "lea esp, [ebp-4]", "pop esi", "pop ebp", "ret", "f_end:",
      "g:", "ret", "g_end:",
      "cb:", "call eax", "cb_ret:", "ret", "cb_end:",
    ]);
    const program = "$T0 .raSearch = $T1 $T0 8 - 32 @ = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = $esi $T0 8 - ^ =";
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 32, savedRegsSize: 8, program });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"], ["cb", "cb_end"]], { frameData: [main, f] });
    // The stack at f_body, from a 32-byte aligned ESP: 32 bytes of locals, 24 bytes of
    // alignment padding (one padding word holds a stale code pointer at esp + locals + saved
    // regs, where the record's sizes would look), saved esi, saved ebp (EBP points here), ra.
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(8).mark("pad").fill(2).u32(code.at("cb_ret")).fill(3)
      .u32(CALLER.esi).mark("frame").u32(CALLER.ebp).mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: l["frame"]!, esi: CLOBBER.esi }));
    expect(labels["esp0"]! % 32n).toBe(0n);
    expect(labels["ra0"]).toBe(labels["esp0"]! + 64n);
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(regsOf(walk, 1, ["ebp", "esi"])).toEqual({ ebp: CALLER.ebp, esi: CALLER.esi });
    expect(ruleText(walk.frames[1]!.rule)).toContain("ebp+4");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });
});

describe("FrameData lookup: LLVM's nested records (x86-fpo.md §2.2)", () => {
  // One record at the function start and one after each prolog step, all running to the end.
  const STEPS = ["push ebp", "push esi", "sub esp, 8"];
  const RESTORE = ["", " $ebp $T0 4 - ^ =", " $ebp $T0 4 - ^ = $esi $T0 8 - ^ ="];

  it.each([0, 1, 2, 3])("the PC after %i prolog step(s) uses the innermost record, which needs no search", (k) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", ...STEPS.flatMap((st, i) => [`p${i}:`, st]), "p3:", "call g", "add esp, 8", "pop esi", "pop ebp", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const sizes = [{ saved: 0, locals: 0 }, { saved: 4, locals: 0 }, { saved: 8, locals: 0 }, { saved: 8, locals: 8 }];
    const records = sizes.map(({ saved, locals }, i) =>
      frameDataRecord(code, `p${i}`, "f_end", {
        localSize: locals, savedRegsSize: saved, paramsSize: 0, prologSize: Number(code.at("p3") - code.at(`p${i}`)), isFunctionStart: i === 0, flags: i === 0 ? 4 : 0,
        program: FPO_PROGRAM + RESTORE[Math.min(i, 2)],
      }),
    );
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, ...records] });
    const s = new StackBuilder(STACK);
    s.mark("esp0");
    if (k >= 3) s.fill(2);
    if (k >= 2) s.u32(CALLER.esi);
    if (k >= 1) s.u32(CALLER.ebp);
    s.mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at(`p${k}`), esp: l["esp0"]!, ebp: CALLER.ebp, esi: CALLER.esi }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(regsOf(walk, 1, ["ebp", "esi"])).toEqual({ ebp: CALLER.ebp, esi: CALLER.esi });
    expect(ruleText(walk.frames[1]!.rule)).not.toContain("found");
    expect(ruleText(walk.frames[1]!.rule)).toContain(`ra@esp+${sizes[k]!.saved + sizes[k]!.locals}`);
    expectFoundBy(walk, [records[k]!, main]);
  });
});

describe("FrameData programs that fail: the walk does not throw and says why", () => {
  it.each([
    ["an unknown token", "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = #", "unsupported", "does not parse"],
    ["an unknown variable", "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $ebx $nope =", "unsupported", "$nope"],
    ["stack underflow", "$T0 .raSearch = $eip $T0 ^ = $esp +", "unsupported", "needs two operands"],
    ["division by zero (/)", "$T0 $esp 20 0 / + = $eip $T0 ^ = $esp $T0 4 + =", "unsupported", "division by zero"],
    ["division by zero (%)", "$T0 $esp 20 0 % + = $eip $T0 ^ = $esp $T0 4 + =", "unsupported", "division by zero"],
    ["no $eip assignment", "$T0 .raSearch = $esp $T0 4 + =", "unsupported", "does not assign $eip"],
    ["no $esp assignment", "$T0 .raSearch = $eip $T0 ^ =", "unsupported", "does not assign $esp"],
    ["values left over", "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = 42", "unsupported", "left on the stack"],
    ["an assignment to a .input", "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = .cbLocals 4 =", "unsupported", "assigns only to a $variable"],
    ["an unreadable ^", "$T0 $esp 4096 + = $eip $T0 ^ = $esp $T0 4 + =", "read-fault", "cannot read"],
  ])("%s: the walk stops with the frame-data reason when the EBP chain cannot help", (_what, program, reason, why) => {
    const r = basic(program, { ebp: NO_EBP });
    expect(r.walk.frames).toHaveLength(1);
    expect(r.walk.frames[0]!.trust).toBe("context");
    expect(r.walk.stop.reason).toBe(reason);
    expect(r.walk.stop.detail).toContain(`frame-data rva=${hexOf(r.code.rva("f"))}`);
    expect(r.walk.stop.detail).toContain(why);
  });

  it("an unreadable ^ names the address", () => {
    const r = basic("$T0 $esp 4096 + = $eip $T0 ^ = $esp $T0 4 + =", { ebp: NO_EBP });
    expect(r.walk.stop.address).toBe(STACK + 4096n);
  });

  it.each([
    ["an unknown token", "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = #"],
    ["stack underflow", "$T0 .raSearch = $eip $T0 ^ = $esp +"],
    ["division by zero", "$T0 $esp 20 0 / + = $eip $T0 ^ = $esp $T0 4 + ="],
    ["no $eip assignment", "$T0 .raSearch = $esp $T0 4 + ="],
    ["values left over", "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = 42"],
  ])("%s: the frame-data strategy yields and the walk falls back to the EBP chain", (_what, program) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebp", "mov ebp, esp", "push ebx", "sub esp, 8", "f_body:", "call g", "add esp, 8", "pop ebx", "pop ebp", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = frameDataRecord(code, "main", "main_end", { program: FPO_PROGRAM });
    const f = frameDataRecord(code, "f", "f_end", { localSize: 8, savedRegsSize: 8, program });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { frameData: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(2).u32(CALLER.ebx).mark("frame").u32(CALLER.ebp).u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFd(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: l["frame"]! }));
    expect(walk.frames.length).toBeGreaterThanOrEqual(2);
    expect(walk.frames[1]!).toMatchObject({ addrPC: code.at("main_ret_f"), addrStack: labels["esp1"], addrFrame: CALLER.ebp, trust: "frame-pointer" });
    expect(ruleText(walk.frames[1]!.rule)).toContain("ebp-chain");
  });
});
