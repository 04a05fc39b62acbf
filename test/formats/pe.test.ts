import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { IMAGE_DEBUG_TYPE, parsePe } from "../../src/formats/pe.js";
import type { PeImage } from "../../src/formats/pe.js";
import { inputError } from "../support/input-error.js";

/**
 * The committed clang-14 / lld-14 images (vectors/programs/c/README.md). Expected values were read
 * once with `llvm-readobj-14 --file-headers --sections --coff-debug-directory --unwind` and
 * cross-checked against `llvm-pdbutil-14 dump --summary` (PDB GUID); they are literals here so
 * the test needs no toolchain.
 */
const BUILD = new URL("../../vectors/programs/c/build/", import.meta.url);
const load = (target: string, program: string): Uint8Array => new Uint8Array(readFileSync(new URL(`${target}/${program}.exe`, BUILD)));

type Target = "x86-fpo" | "x86-fp" | "x64";
interface Expected {
  target: Target;
  program: string;
  entry: number;
  stamp: number;
  guid: string;
  /** VirtualSize of .text, .rdata, .data (and .pdata on x64). */
  vsizes: number[];
  /** PointerToRawData of .text, .rdata, .data (and .pdata). */
  raws: number[];
  /** SizeOfRawData of .text. */
  textRaw: number;
  debugRva: number;
  /** CodeView payload: AddressOfRawData, PointerToRawData, SizeOfData. */
  cv: [number, number, number];
}

const IMAGES: Expected[] = [
  { target: "x86-fpo", program: "recursion-callbacks", entry: 0x1240, stamp: 0x018dc168, guid: "2661BE9D7347A0524C4C44205044422E", vsizes: [0x30c, 0xf0, 0x18], raws: [0x400, 0x800, 0xa00], textRaw: 0x400, debugRva: 0x2088, cv: [0x20c0, 0x8c0, 0x30] },
  { target: "x86-fpo", program: "big-frames-varargs", entry: 0x1290, stamp: 0xbe4c9b6b, guid: "717A841F0A94CBA44C4C44205044422E", vsizes: [0x33c, 0x6f, 0xc], raws: [0x400, 0x800, 0xa00], textRaw: 0x400, debugRva: 0x2008, cv: [0x2040, 0x840, 0x2f] },
  { target: "x86-fpo", program: "aligned-callee-saved", entry: 0x1300, stamp: 0x0a0bc111, guid: "D8F4DDDF7A42FA6F4C4C44205044422E", vsizes: [0x36c, 0x89, 0x14], raws: [0x400, 0x800, 0xa00], textRaw: 0x400, debugRva: 0x2020, cv: [0x2058, 0x858, 0x31] },
  { target: "x86-fpo", program: "noreturn-longjmp", entry: 0x10e0, stamp: 0x3297f024, guid: "06DDF22F5EE9B7054C4C44205044422E", vsizes: [0x16c, 0x65, 0x24], raws: [0x400, 0x600, 0x800], textRaw: 0x200, debugRva: 0x2000, cv: [0x2038, 0x638, 0x2d] },
  { target: "x86-fp", program: "recursion-callbacks", entry: 0x1270, stamp: 0x27e1a284, guid: "7DF0F8FEB3B352BB4C4C44205044422E", vsizes: [0x33c, 0xf0, 0x18], raws: [0x400, 0x800, 0xa00], textRaw: 0x400, debugRva: 0x2088, cv: [0x20c0, 0x8c0, 0x30] },
  { target: "x86-fp", program: "big-frames-varargs", entry: 0x12a0, stamp: 0xa85de099, guid: "F17130E697159F834C4C44205044422E", vsizes: [0x34c, 0x6f, 0xc], raws: [0x400, 0x800, 0xa00], textRaw: 0x400, debugRva: 0x2008, cv: [0x2040, 0x840, 0x2f] },
  { target: "x86-fp", program: "aligned-callee-saved", entry: 0x12e0, stamp: 0x27495b0f, guid: "53A3195FCE9266494C4C44205044422E", vsizes: [0x34c, 0x89, 0x14], raws: [0x400, 0x800, 0xa00], textRaw: 0x400, debugRva: 0x2020, cv: [0x2058, 0x858, 0x31] },
  { target: "x86-fp", program: "noreturn-longjmp", entry: 0x10e0, stamp: 0x6061ad58, guid: "598707B12E8FDD984C4C44205044422E", vsizes: [0x16c, 0x65, 0x24], raws: [0x400, 0x600, 0x800], textRaw: 0x200, debugRva: 0x2000, cv: [0x2038, 0x638, 0x2d] },
  { target: "x64", program: "recursion-callbacks", entry: 0x1280, stamp: 0xb295b967, guid: "519E9BC3FFE0F1FF4C4C44205044422E", vsizes: [0x349, 0x1e0, 0x28, 0x84], raws: [0x400, 0x800, 0xa00, 0xc00], textRaw: 0x400, debugRva: 0x2110, cv: [0x2148, 0x948, 0x30] },
  { target: "x64", program: "big-frames-varargs", entry: 0x12d0, stamp: 0xb28b5a6f, guid: "4FDF550B289820B04C4C44205044422E", vsizes: [0x389, 0xc4, 0xc, 0x60], raws: [0x400, 0x800, 0xa00, 0xc00], textRaw: 0x400, debugRva: 0x2008, cv: [0x2040, 0x840, 0x2f] },
  { target: "x64", program: "aligned-callee-saved", entry: 0x1310, stamp: 0xfdab173c, guid: "E30B8AE7827142A64C4C44205044422E", vsizes: [0x389, 0x118, 0x14, 0x48], raws: [0x400, 0x800, 0xa00, 0xc00], textRaw: 0x400, debugRva: 0x2040, cv: [0x2078, 0x878, 0x31] },
  { target: "x64", program: "noreturn-longjmp", entry: 0x1170, stamp: 0x229dc8ac, guid: "25089EEBB2D4EF474C4C44205044422E", vsizes: [0x209, 0xe0, 0x4c, 0x54], raws: [0x400, 0x800, 0xa00, 0xc00], textRaw: 0x400, debugRva: 0x2000, cv: [0x2038, 0x838, 0x2d] },
];

