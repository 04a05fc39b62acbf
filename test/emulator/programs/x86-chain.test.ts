import { describe, expect, it } from "vitest";
import { parsePe } from "../../../src/formats/pe.js";
import { FRAME_FPO, FRAME_NONFPO, type FpoData } from "../../../src/model/fpo-data.js";
import { loadAssembler } from "../../../emulator/assemble.js";
import {
  X86_IMAGE_BASE,
  buildX86Program,
  checkX86Program,
  type X86FunctionSpec,
  type X86Program,
  type X86ProgramSpec,
} from "../../../emulator/programs/x86-chain.js";
import { INITIAL, STACK_TOP, runX86 } from "./run-x86.js";

/**
 * A three-function program around one subject: main (EBP frame) calls the subject, which is
 * captured before it calls a small FPO tail, which is captured too. The subject's record is then
 * checked both as the context frame and as a caller frame.
 */
function around(name: string, subject: Omit<X86FunctionSpec, "name">): X86ProgramSpec {
  return {
    name,
    description: `one FPO shape: ${name}`,
    functions: [
      { name: "main", frame: "ebp" },
      { name: "subject", capture: "capture_subject", ...subject },
      { name: "tail", frame: "fpo", params: 1 },
    ],
  };
}

/** The fields of a record that the shape decides (the extent depends on the body). */
type Shape = Pick<FpoData, "cdwLocals" | "cdwParams" | "cbProlog" | "cbRegs" | "fUseBP" | "cbFrame">;

/**
 * Decodes a prolog with the table of x86-fpo.md §1.4 step 4 and returns the bytes it puts on
 * the stack; throws if an instruction is not in the table or straddles the prolog's end.
 */
function prologPushes(bytes: Uint8Array): number {
  let at = 0;
  let pushed = 0;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  while (at < bytes.length) {
    const op = bytes[at]!;
    if (op >= 0x50 && op <= 0x57) {
      pushed += 4;
      at += 1;
    } else if (op === 0x83 && bytes[at + 1] === 0xec) {
      pushed += bytes[at + 2]!;
      at += 3;
    } else if (op === 0x81 && bytes[at + 1] === 0xec) {
      pushed += view.getUint32(at + 2, true);
      at += 6;
    } else if ((op === 0x8b && bytes[at + 1] === 0xec) || (op === 0x89 && bytes[at + 1] === 0xe5)) {
      at += 2;
    } else {
      throw new Error(`prolog byte 0x${op.toString(16)} at +${at} is not in the prolog table`);
    }
  }
  if (at !== bytes.length) throw new Error("the last prolog instruction runs past cbProlog");
  return pushed;
}

const subjectRecord = (p: X86Program): FpoData => p.fpo[1]!;

/** Builds, runs and checks a shape program; returns the subject's record. */
async function checkShape(name: string, subject: Omit<X86FunctionSpec, "name">, shape: Shape): Promise<FpoData> {
  const p = await buildX86Program(around(name, subject));
  const r = subjectRecord(p);
  expect(r).toMatchObject({ ...shape, fHasSEH: false, reserved: 0 });
  expect(p.symbols[1]).toEqual({ name: "subject", rva: r.ulOffStart, size: r.cbProcSize });

  // The prolog is exactly cbProlog bytes of pushes and allocations (x86-fpo.md §1.4 step 4),
  // and the function ends with its ret.
  const pe = parsePe(p.image);
  const link = r.cbFrame === FRAME_NONFPO ? 4 : 0;
  expect(prologPushes(pe.readRva(r.ulOffStart, r.cbProlog)!)).toBe(4 * r.cdwLocals + 4 * r.cbRegs + link);
  const last = pe.readRva(r.ulOffStart + r.cbProcSize - 3, 3)!;
  if (subject.convention === "stdcall" && r.cdwParams > 0) expect([...last]).toEqual([0xc2, 4 * r.cdwParams, 0]);
  else expect(last[2]).toBe(0xc3);

  // It runs, and the records unwind both captures exactly.
  const run = runX86(p);
  expect(run.finalEip).toBe(0n);
  expect(run.finalEsp).toBe(STACK_TOP);
  expect(run.finalRegs).toEqual(INITIAL);
  expect(run.captures.map((c) => c.label)).toEqual(["capture_subject", "capture"]);
  for (const c of run.captures) expect(c.fpoWalk).toEqual(c.truth);
  return r;
}

