import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { loadAssembler, type Assembler } from "../../emulator/assemble.js";
import { disassembleOne, loadDisassembler, type Disassembler } from "../../emulator/disassemble.js";

let asm: Assembler;
let dis: Disassembler;

beforeAll(async () => {
  [asm, dis] = await Promise.all([loadAssembler(), loadDisassembler()]);
});

describe("disassemble", () => {
  it("decodes what the assembler produced, instruction by instruction (x86)", () => {
    const source = [
      "push ebp",
      "mov ebp, esp",
      "sub esp, 0x10",
      "mov eax, dword ptr [ebp + 8]",
      "lea esp, [ebp - 0xc]",
      "call 0x401100",
      "mov eax, dword ptr fs:[0x18]",
      "leave",
      "ret 8",
    ];
    const base = 0x401000n;
    const bytes = asm.assemble(source.join("\n"), { mode: 32, address: base });
    const decoded = dis.disassemble(bytes, base, 32);
    expect(decoded.map((insn) => insn.text)).toEqual(source);
    expect(decoded[0]).toEqual({
      address: base,
      size: 1,
      bytes: Uint8Array.of(0x55),
      mnemonic: "push",
      opStr: "ebp",
      text: "push ebp",
    });
    expect(decoded.reduce((sum, insn) => sum + insn.size, 0)).toBe(bytes.length);
    let address = base;
    for (const insn of decoded) {
      expect(insn.address).toBe(address);
      expect(asm.assemble(insn.text, { mode: 32, address: insn.address })).toEqual(insn.bytes);
      address += BigInt(insn.size);
    }
  });

  it("decodes x64 code, including RIP-relative operands, at a high address", () => {
    const source = [
      "push rbp",
      "mov rbp, rsp",
      "sub rsp, 0x20",
      "mov rax, qword ptr [rip + 0x10]",
      "mov r8, qword ptr gs:[0x30]",
      "call 0x7ff712341000",
      "add rsp, 0x20",
      "pop rbp",
      "ret",
    ];
    const base = 0x7ff712340000n;
    const bytes = asm.assemble(source.join("\n"), { mode: 64, address: base });
    const decoded = dis.disassemble(bytes, base, 64);
    expect(decoded.map((insn) => insn.text)).toEqual(source);
    for (const insn of decoded) {
      expect(asm.assemble(insn.text, { mode: 64, address: insn.address })).toEqual(insn.bytes);
    }
  });

  it("round-trips immediates and displacements of any value", () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 0xffffffff }), fc.integer({ min: -0x80, max: 0x7f }), (imm, disp) => {
        const source = `mov ecx, 0x${imm.toString(16)}\nmov eax, dword ptr [esi ${disp < 0 ? "-" : "+"} 0x${Math.abs(disp).toString(16)}]`;
        const bytes = asm.assemble(source, { mode: 32, address: 0x1000n });
        const [mov, load] = dis.disassemble(bytes, 0x1000n, 32);
        expect(mov?.opStr).toBe(`ecx, ${imm < 10 ? imm : `0x${imm.toString(16)}`}`);
        expect(asm.assemble(`${mov?.text}\n${load?.text}`, { mode: 32, address: 0x1000n })).toEqual(bytes);
      }),
      { numRuns: 50 },
    );
  });

  it("stops at bytes that are not an instruction and honours a count", () => {
    expect(dis.disassemble(Uint8Array.of(0x55, 0x90, 0xff, 0xff, 0x90), 0x1000n, 32).map((i) => i.text)).toEqual([
      "push ebp",
      "nop",
    ]);
    expect(dis.disassemble(Uint8Array.of(0x90, 0x90, 0x90), 0x1000n, 32, 2)).toHaveLength(2);
    expect(dis.disassemble(new Uint8Array(0), 0x1000n, 64)).toEqual([]);
  });

  it("decodes exactly one instruction for error messages", async () => {
    const code = Uint8Array.of(0x8b, 0x45, 0x08, 0xc3);
    expect(dis.disassembleOne(code, 0x401000n, 32)?.text).toBe("mov eax, dword ptr [ebp + 8]");
    expect(dis.disassembleOne(Uint8Array.of(0xff, 0xff), 0x401000n, 32)).toBeUndefined();
    expect((await disassembleOne(Uint8Array.of(0x48, 0x89, 0xe5), 0n, 64))?.text).toBe("mov rbp, rsp");
    expect(dis.describe(code, 0x401000n, 32)).toBe("0x00401000: 8b 45 08  mov eax, dword ptr [ebp + 8]");
    expect(dis.describe(Uint8Array.of(0xff, 0xff), 0x401000n, 32)).toBe("0x00401000: ff ff  (not an instruction)");
    expect(dis.describe(Uint8Array.of(0xc3), 0x7ff712340000n, 64)).toBe("0x00007ff712340000: c3  ret");
  });
});
