/**
 * The x86 FPO_DATA strategy (x86-fpo.md §1.4): one test per record shape. Each test assembles
 * a small module (so every return address on the stack really follows a call into the function
 * being unwound), builds the stack the code would have at the chosen PC, and walks it with
 * walker "fpo". Expected values come from the construction: "the return address was put in
 * slot X, so the caller's ESP is X+4".
 */
import { ruleText } from "../../../src/arch/rule-text.js";
import { describe, expect, it } from "vitest";
import { FRAME_NONFPO, FRAME_TRAP, FRAME_TSS, type FpoData } from "../../../src/model/fpo-data.js";
import type { Module, Registers } from "../../../src/model/snapshot.js";
import type { Walk } from "../../../src/walk/frame.js";
import { walkThread } from "../../../src/walk/walk.js";
import { breakpadTrust } from "../../../src/render/breakpad.js";
import type { Rule } from "../../../src/arch/rule.js";
import { snapshotOf } from "../../support/snapshots.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { assembleX86, fpoRecord, hexOf, loadX86Assembler, MODULE_BASE, x86Module, type X86Code } from "../../support/x86-code.js";

await loadX86Assembler();

const STACK = 0x0012_f000n;

/** What the caller had in its registers (and what the callee saved). */
const CALLER = { ebx: 0xb1b1_0001n, esi: 0x5151_0002n, edi: 0xd1d1_0003n, ebp: 0x0012_fe00n, eax: 0xaaaa_0004n, ecx: 0xcccc_0005n, edx: 0xdddd_0006n } as const;
/** What the callee left in the registers it saved and then changed. */
const CLOBBER = { ebx: 0x0bad_0001n, esi: 0x0bad_0002n, edi: 0x0bad_0003n, ebp: 0x0bad_0004n, eax: 0x0bad_0005n, ecx: 0x0bad_0006n, edx: 0x0bad_0007n } as const;
type Reg = keyof typeof CALLER;

/** Walks the one-thread snapshot made of the code, the stack and the module, with walker "fpo". */
function walkFpo(code: X86Code, module: Module, stack: StackBuilder, registers: (labels: Record<string, bigint>) => Registers): { walk: Walk; labels: Record<string, bigint> } {
  const built = stack.build();
  const snap = snapshotOf("x86", registers(built.labels), [code.region, built], [module]);
  return { walk: walkThread(snap, snap.threads[0]!, { walker: "fpo" }), labels: built.labels };
}

/**
 * records[k] is the record of frame k: frame k's funcTableEntry names it, and frame k+1 (when
 * there is one) was found with it: trust "fpo" and a rule naming `fpo rva=…`.
 */
function expectFoundBy(walk: Walk, records: readonly FpoData[]): void {
  records.forEach((r, k) => {
    expect(walk.frames[k]!.funcTableEntry, `frame ${k} funcTableEntry`).toEqual({
      kind: "fpo",
      beginRva: BigInt(r.ulOffStart),
      endRva: BigInt(r.ulOffStart + r.cbProcSize),
      moduleBase: MODULE_BASE,
    });
    const caller = walk.frames[k + 1];
    if (caller === undefined) return;
    expect(caller.trust, `frame ${k + 1} trust`).toBe("fpo");
    expect(ruleText(caller.rule), `frame ${k + 1} rule`).toContain(`fpo rva=${hexOf(r.ulOffStart)}`);
  });
}

/** The registers of frame `k` that the test cares about. */
function regsOf(walk: Walk, k: number, names: readonly string[]): Record<string, bigint | undefined> {
  const f = walk.frames[k]!;
  // What the walk carries on (recovered plus callee-saved registers passed through).
  const registers = f.unwindRegisters ?? f.registers;
  return Object.fromEntries(names.map((n) => [n, registers[n]]));
}

