/**
 * What the x86 walker reads from code bytes (src/arch/x86/code.ts), checked against Keystone
 * (which produces the bytes) and Capstone (which says what the bytes are): call recognition
 * before a return address, the prolog and return-path decoders, and the return-address scan.
 */
import { UnwindCache } from "../../../src/unwind/cache.js";
import { describe, expect, it } from "vitest";
import { loadDisassembler, type Instruction } from "../../../emulator/disassemble.js";
import {
  callBefore,
  decodeProlog,
  decodeToReturn,
  directCallTarget,
  isReturnAddress,
  runToReturn,
  scanForReturnAddress,
} from "../../../src/arch/x86/code.js";
import { RegionMemory, type MemoryRegion } from "../../../src/memory/region-memory.js";
import type { MemoryReader } from "../../../src/memory/reader.js";
import type { Module } from "../../../src/model/snapshot.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { assembleX86, loadX86Assembler, MODULE_BASE, MODULE_SIZE, type X86Code } from "../../support/x86-code.js";

await loadX86Assembler();
const capstone = await loadDisassembler();

const disassemble = (code: X86Code): Instruction[] => capstone.disassemble(code.bytes, code.base, 32);
const memoryOf = (...regions: MemoryRegion[]): RegionMemory => new RegionMemory(regions);
const MODULE: Module = { name: "app.exe", base: MODULE_BASE, size: MODULE_SIZE, symbols: [] };

/**
 * One spelling for the decoders' text and Capstone's: no `dword ptr`, no spaces, every number
 * as a signed 32-bit decimal (`0xffffffe0` and `-32` agree, `[ebp - 8]` and `[ebp-8]` too).
 */
function norm(text: string): string {
  return text
    .replace(/dword ptr /g, "")
    .replace(/\s+/g, "")
    .replace(/0x[0-9a-f]+|\d+/g, (n) => String(Number(n) | 0));
}

/** `count` nops, then `line`: the bytes before the instruction cannot look like a call. */
function afterNops(line: string, count = 8): { code: X86Code; last: Instruction; end: bigint } {
  const code = assembleX86([...Array<string>(count).fill("nop"), line]);
  const insns = disassemble(code);
  return { code, last: insns[insns.length - 1]!, end: code.base + BigInt(code.bytes.length) };
}

describe("callBefore: the call instruction that ends at a return address", () => {
  const CALLS: [string, string, number][] = [
    ["E8 rel32", "call 0x401000", 5],
    ["FF /2 mod 11 (register)", "call eax", 2],
    ["FF /2 [reg]", "call dword ptr [eax]", 2],
    ["FF /2 [sib]", "call dword ptr [eax+ecx*4]", 3],
    ["FF /2 [sib] (esp base)", "call dword ptr [esp]", 3],
    ["FF /2 [reg+disp8]", "call dword ptr [eax+8]", 3],
    ["FF /2 [reg+disp8] (ebp base)", "call dword ptr [ebp+8]", 3],
    ["FF /2 [sib+disp8]", "call dword ptr [eax+ecx*4+8]", 4],
    ["FF /2 [sib+disp8] (esp base)", "call dword ptr [esp+8]", 4],
    ["FF /2 [disp32]", "call dword ptr [0x500000]", 6],
    ["FF /2 [reg+disp32]", "call dword ptr [eax+0x1000]", 6],
    ["FF /2 [sib+disp32]", "call dword ptr [eax+ecx*4+0x1000]", 7],
    ["FF /2 [sib+disp32] (esp base)", "call dword ptr [esp+0x1000]", 7],
    ["FF /2 [index*scale+disp32] (no base)", "call dword ptr [ecx*4+0x500000]", 7],
  ];

  it.each(CALLS)("%s: %s (%i bytes) is recognised", (_form, line, length) => {
    const { code, last, end } = afterNops(line);
    expect([last.mnemonic, last.size, last.address + BigInt(last.size)]).toEqual(["call", length, end]);
    const name = callBefore(memoryOf(code.region), end);
    expect(name).toBeDefined();
    expect(name).toMatch(/^call/);
  });

  const NON_CALLS: [string, number][] = [
    ["mov eax, ebx", 2],
    ["jmp eax", 2],
    ["push dword ptr [eax]", 2],
    ["inc dword ptr [eax]", 2],
    ["push dword ptr [eax+8]", 3],
    ["jmp dword ptr [eax+ecx*4]", 3],
    ["sub esp, 8", 3],
    ["jmp dword ptr [eax+ecx*4+8]", 4],
    ["push dword ptr [esp+8]", 4],
    ["lea eax, [eax+ecx*4+8]", 4],
    ["mov eax, 0x12345678", 5],
    ["push 0x12345678", 5],
    ["jmp 0x401100", 5],
    ["jmp dword ptr [0x500000]", 6],
    ["push dword ptr [eax+0x1000]", 6],
    ["add esp, 0x1000", 6],
    ["jmp dword ptr [eax+ecx*4+0x1000]", 7],
    ["push dword ptr [ecx*4+0x500000]", 7],
    ["mov eax, dword ptr [ecx*4+0x500000]", 7],
  ];

  it.each(NON_CALLS)("%s (%i bytes, not a call) is not", (line, length) => {
    const { code, last, end } = afterNops(line);
    expect(last.size).toBe(length);
    expect(last.mnemonic).not.toBe("call");
    expect(callBefore(memoryOf(code.region), end)).toBeUndefined();
  });

  it("is undefined when the bytes before the address cannot be read", () => {
    const { end } = afterNops("call eax");
    expect(callBefore(memoryOf(), end)).toBeUndefined();
  });

  it("directCallTarget is the target Capstone decodes for E8, and undefined for FF /2", () => {
    const direct = afterNops("call 0x401234");
    expect(directCallTarget(memoryOf(direct.code.region), direct.end)).toBe(BigInt(direct.last.opStr));
    expect(directCallTarget(memoryOf(direct.code.region), direct.end)).toBe(0x401234n);
    const backwards = afterNops("call 0x400ff0");
    expect(directCallTarget(memoryOf(backwards.code.region), backwards.end)).toBe(0x400ff0n);
    const indirect = afterNops("call dword ptr [eax+0x1000]");
    expect(directCallTarget(memoryOf(indirect.code.region), indirect.end)).toBeUndefined();
  });
});

