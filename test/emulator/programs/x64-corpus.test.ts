import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, it } from "vitest";
import { IMAGE_DEBUG_TYPE, IMAGE_DIRECTORY_ENTRY, parsePe } from "../../../src/formats/pe.js";
import { IMAGE_FILE_MACHINE } from "../../../src/model/machine.js";
import { buildX64Program, type X64Program } from "../../../emulator/programs/x64-chain.js";
import { X64_CORPUS_SPECS } from "../../../emulator/programs/x64-corpus.js";
import { X64_SOURCES_DIR } from "../../../emulator/programs/write-sources.js";
import { hexBytes } from "../../../emulator/programs/unwind-encode.js";
import { INITIAL, INITIAL_RSP, initialXmm, runX64, type Capture, type RunResult } from "./run-x64.js";

const programs = new Map<string, X64Program>();
const runs = new Map<string, RunResult>();

beforeAll(async () => {
  for (const spec of X64_CORPUS_SPECS) {
    const program = await buildX64Program(spec);
    programs.set(spec.name, program);
    runs.set(spec.name, await runX64(program));
  }
});

const program = (name: string): X64Program => programs.get(name)!;
const run = (name: string): RunResult => runs.get(name)!;
const capture = (name: string, label: string): Capture => run(name).captures.find((c) => c.label === label)!;
const at = (name: string, label: string): bigint => program(name).labels[label]!;
const hex = (n: bigint): string => `0x${n.toString(16)}`;

/** The bytes of the image at a label. */
function codeAt(name: string, label: string, size: number): string {
  const p = program(name);
  return hexBytes(parsePe(p.image).readRva(Number(at(name, label) - p.base), size)!);
}

/** An UNWIND_INFO read back field by field from the image, independently of the encoder (x64-unwind.md §1.2). */
function unwindInfoOf(name: string, fn: string, fragment: "primary" | "chained" = "primary") {
  const p = program(name);
  const pe = parsePe(p.image);
  const begin = Number(at(name, fragment === "primary" ? fn : `${fn}_chained`) - p.base);
  const rf = pe.runtimeFunctions().find((r) => r.beginRva === begin)!;
  const header = pe.readRva(rf.unwindData, 4)!;
  const count = header[2]!;
  const codes = pe.readRva(rf.unwindData + 4, 2 * count)!;
  const flags = header[0]! >> 3;
  const tailAt = rf.unwindData + 4 + 2 * ((count + 1) & ~1);
  const tail = (flags & 4) !== 0 ? new DataView(pe.readRva(tailAt, 12)!.slice().buffer) : undefined;
  return {
    runtimeFunction: rf,
    version: header[0]! & 7,
    flags,
    sizeOfProlog: header[1]!,
    countOfCodes: count,
    frameRegister: header[3]! & 0xf,
    frameOffset: header[3]! >> 4,
    slots: Array.from({ length: count }, (_, k) => [codes[2 * k]!, codes[2 * k + 1]! & 0xf, codes[2 * k + 1]! >> 4] as const),
    raw: (k: number) => codes[2 * k]! | (codes[2 * k + 1]! << 8),
    parent: tail === undefined ? undefined : { beginRva: tail.getUint32(0, true), endRva: tail.getUint32(4, true), unwindData: tail.getUint32(8, true) },
  };
}

/** Frames as "pc/sp" strings, for readable diffs. */
const frames = (list: readonly { pc: bigint; sp: bigint }[]): string[] => list.map((f) => `${hex(f.pc)}/${hex(f.sp)}`);

