import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { loadAssembler, type Assembler } from "../../emulator/assemble.js";
import { loadDisassembler, type Disassembler } from "../../emulator/disassemble.js";
import {
  UC_ERR,
  UC_PROT,
  Unicorn,
  UnicornError,
  UnicornUnavailableError,
  X64_REGISTERS,
  X86_REGISTERS,
  openUnicornLibrary,
  unicornLibrary,
  type InvalidMemoryAccess,
  type MemoryAccess,
} from "../../emulator/unicorn.js";

const CODE = 0x401000n;
const STACK = 0x100000n;
const STACK_SIZE = 0x10000n;
const STACK_TOP = STACK + STACK_SIZE - 0x100n;
const DATA = 0x200000n;

let asm: Assembler;
let dis: Disassembler;
const engines: Unicorn[] = [];

beforeAll(async () => {
  asm = await loadAssembler();
  dis = await loadDisassembler();
});

afterEach(() => {
  for (const engine of engines.splice(0)) engine.close();
});

/** An engine with code, stack and data pages mapped, closed after each test. */
function x86(): Unicorn<32> {
  const uc = Unicorn.open(32);
  engines.push(uc);
  uc.memMap(CODE, 0x1000);
  uc.memMap(STACK, STACK_SIZE, UC_PROT.READ | UC_PROT.WRITE);
  uc.memMap(DATA, 0x1000, UC_PROT.READ | UC_PROT.WRITE);
  uc.regWrite("esp", STACK_TOP);
  return uc;
}

/** Assembles `lines` at `address`, writes them, and returns the end and a label lookup. */
function load(uc: Unicorn, lines: string[], address = CODE): { end: bigint; at: (label: string) => bigint } {
  const program = asm.assembleProgram(lines.join("\n"), { mode: uc.mode, address });
  uc.memWrite(address, program.bytes);
  const at = (label: string): bigint => {
    const found = program.labels.get(label);
    if (found === undefined) throw new Error(`no label ${label}`);
    return found;
  };
  return { end: address + BigInt(program.bytes.length), at };
}

function u32(bytes: Uint8Array): bigint {
  return BigInt(new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true));
}

function u64(bytes: Uint8Array): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}

/** A caller that pushes an argument and calls a framed function, which stores arg + 35. */
const CALL_PROGRAM = [
  "push ebp",
  "mov ebp, esp",
  "push 7",
  "call f",
  "after_call: add esp, 4",
  "pop ebp",
  "done: nop",
  "f: push ebp",
  "mov ebp, esp",
  "mov eax, dword ptr [ebp + 8]",
  "add eax, 35",
  `mov dword ptr [${"0x" + DATA.toString(16)}], eax`,
  "pop ebp",
  "ret",
];

describe("the library", () => {
  it("is Unicorn 2", () => {
    expect(unicornLibrary().version).toMatch(/^2\./);
  });

  it("names the package and the install command when the library is missing", () => {
    const attempt = () => openUnicornLibrary(["libunicorn-missing-for-test.so.2"]);
    expect(attempt).toThrow(UnicornUnavailableError);
    expect(attempt).toThrow(
      "libunicorn2 is not installed: apt-get install libunicorn2 (Debian/Ubuntu) or brew install unicorn (macOS)",
    );
  });
});