const CODE = 0x60000020; // CNT_CODE | MEM_EXECUTE | MEM_READ
const RDATA = 0x40000040; // CNT_INITIALIZED_DATA | MEM_READ
const DATA = 0xc0000040; // CNT_INITIALIZED_DATA | MEM_READ | MEM_WRITE

/** RUNTIME_FUNCTION tables of the x64 images as [BeginAddress, EndAddress, UnwindData] (llvm-readobj --unwind). */
const PDATA: Record<string, [number, number, number][]> = {
  "recursion-callbacks": [
    [0x1040, 0x1061, 0x2178], [0x1070, 0x10ab, 0x2180], [0x10b0, 0x10d2, 0x218c], [0x10e0, 0x1106, 0x2194],
    [0x1120, 0x1172, 0x219c], [0x1180, 0x11c2, 0x21a4], [0x11d0, 0x11eb, 0x21b0], [0x1200, 0x121b, 0x21b8],
    [0x1220, 0x1273, 0x21c0], [0x1280, 0x131d, 0x21cc], [0x1320, 0x1349, 0x21d8],
  ],
  "big-frames-varargs": [
    [0x1020, 0x10c7, 0x2070], [0x1120, 0x114a, 0x2078], [0x1150, 0x11a4, 0x2080], [0x11b0, 0x1222, 0x208c],
    [0x1230, 0x1265, 0x209c], [0x1270, 0x12c2, 0x20a8], [0x12d0, 0x1357, 0x20b4], [0x1360, 0x1389, 0x20bc],
  ],
  "aligned-callee-saved": [
    [0x1030, 0x1071, 0x20ac], [0x1080, 0x10c5, 0x20b8], [0x10d0, 0x121b, 0x20c4], [0x1220, 0x1302, 0x20f0],
    [0x1310, 0x1354, 0x2108], [0x1360, 0x1389, 0x2110],
  ],
  "noreturn-longjmp": [
    [0x1000, 0x101e, 0x2068], [0x1020, 0x1038, 0x2070], [0x1040, 0x106a, 0x2078], [0x1070, 0x108f, 0x2080],
    [0x1090, 0x116f, 0x2088], [0x1170, 0x11d5, 0x20cc], [0x11e0, 0x1209, 0x20d8],
  ],
};


