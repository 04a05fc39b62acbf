/**
 * The exception directory read from a mapped image (src/formats/pe-mapped.ts) and the per-module
 * tables built on it, checked against the file parser on the real clang-14 x64 images: the same
 * RUNTIME_FUNCTIONs, every UNWIND_INFO (and chain) decodable, every entry found by the binary
 * search at its first and last byte.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { decodeUnwindInfo, UWOP_ALLOC_LARGE, UWOP_PUSH_NONVOL, UWOP_SAVE_XMM128 } from "../../../src/formats/unwind-data/x64.js";
import { findEntryIndex, unwindChain, x64Tables } from "../../../src/arch/x64/tables.js";
import { readMappedImage, readMappedRuntimeFunctions } from "../../../src/formats/pe-mapped.js";
import { parsePe } from "../../../src/formats/pe.js";
import { RegionMemory } from "../../../src/memory/region-memory.js";

const ROOT = new URL("../../../", import.meta.url).pathname;
const PROGRAMS = ["aligned-callee-saved", "big-frames-varargs", "noreturn-longjmp", "recursion-callbacks"];

describe("the exception directory of a mapped image", () => {
  for (const name of PROGRAMS) {
    it(`${name}.exe: the same RUNTIME_FUNCTIONs as the file parser, all decodable and found`, () => {
      const pe = parsePe(readFileSync(`${ROOT}vectors/programs/c/build/x64/${name}.exe`));
      const memory = new RegionMemory([{ base: pe.imageBase, bytes: pe.mapped() }]);
      const image = readMappedImage(memory, pe.imageBase)!;
      expect(image.exceptionDirectory).toEqual(pe.dataDirectories[3]);
      const table = readMappedRuntimeFunctions(memory, pe.imageBase, image);
      if (typeof table === "string") throw new Error(table);
      const expected = pe.runtimeFunctions();
      expect(Array.from(table)).toEqual(expected.flatMap((f) => [f.beginRva, f.endRva, f.unwindData]));

      const module = { name: `${name}.exe`, base: pe.imageBase, size: BigInt(pe.sizeOfImage), symbols: [] };
      const tables = x64Tables(module, memory)!;
      expect(tables.problem).toBeUndefined();
      expected.forEach((f, i) => {
        expect(findEntryIndex(tables, f.beginRva)).toBe(i);
        expect(findEntryIndex(tables, f.endRva - 1)).toBe(i);
        const chain = unwindChain(tables, { begin: f.beginRva, end: f.endRva, unwindData: f.unwindData });
        if (typeof chain === "string") throw new Error(chain);
      });
    });
  }

  it("decodes clang's 60-byte XMM prolog and 2-slot ALLOC_LARGE as llvm-readobj prints them", () => {
    const pe = parsePe(readFileSync(`${ROOT}vectors/programs/c/build/x64/noreturn-longjmp.exe`));
    // guarded: 8 pushes, ALLOC_LARGE 216, SET_FPREG rbp+0x80, SAVE_XMM128 xmm6..xmm15.
    const guarded = pe.runtimeFunctions().find((f) => f.beginRva === 0x1090)!;
    const info = decodeUnwindInfo((rva, size) => pe.readRva(rva, size), guarded.unwindData);
    if ("problem" in info) throw new Error(info.problem);
    expect([info.version, info.sizeOfProlog, info.countOfCodes, info.frameRegister, info.frameOffset]).toEqual([1, 75, 31, 5, 0x80]);
    expect(info.ops.filter((o) => o.op === UWOP_SAVE_XMM128).map((o) => [o.info, o.value])).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15].map((x, i) => [x, 0x30 + 16 * i]));
    expect(info.ops.find((o) => o.op === UWOP_ALLOC_LARGE)).toMatchObject({ codeOffset: 0x13, value: 216, slots: 2 });
    expect(info.ops.filter((o) => o.op === UWOP_PUSH_NONVOL).map((o) => o.info)).toEqual([3, 7, 6, 12, 13, 14, 15, 5]);
  });
});
