import { describe, expect, it } from "vitest";
import { decodeControlTransfer, ShadowStack, TraceError } from "../../emulator/trace.js";
import type { TruthFrame } from "../../src/model/snapshot.js";
import { runAssembled, type AssembledRun } from "./assembled.js";

/** The truth of every snapshot taken at `label`, in the order they were taken. */
function truthAt(run: AssembledRun, label: string): TruthFrame[][] {
  return run.result.sweep.steps.filter((s) => s.label?.split(",").includes(label)).map((s) => s.truth!);
}

/** One truth frame as written by hand. */
function frame(pc: bigint, sp: bigint, fn: string): TruthFrame {
  return { pc, sp, function: fn };
}

describe("decoding calls and returns", () => {
  const decode = (hex: string, mode: 32 | 64 = 32) => decodeControlTransfer(Uint8Array.from(Buffer.from(hex, "hex")), mode);

  it("finds near calls: E8 rel and FF /2, behind prefixes and REX", () => {
    expect(decode("e810000000")).toEqual({ kind: "call", form: "rel" });
    expect(decode("ffd0")).toEqual({ kind: "call", form: "indirect" }); // call eax
    expect(decode("ff151e104000")).toEqual({ kind: "call", form: "indirect" }); // call [mem]
    expect(decode("41ffd3", 64)).toEqual({ kind: "call", form: "indirect" }); // call r11
    expect(decode("2eff15aabbccdd")).toEqual({ kind: "call", form: "indirect" }); // cs: call [mem]
    expect(decode("f2e800000000")).toEqual({ kind: "call", form: "rel" }); // bnd call
  });

  it("finds near returns: C3, C2 iw, rep ret", () => {
    expect(decode("c3")).toEqual({ kind: "ret", release: 0 });
    expect(decode("c20800")).toEqual({ kind: "ret", release: 8 });
    expect(decode("f3c3")).toEqual({ kind: "ret", release: 0 });
  });

  it("leaves jumps, far transfers and everything else alone", () => {
    expect(decode("ffe0")).toBeUndefined(); // jmp eax (FF /4)
    expect(decode("ff25aabbccdd")).toBeUndefined(); // jmp [mem]
    expect(decode("ff1d00000000")).toBeUndefined(); // far call (FF /3)
    expect(decode("cb")).toBeUndefined(); // far ret
    expect(decode("e9aabbccdd")).toBeUndefined(); // jmp rel32
    expect(decode("41c3", 32)).toBeUndefined(); // in 32-bit mode 0x41 is `inc ecx`, not REX
    expect(decode("55")).toBeUndefined();
    expect(decode("c2")).toBeUndefined(); // truncated
  });
});

describe("the shadow stack checks what a call did", () => {
  const stack = new Map<bigint, bigint>();
  const read = (address: bigint): bigint => stack.get(address) ?? 0n;

  it("accepts a call that pushed its return address", () => {
    const shadow = new ShadowStack(32, read);
    shadow.before(0x401000n, 0x12ff00n, Uint8Array.from([0xe8, 0, 0, 0, 0]));
    stack.set(0x12fefcn, 0x401005n);
    shadow.before(0x401005n, 0x12fefcn, Uint8Array.from([0x90]));
    expect(shadow.entries).toEqual([{ slot: 0x12fefcn, returnAddress: 0x401005n, callSite: 0x401000n }]);
  });

  it("throws a TraceError when SP did not go down by one pointer", () => {
    const shadow = new ShadowStack(32, read);
    shadow.before(0x401000n, 0x12ff00n, Uint8Array.from([0xe8, 0, 0, 0, 0]));
    expect(() => shadow.before(0x401005n, 0x12fefen, Uint8Array.from([0x90]))).toThrow(TraceError);
    const other = new ShadowStack(32, read);
    other.before(0x401000n, 0x12ff00n, Uint8Array.from([0xe8, 0, 0, 0, 0]));
    stack.set(0x12fefcn, 0x999n);
    expect(() => other.before(0x401005n, 0x12fefcn, Uint8Array.from([0x90]))).toThrow("pushed 0x999, not its return address 0x401005");
  });
});

