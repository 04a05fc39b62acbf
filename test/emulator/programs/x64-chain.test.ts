import { describe, expect, it } from "vitest";
import { IMAGE_DIRECTORY_ENTRY, parsePe } from "../../../src/formats/pe.js";
import { loadAssembler } from "../../../emulator/assemble.js";
import {
  X64_IMAGE_BASE,
  X64_MIN_STACK_RESERVE,
  buildX64Program,
  checkX64Program,
  type X64FunctionSpec,
  type X64ProgramSpec,
} from "../../../emulator/programs/x64-chain.js";
import { hexBytes } from "../../../emulator/programs/unwind-encode.js";
import { INITIAL, INITIAL_RSP, runX64 } from "./run-x64.js";

const main: X64FunctionSpec = { name: "main", alloc: 40 };

/** main (alloc 40) calls the subject, which calls a small innermost function. */
function around(name: string, subject: Omit<X64FunctionSpec, "name">): X64ProgramSpec {
  return {
    name,
    description: `one x64 shape: ${name}`,
    functions: [main, { name: "subject", capture: "capture_subject", ...subject }, { name: "tail", pushes: ["rbx"] }],
  };
}

/** Runs a program and checks it ended cleanly with every capture walked to the truth. */
async function runsCleanly(spec: X64ProgramSpec): Promise<void> {
  const p = await buildX64Program(spec);
  const r = await runX64(p);
  expect(r.finalRip).toBe(0n);
  expect(r.finalRsp).toBe(INITIAL_RSP + 8n);
  expect(r.finalRegs).toEqual(INITIAL);
  expect(r.abi).toEqual([]);
  expect(r.captures.map((c) => c.label)).toEqual(p.captures);
  for (const c of r.captures) {
    if (c.walk instanceof Error) throw c.walk;
    expect(c.walk.map((f) => [f.pc, f.sp]), c.label).toEqual(c.truth.map((f) => [f.pc, f.sp]));
  }
}