describe("x86 program shapes: one per FPO_DATA shape", () => {
  it("FRAME_FPO, cbRegs 0, no locals, no params", async () => {
    await checkShape("fpo-bare", { frame: "fpo" }, { cdwLocals: 0, cdwParams: 0, cbProlog: 0, cbRegs: 0, fUseBP: false, cbFrame: FRAME_FPO });
  });

  it("FRAME_FPO, cbRegs 1 (esi), 3 locals", async () => {
    await checkShape("fpo-regs-1", { frame: "fpo", locals: 3, saved: ["esi"] }, { cdwLocals: 3, cdwParams: 0, cbProlog: 4, cbRegs: 1, fUseBP: false, cbFrame: FRAME_FPO });
  });

  it("FRAME_FPO, cbRegs 2 with EBP (fUseBP), 1 local", async () => {
    const r = await checkShape("fpo-regs-2-usebp", { frame: "fpo", locals: 1, saved: ["ebx", "ebp"] }, {
      cdwLocals: 1, cdwParams: 0, cbProlog: 5, cbRegs: 2, fUseBP: true, cbFrame: FRAME_FPO,
    });
    expect(r.fUseBP).toBe(true);
  });

  it("FRAME_FPO, cbRegs 3 without EBP (fUseBP off)", async () => {
    await checkShape("fpo-regs-3", { frame: "fpo", saved: ["ebx", "esi", "edi"] }, { cdwLocals: 0, cdwParams: 0, cbProlog: 3, cbRegs: 3, fUseBP: false, cbFrame: FRAME_FPO });
  });

  it("FRAME_FPO, cbRegs 4 with EBP (fUseBP), 2 locals, 2 params", async () => {
    await checkShape("fpo-regs-4-usebp", { frame: "fpo", locals: 2, saved: ["ebx", "ebp", "esi", "edi"], params: 2 }, {
      cdwLocals: 2, cdwParams: 2, cbProlog: 7, cbRegs: 4, fUseBP: true, cbFrame: FRAME_FPO,
    });
  });

  it("FRAME_FPO, 100 locals: sub esp with a 32-bit immediate", async () => {
    await checkShape("fpo-locals-100", { frame: "fpo", locals: 100 }, { cdwLocals: 100, cdwParams: 0, cbProlog: 6, cbRegs: 0, fUseBP: false, cbFrame: FRAME_FPO });
  });

  it("FRAME_FPO, 3 cdecl params: the caller pops", async () => {
    await checkShape("fpo-cdecl-3", { frame: "fpo", saved: ["esi"], params: 3 }, { cdwLocals: 0, cdwParams: 3, cbProlog: 1, cbRegs: 1, fUseBP: false, cbFrame: FRAME_FPO });
  });

  it("FRAME_FPO, 2 stdcall params: ret 8", async () => {
    await checkShape("fpo-stdcall-2", { frame: "fpo", locals: 1, params: 2, convention: "stdcall" }, {
      cdwLocals: 1, cdwParams: 2, cbProlog: 3, cbRegs: 0, fUseBP: false, cbFrame: FRAME_FPO,
    });
  });

  it("FRAME_FPO, recursion: 6 activations", async () => {
    await checkShape("fpo-recursion-5", { frame: "fpo", locals: 1, saved: ["edi"], params: 1, recursion: 5 }, {
      cdwLocals: 1, cdwParams: 1, cbProlog: 4, cbRegs: 1, fUseBP: false, cbFrame: FRAME_FPO,
    });
  });

  it("FRAME_NONFPO, bare: push ebp; mov ebp, esp", async () => {
    await checkShape("nonfpo-bare", { frame: "ebp" }, { cdwLocals: 0, cdwParams: 0, cbProlog: 3, cbRegs: 0, fUseBP: false, cbFrame: FRAME_NONFPO });
  });

  it("FRAME_NONFPO, 2 locals, 2 saved registers, 2 stdcall params", async () => {
    await checkShape("nonfpo-full", { frame: "ebp", locals: 2, saved: ["esi", "edi"], params: 2, convention: "stdcall" }, {
      cdwLocals: 2, cdwParams: 2, cbProlog: 8, cbRegs: 2, fUseBP: false, cbFrame: FRAME_NONFPO,
    });
  });

  it("FRAME_NONFPO, 64 locals: sub esp with a 32-bit immediate", async () => {
    await checkShape("nonfpo-locals-64", { frame: "ebp", locals: 64 }, { cdwLocals: 64, cdwParams: 0, cbProlog: 9, cbRegs: 0, fUseBP: false, cbFrame: FRAME_NONFPO });
  });

  it("FRAME_NONFPO with alloca: the run-time allocation is not in the record", async () => {
    await checkShape("nonfpo-alloca", { frame: "ebp", saved: ["ebx"], alloca: 24, params: 1 }, {
      cdwLocals: 0, cdwParams: 1, cbProlog: 4, cbRegs: 1, fUseBP: false, cbFrame: FRAME_NONFPO,
    });
  });

  it("FRAME_NONFPO recursion: 1000 calls deep fits the 1 MiB stack", async () => {
    const p = await buildX86Program({
      name: "nonfpo-recursion",
      description: "EBP-frame recursion",
      functions: [{ name: "main", frame: "ebp" }, { name: "rec", frame: "ebp", locals: 2, saved: ["ebx", "esi", "edi"], params: 2, recursion: 1000 }],
    });
    const run = runX86(p);
    expect(run.captures).toHaveLength(1);
    expect(run.captures[0]!.truth).toHaveLength(1002);
    expect(run.captures[0]!.fpoWalk).toEqual(run.captures[0]!.truth);
    expect(run.captures[0]!.ebpChain).toEqual(run.captures[0]!.truth.slice(1).map((f) => f.pc));
    expect(run.finalEsp).toBe(STACK_TOP);
  });
});