describe("decodeProlog agrees with Capstone", () => {
  /** Prolog lines, each with the bytes it pushes or allocates. */
  const PROLOGS: { name: string; lines: [string, number][] }[] = [
    { name: "push ebp; push ebx; sub esp, 8; push esi", lines: [["push ebp", 4], ["push ebx", 4], ["sub esp, 8", 8], ["push esi", 4]] },
    { name: "sub esp, imm32", lines: [["push ebp", 4], ["push ebx", 4], ["sub esp, 0x200", 0x200], ["push esi", 4]] },
    { name: "mov ebp, esp (89 E5) and sub esp, 0x7f (the largest imm8)", lines: [["push ebp", 4], ["mov ebp, esp", 0], ["sub esp, 0x7f", 0x7f], ["push edi", 4]] },
    { name: "mov ebp, esp (8B EC) and sub esp, 0x80 (imm32)", lines: [["push ebp", 4], [".byte 0x8b, 0xec", 0], ["sub esp, 0x80", 0x80], ["push esi", 4], ["push edi", 4]] },
    { name: "every push r32", lines: ["eax", "ecx", "edx", "ebx", "ebp", "esi", "edi"].map((r) => [`push ${r}`, 4] as [string, number]) },
    { name: "a stack probe: mov eax, imm32; call", lines: [["push ebx", 4], ["mov eax, 0x2000", 0], ["call 0x401100", 0]] },
  ];

  it.each(PROLOGS)("$name: each instruction boundary", ({ lines }) => {
    const code = assembleX86(lines.map(([l]) => l));
    const insns = disassemble(code);
    expect(insns).toHaveLength(lines.length);
    const memory = memoryOf(code.region);
    let pushed = 0;
    for (let k = 0; k <= insns.length; k++) {
      const at = k < insns.length ? insns[k]!.address : code.base + BigInt(code.bytes.length);
      const state = decodeProlog(memory, code.base, at);
      expect(state, `boundary ${k}`).toBeDefined();
      // Texts agree; decodeProlog prints a call without its target.
      expect(state!.text.map(norm), `boundary ${k}`).toEqual(insns.slice(0, k).map((i) => (i.mnemonic === "call" ? "call" : norm(i.text))));
      expect(state!.pushed, `boundary ${k}`).toBe(pushed);
      if (k < lines.length) pushed += lines[k]![1];
    }
  });

  it.each(PROLOGS)("$name: a PC inside an instruction is not a prolog state", ({ lines }) => {
    const code = assembleX86(lines.map(([l]) => l));
    const memory = memoryOf(code.region);
    for (const insn of disassemble(code)) {
      for (let cut = 1; cut < insn.size; cut++) expect(decodeProlog(memory, code.base, insn.address + BigInt(cut)), `${insn.text} +${cut}`).toBeUndefined();
    }
  });

  it("records where each register was pushed", () => {
    const code = assembleX86(["push ebp", "push ebx", "sub esp, 8", "push esi"]);
    const state = decodeProlog(memoryOf(code.region), code.base, code.base + BigInt(code.bytes.length));
    expect(state).toMatchObject({ pushed: 20, framePointer: false, saves: [{ reg: "ebp", total: 4 }, { reg: "ebx", total: 8 }, { reg: "esi", total: 20 }] });
  });

  it("stops at an instruction it does not know", () => {
    const code = assembleX86(["push ebp", "xor eax, eax", "push ebx"]);
    expect(decodeProlog(memoryOf(code.region), code.base, code.base + BigInt(code.bytes.length))).toBeUndefined();
  });
});