describe("buildX64Program", () => {
  it("writes source that assembles by itself to the image's code", async () => {
    const p = await buildX64Program(around("source", { pushes: ["rsi"], alloc: 48, saves: [{ register: "rdi", offset: 0x28 }] }));
    const assembler = await loadAssembler();
    const code = assembler.assemble(p.asm, { mode: 64, address: p.base + 0x1000n });
    expect(parsePe(p.image).readRva(0x1000, code.length)).toEqual(code);
    expect(p.asm).toContain("# subject: pushes [rsi], alloc 0x30, save rdi@0x28, epilog add rsp");
    expect(p.asm).toContain("#   bytes: 01 0a 04 00 0a 74 05 00 05 52 01 60");
    expect(p.asm).toContain("    mov qword ptr [rsp + 0x28], rdi              # UWOP_SAVE_NONVOL rdi at 0x28");
  });

  it("aligns functions to 16 bytes with int3 padding and names their extents with labels", async () => {
    const p = await buildX64Program(around("layout", { alloc: 40, captureProlog: true }));
    const pe = parsePe(p.image);
    expect(p.base).toBe(X64_IMAGE_BASE);
    expect(p.entryRva).toBe(0x1000);
    for (const s of p.symbols) {
      expect(s.rva % 16).toBe(0);
      expect(p.labels[s.name]).toBe(p.base + BigInt(s.rva));
      expect(p.labels[`${s.name}_end`]).toBe(p.base + BigInt(s.rva + s.size));
    }
    const [first, second] = p.symbols;
    const gap = pe.readRva(first!.rva + first!.size, second!.rva - first!.rva - first!.size)!;
    expect([...gap].every((b) => b === 0xcc)).toBe(true);
    // The prolog ends right at the body capture, so subject_prolog_1 is a label but not a second capture.
    expect(p.captures).toEqual(["subject_prolog_0", "capture_subject", "capture"]);
    expect(p.labels["subject_prolog_0"]).toBe(p.labels["subject"]);
    expect(p.labels["subject_prolog_1"]).toBe(p.labels["subject_body"]);
    expect(p.labels["capture_subject"]).toBe(p.labels["subject_body"]);
  });

  it("derives the CodeView GUID and timestamp from the content", async () => {
    const a = parsePe((await buildX64Program(around("one", { alloc: 40 }))).image);
    const b = parsePe((await buildX64Program(around("two", { alloc: 40 }))).image);
    expect(a.codeView!.guid).not.toBe(b.codeView!.guid);
    expect(a.codeView!.pdbName).toBe("one.pdb");
    expect(a.timeDateStamp).not.toBe(b.timeDateStamp);
  });

  it("a program whose only function is a leaf has no unwind data at all", async () => {
    const spec: X64ProgramSpec = { name: "alone", description: "main only", functions: [{ name: "main", leaf: true }] };
    const p = await buildX64Program(spec);
    const pe = parsePe(p.image);
    expect(pe.sections.map((s) => s.name)).toEqual([".text", ".rdata"]);
    expect(pe.dataDirectories[IMAGE_DIRECTORY_ENTRY.EXCEPTION]).toEqual({ rva: 0, size: 0 });
    expect(p.runtimeFunctions).toEqual([]);
    await runsCleanly(spec);
  });

  it("a function with pdata but no prolog gets a 0-code UNWIND_INFO padded to 8 bytes", async () => {
    const p = await buildX64Program({ name: "bare", description: "main with pdata and no prolog", functions: [{ name: "main" }] });
    expect(p.unwind.map((u) => hexBytes(u.bytes))).toEqual(["01 00 00 00 00 00 00 00"]);
  });

  it("allocates a page or more through __chkstk, and less with sub rsp", async () => {
    const page = await buildX64Program(around("page", { pushes: ["rbx", "rsi"], alloc: 4104 }));
    const pe = parsePe(page.image);
    const subject = page.symbols.find((s) => s.name === "subject")!;
    const prolog = hexBytes(pe.readRva(subject.rva, 15)!);
    expect(prolog.startsWith("53 56 b8 08 10 00 00 e8")).toBe(true);
    expect(prolog.endsWith("48 29 c4")).toBe(true);
    expect(page.unwind.find((u) => u.function === "subject")!.info.sizeOfProlog).toBe(15);
    expect(page.symbols.map((s) => s.name)).toContain("__chkstk");
    const small = await buildX64Program(around("no-page", { pushes: ["rbx", "rsi"], alloc: 4088 }));
    const at = small.symbols.find((s) => s.name === "subject")!.rva;
    expect(hexBytes(parsePe(small.image).readRva(at + 2, 7)!)).toBe("48 81 ec f8 0f 00 00");
    expect(small.symbols.map((s) => s.name)).not.toContain("__chkstk");
    await runsCleanly(around("page", { pushes: ["rbx", "rsi"], alloc: 4104 }));
  });

  it("asks for a stack big enough for its deepest point, in whole MiB", async () => {
    const spec = around("deep", { pushes: ["rbx"], alloc: 0x18_0000 });
    const p = await buildX64Program(spec);
    expect(p.deepestStack).toBeGreaterThan(0x18_0000);
    expect(p.stackReserve).toBe(0x20_0000);
    expect(parsePe(p.image).sizeOfImage).toBeGreaterThan(0);
    expect((await buildX64Program(around("shallow", { alloc: 40 }))).stackReserve).toBe(X64_MIN_STACK_RESERVE);
    await runsCleanly(spec);
  });

  it("gives a version-1 function a second epilog without touching its unwind data", async () => {
    const early = await buildX64Program(around("early", { pushes: ["rsi", "rdi"], alloc: 40, earlyReturn: true, captureEpilog: true }));
    const plain = await buildX64Program(around("plain", { pushes: ["rsi", "rdi"], alloc: 40 }));
    const info = (p: typeof early): string => hexBytes(p.unwind.find((u) => u.function === "subject")!.bytes);
    expect(info(early)).toBe(info(plain));
    expect(early.labels["subject_slow"]).toBeDefined();
    await runsCleanly(around("early", { pushes: ["rsi", "rdi"], alloc: 40, earlyReturn: true, captureEpilog: true }));
  });

  it("reports each simulated interrupt with its labels", async () => {
    const p = await buildX64Program({
      name: "irq",
      description: "an interrupt with error code",
      functions: [main, { name: "victim", pushes: ["rbx"], alloc: 32 }, { name: "isr", machineFrame: "error-code", pushes: ["rbp"], alloc: 40 }],
    });
    expect(p.machineFrames).toEqual([{ handler: "isr", errorCode: true, interrupt: "victim_interrupt", resume: "victim_resume" }]);
    expect(p.labels["victim_interrupt"]! < p.labels["victim_resume"]!).toBe(true);
  });
});

