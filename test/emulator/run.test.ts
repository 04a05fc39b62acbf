import { describe, expect, it } from "vitest";
import { DEFAULT_STACKS, EmulationError, MAX_STACK_RESERVE, SNAPSHOT_REGISTERS, stackFor, STACK_TOP, vectorsOf } from "../../emulator/run.js";
import { InputError } from "../../src/errors.js";
import { formatSweep } from "../../src/formats/sweep.js";
import { bytesToHex } from "../../src/formats/json-input.js";
import { CODE, DATA, runAssembled } from "./assembled.js";

/** The EmulationError a run throws. */
async function failure(promise: Promise<unknown>): Promise<EmulationError> {
  try {
    await promise;
  } catch (e) {
    if (e instanceof EmulationError) return e;
    throw e;
  }
  throw new Error("the run did not fail");
}

describe("the run", () => {
  it("starts with a sentinel 0 at [SP], zeroed registers, and ends at the entry's return", async () => {
    const run = await runAssembled(32, ["main: mov eax, 42", "ret"], { sweep: true });
    const first = run.result.sweep.steps[0]!;
    expect(first.step).toBe(0);
    expect(first.registers).toMatchObject({ eip: CODE, esp: DEFAULT_STACKS[32].initialSp, ebp: 0n, eax: 0n, ebx: 0n, ecx: 0n, edx: 0n, esi: 0n, edi: 0n });
    expect(Object.keys(first.registers)).toEqual(SNAPSHOT_REGISTERS[32]);
    expect(run.result.instructions).toBe(2);
    expect(run.result.sweep.steps.map((s) => s.step)).toEqual([0, 1]);
    expect(run.result.registers["eax"]).toBe(42n);
    expect(run.result.registers["esp"]).toBe(DEFAULT_STACKS[32].initialSp + 4n);
  });

  it("x64 starts with RSP ≡ 8 (mod 16) and records the x64 register set", async () => {
    const run = await runAssembled(64, ["main: mov rax, 42", "ret"], { sweep: true });
    const first = run.result.sweep.steps[0]!;
    expect(first.registers["rsp"]! % 16n).toBe(8n);
    expect(Object.keys(first.registers)).toEqual(SNAPSHOT_REGISTERS[64]);
    expect(run.result.registers["rax"]).toBe(42n);
  });

  it("untraced: no hook, no count, no snapshots", async () => {
    const run = await runAssembled(32, ["main: mov eax, 7", "ret"], { trace: false });
    expect(run.result.instructions).toBeUndefined();
    expect(run.result.sweep.steps).toEqual([]);
    expect(run.result.registers["eax"]).toBe(7n);
    await expect(runAssembled(32, ["main: ret"], { trace: false, sweep: true })).rejects.toThrow("snapshots need tracing");
  });

  it("is deterministic: the same program gives the same sweep text", async () => {
    const lines = ["main: push ebx", "mov ebx, 5", "call f", "pop ebx", "ret", "f: mov dword ptr [0x500010], ebx", "ret"];
    const a = formatSweep((await runAssembled(32, lines, { sweep: true, functions: ["main", "f"] })).result.sweep);
    const b = formatSweep((await runAssembled(32, lines, { sweep: true, functions: ["main", "f"] })).result.sweep);
    expect(a).toBe(b);
  });
});

