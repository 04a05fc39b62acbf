/**
 * The ARM unwind-data decoder against LLVM's own reading of real compiler output: three of the
 * real test programs built by clang-16 for thumbv7-pc-windows-msvc (test/fixtures/arm-clang),
 * whose `.pdata` entries, packed words and `.xdata` records `llvm-readobj-16 --unwind` printed.
 * For every function the decoder must find what LLVM found: the start, the length, the form,
 * the epilog's place, and every unwind code — its bytes, its instruction's size and what it
 * undoes; for a packed word, its fields, and the canonical prolog and epilog the expansion
 * describes, instruction by instruction.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parsePe } from "../../../src/formats/pe.js";
import { RegionMemory } from "../../../src/memory/region-memory.js";
import { armCodeLength, armCodeOpSize, decodeArmCode, isArmEnd, packedFields, type ArmCode, type ArmUnwindData } from "../../../src/formats/unwind-data/arm.js";
import { isProblem } from "../../../src/formats/unwind-data/problem.js";
import { armTables, armUnwindDataOf } from "../../../src/arch/arm/tables.js";
import { fixtureBytes, fixtureFile } from "../../support/fixtures.js";

const PROGRAMS = ["recursion-callbacks", "big-frames-varargs", "aligned-callee-saved"];

/** One RuntimeFunction as llvm-readobj prints it. */
interface LlvmFunction {
  start: number;
  fields: Map<string, string>;
  prologue: string[];
  epilogue: string[];
}

/** The RuntimeFunction blocks of `llvm-readobj --unwind` output, with their fields and their Prologue/Epilogue lines. */
function parseReadobj(text: string): LlvmFunction[] {
  const out: LlvmFunction[] = [];
  let current: LlvmFunction | undefined;
  let list: string[] | undefined;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "RuntimeFunction {") {
      current = { start: 0, fields: new Map(), prologue: [], epilogue: [] };
      out.push(current);
      continue;
    }
    if (current === undefined) continue;
    if (line === "Prologue [") list = current.prologue;
    else if (line === "Epilogue [") list = current.epilogue;
    else if (line === "]") list = undefined;
    else if (list !== undefined) list.push(line);
    else {
      const m = /^(\w+): (.*)$/.exec(line);
      if (m !== null) {
        if (m[1] === "Function") current.start = parseInt(m[2]!, 16);
        else current.fields.set(m[1]!, m[2]!);
      }
    }
  }
  return out;
}

/** Registers of an LLVM register list, `{r4-r5, r11, lr}`, as a pop mask (lr and pc bit 14). */
function maskOf(list: string): number {
  let mask = 0;
  for (const part of list.replace(/[{}]/g, "").split(",").map((s) => s.trim())) {
    const range = /^r(\d+)-r(\d+)$/.exec(part);
    if (range !== null) for (let r = Number(range[1]); r <= Number(range[2]); r++) mask |= 1 << r;
    else if (part === "lr" || part === "pc") mask |= 1 << 14;
    else if (/^r\d+$/.test(part)) mask |= 1 << Number(part.slice(1));
    else throw new Error(`register ${part}`);
  }
  return mask;
}