describe("buildX86Program", () => {
  it("returns symbols, labels and the entry point consistently", async () => {
    const p = await buildX86Program(around("labels", { frame: "fpo", locals: 1 }));
    expect(p.machine).toBe("x86");
    expect(p.base).toBe(X86_IMAGE_BASE);
    expect(p.symbols.map((s) => s.name)).toEqual(["main", "subject", "tail"]);
    for (const s of p.symbols) {
      expect(p.labels[s.name]).toBe(p.base + BigInt(s.rva));
      expect(p.labels[`${s.name}_end`]).toBe(p.base + BigInt(s.rva + s.size));
    }
    expect(p.captures).toEqual(["capture_subject", "capture"]);
    expect(p.labels["capture"]! >= p.labels["tail"]!).toBe(true);
    expect(p.entryRva).toBe(0x1000);
    // Functions start 16-byte aligned, padded with int3 as MSVC pads them.
    const pe = parsePe(p.image);
    const gap = pe.readRva(p.symbols[0]!.rva + p.symbols[0]!.size, p.symbols[1]!.rva - p.symbols[0]!.rva - p.symbols[0]!.size)!;
    expect(p.symbols.every((s) => s.rva % 16 === 0)).toBe(true);
    expect([...gap].every((b) => b === 0xcc)).toBe(true);
  });

  it("writes source that assembles by itself to the image's code", async () => {
    const p = await buildX86Program(around("source", { frame: "ebp", locals: 2, saved: ["esi"], params: 1 }));
    const assembler = await loadAssembler();
    const code = assembler.assemble(p.asm, { mode: 32, address: p.base + 0x1000n });
    const pe = parsePe(p.image);
    expect(pe.readRva(0x1000, code.length)).toEqual(code);
    expect(p.asm).toContain("# subject: EBP frame, locals 2, saved [esi], params 1 (cdecl)");
    const r = p.fpo[1]!;
    expect(p.asm).toContain(
      `# FPO_DATA: ulOffStart=0x${r.ulOffStart.toString(16).toUpperCase()} cbProcSize=${r.cbProcSize} cdwLocals=2 cdwParams=1 cbProlog=7 cbRegs=1 fUseBP=0 cbFrame=FRAME_NONFPO`,
    );
  });

  it("derives the CodeView GUID and timestamp from the content", async () => {
    const a = parsePe((await buildX86Program(around("one", { frame: "fpo" }))).image);
    const b = parsePe((await buildX86Program(around("two", { frame: "fpo" }))).image);
    expect(a.codeView!.guid).not.toBe(b.codeView!.guid);
    expect(a.codeView!.pdbName).toBe("one.pdb");
    expect(a.timeDateStamp).not.toBe(b.timeDateStamp);
  });

  it("a single function is both the entry point and the leaf", async () => {
    const p = await buildX86Program({ name: "alone", description: "main only", functions: [{ name: "main", frame: "fpo", locals: 1 }] });
    const run = runX86(p);
    expect(run.captures.map((c) => c.label)).toEqual(["capture"]);
    expect(run.captures[0]!.fpoWalk).toEqual(run.captures[0]!.truth);
    expect(run.finalEsp).toBe(STACK_TOP);
  });
});