describe("x86 FPO_DATA walk: the body rule (x86-fpo.md §1.4 step 3)", () => {
  it("fUseBP off: ra = esp + locals + savedRegs, and EBP passes through", () => {
    const code = assembleX86([
      "main:", "push ebx", "sub esp, 4", "call f", "main_ret_f:", "add esp, 4", "pop ebx", "ret", "main_end:",
      "f:", "sub esp, 8", "push ebx", "push esi", "f_body:", "call g", "pop esi", "pop ebx", "add esp, 8", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end", { cdwLocals: 1, cbRegs: 1, cbProlog: 4 });
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbRegs: 2, cbProlog: 5 });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").u32(CALLER.esi).u32(CALLER.ebx).fill(2)
      .mark("ra0").u32(code.at("main_ret_f"))
      .mark("esp1").fill(1).u32(CALLER.ebx)
      .mark("ra1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: CALLER.ebp, ebx: CLOBBER.ebx, esi: CLOBBER.esi }));
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack, fr.addrFrame])).toEqual([
      [code.at("f_body"), labels["esp0"], CALLER.ebp],
      [code.at("main_ret_f"), labels["ra0"]! + 4n, CALLER.ebp],
    ]);
    expect(walk.frames[1]!.addrStack).toBe(labels["esp1"]);
    expect(walk.frames[1]!.addrReturn).toBe(0n);
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });

  it("a record whose sizes miss the return address by more than the search: the stack is scanned (trust scan, a site-check rule)", () => {
    const code = assembleX86([
      "main:", "push ebx", "sub esp, 4", "call f", "main_ret_f:", "add esp, 4", "pop ebx", "ret", "main_end:",
      "f:", "sub esp, 48", "push ebx", "push esi", "f_body:", "call g", "pop esi", "pop ebx", "add esp, 48", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    // f keeps twelve locals; its record says one, so the rule's slot and the words it searches
    // above it are locals, and EIP is a local's value.
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 1, cbRegs: 2, cbProlog: 5 });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").u32(CALLER.esi).u32(CALLER.ebx).fill(12, 0x2222_2222n)
      .mark("ra0").u32(code.at("main_ret_f"))
      .fill(1).u32(CALLER.ebx).u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: CALLER.ebp, ebx: CLOBBER.ebx, esi: CLOBBER.esi }));
    const caller = walk.frames[1]!;
    expect([caller.addrPC, caller.addrStack, caller.trust]).toEqual([code.at("main_ret_f"), labels["ra0"]! + 4n, "scan"]);
    expect(caller.rule).toMatchObject({ kind: "site-check", found: "scan", rule: { kind: "fpo", form: "body" }, eip: 0x2222_2222n, slot: labels["ra0"], value: code.at("main_ret_f") });
    const inner = ruleText((caller.rule as Extract<Rule, { kind: "site-check" }>).rule);
    expect(inner).toContain(`fpo rva=${hexOf(f.ulOffStart)}`);
    expect(ruleText(caller.rule)).toBe(`${inner}; eip 0x22222222 is not a return address: scanned to [${hexOf(labels["ra0"]!)}]=${hexOf(code.at("main_ret_f"))}`);
    expect(breakpadTrust(caller)).toBe("call frame info with scanning");
  });

  it("fUseBP on: the caller's EBP comes from [esp + calleeParams + savedRegs − 8] and drives the next EBP frame", () => {
    const code = assembleX86([
      "start:", "call main", "start_ret:", "ret", "start_end:",
      "main:", "push ebp", "mov ebp, esp", "sub esp, 8", "call f", "main_ret_f:", "leave", "ret", "main_end:",
      // MSVC's order: locals, then ebx, ebp, esi, edi; EBP then serves as a general register.
      "f:", "sub esp, 8", "push ebx", "push ebp", "push esi", "push edi", "mov ebp, 0x5a5a5a5a", "f_body:", "call g",
      "pop edi", "pop esi", "pop ebp", "pop ebx", "add esp, 8", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const start = fpoRecord(code, "start", "start_end");
    const main = fpoRecord(code, "main", "main_end", { cbProlog: 6, cbFrame: FRAME_NONFPO });
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbRegs: 4, fUseBP: true, cbProlog: 7 });
    const module = x86Module(code, [["start", "start_end"], ["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [start, main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").u32(CALLER.edi).u32(CALLER.esi).mark("ebp_slot").u32(s.ref("main_frame")).u32(CALLER.ebx).fill(2)
      .mark("ra0").u32(code.at("main_ret_f"))
      .mark("esp1").fill(2)
      .mark("main_frame").u32(0).u32(code.at("start_ret"))
      .mark("esp2").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({
      eip: code.at("f_body"), esp: l["esp0"]!, ebp: 0x5a5a5a5an, ebx: CLOBBER.ebx, esi: CLOBBER.esi, edi: CLOBBER.edi,
    }));
    expect(labels["ebp_slot"]).toBe(labels["esp0"]! + 16n - 8n);
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack, fr.addrFrame])).toEqual([
      [code.at("f_body"), labels["esp0"], 0x5a5a5a5an],
      [code.at("main_ret_f"), labels["esp1"], labels["main_frame"]],
      [code.at("start_ret"), labels["esp2"], 0n],
    ]);
    expect(ruleText(walk.frames[1]!.rule)).toContain("useBP");
    expect(ruleText(walk.frames[2]!.rule)).toContain("FRAME_NONFPO");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main, start]);
  });

  it("fUseBP with two call arguments pushed: the return address is found 8 bytes up and the EBP slot moves with it", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "sub esp, 8", "push ebx", "push ebp", "push esi", "push edi", "mov ebp, 0x5a5a5a5a", "push 1", "push 2", "f_call:", "call g",
      "add esp, 8", "pop edi", "pop esi", "pop ebp", "pop ebx", "add esp, 8", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbRegs: 4, fUseBP: true, cbProlog: 7 });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").u32(2).u32(1).u32(CALLER.edi).u32(CALLER.esi).u32(CALLER.ebp).u32(CALLER.ebx).fill(2)
      .mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_call"), esp: l["esp0"]!, ebp: 0x5a5a5a5an }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack, walk.frames[1]!.addrFrame]).toEqual([code.at("main_ret_f"), labels["esp1"], CALLER.ebp]);
    expect(ruleText(walk.frames[1]!.rule)).toContain("found 8 bytes above");
    expectFoundBy(walk, [f, main]);
  });

  it("fUseBP in a caller frame: the EBP slot lies above the callee's arguments (calleeParams)", () => {
    const code = assembleX86([
      "start:", "call main", "start_ret:", "ret", "start_end:",
      "main:", "sub esp, 4", "push ebx", "push ebp", "mov ebp, 0x5a5a5a5a", "push 2", "push 1", "call g", "main_ret_g:",
      "pop ebp", "pop ebx", "add esp, 4", "ret", "main_end:",
      "g:", "sub esp, 4", "g_body:", "call h", "add esp, 4", "ret 8", "g_end:",
      "h:", "ret", "h_end:",
    ]);
    const start = fpoRecord(code, "start", "start_end");
    const main = fpoRecord(code, "main", "main_end", { cdwLocals: 1, cbRegs: 2, fUseBP: true, cbProlog: 5 });
    const g = fpoRecord(code, "g", "g_end", { cdwLocals: 1, cdwParams: 2, cbProlog: 3 });
    const module = x86Module(code, [["start", "start_end"], ["main", "main_end"], ["g", "g_end"], ["h", "h_end"]], { fpo: [start, main, g] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(1).u32(code.at("main_ret_g"))
      .mark("esp1").u32(1).u32(2).mark("ebp_slot").u32(CALLER.ebp).u32(CALLER.ebx).fill(1)
      .mark("ra1").u32(code.at("start_ret")).mark("esp2").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("g_body"), esp: l["esp0"]!, ebp: 0x5a5a5a5an }));
    expect(labels["ebp_slot"]).toBe(labels["esp1"]! + 8n + 8n - 8n);
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack, fr.addrFrame])).toEqual([
      [code.at("g_body"), labels["esp0"], 0x5a5a5a5an],
      [code.at("main_ret_g"), labels["esp1"], 0x5a5a5a5an],
      [code.at("start_ret"), labels["esp2"], CALLER.ebp],
    ]);
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [g, main, start]);
  });

  // The fUseBP slot rule (savedRegs − 8) assumes EBP was pushed second; with cbRegs = 1, EBP is
  // the only saved register, at [esp]. A minidump's stack starts at ESP, so reading below it
  // would fail. Expected from the construction: the caller's EBP is the word at esp0 and main
  // is found at ra0.
  it("fUseBP with cbRegs 1: EBP, the only saved register, is at [esp]", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "sub esp, 8", "push ebp", "mov ebp, 0x5a5a5a5a", "f_body:", "call g", "pop ebp", "add esp, 8", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbRegs: 1, fUseBP: true, cbProlog: 4 });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").u32(CALLER.ebp).fill(2).mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: 0x5a5a5a5an }));
    expect(walk.stop.reason).toBe("end-of-stack");
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack, walk.frames[1]!.addrFrame]).toEqual([code.at("main_ret_f"), labels["esp1"], CALLER.ebp]);
  });

  const PUSHED: readonly Reg[] = ["ebx", "esi", "edi", "ebp", "eax", "ecx", "edx"];
  const CALLEE_SAVED = ["ebx", "esi", "edi", "ebp"] as const;

  /** f saves the first `n` of PUSHED under 8 bytes of locals; `at` is f_body (body) or f_epilog. */
  function savedRegsCase(n: number, at: "f_body" | "f_epilog") {
    const regs = PUSHED.slice(0, n);
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "sub esp, 8", ...regs.map((r) => `push ${r}`), "f_body:", "call g",
      "f_epilog:", ...[...regs].reverse().map((r) => `pop ${r}`), "add esp, 8", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbRegs: n, cbProlog: 3 + n });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0");
    for (const r of [...regs].reverse()) s.u32(CALLER[r]);
    s.fill(2).mark("ra0").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    // f changed every register it saved, except EBP (fUseBP is off: EBP is untouched).
    const context = (l: Record<string, bigint>): Registers => {
      const out: Registers = { eip: code.at(at), esp: l["esp0"]! };
      for (const r of PUSHED) out[r] = regs.includes(r) && r !== "ebp" ? CLOBBER[r] : CALLER[r];
      return out;
    };
    return { ...walkFpo(code, module, s, context), code, regs, records: [f, main] };
  }

  it.each([0, 1, 2, 3, 4, 5, 6, 7])("cbRegs %i in the body: ra is found above the saved registers and the locals", (n) => {
    const { walk, labels, code, regs, records } = savedRegsCase(n, "f_body");
    expect(walk.frames).toHaveLength(2);
    expect(walk.frames[1]!.addrPC).toBe(code.at("main_ret_f"));
    expect(walk.frames[1]!.addrStack).toBe(labels["esp1"]);
    expect(labels["ra0"]).toBe(labels["esp0"]! + BigInt(4 * n + 8));
    // EBP passes through; callee-saved registers f did not save pass through too.
    const unsaved = CALLEE_SAVED.filter((r) => r === "ebp" || !regs.includes(r));
    expect(regsOf(walk, 1, unsaved)).toEqual(Object.fromEntries(unsaved.map((r) => [r, CALLER[r]])));
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, records);
  });

  it.each([0, 1, 2, 3, 4, 5, 6, 7])("cbRegs %i at the epilog: the saved registers are restored to the pushed values", (n) => {
    const { walk, labels, code, records } = savedRegsCase(n, "f_epilog");
    expect(walk.frames).toHaveLength(2);
    expect(walk.frames[1]!.addrPC).toBe(code.at("main_ret_f"));
    expect(walk.frames[1]!.addrStack).toBe(labels["esp1"]);
    expect(regsOf(walk, 1, CALLEE_SAVED)).toEqual({ ebx: CALLER.ebx, esi: CALLER.esi, edi: CALLER.edi, ebp: CALLER.ebp });
    expect(ruleText(walk.frames[1]!.rule)).toContain("to return");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, records);
  });

  it("calleeParams: a caller whose callee took 2 stack arguments (cdwParams=2) is unwound above them", () => {
    const code = assembleX86([
      "start:", "call main", "start_ret:", "ret", "start_end:",
      "main:", "push ebx", "sub esp, 4", "push eax", "push ecx", "call g", "main_ret_g:", "add esp, 4", "pop ebx", "ret", "main_end:",
      "g:", "sub esp, 4", "g_body:", "call h", "add esp, 4", "ret 8", "g_end:",
      "h:", "ret", "h_end:",
      // A function that calls through a pointer: its return address is a plausible code pointer.
      "cb:", "call eax", "cb_ret:", "ret", "cb_end:",
    ]);
    const start = fpoRecord(code, "start", "start_end");
    const main = fpoRecord(code, "main", "main_end", { cdwLocals: 1, cbRegs: 1, cbProlog: 4 });
    const g = fpoRecord(code, "g", "g_end", { cdwLocals: 1, cdwParams: 2, cbProlog: 3 });
    const module = x86Module(code, [["start", "start_end"], ["main", "main_end"], ["g", "g_end"], ["h", "h_end"], ["cb", "cb_end"]], { fpo: [start, main, g] });
    // main keeps code pointers in its arguments and its local: were the callee's 8 bytes of
    // arguments ignored, the search for main's return address would start at the local.
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(1)
      .mark("ra0").u32(code.at("main_ret_g"))
      .mark("esp1").u32(code.at("cb_ret")).u32(code.at("cb_ret"))
      .mark("main_local").u32(code.at("cb_ret")).u32(CALLER.ebx)
      .mark("ra1").u32(code.at("start_ret"))
      .mark("esp2").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("g_body"), esp: l["esp0"]!, ebp: CALLER.ebp }));
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack])).toEqual([
      [code.at("g_body"), labels["esp0"]],
      [code.at("main_ret_g"), labels["esp1"]],
      [code.at("start_ret"), labels["ra1"]! + 4n],
    ]);
    expect(ruleText(walk.frames[2]!.rule)).toContain("ra@esp+16");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [g, main, start]);
  });

  it("looks a caller up at ra − 1: a call that ends its function uses that function's record, not the next one's", () => {
    const code = assembleX86([
      "main:", "sub esp, 4", "call f", "main_end:",
      "next:", "ret", "next_end:",
      "f:", "sub esp, 4", "f_body:", "call g", "add esp, 4", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end", { cdwLocals: 1, cbProlog: 3 });
    const next = fpoRecord(code, "next", "next_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 1, cbProlog: 3 });
    const module = x86Module(code, [["main", "main_end"], ["next", "next_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, next, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(1).u32(code.at("main_end")).mark("esp1").fill(1).u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: CALLER.ebp }));
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack])).toEqual([
      [code.at("f_body"), labels["esp0"]],
      [code.at("next"), labels["esp1"]],
    ]);
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });
});

/** One prolog instruction and what it does to the stack. */
interface PrologStep {
  asm: string;
  push?: Reg;
  alloc?: number;
  frame?: true;
}

describe("x86 FPO_DATA walk: the PC in the prolog (x86-fpo.md §1.4 step 4)", () => {
  const VARIANTS: { name: string; steps: PrologStep[]; epilog: string[]; cbFrame: number }[] = [
    {
      name: "push ebp; push ebx; sub esp, 8; push esi",
      steps: [{ asm: "push ebp", push: "ebp" }, { asm: "push ebx", push: "ebx" }, { asm: "sub esp, 8", alloc: 8 }, { asm: "push esi", push: "esi" }],
      epilog: ["pop esi", "add esp, 8", "pop ebx", "pop ebp", "ret"],
      cbFrame: 0,
    },
    {
      name: "push ebp; push ebx; sub esp, 0x200 (imm32); push esi",
      steps: [{ asm: "push ebp", push: "ebp" }, { asm: "push ebx", push: "ebx" }, { asm: "sub esp, 0x200", alloc: 0x200 }, { asm: "push esi", push: "esi" }],
      epilog: ["pop esi", "add esp, 0x200", "pop ebx", "pop ebp", "ret"],
      cbFrame: 0,
    },
    {
      name: "push ebp; mov ebp, esp; sub esp, 8; push esi (FRAME_NONFPO)",
      steps: [{ asm: "push ebp", push: "ebp" }, { asm: "mov ebp, esp", frame: true }, { asm: "sub esp, 8", alloc: 8 }, { asm: "push esi", push: "esi" }],
      epilog: ["pop esi", "mov esp, ebp", "pop ebp", "ret"],
      cbFrame: FRAME_NONFPO,
    },
  ];

  const cases = VARIANTS.flatMap((v) => v.steps.map((_, k) => ({ ...v, k })).concat([{ ...v, k: v.steps.length }]));

  it.each(cases)("$name: PC at prolog instruction boundary $k", ({ steps, epilog, cbFrame, k }) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", ...steps.flatMap((st, i) => [`p${i}:`, st.asm]), `p${steps.length}:`, "call g", ...epilog, "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const locals = steps.reduce((n, st) => n + (st.alloc ?? 0), 0);
    const pushes = steps.filter((st) => st.push !== undefined).length;
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: locals / 4, cbRegs: pushes, cbProlog: Number(code.at(`p${steps.length}`) - code.at("f")), cbFrame });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });

    // The stack as the first k instructions left it, from the return address down.
    const items: { value?: bigint; fill?: number; label?: string }[] = [{ value: code.at("main_ret_f"), label: "ra0" }];
    let ebpLabel: string | undefined;
    for (const st of steps.slice(0, k)) {
      if (st.push !== undefined) items.push({ value: CALLER[st.push], label: `saved_${st.push}` });
      if (st.alloc !== undefined) items.push({ fill: st.alloc / 4 });
      if (st.frame === true) ebpLabel = items[items.length - 1]!.label;
    }
    const s = new StackBuilder(STACK);
    s.mark("esp0");
    for (const item of [...items].reverse()) {
      if (item.label !== undefined) s.mark(item.label);
      if (item.fill !== undefined) s.fill(item.fill);
      else s.u32(item.value!);
    }
    s.mark("esp1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({
      eip: code.at(`p${k}`), esp: l["esp0"]!, ebp: ebpLabel === undefined ? CALLER.ebp : l[ebpLabel]!, ebx: CALLER.ebx, esi: CALLER.esi,
    }));
    expect(walk.frames).toHaveLength(2);
    expect(walk.frames[1]!.addrPC).toBe(code.at("main_ret_f"));
    expect(walk.frames[1]!.addrStack).toBe(labels["esp1"]);
    expect(labels["esp1"]).toBe(labels["ra0"]! + 4n);
    expect(regsOf(walk, 1, ["ebp", "ebx", "esi"])).toEqual({ ebp: CALLER.ebp, ebx: CALLER.ebx, esi: CALLER.esi });
    if (k < steps.length) expect(ruleText(walk.frames[1]!.rule)).toContain("prolog");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });
});