describe("ground truth from executed calls (x86)", () => {
  it("direct calls: one frame per call in progress, the sentinel slot is not a frame", async () => {
    const run = await runAssembled(
      32,
      ["main: push 7", "call f", "ret_f: add esp, 4", "ret", "f: push ebp", "mov ebp, esp", "call g", "ret_g: pop ebp", "ret", "g: nop", "g_ret: ret"],
      { functions: ["main", "f", "g"], breaks: ["main", "g", "g_ret", "ret_f"] },
    );
    const { at, sp0: S } = run;
    expect(truthAt(run, "main")).toEqual([[frame(at("main"), S, "main")]]);
    const inG = [frame(at("ret_g"), S - 12n, "f"), frame(at("ret_f"), S - 4n, "main")];
    expect(truthAt(run, "g")).toEqual([[frame(at("g"), S - 16n, "g"), ...inG]]);
    // At `ret` the return address is still in its slot at [ESP]: the caller is still a frame.
    expect(truthAt(run, "g_ret")).toEqual([[frame(at("g_ret"), S - 16n, "g"), ...inG]]);
    expect(truthAt(run, "ret_f")).toEqual([[frame(at("ret_f"), S - 4n, "main")]]);
  });

  it("indirect calls through a register and through memory", async () => {
    const run = await runAssembled(32, ["main: lea eax, [f]", "call eax", "r1: call dword ptr [table]", "r2: ret", "f: nop", "ret", "table: .long f"], {
      functions: ["main", "f"],
      breaks: ["f"],
    });
    const { at, sp0: S } = run;
    expect(truthAt(run, "f")).toEqual([
      [frame(at("f"), S - 4n, "f"), frame(at("r1"), S, "main")],
      [frame(at("f"), S - 4n, "f"), frame(at("r2"), S, "main")],
    ]);
  });

  it("ret 8: the caller's sp is just past the slot, before the arguments are released", async () => {
    const run = await runAssembled(32, ["main: push 2", "push 1", "call h", "after_h: nop", "ret", "h: mov eax, dword ptr [esp + 4]", "h_ret: ret 8"], {
      functions: ["main", "h"],
      breaks: ["h_ret", "after_h"],
    });
    const { at, sp0: S } = run;
    expect(truthAt(run, "h_ret")).toEqual([[frame(at("h_ret"), S - 12n, "h"), frame(at("after_h"), S - 8n, "main")]]);
    expect(truthAt(run, "after_h")).toEqual([[frame(at("after_h"), S, "main")]]);
  });

  it("a tail jump keeps the frame: the function jumped to returns to the original caller", async () => {
    const run = await runAssembled(32, ["main: call f", "after_f: ret", "f: push ebx", "pop ebx", "jmp g", "g: nop", "ret"], {
      functions: ["main", "f", "g"],
      breaks: ["g", "after_f"],
    });
    const { at, sp0: S } = run;
    expect(truthAt(run, "g")).toEqual([[frame(at("g"), S - 4n, "g"), frame(at("after_f"), S, "main")]]);
    expect(truthAt(run, "after_f")).toEqual([[frame(at("after_f"), S, "main")]]);
  });

  it("a longjmp-like `mov esp` discards every call whose slot it leaves below SP", async () => {
    const run = await runAssembled(
      32,
      ["main: push ebp", "mov ebp, esp", "call a", "landing: pop ebp", "ret", "a: push ebx", "call b", "b: mov esp, ebp", "b_jump: jmp landing"],
      { functions: ["main", "a", "b"], breaks: ["b", "b_jump", "landing"] },
    );
    const { at, sp0: S } = run;
    // `call b` is a's last instruction, so its return address is b's first byte; the caller
    // is named from the byte before it, inside a.
    expect(truthAt(run, "b")).toEqual([[frame(at("b"), S - 16n, "b"), frame(at("b"), S - 12n, "a"), frame(at("landing"), S - 4n, "main")]]);
    expect(truthAt(run, "b_jump")).toEqual([[frame(at("b_jump"), S - 4n, "b")]]);
    expect(truthAt(run, "landing")).toEqual([[frame(at("landing"), S - 4n, "main")]]);
  });

  it("recursion: one frame per activation", async () => {
    const run = await runAssembled(
      32,
      ["main: mov ecx, 3", "call r", "after_main: ret", "r: test ecx, ecx", "jz base", "dec ecx", "call r", "after_r: ret", "base: nop", "ret"],
      { functions: ["main", "r"], breaks: ["base"] },
    );
    const { at, sp0: S } = run;
    expect(truthAt(run, "base")).toEqual([
      [
        frame(at("base"), S - 16n, "r"),
        frame(at("after_r"), S - 12n, "r"),
        frame(at("after_r"), S - 8n, "r"),
        frame(at("after_r"), S - 4n, "r"),
        frame(at("after_main"), S, "main"),
      ],
    ]);
  });

  it("a return address copied to a lower slot (the probe routine's return) is the one `ret` uses", async () => {
    const run = await runAssembled(
      32,
      ["main: call probe", "after: add esp, 12", "ret", "probe: mov eax, dword ptr [esp]", "sub esp, 12", "copy: mov dword ptr [esp], eax", "probe_ret: ret"],
      { functions: ["main", "probe"], breaks: ["copy", "probe_ret", "after"] },
    );
    const { at, sp0: S } = run;
    expect(truthAt(run, "copy")).toEqual([[frame(at("copy"), S - 16n, "probe"), frame(at("after"), S, "main")]]);
    expect(truthAt(run, "probe_ret")).toEqual([[frame(at("probe_ret"), S - 16n, "probe"), frame(at("after"), S - 12n, "main")]]);
    expect(truthAt(run, "after")).toEqual([[frame(at("after"), S - 12n, "main")]]);
  });

  it("rep ret returns like ret", async () => {
    const run = await runAssembled(32, ["main: call f", "after: ret", "f: nop", ".byte 0xf3, 0xc3"], { functions: ["main", "f"], breaks: ["f", "after"] });
    const { at, sp0: S } = run;
    expect(truthAt(run, "f")).toEqual([[frame(at("f"), S - 4n, "f"), frame(at("after"), S, "main")]]);
    expect(truthAt(run, "after")).toEqual([[frame(at("after"), S, "main")]]);
  });
});