describe("decodeToReturn agrees with Capstone", () => {
  /** xchg is symmetric: its operands are compared as a set. */
  const canonical = (t: string): string => {
    const n = norm(t);
    const m = /^xchg(\w+),(\w+)$/.exec(n);
    return m === null ? n : `xchg${[m[1], m[2]].sort().join(",")}`;
  };

  const EPILOGS: { name: string; lines: string[] }[] = [
    { name: "pop esi; pop ebx; add esp, 8; ret 8", lines: ["pop esi", "pop ebx", "add esp, 8", "ret 8"] },
    { name: "leave; ret", lines: ["leave", "ret"] },
    { name: "lea esp,[ebp-8]; pop esi; pop edi; pop ebp; ret", lines: ["lea esp, [ebp-8]", "pop esi", "pop edi", "pop ebp", "ret"] },
    { name: "mov esp, ebp (89 EC); pop ebp; ret", lines: ["mov esp, ebp", "pop ebp", "ret"] },
    { name: "mov esp, ebp (8B E5); pop ebp; ret", lines: [".byte 0x8b, 0xe5", "pop ebp", "ret"] },
    { name: "add esp, imm32; pop ebx; ret 4", lines: ["add esp, 0x1000", "pop ebx", "ret 4"] },
    { name: "and/sub esp; lea esp,[ebp+8]", lines: ["and esp, -16", "sub esp, 0x20", "lea esp, [ebp+8]", "ret"] },
    {
      name: "register moves before the return",
      lines: ["mov eax, 1", "test eax, eax", "xchg eax, ecx", "xchg ebx, ecx", "nop", "mov edx, dword ptr [esp+0x10]", "mov dword ptr [esp+4], edx", "mov eax, dword ptr [ebp-0x80]", "cmp eax, ebx", "cmp dword ptr [ebx], eax", "ret"],
    },
    { name: "a tail jump out of the function", lines: ["pop ebp", "jmp 0x402000"] },
  ];

  it.each(EPILOGS)("$name: from each instruction boundary", ({ lines }) => {
    const code = assembleX86(lines);
    const insns = disassemble(code);
    expect(insns).toHaveLength(lines.length);
    const memory = memoryOf(code.region);
    const inFunction = (a: bigint): boolean => a >= code.base && a < code.base + BigInt(code.bytes.length);
    for (let k = 0; k < insns.length; k++) {
      const ops = decodeToReturn(memory, insns[k]!.address, inFunction);
      expect(ops?.map((o) => canonical(o.text)), `from ${insns[k]!.text}`).toEqual(insns.slice(k).map((i) => canonical(i.text)));
    }
  });

  // `cmp r32, r/m32` (opcode 3B) is printed in Intel order, unlike 39 (`cmp r/m32, r32`).
  it("cmp r32, r/m32 (3B) keeps its operand order", () => {
    const code = assembleX86(["cmp eax, dword ptr [ebx]", "ret"]);
    const ops = decodeToReturn(memoryOf(code.region), code.base, () => true);
    expect(ops?.map((o) => norm(o.text))).toEqual(disassemble(code).map((i) => norm(i.text)));
  });

  it("follows a jump that stays in the function", () => {
    const code = assembleX86(["pop esi", "jmp done", "int3", "int3", "done:", "pop ebp", "ret", "end:"]);
    const memory = memoryOf(code.region);
    const inFunction = (a: bigint): boolean => a >= code.base && a < code.at("end");
    const ops = decodeToReturn(memory, code.base, inFunction);
    const before = capstone.disassemble(code.bytes, code.base, 32, 2);
    const after = capstone.disassemble(code.bytes.subarray(Number(code.at("done") - code.base)), code.at("done"), 32);
    expect(ops?.map((o) => norm(o.text))).toEqual([...before, ...after].map((i) => norm(i.text)));
  });

  it("is undefined at a call or a conditional branch", () => {
    for (const line of ["call 0x401100", "jne 0x401100", "pop esp"]) {
      const code = assembleX86(["pop esi", line, "ret"]);
      expect(decodeToReturn(memoryOf(code.region), code.base, () => true), line).toBeUndefined();
    }
  });

  // A return path whose last bytes are also the last readable bytes (a minidump's code window,
  // a section end) is decoded from what is there.
  it("decodes an epilog that ends exactly where readable memory ends", () => {
    const code = assembleX86(["pop ebx", "add esp, 8", "ret"]);
    const exact = memoryOf({ base: code.base, bytes: code.bytes });
    expect(decodeToReturn(exact, code.base, () => true)?.map((o) => norm(o.text))).toEqual(disassemble(code).map((i) => norm(i.text)));
  });
});