describe("memory writes between snapshots", () => {
  it("each snapshot holds exactly the bytes written since the previous one", async () => {
    const run = await runAssembled(32, ["main: mov dword ptr [0x500000], 0x11223344", "push 0x55667788", "pop eax", "ret"], { sweep: true });
    const steps = run.result.sweep.steps;
    const S = run.sp0;
    expect(steps.map((s) => s.writes.map((w) => [w.address, bytesToHex(w.bytes)]))).toEqual([[], [[DATA, "44332211"]], [[S - 4n, "88776655"]], []]);
  });

  it("writes between two break snapshots are merged, adjacent and overlapping ones into one", async () => {
    const run = await runAssembled(
      32,
      [
        "main: nop",
        "mov dword ptr [0x500000], 0x11223344",
        "mov byte ptr [0x500004], 0x55",
        "mov word ptr [0x500002], 0xaabb",
        "mov byte ptr [0x500010], 0x66",
        "push 0x01020304",
        "there: pop eax",
        "ret",
      ],
      { breaks: ["main", "there"] },
    );
    const [atMain, atThere] = run.result.sweep.steps;
    expect(atMain!.writes).toEqual([]);
    expect(atThere!.writes.map((w) => [w.address, bytesToHex(w.bytes)])).toEqual([
      [run.sp0 - 4n, "04030201"],
      [DATA, "4433bbaa55"],
      [DATA + 0x10n, "66"],
    ]);
    expect(atThere!.label).toBe("there");
    expect(atThere!.step).toBe(6);
  });

  it("70,000 stores between two breaks, more than are kept unmerged, still give exactly the bytes written", async () => {
    // Stores to every other byte of the data page, 70,000 of them, then one to the byte in
    // between each pair: the last snapshot's writes are one range.
    const run = await runAssembled(
      32,
      [
        "main: mov ecx, 70000",
        "again: mov eax, ecx",
        "and eax, 0x7fe",
        "mov byte ptr [0x500000 + eax], cl",
        "dec ecx",
        "jnz again",
        "mov ecx, 0x800",
        "odd: mov byte ptr [0x4fffff + ecx], 0xee",
        "sub ecx, 2",
        "jnz odd",
        "there: ret",
      ],
      { breaks: ["main", "there"], maxInstructions: 1_000_000 },
    );
    const atThere = run.result.sweep.steps[1]!;
    expect(atThere.writes.map((w) => [w.address, w.bytes.length])).toEqual([[DATA, 0x800]]);
    const expected = new Uint8Array(0x800).fill(0xee);
    for (let ecx = 70000; ecx >= 1; ecx--) expected[ecx & 0x7fe] = ecx & 0xff;
    expect(vectorsOf(run.result)[1]!.memory.read(DATA, 0x800)).toEqual(expected);
  });

  it("cuts one vector per break hit with the memory of that moment", async () => {
    const run = await runAssembled(32, ["main: mov ecx, 2", "again: call f", "dec ecx", "jnz again", "ret", "f: mov dword ptr [0x500000], ecx", "ret"], {
      functions: ["main", "f"],
      breaks: ["f"],
    });
    const vectors = vectorsOf(run.result);
    expect(vectors).toHaveLength(2);
    // The first hit sees the data page before f's first store; the second sees ecx = 2 stored.
    expect(vectors[0]!.memory.read(DATA, 4)).toEqual(new Uint8Array(4));
    expect(vectors[1]!.memory.read(DATA, 4)).toEqual(Uint8Array.from([2, 0, 0, 0]));
    expect(vectors[1]!.threads[0]!.truth!.map((t) => t.function)).toEqual(["f", "main"]);
    expect(vectors[1]!.description).toBe("test.exe: at f, after 7 instructions");
    // The stack region starts at the page holding ESP.
    const stackRegion = vectors[0]!.memory.regions.find((r) => r.base >= DEFAULT_STACKS[32].base)!;
    expect(stackRegion.base).toBe(run.sp0 - (run.sp0 % 0x1000n));
  });
});

describe("breaks", () => {
  it("accepts functions, NAME+0xN, labels and 0x-addresses; one snapshot per address", async () => {
    const run = await runAssembled(32, ["main: nop", "second: nop", "ret"], { functions: ["main"], breaks: ["main+0x1", "second", "0x401000"] });
    expect(run.result.sweep.steps.map((s) => [s.step, s.label])).toEqual([
      [0, "0x401000"],
      [1, "main+0x1,second"],
    ]);
  });

  it("names the known functions when a break does not resolve", async () => {
    const attempt = runAssembled(32, ["main: ret"], { functions: ["main"], breaks: ["nope"] });
    await expect(attempt).rejects.toThrow(InputError);
    await expect(runAssembled(32, ["main: ret"], { functions: ["main"], breaks: ["nope"] })).rejects.toThrow('--break "nope": no function or label of that name; known: main');
  });
});