const u16 = (b: Uint8Array, at: number, v: number): void => new DataView(b.buffer, b.byteOffset).setUint16(at, v, true);
const u32 = (b: Uint8Array, at: number, v: number): void => new DataView(b.buffer, b.byteOffset).setUint32(at, v, true);
const ascii = (s: string): Uint8Array => Uint8Array.from(s, (ch) => ch.charCodeAt(0));

/** Exercises every accessor of a parsed image; none may throw. */
function touchEverything(pe: PeImage): void {
  // A corrupted SizeOfImage can legitimately reach the 1 GiB cap; do not map those here.
  if (pe.sizeOfImage <= 1 << 24) expect(pe.mapped().length).toBe(pe.sizeOfImage);
  pe.runtimeFunctions();
  pe.fpoData();
  pe.readRva(pe.entryRva, 16);
}

describe("parsePe on the committed clang-14 / lld-14 images", () => {
  for (const x of IMAGES) {
    const is64 = x.target === "x64";
    it(`${x.target}/${x.program}.exe: headers, sections, directories and CodeView`, () => {
      const pe = parsePe(load(x.target, x.program));
      expect(pe.machine).toBe(is64 ? 0x8664 : 0x14c);
      expect(pe.is64).toBe(is64);
      expect(pe.imageBase).toBe(is64 ? 0x140000000n : 0x400000n);
      expect(pe.entryRva).toBe(x.entry);
      expect(pe.sizeOfImage).toBe(is64 ? 0x5000 : 0x4000);
      expect(pe.sizeOfHeaders).toBe(0x400);
      // lld's default /stack: 1 MiB.
      expect(pe.sizeOfStackReserve).toBe(0x10_0000n);
      expect(pe.sectionAlignment).toBe(0x1000);
      expect(pe.fileAlignment).toBe(0x200);
      expect(pe.timeDateStamp).toBe(x.stamp);
      // x86: RELOCS_STRIPPED | EXECUTABLE_IMAGE | 32BIT_MACHINE; x64: ... | LARGE_ADDRESS_AWARE.
      expect(pe.characteristics).toBe(is64 ? 0x23 : 0x103);
      // x86: NO_SEH | NX_COMPAT | TERMINAL_SERVER_AWARE; x64: HIGH_ENTROPY_VA | NX_COMPAT | TERMINAL_SERVER_AWARE.
      expect(pe.dllCharacteristics).toBe(is64 ? 0x8120 : 0x8500);

      const names = is64 ? [".text", ".rdata", ".data", ".pdata"] : [".text", ".rdata", ".data"];
      const flags = [CODE, RDATA, DATA, RDATA];
      expect(pe.sections).toEqual(
        names.map((name, i) => ({
          name,
          virtualAddress: 0x1000 * (i + 1),
          virtualSize: x.vsizes[i],
          rawOffset: x.raws[i],
          rawSize: i === 0 ? x.textRaw : 0x200,
          characteristics: flags[i],
        })),
      );

      expect(pe.hasImports).toBe(false);
      expect(pe.hasRelocations).toBe(false);
      expect(pe.dataDirectories).toHaveLength(16);
      expect(pe.dataDirectories[6]).toEqual({ rva: x.debugRva, size: 0x38 });
      expect(pe.dataDirectories[3]).toEqual(is64 ? { rva: 0x4000, size: PDATA[x.program]!.length * 12 } : { rva: 0, size: 0 });
      const nonEmpty = pe.dataDirectories.flatMap((d, i) => (d.size !== 0 ? [i] : []));
      expect(nonEmpty).toEqual(is64 ? [3, 6] : [6]);

      // lld writes a CodeView entry and an empty IMAGE_DEBUG_TYPE_REPRO entry (/Brepro), both stamped.
      expect(pe.debug).toEqual([
        { type: IMAGE_DEBUG_TYPE.CODEVIEW, rva: x.cv[0], fileOffset: x.cv[1], size: x.cv[2], timeDateStamp: x.stamp },
        { type: IMAGE_DEBUG_TYPE.REPRO, rva: 0, fileOffset: 0, size: 0, timeDateStamp: x.stamp },
      ]);
      expect(pe.codeView).toEqual({ format: "RSDS", guid: x.guid, age: 1, pdbName: `${x.program}.pdb`, debugId: `${x.guid}1` });
      // /Brepro: lld's PDB GUID ends in the ASCII bytes "LLD PDB.".
      expect(x.guid.endsWith("4C4C44205044422E")).toBe(true);
      expect(pe.fpoData()).toBeUndefined();
      if (!is64) expect(pe.runtimeFunctions()).toEqual([]);
    });
  }

  for (const [program, table] of Object.entries(PDATA)) {
    it(`x64/${program}.exe: .pdata has ${table.length} sorted, non-overlapping RUNTIME_FUNCTIONs`, () => {
      const pe = parsePe(load("x64", program));
      const fns = pe.runtimeFunctions();
      expect(fns.map((f) => [f.beginRva, f.endRva, f.unwindData])).toEqual(table);
      const text = pe.sections.find((s) => s.name === ".text")!;
      const rdata = pe.sections.find((s) => s.name === ".rdata")!;
      fns.forEach((f, i) => {
        expect(f.beginRva).toBeLessThan(f.endRva);
        if (i > 0) expect(f.beginRva).toBeGreaterThanOrEqual(fns[i - 1]!.endRva);
        expect(f.beginRva).toBeGreaterThanOrEqual(text.virtualAddress);
        expect(f.endRva).toBeLessThanOrEqual(text.virtualAddress + text.virtualSize);
        // No indirect entries here; UNWIND_INFO (lld merges .xdata into .rdata) is DWORD-aligned.
        expect(f.unwindData & 3).toBe(0);
        expect(f.unwindData).toBeGreaterThanOrEqual(rdata.virtualAddress);
        expect(f.unwindData).toBeLessThan(rdata.virtualAddress + rdata.virtualSize);
        // UNWIND_INFO version 1, flags 0 in every image (README "x64 unwind data").
        expect(pe.readRva(f.unwindData, 1)![0]).toBe(0x01);
      });
      // The entry point has a RUNTIME_FUNCTION of its own.
      expect(fns.some((f) => f.beginRva === pe.entryRva)).toBe(true);
    });
  }

  it("SizeOfStackReserve is what /stack linked: a u32 in PE32 (offset 72), a u64 in PE32+", () => {
    expect(parsePe(load("x86-fpo", "deep-recursion")).sizeOfStackReserve).toBe(16_777_216n);
    expect(parsePe(load("x86-fp", "deep-recursion")).sizeOfStackReserve).toBe(16_777_216n);
    const x64 = load("x64", "deep-recursion");
    expect(parsePe(x64).sizeOfStackReserve).toBe(2_097_152n);
    // The high half of the PE32+ field counts.
    const lfanew = new DataView(x64.buffer, x64.byteOffset).getUint32(0x3c, true);
    const wide = x64.slice();
    u32(wide, lfanew + 24 + 72 + 4, 1);
    expect(parsePe(wide).sizeOfStackReserve).toBe(0x1_0020_0000n);
  });

  it("mapped() puts the headers at RVA 0 and each section at its RVA, zero-filling past VirtualSize", () => {
    const file = load("x86-fpo", "recursion-callbacks");
    const pe = parsePe(file);
    const m = pe.mapped();
    expect(m.length).toBe(0x4000);
    expect(m.subarray(0, 0x400)).toEqual(file.subarray(0, 0x400));
    // .text: 0x30C bytes from file offset 0x400 at RVA 0x1000, then zeros to the next page.
    expect(m.subarray(0x1000, 0x130c)).toEqual(file.subarray(0x400, 0x70c));
    expect(m.subarray(0x130c, 0x2000).every((b) => b === 0)).toBe(true);
    expect(m.subarray(0x2000, 0x20f0)).toEqual(file.subarray(0x800, 0x8f0));
    expect(m.subarray(0x3000, 0x3018)).toEqual(file.subarray(0xa00, 0xa18));
    expect(m.subarray(0x3018).every((b) => b === 0)).toBe(true);
    // The gap between the headers and .text is zero.
    expect(m.subarray(0x400, 0x1000).every((b) => b === 0)).toBe(true);
    // Each call returns a fresh copy.
    m[0x1000] = 0xcc;
    expect(pe.mapped()[0x1000]).toBe(file[0x400]);
  });

  it("readRva reads the mapped view and refuses ranges outside the image", () => {
    const file = load("x64", "big-frames-varargs");
    const pe = parsePe(file);
    const m = pe.mapped();
    expect(pe.readRva(0x12d0, 16)).toEqual(file.subarray(0x400 + 0x2d0, 0x400 + 0x2e0));
    expect(pe.readRva(0x12d0, 16)).toEqual(m.subarray(0x12d0, 0x12e0));
    // A range spanning the end of .text and the zero fill.
    expect(pe.readRva(0x1380, 0x20)).toEqual(m.subarray(0x1380, 0x13a0));
    expect(pe.readRva(0x4ff0, 0x10)).toEqual(new Uint8Array(0x10));
    expect(new TextDecoder().decode(pe.readRva(0x2040, 4))).toBe("RSDS");
    expect(pe.readRva(0x5000, 0)).toEqual(new Uint8Array(0));
    expect(pe.readRva(0x4fff, 2)).toBeUndefined();
    expect(pe.readRva(0x5000, 1)).toBeUndefined();
    expect(pe.readRva(-1, 1)).toBeUndefined();
    expect(pe.readRva(0x1000, -1)).toBeUndefined();
    expect(pe.readRva(0.5, 1)).toBeUndefined();
  });
});