describe("runToReturn: simulating the return path", () => {
  it("pop esi; pop ebx; add esp, 8; ret 8: registers from the slots the test filled, ESP above the return address", () => {
    const code = assembleX86(["pop esi", "pop ebx", "add esp, 8", "ret 8"]);
    const s = new StackBuilder(0x0012_f000n);
    s.mark("esp0").u32(0x5151).u32(0xb1b1).fill(2).mark("ra").u32(0x0040_1234).mark("args").u32(1).u32(2);
    const built = s.build();
    const memory = memoryOf(code.region, built);
    const ops = decodeToReturn(memory, code.base, () => true)!;
    const run = runToReturn(ops, { esp: built.labels["esp0"]!, esi: 1n, ebx: 2n }, memory, () => false);
    expect(run).toEqual({ ok: true, raSlot: built.labels["ra"], registers: { esp: built.labels["args"], esi: 0x5151n, ebx: 0xb1b1n, eip: 0x0040_1234n } });
  });

  it("reports the slot a copied return address came from", () => {
    // The return address is popped into eax, ecx goes where it was, and eax is pushed below.
    const code = assembleX86(["pop eax", "push ecx", "push eax", "ret"]);
    const s = new StackBuilder(0x0012_f000n);
    s.fill(1).mark("ra").u32(0x0040_1234).mark("above").u32(0);
    const built = s.build();
    const memory = memoryOf(code.region, built);
    const run = runToReturn(decodeToReturn(memory, code.base, () => true)!, { esp: built.labels["ra"]!, ecx: 7n }, memory, () => false);
    expect(run.ok && [run.raSlot, run.registers["eip"], run.registers["esp"]]).toEqual([built.labels["ra"], 0x0040_1234n, built.labels["above"]]);
  });

  it("fails with the address when a pop cannot be read", () => {
    const code = assembleX86(["pop ebx", "ret"]);
    const memory = memoryOf(code.region);
    expect(runToReturn(decodeToReturn(memory, code.base, () => true)!, { esp: 0x0012_f000n }, memory, () => false)).toEqual({ ok: false, address: 0x0012_f000n, what: "pop ebx" });
  });
});