/** What an LLVM instruction text says the code undoes, in this decoder's terms; `wide` when it names a 32-bit form. */
function meaningOf(text: string): { what: string; wide?: boolean } {
  const t = text.replace(/\s+/g, " ");
  let m = /^(push|pop)(\.w)? (\{.*\})$/.exec(t);
  if (m !== null) return { what: `pop ${maskOf(m[3]!)}`, wide: m[2] !== undefined };
  m = /^(?:sub|add)(\.w)? sp, (?:sp, )?#(?:\((\d+) \* 4\)|(\d+))$/.exec(t);
  if (m !== null) return { what: `alloc ${m[2] !== undefined ? 4 * Number(m[2]) : Number(m[3])}`, wide: m[1] !== undefined };
  m = /^mov r(\d+), sp$/.exec(t);
  if (m !== null) return { what: `mov-sp ${m[1]}`, wide: false };
  if (t === "nop.w") return { what: "nop", wide: true };
  if (t === "nop") return { what: "nop", wide: false };
  m = /^v(?:push|pop) \{d(\d+)-d(\d+)\}$/.exec(t);
  if (m !== null) return { what: `vpop ${m[1]}-${m[2]}`, wide: true };
  if (t === "bx <reg>") return { what: "end 2" };
  if (t === "b.w <target>") return { what: "end 4" };
  // A packed word's frame chain: add.w r11, sp, #n (a 32-bit nop to the unwinder).
  if (/^add\.w r11, sp, #\d+$/.test(t)) return { what: "nop", wide: true };
  throw new Error(`instruction ${t}`);
}

/** This decoder's meaning of a code. */
function meaningOfCode(c: ArmCode): string {
  switch (c.op) {
    case "pop":
      return `pop ${c.mask}`;
    case "alloc":
      return `alloc ${c.size}`;
    case "mov-sp":
      return `mov-sp ${c.register}`;
    case "vpop":
      return `vpop ${c.first}-${c.last}`;
    case "nop":
      return "nop";
    case "end":
      return `end ${c.extra}`;
    default:
      return c.op;
  }
}

/** The codes from byte `from` to the first FF end, each with its bytes (FD and FE included, as LLVM lists them). */
function codesFrom(codes: Uint8Array, from: number): { bytes: number[]; code: ArmCode }[] {
  const out: { bytes: number[]; code: ArmCode }[] = [];
  for (let p = from; p < codes.length; ) {
    const { code, length } = decodeArmCode(codes, p);
    if (codes[p] === 0xff) break;
    out.push({ bytes: [...codes.subarray(p, p + length)], code });
    if (isArmEnd(codes[p]!)) break;
    p += length;
  }
  return out;
}

/** Compares LLVM's list of an `.xdata` record's codes (bytes then `; text`) with the decoder's. */
function expectXdataList(lines: readonly string[], codes: Uint8Array, from: number, where: string): void {
  const ours = codesFrom(codes, from);
  expect(ours.length, where).toBe(lines.length);
  lines.forEach((line, k) => {
    const [hexes, text] = line.split(";").map((s) => s.trim()) as [string, string];
    const bytes = hexes.split(/\s+/).map((h) => parseInt(h, 16));
    const mine = ours[k]!;
    expect(mine.bytes, `${where} code ${k}`).toEqual(bytes);
    expect(armCodeLength(bytes[0]!), `${where} code ${k} length`).toBe(bytes.length);
    const llvm = meaningOf(text);
    expect(meaningOfCode(mine.code), `${where} code ${k}: ${text}`).toBe(llvm.what);
    if (llvm.wide !== undefined) expect(armCodeOpSize(bytes[0]!), `${where} code ${k} size: ${text}`).toBe(llvm.wide ? 4 : 2);
  });
}

/** Compares LLVM's canonical prolog or epilog of a packed word (instruction texts) with the codes of the expansion. */
function expectPackedList(lines: readonly string[], data: ArmUnwindData, from: number, where: string): void {
  const ours = codesFrom(data.codes, from).filter((c) => !(c.code.op === "end"));
  const theirs = lines.map(meaningOf).filter((m) => !m.what.startsWith("end"));
  expect(ours.map((c) => meaningOfCode(c.code)), where).toEqual(theirs.map((m) => m.what));
}

describe("ARM unwind data of clang-16's output, against llvm-readobj-16", () => {
  for (const program of PROGRAMS) {
    it(`${program}: every .pdata entry, packed word and .xdata record`, () => {
      const bytes = fixtureBytes(`arm-clang/${program}.exe`);
      const pe = parsePe(bytes);
      expect(pe.machine).toBe(0x01c4);
      const memory = new RegionMemory([{ base: pe.imageBase, bytes: pe.mapped() }]);
      const module = { name: `${program}.exe`, base: pe.imageBase, size: BigInt(pe.sizeOfImage), symbols: [] };
      const tables = armTables(module, memory)!;
      expect(tables.problem).toBeUndefined();
      const llvm = parseReadobj(readFileSync(fixtureFile(`arm-clang/${program}.unwind.txt`), "utf8"));
      expect(tables.functions.length / 2).toBe(llvm.length);
      let packed = 0;
      llvm.forEach((f, i) => {
        const begin = tables.functions[2 * i]!;
        const word = tables.functions[2 * i + 1]!;
        expect(BigInt(begin) + pe.imageBase, `entry ${i}`).toBe(BigInt(f.start));
        const data = armUnwindDataOf(tables, word);
        if (isProblem(data)) throw new Error(data.problem);
        const where = `${program} ${f.start.toString(16)}`;
        expect(data.functionLength, `${where} length`).toBe(Number(f.fields.get("FunctionLength")));
        expect(data.fragment, `${where} fragment`).toBe(f.fields.get("Fragment") === "Yes");
        if (f.fields.has("ReturnType")) {
          packed++;
          const p = packedFields(word);
          // LLVM prints Stack Adjust in bytes (the field counts words).
          expect([p.h, p.reg, p.r, p.l, p.c, 4 * p.stackAdjust], where).toEqual([
            f.fields.get("HomedParameters") === "Yes",
            Number(f.fields.get("Reg")),
            f.fields.get("R") === "1",
            f.fields.get("LinkRegister") === "Yes",
            f.fields.get("Chaining") === "Yes",
            Number(f.fields.get("StackAdjustment")),
          ]);
          expectPackedList(f.prologue, data, 0, `${where} prologue`);
          expectPackedList(f.epilogue, data, data.epilogIndex, `${where} epilogue`);
        } else {
          expect(data.source.form).toBe("xdata");
          expect(data.epilogInHeader, `${where} E`).toBe(f.fields.get("EpiloguePacked") === "Yes");
          if (data.epilogInHeader) expect(data.epilogIndex, `${where} epilog index`).toBe(Number(f.fields.get("EpilogueOffset")));
          expectXdataList(f.prologue, data.codes, 0, `${where} prologue`);
          // An epilog that shares the prolog's codes (index 0) gets no list of its own from LLVM.
          if (data.epilogIndex !== 0 || f.epilogue.length > 0) expectXdataList(f.epilogue, data.codes, data.epilogIndex, `${where} epilogue`);
        }
      });
      console.log(`${program}: ${llvm.length} functions (${packed} packed) read as llvm-readobj-16 reads them`);
    });
  }
});