describe("checkX64Program rejects specs a compiler would not produce", () => {
  const program = (functions: X64FunctionSpec[], name = "bad"): X64ProgramSpec => ({ name, description: "", functions });
  const inner: X64FunctionSpec = { name: "inner" };
  it.each<[string, X64ProgramSpec, RegExp]>([
    ["an entry point not called main", program([{ name: "start", alloc: 40 }]), /must be called main/],
    ["a register as a name", program([main, { name: "rsi" }]), /C identifier/],
    ["an operand keyword as a name", program([main, { name: "far" }]), /C identifier/],
    ["a volatile register pushed", program([main, { name: "f", pushes: ["rax" as "rbx"] }]), /not a nonvolatile/],
    ["a register pushed twice", program([main, { name: "f", pushes: ["rbx", "rbx"] }]), /twice/],
    ["an allocation not a multiple of 8", program([main, { name: "f", alloc: 12 }]), /alloc = 12/],
    ["a frame register that is not pushed", program([main, { name: "f", alloc: 32, frame: { register: "rbp", offset: 0 } }, inner]), /must be pushed/],
    ["R12 as the frame register", program([main, { name: "f", pushes: ["r12"], alloc: 32, frame: { register: "r12", offset: 0 } }, inner]), /SIB/],
    ["a FrameOffset above the allocation", program([main, { name: "f", pushes: ["rbp"], alloc: 32, frame: { register: "rbp", offset: 48 } }, inner]), /must not exceed/],
    ["a FrameOffset not a multiple of 16", program([main, { name: "f", pushes: ["rbp"], alloc: 32, frame: { register: "rbp", offset: 8 } }, inner]), /frame.offset/],
    ["a lea epilog without a frame register", program([main, { name: "f", alloc: 40, epilog: "lea" }, inner]), /lea epilog needs a frame/],
    ["alloca without a frame register", program([main, { name: "f", alloc: 40, alloca: 32 }, inner]), /alloca needs a frame register/],
    ["alloca with an add epilog", program([main, { name: "f", pushes: ["rbp"], alloc: 32, frame: { register: "rbp", offset: 0 }, alloca: 32, epilog: "add" }, inner]), /lea epilog/],
    ["a call with RSP misaligned", program([main, { name: "f", pushes: ["rbx"], alloc: 40 }, inner]), /16-aligned/],
    ["a call without the home area", program([main, { name: "f", pushes: ["rbx"] }, inner]), /home area/],
    ["a save over the pushes", program([main, { name: "f", pushes: ["rbx"], alloc: 32, saves: [{ register: "rsi", offset: 32 }] }, inner]), /neither in the frame/],
    ["a save in the callees' home area", program([main, { name: "f", pushes: ["rbx"], alloc: 48, saves: [{ register: "rsi", offset: 16 }] }, inner]), /neither in the frame/],
    ["two saves in one slot", program([main, { name: "f", pushes: ["rbx"], alloc: 48, saves: [{ register: "rsi", offset: 32 }, { register: "rdi", offset: 32 }] }, inner]), /overlaps/],
    ["a save of a pushed register", program([main, { name: "f", pushes: ["rbx"], alloc: 48, saves: [{ register: "rbx", offset: 32 }] }, inner]), /already pushed/],
    ["a volatile XMM register", program([main, { name: "f", alloc: 56, xmmSaves: [{ xmm: 5, offset: 32 }] }, inner]), /XMM6\.\.XMM15/],
    ["an XMM save not 16-aligned", program([main, { name: "f", alloc: 56, xmmSaves: [{ xmm: 6, offset: 40 }] }, inner]), /multiple of 16/],
    ["a leaf that is not the innermost", program([main, { name: "f", leaf: true }, inner]), /must be the innermost/],
    ["a leaf that pushes", program([main, { name: "f", leaf: true, pushes: ["rbx"] }]), /must not touch the stack/],
    ["a leaf with prolog captures", program([main, { name: "f", leaf: true, captureProlog: true }]), /no prolog or epilog/],
    ["a tail call with nothing to jump to", program([main, { name: "f", exit: "tail-jmp" }]), /needs a next function/],
    ["a tail call into a handler", program([main, { name: "f", exit: "tail-jmp" }, { name: "isr", machineFrame: "plain" }]), /cannot enter a handler/],
    ["main entered through a machine frame", program([{ name: "main", machineFrame: "plain" }]), /main is entered by a call/],
    ["a version-2 handler", program([main, { name: "v", alloc: 40 }, { name: "isr", machineFrame: "plain", version: 2 }]), /machine frame/],
    ["a handler saving into a home area it does not have", program([main, { name: "v", alloc: 40 }, { name: "isr", machineFrame: "plain", pushes: ["rbp"], saves: [{ register: "rsi", offset: 16 }] }]), /neither in the frame/],
    ["a chained function that calls nothing", program([main, { name: "f", pushes: ["rbx"], alloc: 32, chained: { register: "rsi", placement: "after" } }]), /must call a next one/],
    ["a chained save of a pushed register", program([main, { name: "f", pushes: ["rbx"], alloc: 32, chained: { register: "rbx", placement: "after" } }, inner]), /already saved/],
    ["prolog captures in a recursive function", program([main, { name: "f", pushes: ["rbx"], alloc: 32, recursion: 3, captureProlog: true }, inner]), /more than once/],
    ["captureProbe without a large frame", program([main, { name: "f", pushes: ["rbx"], alloc: 32, captureProbe: true }, inner]), /captureProbe needs/],
    [
      "captureProbe with two probing functions",
      program([main, { name: "f", pushes: ["rbx"], alloc: 0x1000, captureProbe: true }, { name: "g", pushes: ["rbx"], alloc: 0x1000 }, inner]),
      /exactly one function/,
    ],
    ["version 3", program([main, { name: "f", version: 3 as 2 }]), /version must be 1 or 2/],
    ["a label defined twice", program([main, { name: "f", alloc: 40 }, { name: "f_body" }]), /defined twice/],
    ["a capture label clashing with a function", program([main, { name: "f", alloc: 40, capture: "main" }, inner]), /defined twice/],
    ["a stack deeper than 64 MiB", program([main, { name: "f", pushes: ["rbx"], alloc: 0x100_0000, recursion: 4 }, inner]), /deepest stack/],
    ["no functions", program([]), /at least one function/],
    ["a name that is not kebab-case", program([main], "Bad_Name"), /kebab-case/],
  ])("%s", (_, spec, message) => {
    expect(() => checkX64Program(spec)).toThrow(message);
  });

  it("buildX64Program rejects the same specs", async () => {
    await expect(buildX64Program(program([main, { name: "f", alloc: 40, epilog: "lea" }, inner]))).rejects.toThrow(RangeError);
  });
});
