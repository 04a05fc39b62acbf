import { describe, expect, it } from "vitest";
import { IMAGE_DEBUG_TYPE, IMAGE_DIRECTORY_ENTRY, parsePe } from "../../src/formats/pe.js";
import { decodeFpoTable, FRAME_FPO, FRAME_NONFPO, type FpoData } from "../../src/model/fpo-data.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";
import {
  DIRECTORY_INDEX,
  FILE_ALIGNMENT,
  FIRST_SECTION_RVA,
  SECTION_ALIGNMENT,
  SECTION_CHARACTERISTICS,
  debugSection,
  encodeRsds,
  writePeImage,
  type ImageSpec,
  type SectionBuilder,
} from "../../emulator/image-writer.js";

const fpo = (ulOffStart: number, cbProcSize: number, extra: Partial<FpoData> = {}): FpoData => ({
  ulOffStart,
  cbProcSize,
  cdwLocals: 0,
  cdwParams: 0,
  cbProlog: 0,
  cbRegs: 0,
  fHasSEH: false,
  fUseBP: false,
  reserved: 0,
  cbFrame: FRAME_FPO,
  ...extra,
});

/** GUID bytes 00 01 … 0f; Windows prints Data1..Data3 little-endian, so the string starts 03020100. */
const GUID = Uint8Array.from({ length: 16 }, (_, i) => i);

/** A PE32 image with code, a debug directory (given out of order) and writable data. */
function x86Spec(): ImageSpec {
  const code = Uint8Array.from([0x55, 0x89, 0xe5, 0x5d, 0xc3, 0x83, 0xec, 0x08, 0x83, 0xc4, 0x08, 0xc3]);
  return {
    machine: "x86",
    imageBase: 0x0040_0000n,
    entryRva: 0x1000,
    timeDateStamp: 0x1234_5678,
    sections: [
      { name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: code } },
      debugSection({
        codeView: { guid: GUID, age: 3, pdbName: "sample.pdb" },
        fpo: [fpo(0x1005, 7, { cdwLocals: 2, cbProlog: 3 }), fpo(0x1000, 5, { cbProlog: 3, cbFrame: FRAME_NONFPO, cdwParams: 1 })],
        timeDateStamp: 0x1234_5678,
      }),
      { name: ".data", characteristics: SECTION_CHARACTERISTICS.data, content: { bytes: Uint8Array.from([1, 2, 3, 4]), virtualSize: 0x2000 } },
    ],
  };
}

describe("writePeImage (PE32)", () => {
  const written = writePeImage(x86Spec());
  const pe = parsePe(written.bytes);

  it("round-trips the headers through parsePe", () => {
    expect(pe.machine).toBe(IMAGE_FILE_MACHINE.I386);
    expect(pe.is64).toBe(false);
    expect(pe.imageBase).toBe(0x0040_0000n);
    expect(pe.entryRva).toBe(0x1000);
    expect(pe.timeDateStamp).toBe(0x1234_5678);
    expect(pe.sectionAlignment).toBe(SECTION_ALIGNMENT);
    expect(pe.fileAlignment).toBe(FILE_ALIGNMENT);
    expect(pe.sizeOfHeaders).toBe(0x200);
    // .text (1 page), .rdata (1 page), .data (2 pages of VirtualSize).
    expect(pe.sizeOfImage).toBe(0x5000);
    expect(written.sizeOfImage).toBe(0x5000);
    expect(pe.characteristics).toBe(0x0103); // RELOCS_STRIPPED | EXECUTABLE_IMAGE | 32BIT_MACHINE
    expect(pe.hasImports).toBe(false);
    expect(pe.hasRelocations).toBe(false);
    expect(written.bytes.length % FILE_ALIGNMENT).toBe(0);
  });

  it("lays the sections out in order, page-aligned in memory and sector-aligned in the file", () => {
    expect(pe.sections.map(({ name, virtualAddress, rawOffset, rawSize, characteristics }) => ({ name, virtualAddress, rawOffset, rawSize, characteristics }))).toEqual([
      { name: ".text", virtualAddress: FIRST_SECTION_RVA, rawOffset: 0x200, rawSize: 0x200, characteristics: 0x6000_0020 },
      { name: ".rdata", virtualAddress: 0x2000, rawOffset: 0x400, rawSize: 0x200, characteristics: 0x4000_0040 },
      { name: ".data", virtualAddress: 0x3000, rawOffset: 0x600, rawSize: 0x200, characteristics: 0xc000_0040 },
    ]);
    expect(pe.sections.map((s) => s.virtualSize)).toEqual([12, 124, 0x2000]); // .rdata: 2 entries, RSDS (35 bytes), 1 byte of padding, 2 FPO_DATA
    expect(written.sections.map((s) => [s.name, s.rva, s.fileOffset])).toEqual([
      [".text", 0x1000, 0x200],
      [".rdata", 0x2000, 0x400],
      [".data", 0x3000, 0x600],
    ]);
  });

  it("maps code and data at their RVAs, zero-filling past the data's bytes", () => {
    const mapped = pe.mapped();
    expect(mapped.length).toBe(0x5000);
    expect([...mapped.subarray(0x1000, 0x1005)]).toEqual([0x55, 0x89, 0xe5, 0x5d, 0xc3]);
    expect([...pe.readRva(0x3000, 6)!]).toEqual([1, 2, 3, 4, 0, 0]);
    expect(pe.readRva(0x4ffc, 4)).toEqual(new Uint8Array(4));
  });

  it("writes a debug directory with the CodeView record first and the FPO table sorted by ulOffStart", () => {
    expect(pe.dataDirectories[IMAGE_DIRECTORY_ENTRY.DEBUG]).toEqual({ rva: 0x2000, size: 56 });
    expect(pe.debug).toEqual([
      { type: IMAGE_DEBUG_TYPE.CODEVIEW, rva: 0x2038, fileOffset: 0x438, size: 35, timeDateStamp: 0x1234_5678 },
      { type: IMAGE_DEBUG_TYPE.FPO, rva: 0x205c, fileOffset: 0x45c, size: 32, timeDateStamp: 0x1234_5678 },
    ]);
    expect(pe.codeView).toEqual({
      format: "RSDS",
      guid: "030201000504070608090A0B0C0D0E0F",
      age: 3,
      pdbName: "sample.pdb",
      debugId: "030201000504070608090A0B0C0D0E0F3",
    });
    expect(decodeFpoTable(pe.fpoData()!)).toEqual([
      fpo(0x1000, 5, { cbProlog: 3, cbFrame: FRAME_NONFPO, cdwParams: 1 }),
      fpo(0x1005, 7, { cdwLocals: 2, cbProlog: 3 }),
    ]);
  });

  it("is deterministic", () => {
    expect(writePeImage(x86Spec()).bytes).toEqual(written.bytes);
  });
});