describe("isReturnAddress and scanForReturnAddress", () => {
  /**
   * callee: the function being unwound; other: another function; three return addresses:
   * after a direct call to other (stale), after a direct call to callee (real), and after an
   * indirect call (which says nothing about its target).
   */
  function program() {
    const code = assembleX86([
      "other:", "ret", "other_end:",
      "callee:", "nop", "ret", "callee_end:",
      "caller:", "call other", "after_other:", "nop", "call callee", "after_callee:", "nop", "call eax", "after_indirect:", "nop", "ret", "caller_end:",
    ]);
    return { code, callee: { start: code.at("callee"), end: code.at("callee_end") } };
  }
  const JUNK = 0x0bad_beefn;
  /** A scan from `start` with a fresh cache; `callee` is the function being unwound. */
  const scanFor = (stack: MemoryReader, modules: readonly Module[], images: MemoryReader, start: bigint, words: number, callee?: { start: bigint; end: bigint }) =>
    scanForReturnAddress(new UnwindCache(), stack, { modules, images, calleeStart: callee === undefined ? -1 : Number(callee.start), calleeEnd: callee === undefined ? -1 : Number(callee.end) }, start, words);

  it("isReturnAddress: in a module and right after a call", () => {
    const { code } = program();
    const images = memoryOf(code.region);
    expect(isReturnAddress(new UnwindCache(), [MODULE], images, code.at("after_callee"))).toBe(true);
    expect(isReturnAddress(new UnwindCache(), [MODULE], images, code.at("after_indirect"))).toBe(true);
    expect(isReturnAddress(new UnwindCache(), [MODULE], images, code.at("after_callee") + 1n)).toBe(false);
    expect(isReturnAddress(new UnwindCache(), [MODULE], images, code.at("callee"))).toBe(false);
    expect(isReturnAddress(new UnwindCache(), [], images, code.at("after_callee"))).toBe(false);
    expect(isReturnAddress(new UnwindCache(), [{ ...MODULE, base: 0n }], images, 0x800n)).toBe(false);
    // A module whose code is not in the snapshot: lying in it is enough.
    expect(isReturnAddress(new UnwindCache(), [MODULE], memoryOf(), code.at("callee"))).toBe(true);
  });

  it("looks at words start … start+4·N: the last word of the window counts, the next does not", () => {
    const { code } = program();
    const N = 5;
    for (const at of [0, N, N + 1]) {
      const s = new StackBuilder(0x0012_f000n);
      s.fill(at, JUNK).mark("ra").u32(code.at("after_callee")).fill(4, JUNK);
      const built = s.build();
      const hit = scanFor(memoryOf(built), [MODULE], memoryOf(code.region), built.base, N);
      expect(hit, `return address at word ${at}`).toEqual(at <= N ? { slot: built.labels["ra"], value: code.at("after_callee") } : undefined);
    }
  });

  it("stops at the first unreadable word", () => {
    const { code } = program();
    const low = new StackBuilder(0x0012_f000n).fill(3, JUNK).build();
    // A gap of one word, then a return address well inside the window.
    const high = new StackBuilder(0x0012_f010n).u32(code.at("after_callee")).build();
    const stack = memoryOf(low, high);
    expect(scanFor(stack, [MODULE], memoryOf(code.region), low.base, 40)).toBeUndefined();
    expect(scanFor(stack, [MODULE], memoryOf(code.region), high.base, 40)).toEqual({ slot: high.base, value: code.at("after_callee") });
  });

  it("passes over a stale return address from a call to another function for a later one into the callee", () => {
    const { code, callee } = program();
    const s = new StackBuilder(0x0012_f000n);
    s.mark("stale").u32(code.at("after_other")).fill(2, JUNK).mark("real").u32(code.at("after_callee")).fill(2, JUNK);
    const built = s.build();
    const images = memoryOf(code.region);
    expect(scanFor(memoryOf(built), [MODULE], images, built.base, 7, callee)).toEqual({ slot: built.labels["real"], value: code.at("after_callee") });
    // Without the callee's range the first return address wins.
    expect(scanFor(memoryOf(built), [MODULE], images, built.base, 7)).toEqual({ slot: built.labels["stale"], value: code.at("after_other") });
    // With no later one in the window, the stale one is still the answer.
    expect(scanFor(memoryOf(built), [MODULE], images, built.base, 2, callee)).toEqual({ slot: built.labels["stale"], value: code.at("after_other") });
  });

  it("takes a return address after an indirect call at once: its target is unknown", () => {
    const { code, callee } = program();
    const s = new StackBuilder(0x0012_f000n);
    s.mark("indirect").u32(code.at("after_indirect")).mark("real").u32(code.at("after_callee"));
    const built = s.build();
    expect(scanFor(memoryOf(built), [MODULE], memoryOf(code.region), built.base, 7, callee)).toEqual({ slot: built.labels["indirect"], value: code.at("after_indirect") });
  });
});
