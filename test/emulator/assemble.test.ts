import { beforeAll, describe, expect, it } from "vitest";
import { AssemblyError, assemble, loadAssembler, type Assembler } from "../../emulator/assemble.js";

let asm: Assembler;

beforeAll(async () => {
  asm = await loadAssembler();
});

function hex(bytes: Uint8Array): string {
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join(" ");
}

function x86(source: string, address = 0x401000n): string {
  return hex(asm.assemble(source, { mode: 32, address }));
}

function x64(source: string, address = 0x140001000n): string {
  return hex(asm.assemble(source, { mode: 64, address }));
}

function assemblyError(source: string, mode: 32 | 64 = 32): AssemblyError {
  try {
    asm.assemble(source, { mode, address: 0x401000n });
  } catch (error) {
    if (error instanceof AssemblyError) return error;
    throw error;
  }
  throw new Error("expected an AssemblyError");
}

describe("assemble", () => {
  it("encodes a frame prologue and epilogue as compilers do", () => {
    expect(x86("push ebp")).toBe("55");
    expect(x86("mov ebp, esp")).toBe("89 e5");
    expect(x86("push ebp\nmov ebp, esp\nsub esp, 0x10\nmov esp, ebp\npop ebp\nret 8")).toBe(
      "55 89 e5 83 ec 10 89 ec 5d c2 08 00",
    );
    expect(x64("push rbp\nmov rbp, rsp\nsub rsp, 0x28\nadd rsp, 0x28\npop rbp\nret")).toBe(
      "55 48 89 e5 48 83 ec 28 48 83 c4 28 5d c3",
    );
  });

  it("reads numbers as decimal unless marked hexadecimal", () => {
    expect(x86("add eax, 35")).toBe("83 c0 23");
    expect(x86("add eax, 0x23")).toBe("83 c0 23");
    expect(x86("add eax, 23h")).toBe("83 c0 23");
    expect(x86("mov eax, dword ptr [ebp + 16]")).toBe("8b 45 10");
  });

  it("computes relative branches from the base address", () => {
    expect(x86("call 0x401010", 0x401000n)).toBe("e8 0b 00 00 00");
    expect(x86("jmp f\nnop\nf: ret", 0x401000n)).toBe("eb 01 90 c3");
    expect(x64("call 0x140002000", 0x140001000n)).toBe("e8 fb 0f 00 00");
    expect(x64("mov rax, qword ptr [rip + 0x10]")).toBe("48 8b 05 10 00 00 00");
  });

  it("reads `$` as the current statement's address", () => {
    expect(x86("jmp $")).toBe("eb fe");
    expect(x86("nop\njmp $")).toBe("90 eb fe");
    expect(x64("jmp $")).toBe("eb fe");
  });

  it("accepts comments, blank lines, `;`-separated statements and CRLF", () => {
    expect(x86("# prologue\npush ebp // save\n\nmov ebp, esp ; pop ebp\r\nret")).toBe("55 89 e5 5d c3");
    expect(asm.assemble("", { mode: 32 })).toEqual(new Uint8Array(0));
  });

  it("reports the address of every label", () => {
    const program = asm.assembleProgram("push ebp\ncall f\nafter: pop ebp\nret\nf: ret", { mode: 32, address: 0x401000n });
    expect(hex(program.bytes)).toBe("55 e8 02 00 00 00 5d c3 c3");
    expect(program.labels).toEqual(
      new Map([
        ["after", 0x401006n],
        ["f", 0x401008n],
      ]),
    );
    const far = asm.assembleProgram("top: nop\nend: ret", { mode: 64, address: 0xffff800000001000n });
    expect(far.labels.get("end")).toBe(0xffff800000001001n);
  });

  it("names the first line that does not assemble", () => {
    const error = assemblyError("push ebp\nmov ebp, esp\nbogus eax\nret");
    expect(error.line).toBe(3);
    expect(error.lineText).toBe("bogus eax");
    expect(error.codeName).toBe("KS_ERR_ASM_MNEMONICFAIL");
    expect(error.message).toBe("line 3: Invalid mnemonic (KS_ERR_ASM_MNEMONICFAIL): bogus eax");
  });

  it("finds the bad line past forward references to labels defined later", () => {
    const error = assemblyError("jmp done\nnop\nmov eax, [ebx + ecx*3]\ndone: ret");
    expect(error.line).toBe(3);
    expect(error.codeName).toBe("KS_ERR_ASM_INVALIDOPERAND");
  });

  it("names a reference to a label that is never defined", () => {
    const error = assemblyError("push ebp\ncall nowhere\nret");
    expect(error.line).toBe(2);
    expect(error.codeName).toBe("KS_ERR_ASM_SYMBOL_MISSING");
  });

  it("names the second definition of a label", () => {
    const error = assemblyError("f: nop\nnop\nf: ret");
    expect(error.line).toBe(3);
    expect(error.codeName).toBe("KS_ERR_ASM_SYMBOL_REDEFINED");
  });

  it("rejects 64-bit registers in 32-bit code and checks the address width", () => {
    expect(assemblyError("nop\nmov rax, 1").line).toBe(2);
    expect(x64("mov rax, 1")).toBe("48 c7 c0 01 00 00 00");
    expect(() => asm.assemble("nop", { mode: 32, address: 1n << 32n })).toThrow(RangeError);
  });

  it("has an async entry point that loads on first use", async () => {
    expect(await assemble("ret", { mode: 64 })).toEqual(Uint8Array.of(0xc3));
  });
});