describe("writePeImage (PE32+)", () => {
  it("writes a PE32+ header and an exception directory a builder points at an earlier section", () => {
    const unwindInfo = Uint8Array.from([0x01, 0x04, 0x01, 0x00, 0x04, 0x42, 0x00, 0x00]); // UNWIND_INFO: v1, prolog 4, 1 code: UWOP_ALLOC_SMALL 40
    const pdata: SectionBuilder = (_at, earlier) => {
      const xdata = earlier.get(".xdata")!;
      const bytes = new Uint8Array(12);
      const view = new DataView(bytes.buffer);
      view.setUint32(0, 0x1000, true);
      view.setUint32(4, 0x1010, true);
      view.setUint32(8, xdata.rva, true);
      return { bytes, directories: [{ index: DIRECTORY_INDEX.EXCEPTION, rva: _at.rva, size: 12 }] };
    };
    const image = writePeImage({
      machine: "x64",
      imageBase: 0x1_4000_0000n,
      entryRva: 0x1000,
      sections: [
        { name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: Uint8Array.from([0x48, 0x83, 0xec, 0x28, 0x48, 0x83, 0xc4, 0x28, 0xc3]) } },
        { name: ".xdata", characteristics: SECTION_CHARACTERISTICS.rdata, content: { bytes: unwindInfo } },
        { name: ".pdata", characteristics: SECTION_CHARACTERISTICS.rdata, content: pdata },
      ],
    });
    const pe = parsePe(image.bytes);
    expect(pe.machine).toBe(IMAGE_FILE_MACHINE.AMD64);
    expect(pe.is64).toBe(true);
    expect(pe.imageBase).toBe(0x1_4000_0000n);
    expect(pe.characteristics).toBe(0x0023); // RELOCS_STRIPPED | EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE
    expect(pe.sizeOfHeaders).toBe(0x200);
    expect(pe.runtimeFunctions()).toEqual([{ beginRva: 0x1000, endRva: 0x1010, unwindData: 0x2000 }]);
    expect(pe.readRva(0x2000, 8)).toEqual(unwindInfo);
  });
});

describe("writePeImage rejects malformed specs", () => {
  const text = { name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: Uint8Array.of(0xc3) } };
  const base: ImageSpec = { machine: "x86", imageBase: 0x0040_0000n, entryRva: 0x1000, sections: [text] };
  it.each<[string, ImageSpec, RegExp]>([
    ["an ImageBase that is not 64 KiB aligned", { ...base, imageBase: 0x0040_1000n }, /multiple of 64 KiB/],
    ["an x86 ImageBase above 4 GiB", { ...base, imageBase: 0x1_0000_0000n }, /x86 address space/],
    ["an entry point outside the sections", { ...base, entryRva: 0x2000 }, /entryRva/],
    ["a section name longer than 8 bytes", { ...base, sections: [{ ...text, name: ".textlong" }] }, /1..8 printable/],
    ["the same section twice", { ...base, sections: [text, text] }, /used twice/],
    ["an empty section", { ...base, sections: [text, { ...text, name: ".empty", content: { bytes: new Uint8Array() } }] }, /empty/],
    ["no sections", { ...base, sections: [] }, /1..16 sections/],
    [
      "a directory outside its section",
      { ...base, sections: [{ ...text, content: { bytes: Uint8Array.of(0xc3), directories: [{ index: 6, rva: 0x1000, size: 28 }] } }] },
      /lies outside the section/,
    ],
  ])("%s", (_, spec, message) => {
    expect(() => writePeImage(spec)).toThrow(message);
  });

  it("a debug section needs something to carry", () => {
    expect(() => debugSection({})).toThrow(/CodeView record or FPO data/);
  });
});

describe("encodeRsds", () => {
  it("writes the signature, GUID, age and a NUL-terminated name", () => {
    const bytes = encodeRsds({ guid: GUID, age: 1, pdbName: "a.pdb" });
    expect(new TextDecoder().decode(bytes.subarray(0, 4))).toBe("RSDS");
    expect(bytes.subarray(4, 20)).toEqual(GUID);
    expect(new DataView(bytes.buffer).getUint32(20, true)).toBe(1);
    expect([...bytes.subarray(24)]).toEqual([...new TextEncoder().encode("a.pdb"), 0]);
  });

  it("rejects a GUID of the wrong size", () => {
    expect(() => encodeRsds({ guid: new Uint8Array(8), age: 1, pdbName: "a.pdb" })).toThrow(/16 bytes/);
  });
});