describe("x64 corpus", () => {
  it("lists one program per unwind op, per epilog form and per special case", () => {
    expect(X64_CORPUS_SPECS.map((s) => s.name)).toEqual([
      "push-nonvol",
      "alloc-small",
      "alloc-large-16",
      "alloc-large-32",
      "set-fpreg",
      "save-nonvol",
      "save-nonvol-far",
      "save-xmm128",
      "save-xmm128-far",
      "machframe",
      "machframe-errcode",
      "epilog-add-imm8",
      "epilog-add-imm32",
      "epilog-lea",
      "epilog-pops",
      "epilog-v2",
      "tail-call",
      "leaf-no-pdata",
      "chained",
      "large-frame",
      "recursion-1000",
    ]);
  });

  it("uses every unwind op, and every op form, somewhere", () => {
    const used = new Set(
      [...programs.values()].flatMap((p) =>
        p.unwind.flatMap((u) => [
          ...u.info.prolog.map((c) => (c.op === "alloc-large" ? `alloc-large-${c.form}` : c.op === "push-machframe" ? `machframe-${c.errorCode}` : c.op)),
          ...(u.info.epilogs === undefined ? [] : ["epilog"]),
          ...(u.info.chained === undefined ? [] : ["chained"]),
          ...(u.info.frameRegister !== undefined && (u.info.frameOffset ?? 0) > 0 ? ["frame-offset"] : []),
        ]),
      ),
    );
    expect([...used].sort()).toEqual(
      [
        "alloc-large-16",
        "alloc-large-32",
        "alloc-small",
        "chained",
        "epilog",
        "frame-offset",
        "machframe-false",
        "machframe-true",
        "push-nonvol",
        "save-nonvol",
        "save-nonvol-far",
        "save-xmm128",
        "save-xmm128-far",
        "set-fpreg",
      ].sort(),
    );
  });

  describe.each(X64_CORPUS_SPECS.map((s) => s.name))("%s", (name) => {
    it("is a PE32+ image with .pdata as its exception directory and a CodeView record", () => {
      const p = program(name);
      const pe = parsePe(p.image);
      expect(pe.machine).toBe(IMAGE_FILE_MACHINE.AMD64);
      expect(pe.is64).toBe(true);
      expect(pe.imageBase).toBe(p.base);
      expect(pe.entryRva).toBe(p.entryRva);
      expect(p.entryRva).toBe(p.symbols.find((s) => s.name === "main")!.rva);
      expect(pe.hasImports).toBe(false);
      expect(pe.hasRelocations).toBe(false);
      expect(pe.sections.map((s) => s.name)).toEqual([".text", ".xdata", ".pdata", ".rdata"]);
      const pdata = pe.sections.find((s) => s.name === ".pdata")!;
      expect(pe.dataDirectories[IMAGE_DIRECTORY_ENTRY.EXCEPTION]).toEqual({ rva: pdata.virtualAddress, size: 12 * p.runtimeFunctions.length });
      expect(pe.debug.map((d) => d.type)).toEqual([IMAGE_DEBUG_TYPE.CODEVIEW]);
      expect(pe.codeView).toMatchObject({ format: "RSDS", age: 1, pdbName: `${name}.pdb` });
    });

    it("has the RUNTIME_FUNCTIONs it intended: sorted, non-overlapping, each pointing at its UNWIND_INFO in .xdata", () => {
      const p = program(name);
      const pe = parsePe(p.image);
      const table = pe.runtimeFunctions();
      expect(table).toEqual(p.runtimeFunctions);
      expect(table).toEqual(p.unwind.map((u) => u.runtimeFunction));
      const xdata = pe.sections.find((s) => s.name === ".xdata")!;
      table.forEach((rf, i) => {
        if (i > 0) expect(rf.beginRva).toBeGreaterThanOrEqual(table[i - 1]!.endRva);
        expect(rf.endRva).toBeGreaterThan(rf.beginRva);
        expect(rf.unwindData % 4).toBe(0);
        expect(rf.unwindData).toBeGreaterThanOrEqual(xdata.virtualAddress);
        expect(rf.unwindData + p.unwind[i]!.bytes.length).toBeLessThanOrEqual(xdata.virtualAddress + xdata.virtualSize);
        expect(pe.readRva(rf.unwindData, p.unwind[i]!.bytes.length)).toEqual(p.unwind[i]!.bytes);
      });
      // Every function but the leaves has an entry covering exactly its code; a chained fragment has its own.
      for (const s of p.symbols) {
        const rf = table.find((r) => r.beginRva === s.rva);
        const leaf = s.name === "__chkstk" || X64_CORPUS_SPECS.find((x) => x.name === name)!.functions.find((f) => f.name === s.name)?.leaf === true;
        if (leaf) expect(rf).toBeUndefined();
        else expect(rf).toEqual(expect.objectContaining({ beginRva: s.rva, endRva: s.rva + s.size }));
      }
    });

    it("runs to completion, reaching every capture once in order, with RSP and every nonvolatile register restored", () => {
      const r = run(name);
      expect(r.finalRip).toBe(0n);
      expect(r.finalRsp).toBe(INITIAL_RSP + 8n);
      expect(r.finalRegs).toEqual(INITIAL);
      r.finalXmm.forEach((value, k) => expect(hexBytes(value), `xmm${k + 6}`).toBe(hexBytes(initialXmm(k + 6))));
      expect(r.captures.map((c) => c.label)).toEqual(program(name).captures);
      expect(program(name).captures.length).toBeGreaterThan(0);
      expect(new Set(program(name).captures.map((c) => at(name, c))).size).toBe(program(name).captures.length);
    });

    it("keeps the x64 ABI: RSP ≡ 8 (mod 16) at every function entry and ≡ 0 at every call", () => {
      expect(run(name).abi).toEqual([]);
    });

    it("has unwind data that walks every capture to the ground truth, registers included (x64-unwind.md §1.4-§1.8)", () => {
      for (const c of run(name).captures) {
        if (c.walk instanceof Error) throw new Error(`${c.label}: ${c.walk.message} (rules: ${c.rules.join(" | ")})`);
        expect(frames(c.walk), `${c.label}: ${c.rules.join(" | ")}`).toEqual(frames(c.truth));
        c.walk.forEach((f, i) => expect(f.regs, `${c.label}, frame ${i}: ${c.rules.join(" | ")}`).toEqual(c.truth[i]!.regs));
        for (const x of c.xmm) expect(hexBytes(x.value), `${c.label}: xmm${x.xmm} from ${hex(x.address)}`).toBe(hexBytes(initialXmm(x.xmm)));
      }
    });

    it("fits the stack it asks for", () => {
      const p = program(name);
      expect(p.deepestStack).toBeLessThanOrEqual(p.stackReserve);
      expect(p.stackReserve % 0x10_0000).toBe(0);
      expect(parsePe(p.image).sizeOfImage).toBeGreaterThan(0);
    });

    it("is generated byte-for-byte the same twice", async () => {
      const again = await buildX64Program(X64_CORPUS_SPECS.find((s) => s.name === name)!);
      expect(again.image).toEqual(program(name).image);
      expect(again.asm).toBe(program(name).asm);
      expect(again.labels).toEqual(program(name).labels);
    });

    it("matches its committed source in vectors/programs/x64", () => {
      // Regenerate with: npx tsx emulator/programs/write-sources.ts
      expect(readFileSync(`${X64_SOURCES_DIR}${name}.asm`, "utf8")).toBe(program(name).asm);
    });
  });

  it("push-nonvol: wide's UNWIND_INFO field by field (2-byte pushes of r12-r15)", () => {
    const u = unwindInfoOf("push-nonvol", "wide");
    expect(u).toMatchObject({ version: 1, flags: 0, sizeOfProlog: 12, countOfCodes: 5, frameRegister: 0, frameOffset: 0 });
    // push r12/r13/r14/r15 end at 2, 4, 6, 8; sub rsp, 0x28 at 12 (ALLOC_SMALL OpInfo 4).
    expect(u.slots).toEqual([
      [12, 2, 4],
      [8, 0, 15],
      [6, 0, 14],
      [4, 0, 13],
      [2, 0, 12],
    ]);
  });

  it("alloc-large-16: w2 is x64-unwind.md W2, and its __chkstk capture has a return address inside the prolog", () => {
    const u = unwindInfoOf("alloc-large-16", "w2");
    expect(u).toMatchObject({ version: 1, sizeOfProlog: 0x0e, countOfCodes: 3 });
    expect(u.slots[0]).toEqual([0x0e, 1, 0]);
    expect(u.raw(1) * 8).toBe(0x4e40);
    expect(u.slots[2]).toEqual([0x01, 0, 6]);
    const c = capture("alloc-large-16", "chkstk_capture");
    const w2 = at("alloc-large-16", "w2");
    // Frame 0 is the leaf __chkstk; frame 1's return address is at prolog offset 0x0B < 0x0E.
    expect(c.truth[1]!.pc - w2).toBe(0x0bn);
    expect(c.rules.slice(0, 2)).toEqual(["leaf", "prolog [push rsi]"]);
  });

  it("alloc-large-32: big's ALLOC_LARGE takes the 3-slot unscaled form for 0x80000", () => {
    const u = unwindInfoOf("alloc-large-32", "big");
    const alloc = u.slots.findIndex(([, op]) => op === 1);
    expect(u.slots[alloc]![2]).toBe(1);
    expect(u.raw(alloc + 1) + u.raw(alloc + 2) * 0x1_0000).toBe(0x8_0000);
  });

  it("set-fpreg: w1's RBP frame with FrameOffset 8, its SAVE_NONVOL from the establisher frame, and the lea epilog of W1", () => {
    const u = unwindInfoOf("set-fpreg", "w1");
    expect(u).toMatchObject({ frameRegister: 5, frameOffset: 8 });
    expect(u.slots[0]).toEqual([u.sizeOfProlog, 4, 6]);
    expect(u.raw(1) * 8).toBe(0x20);
    expect(u.slots[2]![1]).toBe(3);
    expect(codeAt("set-fpreg", "w1_epilog_0", 7)).toBe("48 8d a5 80 00 00 00");
    expect(codeAt("set-fpreg", "r13fn_epilog_0", 4)).toBe("49 8d 65 10");
    expect(unwindInfoOf("set-fpreg", "r13fn")).toMatchObject({ frameRegister: 13, frameOffset: 1 });
    // After alloca, RSP sits 64 bytes below the establisher frame (rbp - 0x80).
    const c = capture("set-fpreg", "capture_w1");
    expect(c.rsp).toBe(c.truth[1]!.sp - 8n - 3n * 8n - 0x100n - 64n);
  });

  it("save-nonvol-far and save-xmm128-far: the FAR forms hold unscaled 32-bit offsets next to the largest near ones", () => {
    const far = unwindInfoOf("save-nonvol-far", "farsave");
    const rsi = far.slots.findIndex(([, op, info]) => op === 5 && info === 6);
    expect(far.raw(rsi + 1) + far.raw(rsi + 2) * 0x1_0000).toBe(0x8_0010);
    const rdi = far.slots.findIndex(([, op, info]) => op === 4 && info === 7);
    expect(far.raw(rdi + 1)).toBe(0xffff);
    const xfar = unwindInfoOf("save-xmm128-far", "xfar");
    const x7 = xfar.slots.findIndex(([, op, info]) => op === 9 && info === 7);
    expect(xfar.raw(x7 + 1) + xfar.raw(x7 + 2) * 0x1_0000).toBe(0x10_0010);
    const x8 = xfar.slots.findIndex(([, op, info]) => op === 8 && info === 8);
    expect(xfar.raw(x8 + 1)).toBe(0xffff);
    expect(program("save-xmm128-far").stackReserve).toBe(0x20_0000);
  });

  it("save-xmm128: the capture inside xsaver's epilog restores the XMM registers from their slots", () => {
    const c = capture("save-xmm128", "capture");
    expect(c.xmm.map((x) => x.xmm).sort((a, b) => a - b)).toEqual([6, 7, 8, 15]);
  });

  it("machframe: below the handler comes the interrupted frame (pc victim_resume, sp victim's RSP), not a return address", () => {
    const p = program("machframe");
    expect(p.machineFrames).toEqual([{ handler: "isr", errorCode: false, interrupt: "victim_interrupt", resume: "victim_resume" }]);
    const u = unwindInfoOf("machframe", "isr");
    expect(u.slots.at(-1)).toEqual([0, 10, 0]);
    const c = capture("machframe", "capture_isr");
    expect(c.truth).toHaveLength(3);
    expect(c.truth[1]!.pc).toBe(at("machframe", "victim_resume"));
    const entry = capture("machframe", "isr_prolog_0");
    // At the handler's first instruction the machine frame is the whole stack top: RIP at [rsp], RSP at [rsp+24].
    expect(entry.truth[1]).toEqual(c.truth[1]);
    expect(entry.rsp % 16n).toBe(8n);
    expect(entry.rules[0]).toBe("prolog [machframe]");
    expect(c.truth[2]!.pc).toBe(at("machframe", "main_body") + 10n);
  });

  it("machframe-errcode: PUSH_MACHFRAME OpInfo 1 (x64-unwind.md W5), and a leaf without pdata below the handler", () => {
    const u = unwindInfoOf("machframe-errcode", "isr");
    expect(u).toMatchObject({ sizeOfProlog: 5, countOfCodes: 3 });
    expect(u.slots).toEqual([
      [5, 2, 4],
      [1, 0, 5],
      [0, 10, 1],
    ]);
    const c = capture("machframe-errcode", "capture");
    // leaf, isr, the interrupted victim, main.
    expect(c.truth).toHaveLength(4);
    expect(c.rules[0]).toBe("leaf");
    expect(c.truth[2]!.pc).toBe(at("machframe-errcode", "victim_resume"));
    // The error code sits 8 bytes below the 16-aligned machine frame, so the handler starts at RSP ≡ 0 (mod 16).
    expect(capture("machframe-errcode", "isr_prolog_0").rsp % 16n).toBe(0n);
  });

  it("epilog forms: the bytes at each epilog's first instruction are the ones §1.5 recognises", () => {
    expect(codeAt("epilog-add-imm8", "f_epilog_0", 4)).toBe("48 83 c4 28");
    expect(codeAt("epilog-add-imm8", "inner_epilog_0", 4)).toBe("48 83 c4 78");
    expect(codeAt("epilog-add-imm32", "f_epilog_0", 7)).toBe("48 81 c4 90 00 00 00");
    expect(codeAt("epilog-add-imm32", "g_epilog_0", 7)).toBe("48 81 c4 f8 03 00 00");
    expect(codeAt("alloc-small", "max128_epilog_0", 7)).toBe("48 81 c4 80 00 00 00");
    expect(codeAt("epilog-lea", "f_epilog_0", 7)).toBe("48 8d 65 08 5b 5d c3");
    expect(codeAt("epilog-lea", "g_epilog_0", 7)).toBe("48 8d a5 90 00 00 00");
    expect(codeAt("epilog-pops", "inner_epilog_0", 8)).toBe("41 5d 41 5c 5f 5e 5b c3");
    expect(codeAt("epilog-pops", "mid_epilog_3", 2)).toBe("f3 c3");
    expect(codeAt("tail-call", "g_epilog_2", 3)).toBe("48 ff e0");
    expect(codeAt("tail-call", "f_epilog_3", 1)).toMatch(/^(eb|e9)$/);
  });

  it("epilog captures are unwound by epilog emulation (v1) and by EPILOG codes (v2), not by the prolog walk", () => {
    const rule = (name: string, label: string): string => capture(name, label).rules[0]!;
    expect(rule("epilog-add-imm8", "f_epilog_0")).toBe("v1 epilog (2 pops)");
    expect(rule("epilog-add-imm8", "f_epilog_2")).toBe("v1 epilog (1 pops)");
    expect(rule("epilog-lea", "g_epilog_0")).toBe("v1 epilog (3 pops)");
    expect(rule("tail-call", "g_epilog_2")).toBe("v1 epilog (0 pops)");
    // v2: the epilog region starts at the first pop; the add before it is body (§1.6).
    expect(rule("epilog-v2", "f_epilog_0")).toMatch(/^prolog /);
    expect(rule("epilog-v2", "f_epilog_1")).toBe("v2 epilog at +0 (2 pops)");
    expect(rule("epilog-v2", "f_epilog_3")).toBe("v2 epilog at +2 (0 pops)");
    // pop r13 and pop r12 are 2 bytes each: at the pop rbx (offset 4) only rbx is left.
    expect(rule("epilog-v2", "g_epilog_3")).toBe("v2 epilog at +4 (1 pops)");
  });

  it("epilog-v2: f's UNWIND_INFO is x64-unwind.md W3 byte for byte, and the early epilog sits at End - 0xF", () => {
    const p = program("epilog-v2");
    const entry = p.unwind.find((u) => u.function === "f")!;
    expect(hexBytes(entry.bytes)).toBe("02 06 05 00 03 16 0f 06 06 42 02 70 01 60 00 00");
    expect(at("epilog-v2", "f_end") - at("epilog-v2", "f_epilog_1")).toBe(0x0fn);
    const g = unwindInfoOf("epilog-v2", "g");
    expect(g).toMatchObject({ version: 2, countOfCodes: 6 });
    expect(g.slots.slice(0, 2)).toEqual([
      [6, 6, 1],
      [0, 6, 0],
    ]);
  });

  it("tail-call: at the capture in h, the tail-calling f and g are gone from the truth", () => {
    const c = capture("tail-call", "capture");
    expect(c.truth).toHaveLength(2);
    expect(c.truth[1]!.pc).toBe(at("tail-call", "main_body") + 10n);
  });

  it("leaf-no-pdata: the leaf has no RUNTIME_FUNCTION and its return address is at [RSP]", () => {
    const p = program("leaf-no-pdata");
    const leaf = p.symbols.find((s) => s.name === "leaf")!;
    expect(p.runtimeFunctions.some((r) => r.beginRva <= leaf.rva && leaf.rva < r.endRva)).toBe(false);
    const c = capture("leaf-no-pdata", "capture");
    expect(c.truth[1]!.sp).toBe(c.rsp + 8n);
    expect(c.rules[0]).toBe("leaf");
  });

  it("chained: each fragment's UNWIND_INFO carries CHAININFO and its parent's RUNTIME_FUNCTION (x64-unwind.md W4)", () => {
    const hot = unwindInfoOf("chained", "hot");
    const cold = unwindInfoOf("chained", "hot", "chained");
    expect(cold).toMatchObject({ version: 1, flags: 4, sizeOfProlog: 5, countOfCodes: 2, frameRegister: 0 });
    expect(cold.slots[0]).toEqual([5, 4, 6]);
    expect(cold.raw(1) * 8).toBe(0x30);
    expect(cold.parent).toEqual(hot.runtimeFunction);
    // The W4 bytes of cold_save, up to the parent entry.
    expect(hexBytes(program("chained").unwind.find((u) => u.function === "hot" && u.fragment === "chained")!.bytes.subarray(0, 8))).toBe("21 05 02 00 05 64 06 00");
    // cool's fragment lies before every function, so its parent's prolog offset is "negative" (§1.7).
    const cool = unwindInfoOf("chained", "cool");
    const before = unwindInfoOf("chained", "cool", "chained");
    expect(before.runtimeFunction.beginRva).toBe(0x1000);
    expect(before.runtimeFunction.endRva).toBeLessThanOrEqual(cool.runtimeFunction.beginRva);
    expect(before).toMatchObject({ flags: 4, frameRegister: 5, frameOffset: 2 });
    expect(before.parent).toEqual(cool.runtimeFunction);
    expect(capture("chained", "capture_cool").rules.slice(0, 2)).toEqual(["prolog [save r12] then chain", "prolog [set_fpreg, alloc 0x28, push rdi, push rbp]"]);
  });

  it("large-frame: 0x7FFF8 is the largest 2-slot ALLOC_LARGE", () => {
    const u = unwindInfoOf("large-frame", "big");
    const alloc = u.slots.findIndex(([, op]) => op === 1);
    expect(u.slots[alloc]![2]).toBe(0);
    expect(u.raw(alloc + 1)).toBe(0xffff);
    expect(capture("large-frame", "chkstk_capture").truth[1]!.pc).toBe(at("large-frame", "big_prolog_4"));
  });

  it("recursion-1000: 1001 activations of recurse under main, then the leaf", () => {
    const p = program("recursion-1000");
    const c = capture("recursion-1000", "capture");
    expect(c.truth).toHaveLength(1003);
    expect(run("recursion-1000").deepestCalls).toBe(1002);
    const recurse = p.symbols.find((s) => s.name === "recurse")!;
    const inRecurse = c.truth.filter((f) => f.pc >= p.base + BigInt(recurse.rva) && f.pc < p.base + BigInt(recurse.rva + recurse.size));
    expect(inRecurse).toHaveLength(1001);
    // Each recursive frame costs 48 bytes: return address, rbx, 32-byte home area.
    expect(c.truth[3]!.sp - c.truth[2]!.sp).toBe(48n);
  });

  it("the checks have teeth: a wrong SAVE_NONVOL offset makes the reference walk disagree with the truth", async () => {
    const p = program("save-nonvol");
    const entry = p.unwind.find((u) => u.function === "saver")!;
    const pe = parsePe(p.image);
    const xdata = pe.sections.find((s) => s.name === ".xdata")!;
    const image = p.image.slice();
    // The first code is SAVE_NONVOL r12 at 0x40; its operand slot (÷8) moves to the rdi slot.
    const operand = xdata.rawOffset + (entry.runtimeFunction.unwindData - xdata.virtualAddress) + 6;
    expect(image[operand]).toBe(0x40 / 8);
    image[operand] = 0x28 / 8;
    const broken = await runX64({ ...p, image });
    const c = broken.captures.find((x) => x.label === "capture")!;
    expect(c.walk).not.toBeInstanceOf(Error);
    const frameOfMain = (c.walk as Exclude<Capture["walk"], Error>)[2]!;
    expect(frameOfMain.regs.r12).not.toBe(c.truth[2]!.regs.r12);
  });
});