describe("x86 (32-bit)", () => {
  it("runs a call through a framed function and leaves the frame on the stack", () => {
    const uc = x86();
    const { at } = load(uc, CALL_PROGRAM);
    const done = at("done");
    const afterCall = at("after_call");
    uc.regWrite("ebp", 0xcafe0000n);
    let framePointerInside = 0n;
    const seen: bigint[] = [];
    uc.hookCode((address) => {
      seen.push(address);
      if (seen.length === 8) framePointerInside = uc.regRead("esp");
    });

    const stop = uc.start(CODE, done);

    expect(stop).toEqual({ reason: "until", pc: done });
    expect(uc.regRead("eax")).toBe(42n);
    expect(uc.regRead("esp")).toBe(STACK_TOP);
    expect(uc.regRead("ebp")).toBe(0xcafe0000n);
    expect(u32(uc.memRead(DATA, 4))).toBe(42n);
    // The stack below the caller still holds what the frames pushed: saved EBP, the argument,
    // the return address, and the callee's saved EBP (which points at the caller's frame).
    expect(u32(uc.memRead(STACK_TOP - 4n, 4))).toBe(0xcafe0000n);
    expect(u32(uc.memRead(STACK_TOP - 8n, 4))).toBe(7n);
    expect(u32(uc.memRead(STACK_TOP - 12n, 4))).toBe(afterCall);
    expect(u32(uc.memRead(STACK_TOP - 16n, 4))).toBe(STACK_TOP - 4n);
    expect(framePointerInside).toBe(STACK_TOP - 16n);
    // push, mov, push, call, 7 in f (push .. ret), add, pop.
    expect(seen).toHaveLength(13);
    expect(seen[0]).toBe(CODE);
    const first = dis.disassembleOne(uc.memRead(seen[0] ?? CODE, 15), seen[0] ?? CODE, 32);
    expect(first?.text).toBe("push ebp");
  });

  it("reports instruction sizes to the code hook and block starts to the block hook", () => {
    const uc = x86();
    const done = load(uc, CALL_PROGRAM).at("done");
    const sizes: number[] = [];
    const blocks: bigint[] = [];
    uc.hookCode((address, size) => {
      sizes.push(size);
      expect(dis.disassembleOne(uc.memRead(address, size), address, 32)?.size).toBe(size);
    });
    uc.hookBlock((address) => blocks.push(address));
    uc.start(CODE, done);
    expect(sizes.slice(0, 4)).toEqual([1, 2, 2, 5]);
    expect(blocks[0]).toBe(CODE);
    expect(blocks.length).toBeGreaterThanOrEqual(3);
  });

  it("sees hooks added after code was already translated", () => {
    const uc = x86();
    const done = load(uc, CALL_PROGRAM).at("done");
    uc.start(CODE, done);
    uc.regWrite("esp", STACK_TOP);
    let count = 0;
    uc.hookCode(() => count++);
    uc.start(CODE, done);
    expect(count).toBe(13);
  });

  it("runs code rewritten between runs, not the translation of what was there before", () => {
    const uc = x86();
    const first = load(uc, ["mov eax, 1", "nop"]);
    uc.start(CODE, first.end);
    expect(uc.regRead("eax")).toBe(1n);
    const second = load(uc, ["mov eax, 2", "nop"]);
    uc.start(CODE, second.end);
    expect(uc.regRead("eax")).toBe(2n);
  });

  it("honours an instruction limit in code that an unlimited run already translated", () => {
    const uc = x86();
    load(uc, ["nop", "jmp $"]);
    expect(uc.start(CODE, 0n, { timeoutMicros: 5_000 }).reason).toBe("timeout");
    // Stopped by the count (1000 instructions: `jmp $` 999 times after the nop), not by the 2 s timeout.
    expect(uc.start(CODE, 0n, { count: 1000, timeoutMicros: 2_000_000 })).toEqual({ reason: "count", pc: CODE + 1n });
  });

  it("reads and writes every register by name, masked to its width", () => {
    const uc = x86();
    const gprs = ["eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp"] as const;
    gprs.forEach((name, i) => uc.regWrite(name, 0x11111111n * BigInt(i + 1)));
    gprs.forEach((name, i) => expect(uc.regRead(name)).toBe(0x11111111n * BigInt(i + 1)));
    uc.regWrite("eip", CODE);
    expect(uc.pc()).toBe(CODE);
    expect(uc.sp()).toBe(0x88888888n);
    // EFLAGS bit 1 is reserved and always reads as 1.
    expect(uc.regRead("eflags") & 2n).toBe(2n);
    for (const name of X86_REGISTERS) expect(uc.regRead(name)).toBeLessThan(1n << 32n);
    expect(() => uc.regWrite("eax", 1n << 32n)).toThrow(RangeError);
    expect(() => uc.regWrite("eax", -1n)).toThrow(RangeError);
    expect(() => uc.regRead("rax" as never)).toThrow(/not a register of the 32-bit engine/);
  });

  it("moves values between registers and memory as the program says", () => {
    const uc = x86();
    const { end } = load(uc, [
      "mov eax, 0x12345678",
      "mov ebx, eax",
      "shr ebx, 16",
      "mov ecx, esp",
      "push ebx",
      `mov edx, dword ptr [${"0x" + DATA.toString(16)} + 4]`,
    ]);
    uc.memWrite(DATA + 4n, Uint8Array.of(0xef, 0xbe, 0xad, 0xde));
    uc.start(CODE, end);
    expect(uc.regRead("eax")).toBe(0x12345678n);
    expect(uc.regRead("ebx")).toBe(0x1234n);
    expect(uc.regRead("ecx")).toBe(STACK_TOP);
    expect(uc.regRead("edx")).toBe(0xdeadbeefn);
    expect(u32(uc.memRead(STACK_TOP - 4n, 4))).toBe(0x1234n);
  });

  it("reports a fetch from unmapped memory through the hook and a typed error with the address", () => {
    const uc = x86();
    load(uc, ["mov eax, 0xdead0000", "jmp eax"]);
    const reported: InvalidMemoryAccess[] = [];
    uc.hookInvalidMemory((access) => {
      reported.push(access);
    });
    const error = catchError(() => uc.start(CODE, 0n, { count: 100 }));
    expect(error).toBeInstanceOf(UnicornError);
    const fault = error as UnicornError;
    expect(fault.code).toBe(UC_ERR.FETCH_UNMAPPED);
    expect(fault.codeName).toBe("UC_ERR_FETCH_UNMAPPED");
    expect(fault.access).toMatchObject({ kind: "fetch", cause: "unmapped", address: 0xdead0000n });
    expect(fault.pc).toBe(0xdead0000n);
    expect(fault.message).toContain("0xdead0000");
    expect(fault.message).toContain("Invalid memory fetch (UC_ERR_FETCH_UNMAPPED)");
    expect(reported).toHaveLength(1);
    expect(reported[0]).toMatchObject({ kind: "fetch", cause: "unmapped", address: 0xdead0000n });
  });

  it("reports reads and writes of unmapped memory with their address and size", () => {
    const uc = x86();
    load(uc, ["mov eax, dword ptr [0x12345678]"]);
    const read = catchError(() => uc.start(CODE, 0n, { count: 10 })) as UnicornError;
    expect(read.code).toBe(UC_ERR.READ_UNMAPPED);
    expect(read.access).toMatchObject({ kind: "read", cause: "unmapped", address: 0x12345678n, size: 4 });
    expect(read.pc).toBe(CODE);

    load(uc, ["mov eax, 0xabcd", "mov word ptr [0x700000], ax"]);
    const write = catchError(() => uc.start(CODE, 0n, { count: 10 })) as UnicornError;
    expect(write.code).toBe(UC_ERR.WRITE_UNMAPPED);
    expect(write.access).toMatchObject({ kind: "write", address: 0x700000n, size: 2, value: 0xabcdn });
  });

  it("lets an invalid-memory hook map the page and carry on", () => {
    const uc = x86();
    const { end } = load(uc, ["mov eax, dword ptr [0x300010]"]);
    uc.hookInvalidMemory((access) => {
      uc.memMap(access.address & ~0xfffn, 0x1000);
      uc.memWrite(0x300010n, Uint8Array.of(0x2a, 0, 0, 0));
      return true;
    });
    expect(uc.start(CODE, end).reason).toBe("until");
    expect(uc.regRead("eax")).toBe(42n);
  });

  it("reports writes to read-only pages and fetches from non-executable ones", () => {
    const uc = x86();
    load(uc, [`mov dword ptr [${"0x" + DATA.toString(16)}], 1`]);
    uc.memProtect(DATA, 0x1000, UC_PROT.READ);
    const write = catchError(() => uc.start(CODE, 0n, { count: 10 })) as UnicornError;
    expect(write.code).toBe(UC_ERR.WRITE_PROT);
    expect(write.access).toMatchObject({ kind: "write", cause: "protected", address: DATA });

    uc.memProtect(CODE, 0x1000, UC_PROT.READ | UC_PROT.WRITE);
    const fetch = catchError(() => uc.start(CODE, 0n, { count: 10 })) as UnicornError;
    expect(fetch.code).toBe(UC_ERR.FETCH_PROT);
    expect(uc.memRegions()).toEqual([
      { begin: STACK, end: STACK + STACK_SIZE - 1n, perms: UC_PROT.READ | UC_PROT.WRITE },
      { begin: DATA, end: DATA + 0xfffn, perms: UC_PROT.READ },
      { begin: CODE, end: CODE + 0xfffn, perms: UC_PROT.READ | UC_PROT.WRITE },
    ]);
  });

  it("stops a runaway `jmp $` loop at the instruction limit or the time limit", () => {
    const uc = x86();
    load(uc, ["nop", "jmp $"]);
    let executed = 0;
    const hook = uc.hookCode(() => executed++);
    expect(uc.start(CODE, 0n, { count: 1000 })).toEqual({ reason: "count", pc: CODE + 1n });
    expect(executed).toBe(1000);
    hook.remove();
    expect(uc.start(CODE, 0n, { timeoutMicros: 20_000 })).toEqual({ reason: "timeout", pc: CODE + 1n });
  });

  it("rethrows an exception thrown by a hook and stops the run", () => {
    const uc = x86();
    load(uc, ["jmp $"]);
    let calls = 0;
    uc.hookCode(() => {
      calls++;
      if (calls === 3) throw new Error("hook failed");
    });
    expect(() => uc.start(CODE, 0n, { count: 1_000_000 })).toThrow("hook failed");
    expect(calls).toBe(3);
    // The engine stays usable.
    expect(uc.start(CODE, 0n, { count: 2 }).reason).toBe("count");
  });

  it("stops when a hook calls stop(), and hooks can remove themselves", () => {
    const uc = x86();
    load(uc, ["jmp $"]);
    let first = 0;
    const self = uc.hookCode(() => {
      first++;
      if (first === 5) self.remove();
    });
    let second = 0;
    uc.hookCode(() => {
      second++;
      if (second === 50) uc.stop();
    });
    expect(uc.start(CODE, 0n, { count: 1_000_000 }).reason).toBe("stop");
    expect(first).toBe(5);
    expect(second).toBe(50);
    expect(self.active).toBe(false);
  });

  it("reports memory writes and interrupts to their hooks", () => {
    const uc = x86();
    const { end } = load(uc, ["push 0x1234", "int3", "nop"]);
    const accesses: MemoryAccess[] = [];
    const interrupts: number[] = [];
    uc.hookMemory((access) => accesses.push(access));
    uc.hookInterrupt((vector) => interrupts.push(vector));
    expect(uc.start(CODE, end).reason).toBe("until");
    expect(accesses).toEqual([{ kind: "write", address: STACK_TOP - 4n, size: 4, value: 0x1234n }]);
    expect(interrupts).toEqual([3]);
  });

  it("throws an unhandled int3 as a CPU exception with the PC", () => {
    const uc = x86();
    load(uc, ["nop", "int3"]);
    const error = catchError(() => uc.start(CODE, 0n, { count: 10 })) as UnicornError;
    expect(error.code).toBe(UC_ERR.EXCEPTION);
    expect(error.access).toBeUndefined();
  });

  it("turns bad mappings and reads into typed errors", () => {
    const uc = x86();
    const map = catchError(() => uc.memMap(0x1234n, 0x1000)) as UnicornError;
    expect(map).toBeInstanceOf(UnicornError);
    expect(map.code).toBe(UC_ERR.ARG);
    expect(map.message).toBe("uc_mem_map(0x1234, 0x1000, rwx): Invalid argument (UC_ERR_ARG)");
    const read = catchError(() => uc.memRead(0x900000n, 4)) as UnicornError;
    expect(read.code).toBe(UC_ERR.READ_UNMAPPED);
    expect(read.operation).toBe("uc_mem_read(0x900000, 4)");
    uc.memUnmap(DATA, 0x1000);
    expect(() => uc.memRead(DATA, 1)).toThrow(UnicornError);
  });

  it("refuses every call once closed", () => {
    const uc = Unicorn.open(32);
    uc.hookCode(() => undefined);
    uc.close();
    uc.close();
    expect(uc.closed).toBe(true);
    const error = catchError(() => uc.regRead("eax")) as UnicornError;
    expect(error.code).toBe(UC_ERR.HANDLE);
    expect(() => uc.memMap(0n, 0x1000)).toThrow(UnicornError);
  });
});

