/**
 * Cabinets and MSZIP (docs/spec/cab.md), against cabinets made by gcab and checked with
 * cabextract (test/fixtures/cab), and DEFLATE streams made by zlib: the files come back byte for
 * byte; damaged cabinets and streams are InputErrors naming the offset, and no output is larger
 * than the cap or the size the cabinet declares.
 */
import { readFileSync } from "node:fs";
import { deflateRawSync } from "node:zlib";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { readCabinet } from "../../src/formats/cab.js";
import { inflateRaw } from "../../src/formats/inflate.js";
import { writeCab } from "../support/cab-writer.js";
import { inputError } from "../support/input-error.js";
import { fixtureBytes } from "../support/fixtures.js";

const EXE = new Uint8Array(readFileSync("vectors/programs/c/build/x64/recursion-callbacks.exe"));
const LINES = new TextEncoder().encode(Array.from({ length: 3000 }, (_, i) => `line ${i + 1} of some repeated text for compression\n`).join(""));

/** Byte-for-byte equality, said in one line (expect's element-wise diff of a large array is slow). */
const same = (a: Uint8Array | undefined, b: Uint8Array): void => expect(a !== undefined && Buffer.from(a.buffer, a.byteOffset, a.length).equals(b)).toBe(true);

const extractAll = (bytes: Uint8Array, options = {}): Record<string, Uint8Array> => {
  const cab = readCabinet(bytes, options);
  return Object.fromEntries(cab.files.map((f) => [f.name, cab.extract(f)]));
};

describe("cabinets made by gcab (checked with cabextract)", () => {
  it("an MSZIP folder of five blocks holding two files, the second starting inside a block", () => {
    const files = extractAll(fixtureBytes("cab/mszip.cab"));
    expect(Object.keys(files)).toEqual(["lines.txt", "recursion-callbacks.exe"]);
    same(files["lines.txt"], LINES);
    same(files["recursion-callbacks.exe"], EXE);
  });

  it("a stored folder, and a symbol store's compressed image (.ex_)", () => {
    same(extractAll(fixtureBytes("cab/stored.cab"))["recursion-callbacks.exe"], EXE);
    same(extractAll(fixtureBytes("cab/recursion-callbacks.ex_"))["recursion-callbacks.exe"], EXE);
  });
});

describe("MSZIP blocks that reach back into the blocks before them", () => {
  it("are extracted whole; a block read without the window before it does not decode", () => {
    const cab = writeCab([{ name: "lines.txt", bytes: LINES }, { name: "app.exe", bytes: EXE }]);
    const files = extractAll(cab);
    same(files["lines.txt"], LINES);
    same(files["app.exe"], EXE);
    // The second block alone: its distances reach before its own start.
    const first = 36 + 8 + 16 + 10 + 16 + 8;
    const size1 = cab[first + 4]! | (cab[first + 5]! << 8);
    const second = first + 8 + size1;
    const size2 = cab[second + 4]! | (cab[second + 5]! << 8);
    const out = cab[second + 6]! | (cab[second + 7]! << 8);
    expect(inputError(() => inflateRaw(cab.subarray(second + 10, second + 8 + size2), new Uint8Array(out), 0, out)).reason).toMatch(/reaches before the start of the window/);
  });

  it("stored blocks written by the test writer", () => {
    same(extractAll(writeCab([{ name: "a", bytes: LINES }], { method: "none" }))["a"], LINES);
  });
});

describe("inflate against zlib", () => {
  it("decodes what zlib deflates, at every level and strategy (stored, fixed and dynamic blocks)", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 70_000 }), fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 4 }), fc.boolean(), (data, level, strategy, repetitive) => {
        const input = repetitive ? data.map((b, i) => (b < 128 ? i % 7 : b)) : data;
        const z = deflateRawSync(input, { level, strategy });
        const out = new Uint8Array(input.length);
        inflateRaw(z, out, 0, out.length);
        same(out, input);
      }),
      { numRuns: 60 },
    );
  });

  it("never writes past the end it is given: a longer stream is an error, a shorter one too", () => {
    const z = deflateRawSync(LINES);
    expect(inputError(() => inflateRaw(z, new Uint8Array(1000), 0, 1000)).reason).toBe("deflate: the data inflates to more than 1000 bytes");
    expect(inputError(() => inflateRaw(z, new Uint8Array(LINES.length + 5), 0, LINES.length + 5)).reason).toMatch(/inflates to \d+ bytes, not/);
  });

  it("malformed streams are InputErrors naming the offset, whatever the bytes", () => {
    expect(inputError(() => inflateRaw(new Uint8Array([0x07]), new Uint8Array(4), 0, 4)).reason).toBe("deflate: block type 3 is reserved");
    expect(inputError(() => inflateRaw(new Uint8Array([0x01, 0x04, 0x00, 0x00, 0x00]), new Uint8Array(4), 0, 4)).reason).toMatch(/LEN 4 and NLEN 0 disagree/);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const out = new Uint8Array(256);
        try {
          inflateRaw(bytes, out, 0, out.length);
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
          expect((e as InputError).offset).toBeLessThanOrEqual(bytes.length);
        }
      }),
      { numRuns: 2000 },
    );
  });
});

describe("damaged and hostile cabinets", () => {
  const cab = writeCab([{ name: "app.exe", bytes: EXE }]);
  const patched = (at: number, values: number[]): Uint8Array => {
    const b = cab.slice();
    b.set(values, at);
    return b;
  };

  it("a declared size over the cap is refused before anything is inflated", () => {
    expect(inputError(() => extractAll(cab, { maxBytes: 1000 })).reason).toBe(`file "app.exe" declares ${EXE.length} bytes, more than the 1000-byte limit`);
  });

  it("a file larger than its folder's blocks, LZX, a spanned set, a bad signature and cut-off data are named errors", () => {
    const big = patched(44, [0xff, 0xff, 0xff, 0x00]);
    expect(inputError(() => extractAll(big)).reason).toMatch(/ends at 16777215 bytes into folder 0, whose blocks hold 3584/);
    expect(inputError(() => extractAll(patched(42, [0x03, 0x15]))).reason).toBe("folder 0 is compressed with LZX (only none and MSZIP are read)");
    expect(inputError(() => readCabinet(patched(30, [0x02, 0x00]))).reason).toMatch(/spanned set/);
    expect(inputError(() => readCabinet(patched(0, [0x4d, 0x53, 0x43, 0x47]))).code).toBe("bad-magic");
    expect(inputError(() => extractAll(cab.subarray(0, cab.length - 10))).code).toBe("truncated");
    const noCk = patched(36 + 8 + 16 + 8 + 8, [0x00, 0x00]);
    expect(inputError(() => extractAll(noCk)).reason).toMatch(/without its "CK" signature/);
  });

  it("random damage is an InputError, never a crash, and no output is larger than the declared size", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(cab.length - 1), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), (edits) => {
        const b = cab.slice();
        for (const [at, v] of edits) b[at] = v;
        try {
          const c = readCabinet(b, { maxBytes: 1 << 20 });
          for (const f of c.files) expect(c.extract(f).length).toBe(f.size);
        } catch (e) {
          expect(e).toBeInstanceOf(InputError);
        }
      }),
      { numRuns: 1500 },
    );
  });
});
