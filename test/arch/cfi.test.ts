/**
 * The STACK CFI evaluator against Breakpad's rules (minidump.md §7; Breakpad's
 * postfix_evaluator-inl.h and cfi_frame_info.cc): the postfix language, rule sets and delta
 * rows, the register maps, and whole walks of snapshots whose modules carry STACK CFI.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyRules, cfiTable, compileExpression, evaluateExpression, rulesAt, type CfiRuleSet } from "../../src/arch/cfi.js";
import { x64Cfi } from "../../src/arch/x64/cfi.js";
import { x86Cfi } from "../../src/arch/x86/cfi.js";
import { parseBreakpadSym, symTables } from "../../src/formats/breakpad-sym.js";
import { cfiIndex } from "../../src/formats/breakpad-sym/cfi-index.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Module, Registers, Snapshot } from "../../src/model/snapshot.js";
import type { FrameSite } from "../../src/unwind/step.js";
import { UnwindCache } from "../../src/unwind/cache.js";
import { ruleText } from "../../src/arch/rule-text.js";
import { runRule } from "../support/rules.js";
import { walkThread } from "../../src/walk/walk.js";
import { explainWalk } from "../../src/analysis/explain-walk.js";
import { formatExplanation } from "../../src/render/explain.js";
import { StackBuilder } from "../support/stack-builder.js";

const memory = new RegionMemory([{ base: 0x1000n, bytes: new Uint8Array([0x78, 0x56, 0x34, 0x12, 0xf0, 0xde, 0xbc, 0x9a]) }]);
const ev = (text: string, names: Record<string, bigint> = {}, width: 4 | 8 = 8): bigint | undefined => {
  const e = compileExpression(text, width);
  return e === undefined ? undefined : evaluateExpression(e, new Map(Object.entries(names)), memory);
};

describe("the postfix expressions", () => {
  it.each([
    ["$rsp 8 +", { $rsp: 0x100n }, 0x108n],
    ["$rsp 8 -", { $rsp: 0x100n }, 0xf8n],
    ["3 4 *", {}, 12n],
    ["17 5 /", {}, 3n],
    ["17 5 %", {}, 2n],
    ["$x 16 @", { $x: 0x1237n }, 0x1230n],
    ["4096 ^", {}, 0x9abcdef012345678n],
    [".cfa -8 +", { ".cfa": 0x1008n }, 0x1000n],
  ] as const)("%s = %s", (text, names, value) => {
    expect(ev(text, names)).toBe(value);
  });

  it("wraps at the machine's width and reads a word of that width", () => {
    expect(ev("0 1 -")).toBe(0xffff_ffff_ffff_ffffn);
    expect(ev("0 1 -", {}, 4)).toBe(0xffff_ffffn);
    expect(ev("4096 ^", {}, 4)).toBe(0x12345678n);
  });

  it("assigns with =, also glued to the next token, and evaluates later tokens with the new value", () => {
    expect(ev("$t 5 = $t 1 +")).toBe(6n);
    expect(ev("$t 5 =$u $t = $u")).toBe(5n);
  });

  it("fails on what Breakpad rejects: unknown names, unreadable memory, division by zero, leftovers, underflow, assignment to a non-$ name", () => {
    for (const text of ["$nope", "16 ^", "1 0 /", "1 0 %", "1 2", "+", ".x 1 =", "0x10"]) expect(ev(text), text).toBeUndefined();
  });
});

describe("bad rules never throw", () => {
  it("any token soup evaluates to a value or to undefined, and parses to true or false", () => {
    const token = fc.oneof(fc.constantFrom("+", "-", "*", "/", "%", "@", "^", "=", ".cfa", ".ra", "$rsp", "$rbp", ":", ".cfa:", "$rbx:", "=$x"), fc.bigInt({ min: -(1n << 70n), max: 1n << 70n }).map(String));
    fc.assert(
      fc.property(fc.array(token, { maxLength: 12 }), (tokens) => {
        const text = tokens.join(" ");
        const v = ev(text, { $rsp: 0x1000n, $rbp: 0x1004n, ".cfa": 0x1000n });
        expect(v === undefined || (v >= 0n && v < 1n << 64n)).toBe(true);
        expect(typeof applyRules({ registers: new Map() }, text, 8)).toBe("boolean");
      }),
    );
  });
});

describe("rule sets and delta rows", () => {
  it("parses name: expression pairs; a later rule replaces one of the same name", () => {
    const set: CfiRuleSet = { registers: new Map() };
    expect(applyRules(set, ".cfa: $rsp 8 + .ra: .cfa 8 - ^", 8)).toBe(true);
    expect(applyRules(set, ".cfa: $rsp 16 + $rbx: .cfa 16 - ^", 8)).toBe(true);
    expect([set.cfa?.text, set.ra?.text, [...set.registers].map(([n, e]) => `${n}=${e.text}`)]).toEqual(["$rsp 16 +", ".cfa 8 - ^", ["$rbx=.cfa 16 - ^"]]);
  });

  it("rejects an expression without a name, a name without an expression, and an empty name", () => {
    for (const text of ["$rsp 8 +", ".cfa: .ra: .cfa 8 - ^", ": 1", ".cfa:"]) expect(applyRules({ registers: new Map() }, text, 8), text).toBe(false);
  });

  const sym = parseBreakpadSym(
    [
      "MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libx.so",
      "STACK CFI INIT 1000 20 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
      "STACK CFI 1001 .cfa: $rsp 16 + $rbp: .cfa 16 - ^",
      "STACK CFI 1004 .cfa: $rbp 16 +",
      "STACK CFI INIT 1010 8 .cfa: $rsp 99 + .ra: .cfa 8 - ^",
      "STACK CFI INIT 1040 0 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
      "STACK CFI INIT 1050 10 .cfa: $rsp 8 + .ra:",
    ].join("\n"),
  );
  // The records as a list, and the parse's index over the file (what attaching the file gives a module).
  for (const [name, table] of [["a list of records", cfiTable(sym.stackCfi)], ["the parse's index", cfiIndex(symTables(sym)!)]] as const) {
    const at = (rva: number): string | undefined => {
      const r = rulesAt(table, rva, 8);
      return r === undefined ? undefined : [r.set.cfa!.text, ...[...r.set.registers].map(([n, e]) => `${n}: ${e.text}`)].join(" | ");
    };

    it(`${name}: applies the INIT rules, then every delta row up to the address`, () => {
      expect(at(0x1000)).toBe("$rsp 8 +");
      expect(at(0x1003)).toBe("$rsp 16 + | $rbp: .cfa 16 - ^");
      expect(at(0x101f)).toBe("$rbp 16 + | $rbp: .cfa 16 - ^");
    });

    it(`${name}: keeps the first of overlapping INIT ranges, drops empty ones, and refuses malformed INIT rules`, () => {
      // 1010+8 lies inside 1000+20 and is dropped; 1040+0 is empty; 1050's rules are malformed.
      expect([0x1000, 0x1010, 0x1017, 0x101f, 0x1020, 0x1040, 0x1050, 0x105f].map((rva) => table.at(rva)?.address.toString(16))).toEqual(["1000", "1000", "1000", "1000", undefined, undefined, "1050", "1050"]);
      expect(at(0x1020)).toBeUndefined();
      expect(at(0x1040)).toBeUndefined();
      expect(at(0x1050)).toBeUndefined();
    });
  }
});

const BASE = 0x7f00_0000_0000n;
const STACK = 0x7ffd_0000_1000n;

function x64Module(rules: string[]): Module {
  const sym = parseBreakpadSym(["MODULE Linux x86_64 0123456789ABCDEF0123456789ABCDEF0 libx.so", ...rules].join("\n"));
  return { name: "libx.so", base: BASE, size: 0x10000n, symbols: [], unwind: { fpo: [], frameData: [], stackCfi: sym.stackCfi, origin: "test" } };
}

function site(machine: "x86" | "x64", module: Module, registers: Registers, pc: bigint, index = 0): FrameSite {
  return { machine, index, interrupted: false, registers, pc, lookupPc: pc, modules: [module], images: new RegionMemory([]), calleeParams: 0, cache: new UnwindCache() };
}

describe("x64 STACK CFI (Breakpad's amd64 register map)", () => {
  const module = x64Module([
    "STACK CFI INIT 1000 100 .cfa: $rsp 8 + .ra: .cfa 8 - ^",
    "STACK CFI 1010 .cfa: $rsp 32 + $rbx: .cfa 16 - ^ $rsi: .cfa 24 - ^ $r12: $nothing",
  ]);
  const s = new StackBuilder(STACK, 8).mark("sp").u64(1).u64(0x5151n).u64(0xbbbbn).u64(BASE + 0x2345n).mark("caller").build();
  const stack = new RegionMemory([{ base: s.base, bytes: s.bytes }]);
  const callee: Registers = { rip: BASE + 0x1020n, rsp: STACK, rbx: 1n, rbp: 2n, rsi: 3n, rdi: 4n, r12: 5n, r13: 6n, rax: 7n };

  it("recovers .cfa as RSP and .ra as RIP, the registers the rules give, and carries over the callee-saved ones they do not mention", () => {
    const rule = x64Cfi.ruleFor(site("x64", module, callee, callee["rip"]!))!;
    expect(ruleText(rule.rule)).toBe("cfi rva=0x1000: .cfa: $rsp 32 + .ra: .cfa 8 - ^ $rbx: .cfa 16 - ^ $rsi: .cfa 24 - ^ $r12: $nothing");
    const r = runRule(rule, callee, stack);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    // $r12's rule fails and is dropped, so r12 carries over like rbp and r13; rdi and rax do not
    // (not callee-saved).
    expect(r.registers).toEqual({ rbx: 0xbbbbn, rsi: 0x5151n, rbp: 2n, rsp: STACK + 32n, r12: 5n, r13: 6n, rip: BASE + 0x2345n });
    expect(r.interrupted).toBeUndefined();
  });

  it("uses only the callee's valid registers: a callee-saved register the callee's rule did not recover is not carried", () => {
    const r = runRule(x64Cfi.ruleFor(site("x64", module, callee, callee["rip"]!, 1))!, callee, stack, { recovered: ["rip", "rsp", "rbx"] });
    expect(r.ok && Object.keys(r.registers).sort()).toEqual(["rbx", "rip", "rsi", "rsp"]);
  });

  it("is no rule outside the INIT ranges, and fails when .cfa or .ra cannot be evaluated", () => {
    expect(x64Cfi.ruleFor(site("x64", module, callee, BASE + 0x2000n))).toBeUndefined();
    const r = runRule(x64Cfi.ruleFor(site("x64", module, callee, BASE + 0x1000n))!, callee, new RegionMemory([]));
    expect(r.ok).toBe(false);
  });

  it("a return address read elsewhere than just below the CFA makes the caller's PC an interrupted one", () => {
    const trap = x64Module(["STACK CFI INIT 1000 10 .cfa: $rsp 24 + ^ .ra: $rsp ^"]);
    const frame = new StackBuilder(STACK, 8).u64(BASE + 0x1234n).u64(0x33).u64(0x246).u64(STACK + 0x800n).build();
    const r = runRule(x64Cfi.ruleFor(site("x64", trap, callee, BASE + 0x1000n))!, callee, new RegionMemory([{ base: frame.base, bytes: frame.bytes }]));
    expect(r.ok && [r.registers["rip"], r.registers["rsp"], r.interrupted]).toEqual([BASE + 0x1234n, STACK + 0x800n, true]);
  });

  it("walks a stack with STACK CFI frame by frame (trust cfi); a return address of 0 fails the rule, and nothing after it finds a frame", () => {
    const cfi = x64Module(["STACK CFI INIT 1000 100 .cfa: $rsp 16 + .ra: .cfa 8 - ^ $rbp: .cfa 16 - ^"]);
    const st = new StackBuilder(STACK, 8)
      .u64(0xaaaan).u64(BASE + 0x1050n) // frame 0 → 1
      .u64(0xbbbbn).u64(0n); // frame 1 → end
    const b = st.build();
    const snap: Snapshot = {
      machine: "x64", os: "linux", modules: [cfi], memory: new RegionMemory([{ base: b.base, bytes: b.bytes }]),
      threads: [{ id: 1, crashed: true, registers: { rip: BASE + 0x1010n, rsp: STACK, rbp: 0n } }],
    };
    const walk = walkThread(snap, snap.threads[0]!);
    expect(walk.frames.map((f) => [f.addrPC, f.addrStack, f.trust, f.registers["rbp"]])).toEqual([
      [BASE + 0x1010n, STACK, "context", 0n],
      [BASE + 0x1050n, STACK + 16n, "cfi", 0xaaaan],
    ]);
    // Breakpad's amd64 walker: the CFI step fails, the RBP chain and the scan find nothing.
    expect(walk.stop.detail).toContain("the caller's rip is 0");
    const text = formatExplanation(explainWalk(snap, snap.threads[0]!));
    expect(text).toContain("STACK CFI for");
    expect(text).toContain("Rules in effect here: .cfa: $rsp 16 + .ra: .cfa 8 - ^ $rbp: .cfa 16 - ^");
  });
});

describe("x86 STACK CFI (Breakpad's x86 register map)", () => {
  it("needs EIP, ESP and EBP: a rule set that leaves EBP unknown fails", () => {
    const sym = parseBreakpadSym(["MODULE Linux x86 0123456789ABCDEF0123456789ABCDEF0 liby.so", "STACK CFI INIT 1000 10 .cfa: $esp 4 + .ra: .cfa 4 - ^"].join("\n"));
    const module: Module = { name: "liby.so", base: 0x0800_0000n, size: 0x10000n, symbols: [], unwind: { fpo: [], frameData: [], stackCfi: sym.stackCfi, origin: "test" } };
    const s = new StackBuilder(0x0012_0000n).u32(0x0800_1234).build();
    const stack = new RegionMemory([{ base: s.base, bytes: s.bytes }]);
    const rule = x86Cfi.ruleFor(site("x86", module, {}, 0x0800_1000n))!;
    expect(runRule(rule, { eip: 0x0800_1000n, esp: 0x0012_0000n, ebp: 0x0012_0100n }, stack)).toMatchObject({ ok: true, registers: { eip: 0x0800_1234n, esp: 0x0012_0004n, ebp: 0x0012_0100n } });
    expect(runRule(rule, { eip: 0x0800_1000n, esp: 0x0012_0000n }, stack).ok).toBe(false);
  });
});