describe("x86 FPO_DATA walk: the PC in the epilog (x86-fpo.md §1.4 step 5)", () => {
  it.each([0, 1, 2, 3])("pop esi; pop ebx; add esp, 8; ret 8 — PC at instruction %i", (k) => {
    const code = assembleX86([
      "main:", "push 0x22222222", "push 0x11111111", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "sub esp, 8", "push ebx", "push esi", "call g", "e0:", "pop esi", "e1:", "pop ebx", "e2:", "add esp, 8", "e3:", "ret 8", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbRegs: 2, cdwParams: 2, cbProlog: 5 });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("sp0").u32(CALLER.esi).mark("sp1").u32(CALLER.ebx).mark("sp2").fill(2)
      .mark("sp3").u32(code.at("main_ret_f"))
      .mark("args").u32(0x11111111).u32(0x22222222)
      .u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({
      eip: code.at(`e${k}`), esp: l[`sp${k}`]!, ebp: CALLER.ebp,
      esi: k >= 1 ? CALLER.esi : CLOBBER.esi, ebx: k >= 2 ? CALLER.ebx : CLOBBER.ebx,
    }));
    expect(walk.frames).toHaveLength(2);
    // The unwind leaves the arguments on the stack (it does not apply `ret 8`).
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["args"]]);
    expect(regsOf(walk, 1, ["ebx", "esi", "ebp"])).toEqual({ ebx: CALLER.ebx, esi: CALLER.esi, ebp: CALLER.ebp });
    expect(ruleText(walk.frames[1]!.rule)).toContain("to return");
    // main's unwind skips f's 8 bytes of arguments to reach its own return address (0).
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });

  it.each([0, 1])("leave; ret — PC at instruction %i", (k) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebp", "mov ebp, esp", "sub esp, 8", "call g", "e0:", "leave", "e1:", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 2, cbProlog: 6, cbFrame: FRAME_NONFPO });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("sp0").fill(2).mark("frame").u32(CALLER.ebp).mark("sp1").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at(`e${k}`), esp: l[`sp${k}`]!, ebp: k === 0 ? l["frame"]! : CALLER.ebp }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack, walk.frames[1]!.addrFrame]).toEqual([code.at("main_ret_f"), labels["esp1"], CALLER.ebp]);
    expect(ruleText(walk.frames[1]!.rule)).toContain("to return");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });

  it.each([0, 1, 2, 3, 4])("lea esp,[ebp-8]; pop esi; pop edi; pop ebp; ret — PC at instruction %i", (k) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebp", "mov ebp, esp", "push edi", "push esi", "sub esp, 16", "call g",
      "e0:", "lea esp, [ebp-8]", "e1:", "pop esi", "e2:", "pop edi", "e3:", "pop ebp", "e4:", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 4, cbRegs: 2, cbProlog: 8, cbFrame: FRAME_NONFPO });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("sp0").fill(4).mark("sp1").u32(CALLER.esi).mark("sp2").u32(CALLER.edi).mark("sp3").u32(CALLER.ebp)
      .mark("sp4").u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({
      eip: code.at(`e${k}`), esp: l[`sp${k}`]!, ebp: k <= 3 ? l["sp3"]! : CALLER.ebp,
      esi: k >= 2 ? CALLER.esi : CLOBBER.esi, edi: k >= 3 ? CALLER.edi : CLOBBER.edi,
    }));
    expect(walk.frames).toHaveLength(2);
    expect([walk.frames[1]!.addrPC, walk.frames[1]!.addrStack]).toEqual([code.at("main_ret_f"), labels["esp1"]]);
    expect(regsOf(walk, 1, ["ebp", "esi", "edi"])).toEqual({ ebp: CALLER.ebp, esi: CALLER.esi, edi: CALLER.edi });
    expect(ruleText(walk.frames[1]!.rule)).toContain("to return");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });
});

