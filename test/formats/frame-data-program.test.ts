import { describe, expect, it } from "vitest";
import { evaluateProgram, parseProgram, type Program } from "../../src/formats/frame-data.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { StackBuilder } from "../support/stack-builder.js";

function parse(text: string): Program {
  const r = parseProgram(text);
  if (!r.ok) throw new Error(r.error.reason);
  return r.program;
}

function evaluate(text: string, inputs: Record<string, bigint>, memory = new RegionMemory([])) {
  return evaluateProgram(parse(text), inputs, memory);
}

describe("FrameData programs (x86-fpo.md §3)", () => {
  it("evaluates LLVM's FPO body program: .raSearch = esp + locals + saved regs (§3.2)", () => {
    const E = 0x0012f000n;
    const s = new StackBuilder(E);
    s.zeros(256).u32(0x5151).u32(0xd1d1).u32(0xb1b1).u32(0xbbbb).u32(0x00401234).mark("args");
    const memory = new RegionMemory([s.build()]);
    const r = evaluate(
      "$T0 .raSearch = $eip $T0 ^ = $esp $T0 4 + = $ebp $T0 4 - ^ = $ebx $T0 8 - ^ = $edi $T0 12 - ^ = $esi $T0 16 - ^ =",
      { $esp: E, $ebp: 0x99n, ".raSearch": E + 272n },
      memory,
    );
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(Object.fromEntries([...r.assigned].map((k) => [k, r.values.get(k)]))).toEqual({
      $T0: E + 272n,
      $eip: 0x00401234n,
      $esp: E + 276n,
      $ebp: 0xbbbbn,
      $ebx: 0xb1b1n,
      $edi: 0xd1d1n,
      $esi: 0x5151n,
    });
  });

  it("evaluates the frame-pointer program and Breakpad minidump2's frame 0 -> 1 values (§3.2)", () => {
    const s = new StackBuilder(0x0012fe88n);
    s.u32(0x0012ff70).u32(0x00404200);
    const memory = new RegionMemory([s.build()]);
    const r = evaluate("$T0 $ebp = $eip $T0 4 + ^ = $ebp $T0 ^ = $esp $T0 8 + = $L $T0 .cbSavedRegs - = $P $T0 4 + .cbParams + =", {
      $ebp: 0x0012fe88n, $esp: 0x0012fe84n, ".cbSavedRegs": 0n, ".cbParams": 4n,
    }, memory);
    expect(r.ok && [r.values.get("$eip"), r.values.get("$esp"), r.values.get("$ebp")]).toEqual([0x00404200n, 0x0012fe90n, 0x0012ff70n]);
  });

  it("aligns down with @ and marks the program as realigning", () => {
    const p = parse("$T1 $ebp 4 + = $T0 $T1 8 - 32 @ = $eip $T1 ^ = $esp $T1 4 + =");
    expect(p.realigns).toBe(true);
    const s = new StackBuilder(0x0012ff04n);
    s.u32(0x00401000);
    const r = evaluateProgram(p, { $ebp: 0x0012ff00n }, new RegionMemory([s.build()]));
    expect(r.ok && r.values.get("$T0")).toBe(0x0012fee0n);
  });

  it("reads numeric CodeView register names as registers ($20 = EBX, $23 = ESI, $24 = EDI)", () => {
    const r = evaluate("$20 $23 = $24 $22 =", { $esi: 7n, $ebp: 9n });
    expect(r.ok && [r.values.get("$ebx"), r.values.get("$edi")]).toEqual([7n, 9n]);
    expect(parse("$20 $23 =").tokens.map((t) => (t.kind === "variable" ? t.name : "op"))).toEqual(["$ebx", "$esi", "op"]);
  });

  it("assigns immediately: later tokens see the new value", () => {
    const r = evaluate("$T0 5 = $T1 $T0 1 + = $T0 $T1 2 * =", {});
    expect(r.ok && [r.values.get("$T0"), r.values.get("$T1")]).toEqual([12n, 6n]);
  });

  it("wraps arithmetic at 32 bits and accepts negative literals", () => {
    const r = evaluate("$T0 0 1 - = $T1 -4 = $T2 4294967295 2 * =", {});
    expect(r.ok && [r.values.get("$T0"), r.values.get("$T1"), r.values.get("$T2")]).toEqual([0xffffffffn, 0xfffffffcn, 0xfffffffen]);
  });

  it("splits glued =$name tokens", () => {
    const r = evaluate("$T0 3 =$T1 $T0 =", {});
    expect(r.ok && r.values.get("$T1")).toBe(3n);
  });

  it.each([
    ["$T0 +", "+ needs two operands"],
    ["$T0 $nope =", "$nope has no value"],
    ["$T0 .raSearch ^ =", "cannot read 4 bytes at 0x1000"],
    ["$T0 1 0 / =", "division by zero"],
    ["$T0 1 0 % =", "division by zero"],
    ["$T0 1 = 5", "1 value(s) left on the stack"],
    ["5 1 =", "= assigns only to a $variable"],
    ["^", "^ needs an operand"],
  ])("fails %j with %j", (text, reason) => {
    const r = evaluate(text, { ".raSearch": 0x1000n });
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toBe(reason);
  });

  it("names the address of an unreadable dereference", () => {
    const r = evaluate("$eip $esp ^ =", { $esp: 0x1234n });
    expect(!r.ok && r.error.address).toBe(0x1234n);
  });

  it("rejects tokens that are not part of the language", () => {
    const r = parseProgram("$T0 $ebp 0x10 + =");
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error).toEqual({ token: 2, reason: '"0x10" is not a number, a $variable, a .input or an operator' });
  });
});