describe("runs that do not end at the sentinel", () => {
  it("a runaway loop stops at the limit, naming the address and the instruction", async () => {
    const e = await failure(runAssembled(32, ["main: jmp main"], { maxInstructions: 1000 }));
    expect(e.kind).toBe("runaway");
    expect(e.executed).toBe(1000);
    expect(e.message).toBe("still running after 1000 instructions; the next one is 0x00401000: eb fe  jmp 0x401000");
  });

  it("an unmapped fetch names the address and the instruction that went there", async () => {
    const e = await failure(runAssembled(32, ["main: mov eax, 0x12345678", "call eax"]));
    expect(e.kind).toBe("fault");
    expect(e.access).toMatchObject({ kind: "fetch", address: 0x12345678n, cause: "unmapped" });
    expect(e.message).toBe("cannot execute at 0x12345678: unmapped memory, reached from 0x00401005: ff d0  call eax");
  });

  it("an unmapped read names the address and the instruction", async () => {
    const e = await failure(runAssembled(64, ["main: mov ebx, 0x10", "mov rax, qword ptr [rbx]", "ret"]));
    expect(e.kind).toBe("fault");
    expect(e.message).toMatch(/^read of 8 byte\(s\) at 0x10 \(unmapped memory\) by 0x0000000000401005: 48 8b 03  mov rax, qword ptr \[rbx\]$/);
  });

  it("a write to read-only code is refused", async () => {
    const e = await failure(runAssembled(32, ["main: mov dword ptr [main], 0", "ret"]));
    expect(e.message).toMatch(/^write of 4 byte\(s\) at 0x401000 \(protected memory\) by 0x00401000: /);
  });

  it("jumping to address 0 from inside a call is not the end of the program", async () => {
    const e = await failure(runAssembled(32, ["main: call f", "ret", "f: push 0", "ret"]));
    expect(e.kind).toBe("bad-exit");
    expect(e.message).toMatch(/^jumped to address 0 from 0x00401008: c3  ret without returning from the entry point/);
  });
});

describe("the stack a program gets (stackFor)", () => {
  const x86Image = { begin: 0x0040_0000n, end: 0x0040_3fffn };
  const x64Image = { begin: 0x1_4000_0000n, end: 0x1_4000_4fffn };

  it("a 1 MiB reserve ends at the CPU's stack top: 0x00030000..0x00130000 on x86, 0x00200000..0x00300000 on x64", () => {
    expect(stackFor(32, 0x10_0000n, [x86Image])).toEqual({ base: 0x3_0000n, size: 0x10_0000n, initialSp: 0x0012_ffecn });
    expect(stackFor(64, 0x10_0000n, [x64Image])).toEqual({ base: 0x20_0000n, size: 0x10_0000n, initialSp: 0x002f_ffc8n });
    // The hand-built runs' 64 KiB stacks are the top 64 KiB of the same place.
    expect(DEFAULT_STACKS[32]).toEqual({ base: STACK_TOP[32] - 0x1_0000n, size: 0x1_0000n, initialSp: 0x0012_ffecn });
    expect(DEFAULT_STACKS[64].initialSp).toBe(stackFor(64, 0x10_0000n, []).initialSp);
  });

  it("rounds the reserve up to 64 KiB, and gives at least 64 KiB", () => {
    expect(stackFor(32, 0x1_2345n, []).size).toBe(0x2_0000n);
    expect(stackFor(32, 0n, []).size).toBe(0x1_0000n);
    expect(stackFor(64, 0x20_0000n, [x64Image])).toEqual({ base: 0x10_0000n, size: 0x20_0000n, initialSp: 0x002f_ffc8n });
  });

  it("a reserve too large for the place below the top goes to the lowest free range, with 64 KiB unmapped below it", () => {
    // 16 MiB cannot end at 0x00130000: it goes past the image, leaving a 64 KiB gap.
    const s = stackFor(32, 0x100_0000n, [x86Image]);
    expect(s).toEqual({ base: 0x42_0000n, size: 0x100_0000n, initialSp: 0x0141_ffecn });
    // Where the space below the image is free enough, it goes there.
    expect(stackFor(32, 0x20_0000n, [x86Image]).base).toBe(0x2_0000n);
    // Past a mapped range, the stack starts 64 KiB above it.
    const taken = [{ begin: 0x2_0000n, end: 0x3_ffffn }, x86Image];
    const after = stackFor(32, 0x20_0000n, taken);
    expect(after.base).toBe(0x5_0000n);
    for (const t of taken) expect(t.end < after.base - 0x1_0000n || t.begin >= after.base + after.size).toBe(true);
  });

  it("refuses a reserve above 256 MiB, and one that fits nowhere", () => {
    expect(MAX_STACK_RESERVE).toBe(0x1000_0000n);
    expect(stackFor(32, MAX_STACK_RESERVE, [x86Image]).size).toBe(MAX_STACK_RESERVE);
    expect(() => stackFor(32, MAX_STACK_RESERVE + 1n, [])).toThrow(InputError);
    expect(() => stackFor(32, MAX_STACK_RESERVE + 1n, [])).toThrow(
      "SizeOfStackReserve 0x10000001 (268435457 bytes) is more than the emulator maps for a stack: at most 0x10000000 (256 MiB)",
    );
    expect(() => stackFor(32, 0x10_0000n, [{ begin: 0n, end: 0xffff_ffffn }])).toThrow("no free 0x100000-byte range for a stack of SizeOfStackReserve 0x100000 in the 32-bit address space");
  });
});