describe("parsePe on damaged input", () => {
  const original = load("x86-fpo", "recursion-callbacks");
  // Offsets in this image: e_lfanew 0x78, file header 0x7C, optional header 0x90, data directories
  // 0xF0, section table 0x170; debug directory at file 0x888, CodeView record at 0x8C0.
  const damaged = (edit: (b: Uint8Array) => void): Uint8Array => {
    const b = original.slice();
    edit(b);
    return b;
  };

  it("every prefix of an x86 image throws InputError, and only the whole file parses", () => {
    const offsets = new Set<number>();
    for (let len = 0; len <= original.length; len++) {
      const prefix = original.slice(0, len);
      if (len === original.length) {
        touchEverything(parsePe(prefix));
        continue;
      }
      // The last section's raw data ends exactly at the end of the file, so no shorter prefix is an image.
      const err = inputError(() => parsePe(prefix));
      // The offset names the field or read that failed, or the end of the file when that field
      // lies past the cut (e_lfanew of a 10-byte file); the message says where the file ends.
      expect(err.offset).toBeDefined();
      expect(err.offset).toBeLessThanOrEqual(len);
      expect(err.message).toMatch(new RegExp(`(ends at offset|length) 0x${len.toString(16)}\\b`));
      offsets.add(err.offset!);
    }
    // 0 (short of e_magic), e_lfanew, the header fields one by one, SizeOfHeaders, section raw data.
    expect(offsets.has(0)).toBe(true);
    expect(offsets.has(0x90 + 60)).toBe(true);
    expect(offsets.has(0x170 + 2 * 40 + 20)).toBe(true);
  });

  it("every prefix of an x64 image either parses or throws InputError", () => {
    const file = load("x64", "noreturn-longjmp");
    for (let len = 0; len <= file.length; len++) {
      try {
        touchEverything(parsePe(file.slice(0, len)));
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
      }
    }
  });

  it("random corruption of the headers and debug data never escapes as another error", () => {
    let seed = 0x2545f491;
    const next = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed >>> 8;
    };
    const regions = [[0, 0x400], [0x888, 0x8f0]] as const;
    let parsed = 0;
    for (let round = 0; round < 3000; round++) {
      const b = original.slice();
      for (let k = 1 + (next() % 4); k > 0; k--) {
        const [lo, hi] = regions[next() % regions.length]!;
        b[lo + (next() % (hi - lo))] = next() & 0xff;
      }
      try {
        touchEverything(parsePe(b));
        parsed++;
      } catch (e) {
        expect(e).toBeInstanceOf(InputError);
      }
    }
    expect(parsed).toBeGreaterThan(0);
  });

  it('rejects a file that does not start with "MZ" at offset 0', () => {
    const err = inputError(() => parsePe(damaged((b) => (b[0] = 0x58))));
    expect(err.code).toBe("bad-magic");
    expect(err.offset).toBe(0);
    expect(err.message).toBe('offset 0x0: not a PE image: e_magic is 0x5a58, expected "MZ" (0x5a4d)');
    expect(inputError(() => parsePe(new Uint8Array(0))).code).toBe("truncated");
    const short = inputError(() => parsePe(ascii("MZ")));
    expect(short.offset).toBe(2);
    expect(short.message).toBe("offset 0x2: IMAGE_DOS_HEADER.e_lfanew: offset 0x3c lies outside the input, which ends at offset 0x2");
  });

  it("rejects an e_lfanew outside the file, at offset 0x3C", () => {
    const err = inputError(() => parsePe(damaged((b) => u32(b, 0x3c, 0xfffffff0))));
    expect(err.code).toBe("bad-value");
    expect(err.offset).toBe(0x3c);
    expect(err.message).toBe("offset 0x3c: e_lfanew 0xfffffff0 points outside the file (length 0xc00)");
    expect(inputError(() => parsePe(damaged((b) => u32(b, 0x3c, 0xbfd)))).offset).toBe(0x3c);
  });

  it('rejects a bad "PE\\0\\0" signature at e_lfanew', () => {
    const err = inputError(() => parsePe(damaged((b) => (b[0x7a] = 1))));
    expect(err.code).toBe("bad-magic");
    expect(err.offset).toBe(0x78);
    expect(err.message).toBe('offset 0x78: PE signature is 0x14550, expected "PE\\0\\0" (0x4550)');
  });

  it("rejects NumberOfSections 0xFFFF at the field (0x7E)", () => {
    const err = inputError(() => parsePe(damaged((b) => u16(b, 0x7e, 0xffff))));
    expect(err.code).toBe("bad-value");
    expect(err.offset).toBe(0x7e);
    expect(err.message).toBe("offset 0x7e: NumberOfSections 65535 exceeds the loader's limit of 96");
  });

  it("rejects an unknown optional-header magic at 0x90", () => {
    const err = inputError(() => parsePe(damaged((b) => u16(b, 0x90, 0x107))));
    expect(err.code).toBe("bad-magic");
    expect(err.offset).toBe(0x90);
    expect(err.message).toMatch(/^offset 0x90: optional-header magic is 0x107, expected 0x10b \(PE32\) or 0x20b \(PE32\+\)$/);
  });

  it("rejects header fields that do not add up", () => {
    // SizeOfOptionalHeader below the PE32 fixed part.
    let err = inputError(() => parsePe(damaged((b) => u16(b, 0x8c, 0x50))));
    expect([err.code, err.offset]).toEqual(["bad-value", 0x8c]);
    // NumberOfRvaAndSizes 16 no longer fits once SizeOfOptionalHeader shrinks to 0x60 (96).
    err = inputError(() => parsePe(damaged((b) => u16(b, 0x8c, 0x60))));
    expect([err.code, err.offset]).toEqual(["bad-value", 0x90 + 92]);
    // SizeOfImage over the 1 GiB cap is refused before anything is allocated.
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x90 + 56, 0x40001000))));
    expect([err.code, err.offset]).toEqual(["unsupported", 0xc8]);
    // SizeOfHeaders past the end of the file.
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x90 + 60, 0x1000))));
    expect([err.code, err.offset]).toEqual(["truncated", 0xcc]);
    // Entry point outside the image.
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x90 + 16, 0x4000))));
    expect([err.code, err.offset]).toEqual(["bad-value", 0xa0]);
  });

  it("rejects a section table outside the file, naming where the table starts", () => {
    const err = inputError(() => parsePe(damaged((b) => u16(b, 0x8c, 0xfff0))));
    expect(err.code).toBe("truncated");
    // The table would start past the end of the file: the offset is the end, the message says where.
    expect(err.offset).toBe(0xc00);
    expect(err.message).toMatch(/section table \(3 × 40 bytes\): needs 120 byte\(s\) at offset 0x10080, outside the input, which ends at offset 0xc00/);
  });

  it("quotes a damaged section name as JSON, so that its control characters never break the message's one line", () => {
    const err = inputError(() => parsePe(damaged((b) => ((b[0x170 + 1] = 0x0a), u32(b, 0x170 + 20, 0x7fff_ffff)))));
    expect(err.message).toBe('offset 0x184: section 1 ".\\next": raw data 0x7fffffff..0x800003ff runs past the end of the file (length 0xc00)');
  });

  it("rejects section raw data outside the file, at the section's PointerToRawData", () => {
    const err = inputError(() => parsePe(damaged((b) => u32(b, 0x170 + 2 * 40 + 20, 0xb00))));
    expect(err.code).toBe("truncated");
    expect(err.offset).toBe(0x1d4);
    expect(err.message).toBe('offset 0x1d4: section 3 ".data": raw data 0xb00..0xd00 runs past the end of the file (length 0xc00)');
  });

  it("rejects sections outside the image or overlapping each other", () => {
    let err = inputError(() => parsePe(damaged((b) => u32(b, 0x170 + 2 * 40 + 12, 0x3ff0))));
    expect([err.code, err.offset]).toEqual(["bad-value", 0x1cc]);
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x170 + 40 + 12, 0x1100))));
    expect([err.code, err.offset]).toEqual(["overlap", 0x1a4]);
    expect(err.message).toMatch(/section 2 ".rdata": RVA range 0x1100..0x11f0 overlaps section ".text"/);
  });

  it("rejects a data directory pointing outside the image, at its entry", () => {
    const err = inputError(() => parsePe(damaged((b) => u32(b, 0xf0 + 6 * 8, 0x3ff0))));
    expect(err.code).toBe("bad-value");
    expect(err.offset).toBe(0x120);
    expect(err.message).toBe("offset 0x120: debug directory 0x3ff0..0x4028 lies outside the image (SizeOfImage 0x4000)");
    // The security directory holds a file offset, so it is checked against the file instead.
    const sec = inputError(() => parsePe(damaged((b) => (u32(b, 0xf0 + 4 * 8, 0xb00), u32(b, 0xf0 + 4 * 8 + 4, 0x200)))));
    expect([sec.code, sec.offset]).toEqual(["truncated", 0x110]);
    expect(parsePe(damaged((b) => (u32(b, 0xf0 + 4 * 8, 0xa00), u32(b, 0xf0 + 4 * 8 + 4, 0x200)))).dataDirectories[4]).toEqual({ rva: 0xa00, size: 0x200 });
  });

  it("rejects a debug directory whose size is not a multiple of 28, at its Size field", () => {
    const err = inputError(() => parsePe(damaged((b) => u32(b, 0xf0 + 6 * 8 + 4, 0x37))));
    expect(err.code).toBe("bad-value");
    expect(err.offset).toBe(0x124);
    expect(err.message).toBe("offset 0x124: debug directory size 0x37 is not a multiple of 28");
    // A directory in the zero fill past .rdata's raw data has nothing to read.
    const bss = inputError(() => parsePe(damaged((b) => u32(b, 0xf0 + 6 * 8, 0x2300))));
    expect([bss.code, bss.offset]).toEqual(["bad-value", 0x120]);
  });

  it("rejects a CodeView record that is not RSDS or NB10, at the record", () => {
    const err = inputError(() => parsePe(damaged((b) => b.set(ascii("NB11"), 0x8c0))));
    expect(err.code).toBe("bad-magic");
    expect(err.offset).toBe(0x8c0);
    expect(err.message).toBe('offset 0x8c0: CodeView signature "NB11" (0x3131424e) is neither "RSDS" nor "NB10"');
  });

  it("rejects a truncated CodeView record", () => {
    // SizeOfData 3: not even the signature fits.
    let err = inputError(() => parsePe(damaged((b) => u32(b, 0x898, 3))));
    expect([err.code, err.offset]).toEqual(["truncated", 0x8c0]);
    // SizeOfData 0x13: the GUID is cut short; 0x17: the age is.
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x898, 0x13))));
    expect([err.code, err.offset]).toEqual(["truncated", 0x8c4]);
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x898, 0x17))));
    expect([err.code, err.offset]).toEqual(["truncated", 0x8d4]);
    // The PDB name loses its NUL terminator.
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x898, 0x2f))));
    expect([err.code, err.offset]).toEqual(["truncated", 0x8d8]);
    expect(err.message).toMatch(/CodeView RSDS PDB name has no NUL terminator/);
    // PointerToRawData past the end of the file.
    err = inputError(() => parsePe(damaged((b) => u32(b, 0x8a0, 0xbf0))));
    expect([err.code, err.offset]).toEqual(["truncated", 0x8a0]);
  });

  it("formats the age of the debug id in lower-case hex (symbol-store convention)", () => {
    const pe = parsePe(damaged((b) => u32(b, 0x8c0 + 20, 0x1a)));
    expect(pe.codeView!.age).toBe(26);
    expect(pe.codeView!.debugId).toBe("2661BE9D7347A0524C4C44205044422E1a");
  });

  it("finds the CodeView record through AddressOfRawData when PointerToRawData is 0", () => {
    const pe = parsePe(damaged((b) => u32(b, 0x8a0, 0)));
    expect(pe.codeView!.pdbName).toBe("recursion-callbacks.pdb");
  });

  it("reports an NB10 (PDB 2.0) record with its signature and age as the debug id", () => {
    const record = new Uint8Array(0x30);
    record.set(ascii("NB10"));
    u32(record, 8, 0x3b2a1c0d);
    u32(record, 12, 2);
    record.set(ascii("old.pdb\0"), 16);
    const pe = parsePe(damaged((b) => b.set(record, 0x8c0)));
    expect(pe.codeView).toEqual({ format: "NB10", guid: "3B2A1C0D", age: 2, pdbName: "old.pdb", debugId: "3B2A1C0D2" });
  });

  it("returns an IMAGE_DEBUG_TYPE_FPO payload and checks its size", () => {
    const fpo = Uint8Array.from({ length: 32 }, (_, i) => i + 1);
    // Turn lld's empty REPRO entry (at 0x8A4) into an FPO entry over 32 bytes of .rdata slack.
    const withFpo = (size: number): Uint8Array =>
      damaged((b) => {
        b.set(fpo, 0x900);
        u32(b, 0x8a4 + 12, IMAGE_DEBUG_TYPE.FPO);
        u32(b, 0x8a4 + 16, size);
        u32(b, 0x8a4 + 20, 0x2100);
        u32(b, 0x8a4 + 24, 0x900);
      });
    const pe = parsePe(withFpo(32));
    expect(pe.fpoData()).toEqual(fpo);
    expect(pe.debug[1]).toEqual({ type: 3, rva: 0x2100, fileOffset: 0x900, size: 32, timeDateStamp: 0x018dc168 });
    const err = inputError(() => parsePe(withFpo(30)));
    expect([err.code, err.offset]).toEqual(["bad-value", 0x8b4]);
  });

  it("reports RUNTIME_FUNCTION indirection raw and checks the exception directory size", () => {
    const file = load("x64", "noreturn-longjmp");
    const b = file.slice();
    // Make entry 1 point indirectly at entry 0 (RVA 0x4000), as x64-unwind.md §1.1 describes.
    u32(b, 0xc00 + 12 + 8, 0x4000 | 1);
    const fns = parsePe(b).runtimeFunctions();
    expect(fns[1]!.unwindData).toBe(0x4001);
    expect(fns[1]!.unwindData & ~1).toBe(0x4000);
    // PE32+: data directories at 0x90 + 112 = 0x100; the exception entry's Size at 0x11C.
    const c = file.slice();
    u32(c, 0x11c, 0x50);
    const err = inputError(() => parsePe(c));
    expect([err.code, err.offset]).toEqual(["bad-value", 0x11c]);
    expect(err.message).toMatch(/exception directory size 0x50 is not a multiple of 12/);
  });
});