describe("ground truth from executed calls (x64)", () => {
  it("direct, register (with REX) and RIP-relative memory calls, 8-byte slots", async () => {
    const run = await runAssembled(
      64,
      ["main: lea rax, [rip + f]", "call rax", "r1: mov r11, rax", "call r11", "r2: call qword ptr [rip + table]", "r3: call g", "r4: ret", "f: nop", "ret", "g: call f", "g_after: ret", "table: .quad f"],
      { functions: ["main", "f", "g"], breaks: ["f"] },
    );
    const { at, sp0: S } = run;
    const inF = (caller: string) => [frame(at("f"), S - 8n, "f"), frame(at(caller), S, "main")];
    expect(truthAt(run, "f")).toEqual([
      inF("r1"),
      inF("r2"),
      inF("r3"),
      [frame(at("f"), S - 16n, "f"), frame(at("g_after"), S - 8n, "g"), frame(at("r4"), S, "main")],
    ]);
  });
});

describe("interrupts: the machine frame names the interrupted frame", () => {
  const NOP = Uint8Array.from([0x90]);
  const CALL = Uint8Array.from([0xe8, 0, 0, 0, 0]);

  /** main calls victim; victim builds a machine frame (RIP, CS, RFLAGS, RSP, SS) and jumps to the handler. */
  function interrupted(errorCode: boolean) {
    const mem = new Map<bigint, bigint>();
    const shadow = new ShadowStack(64, (a) => mem.get(a) ?? 0n, [{ address: 0x140004000n, errorCode }]);
    shadow.before(0x140001000n, 0x2000n, CALL);
    mem.set(0x1ff8n, 0x140001005n);
    shadow.before(0x140003000n, 0x1ff8n, NOP);
    const frame = 0x1fc0n;
    mem.set(frame, 0x140003010n); // RIP: the interrupted instruction
    mem.set(frame + 24n, 0x1ff0n); // RSP: victim's stack pointer when interrupted
    const sp = errorCode ? frame - 8n : frame;
    shadow.before(0x140004000n, sp, NOP);
    return { shadow, sp };
  }

  it.each([false, true])("puts the interrupted PC and SP between the handler and its caller's caller (error code: %s)", (errorCode) => {
    const { shadow, sp } = interrupted(errorCode);
    expect(shadow.truth(0x140004000n, sp, []).map((f) => [f.pc, f.sp])).toEqual([
      [0x140004000n, sp],
      [0x140003010n, 0x1ff0n],
      [0x140001005n, 0x2000n],
    ]);
  });

  it("retires the interrupted frame once the handler restores the saved RSP", () => {
    const { shadow } = interrupted(false);
    shadow.before(0x140003010n, 0x1ff0n, NOP);
    expect(shadow.truth(0x140003010n, 0x1ff0n, []).map((f) => f.pc)).toEqual([0x140003010n, 0x140001005n]);
  });
});