describe("x64 (64-bit)", () => {
  const CODE64 = 0x7ff712340000n;
  const STACK64 = 0x000000e1f0000000n;
  const TEB = 0x000000e1f0ff0000n;

  function x64(): Unicorn<64> {
    const uc = Unicorn.open(64);
    engines.push(uc);
    uc.memMap(CODE64, 0x1000);
    uc.memMap(STACK64, 0x10000, UC_PROT.READ | UC_PROT.WRITE);
    uc.memMap(TEB, 0x1000, UC_PROT.READ | UC_PROT.WRITE);
    uc.regWrite("rsp", STACK64 + 0xff00n);
    return uc;
  }

  it("runs a call with a frame and reads the TEB through GS", () => {
    const uc = x64();
    const lines = [
      "push rbp",
      "mov rbp, rsp",
      "sub rsp, 0x20",
      "mov rcx, 0x1122334455667788",
      "call f",
      "after_call: add rsp, 0x20",
      "pop rbp",
      "mov rax, qword ptr gs:[0x30]",
      "done: nop",
      "f: mov r8, rcx",
      "mov r9, r8",
      "add r9, 1",
      "mov r15, rsp",
      "ret",
    ];
    const { at } = load(uc, lines, CODE64);
    // On x64 Windows, GS points at the thread's TEB, whose field at 0x30 points back at itself.
    uc.regWrite("gs_base", TEB);
    const self = new Uint8Array(8);
    new DataView(self.buffer).setBigUint64(0, TEB, true);
    uc.memWrite(TEB + 0x30n, self);
    const start = uc.regRead("rsp");
    let instructions = 0;
    uc.hookCode(() => instructions++);

    const stop = uc.start(CODE64, at("done"));

    expect(stop).toEqual({ reason: "until", pc: at("done") });
    expect(uc.regRead("rip")).toBe(at("done"));
    expect(uc.regRead("r8")).toBe(0x1122334455667788n);
    expect(uc.regRead("r9")).toBe(0x1122334455667789n);
    expect(uc.regRead("rax")).toBe(TEB);
    expect(uc.regRead("gs_base")).toBe(TEB);
    expect(uc.regRead("rsp")).toBe(start);
    // Inside f, RSP pointed at the return address, 8 (saved RBP) + 0x20 + 8 below the start.
    expect(uc.regRead("r15")).toBe(start - 0x30n);
    expect(u64(uc.memRead(start - 0x30n, 8))).toBe(at("after_call"));
    expect(instructions).toBe(13);
  });

  it("reads and writes the x64 register set", () => {
    const uc = x64();
    const names = ["rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"] as const;
    names.forEach((name, i) => uc.regWrite(name, 0xfedcba9876543210n - BigInt(i)));
    names.forEach((name, i) => expect(uc.regRead(name)).toBe(0xfedcba9876543210n - BigInt(i)));
    uc.regWrite("fs_base", 0x1000n);
    expect(uc.regRead("fs_base")).toBe(0x1000n);
    for (const name of X64_REGISTERS) expect(uc.regRead(name)).toBeLessThan(1n << 64n);
    expect(() => uc.regRead("eip" as never)).toThrow(RangeError);
  });

  it("reports a fetch from an unmapped high address and stops a runaway loop", () => {
    const uc = x64();
    const bytes = asm.assemble("mov rax, 0xffff800000001000\njmp rax", { mode: 64, address: CODE64 });
    uc.memWrite(CODE64, bytes);
    const error = catchError(() => uc.start(CODE64, 0n, { count: 10 })) as UnicornError;
    expect(error.code).toBe(UC_ERR.FETCH_UNMAPPED);
    expect(error.access?.address).toBe(0xffff800000001000n);
    expect(error.message).toContain("0xffff800000001000");

    uc.memWrite(CODE64, asm.assemble("jmp $", { mode: 64, address: CODE64 }));
    expect(uc.start(CODE64, 0n, { count: 500 })).toEqual({ reason: "count", pc: CODE64 });
  });
});

function catchError(action: () => unknown): unknown {
  try {
    action();
  } catch (error) {
    return error;
  }
  throw new Error("expected an error");
}