describe("x86 FPO_DATA walk: frame kinds (x86-fpo.md §1.2)", () => {
  it("FRAME_NONFPO is an EBP frame: eip=[ebp+4], esp=ebp+8, ebp=[ebp]", () => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "push ebp", "mov ebp, esp", "push esi", "sub esp, 8", "f_body:", "call g", "add esp, 8", "pop esi", "pop ebp", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    // The sizes are deliberately not the frame's: a NONFPO frame is unwound through EBP alone.
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 7, cbRegs: 3, cbProlog: 7, cbFrame: FRAME_NONFPO });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(2).u32(CLOBBER.esi).mark("frame").u32(CALLER.ebp).u32(code.at("main_ret_f")).mark("esp1").u32(0);
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: l["frame"]! }));
    expect(walk.frames.map((fr) => [fr.addrPC, fr.addrStack, fr.addrFrame])).toEqual([
      [code.at("f_body"), labels["esp0"], labels["frame"]],
      [code.at("main_ret_f"), labels["frame"]! + 8n, CALLER.ebp],
    ]);
    expect(walk.frames[1]!.addrStack).toBe(labels["esp1"]);
    expect(ruleText(walk.frames[1]!.rule)).toContain("FRAME_NONFPO");
    expect(walk.stop.reason).toBe("end-of-stack");
    expectFoundBy(walk, [f, main]);
  });

  it.each([
    { cbFrame: FRAME_TRAP, reason: "trap-frame", kind: "FRAME_TRAP" },
    { cbFrame: FRAME_TSS, reason: "tss-frame", kind: "FRAME_TSS" },
  ])("$kind ends the walk with stop reason $reason and still reports the context frame", ({ cbFrame, reason, kind }) => {
    const code = assembleX86([
      "main:", "call f", "main_ret_f:", "ret", "main_end:",
      "f:", "sub esp, 4", "f_body:", "call g", "add esp, 4", "ret", "f_end:",
      "g:", "ret", "g_end:",
    ]);
    const main = fpoRecord(code, "main", "main_end");
    const f = fpoRecord(code, "f", "f_end", { cdwLocals: 1, cbProlog: 3, cbFrame });
    const module = x86Module(code, [["main", "main_end"], ["f", "f_end"], ["g", "g_end"]], { fpo: [main, f] });
    // A perfectly walkable stack and EBP chain: the record alone must end the walk.
    const s = new StackBuilder(STACK);
    s.mark("esp0").fill(1).u32(code.at("main_ret_f")).u32(0).mark("frame").u32(0).u32(code.at("main_ret_f"));
    const { walk, labels } = walkFpo(code, module, s, (l) => ({ eip: code.at("f_body"), esp: l["esp0"]!, ebp: l["frame"]! }));
    expect(walk.frames).toHaveLength(1);
    expect(walk.frames[0]!).toMatchObject({ index: 0, addrPC: code.at("f_body"), addrStack: labels["esp0"], trust: "context" });
    expect(walk.stop.reason).toBe(reason);
    expect(walk.stop.detail).toContain(kind);
    expect(walk.stop.detail).toContain(`fpo rva=${hexOf(f.ulOffStart)}`);
  });
});
