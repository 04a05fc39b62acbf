/**
 * GUID text (src/formats/guid.ts) as debug identifiers print it (minidump.md §8): Data1, Data2
 * and Data3 read little-endian, then Data4 byte by byte, upper-case hex, checked against the
 * fields formatted one by one for random GUIDs; each text one string, not a chain of pieces.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { guidRegistryText, guidText } from "../../src/formats/guid.js";

function fields(g: Uint8Array): { data1: number; data2: number; data3: number; data4: number[] } {
  const v = new DataView(g.buffer, g.byteOffset, 16);
  return { data1: v.getUint32(0, true), data2: v.getUint16(4, true), data3: v.getUint16(6, true), data4: [...g.subarray(8, 16)] };
}

const hex = (n: number, digits: number): string => n.toString(16).toUpperCase().padStart(digits, "0");

describe("GUID text", () => {
  it("is %08X%04X%04X then eight %02X of the fields, in registry form lower case with dashes", () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 16, maxLength: 24 }), (bytes) => {
        const { data1, data2, data3, data4 } = fields(bytes);
        const text = hex(data1, 8) + hex(data2, 4) + hex(data3, 4) + data4.map((b) => hex(b, 2)).join("");
        expect(guidText(bytes)).toBe(text);
        expect(guidRegistryText(bytes)).toBe(`${text.slice(0, 8)}-${text.slice(8, 12)}-${text.slice(12, 16)}-${text.slice(16, 20)}-${text.slice(20)}`.toLowerCase());
      }),
      { numRuns: 300 },
    );
    // A known one: the bytes of {00112233-4455-6677-8899-AABBCCDDEEFF} as a PDB stores them.
    expect(guidText(Uint8Array.from([0x33, 0x22, 0x11, 0x00, 0x55, 0x44, 0x77, 0x66, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff]))).toBe("00112233445566778899AABBCCDDEEFF");
  });

  it("is one string of its 32 characters: 100,000 texts kept take a few megabytes, not a chain of pieces each", () => {
    // A text joined from 16 pieces keeps the chain of joins (about 480 bytes a text) for as long as
    // it is kept; a dump of 60,000 modules keeps hundreds of thousands of them.
    const g = new Uint8Array(16);
    const kept: string[] = new Array(100_000);
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < kept.length; i++) {
      g[0] = i & 0xff;
      g[1] = (i >> 8) & 0xff;
      g[2] = i >> 16;
      kept[i] = guidText(g);
    }
    const grown = process.memoryUsage().heapUsed - before;
    expect(kept[1]).toBe("00000001000000000000000000000000");
    expect(grown).toBeLessThan(20 << 20);
  });

  it("of fewer than 16 bytes is an error, not text with holes", () => {
    expect(() => guidText(new Uint8Array(15))).toThrow(RangeError);
  });
});