describe("checkX86Program rejects specs a compiler would not produce", () => {
  const program = (functions: X86FunctionSpec[], name = "bad"): X86ProgramSpec => ({ name, description: "", functions });
  const main: X86FunctionSpec = { name: "main", frame: "ebp" };
  it.each<[string, X86ProgramSpec, RegExp]>([
    ["alloca in an FPO frame", program([main, { name: "f", frame: "fpo", alloca: 16 }]), /alloca needs an EBP frame/],
    ["alloca not a multiple of 4", program([main, { name: "f", frame: "ebp", alloca: 6 }]), /multiple of 4/],
    ["EBP saved by an EBP frame", program([main, { name: "f", frame: "ebp", saved: ["ebp"] }]), /frame link/],
    ["a register saved twice", program([main, { name: "f", frame: "fpo", saved: ["esi", "esi"] }]), /twice/],
    ["recursion without a parameter", program([main, { name: "f", frame: "fpo", recursion: 3 }]), /params must be at least 1/],
    ["an entry point with parameters", program([{ name: "main", frame: "ebp", params: 1 }]), /entry function/],
    ["a register as a name", program([main, { name: "esp", frame: "fpo" }]), /C identifier/],
    ["a name used twice", program([main, { name: "main", frame: "fpo" }]), /defined twice/],
    ["a capture label clashing with a function", program([main, { name: "f", frame: "fpo", capture: "main" }]), /defined twice/],
    ["locals of a page or more (would need __chkstk)", program([main, { name: "f", frame: "fpo", locals: 1024 }]), /locals = 1024/],
    ["a stack deeper than the reserve", program([main, { name: "f", frame: "ebp", locals: 1000, params: 1, recursion: 300 }]), /deepest stack/],
    ["no functions", program([]), /at least one function/],
    ["a name that is not kebab-case", program([main], "Bad_Name"), /kebab-case/],
  ])("%s", (_, spec, message) => {
    expect(() => checkX86Program(spec)).toThrow(message);
  });

  it("buildX86Program rejects the same specs", async () => {
    await expect(buildX86Program(program([main, { name: "f", frame: "fpo", alloca: 16 }]))).rejects.toThrow(RangeError);
  });
});
