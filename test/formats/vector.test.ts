import fc from "fast-check";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { bytesToHex } from "../../src/formats/json-input.js";
import { formatVector, parseVector } from "../../src/formats/vector.js";
import { handVectors } from "../support/hand-vectors.js";

const good = {
  format: "stackwalk-vector/1",
  machine: "x86",
  context: { eip: "0x00401000", esp: "0x0012ff00", ebp: "0x0012ff08" },
  memory: [{ base: "0x0012ff00", hex: "00000000000000000000000000000000" }],
  modules: [{ name: "a.exe", base: "0x00400000", size: "0x2000", symbols: [{ name: "f", rva: "0x1000", size: "0x10" }] }],
  truth: [{ pc: "0x00401000", sp: "0x0012ff00", function: "f" }],
};

/** Parses `good` with one change applied, and returns the error (or fails). */
function errorOf(change: (v: Record<string, any>) => void, text?: string): InputError {
  const v = structuredClone(good) as Record<string, any>;
  change(v);
  try {
    parseVector(text ?? JSON.stringify(v), "bad.json");
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error("expected an InputError");
}

describe("stackwalk-vector/1", () => {
  it("loads a valid vector", () => {
    const v = parseVector(JSON.stringify(good));
    expect(v.machine).toBe("x86");
    expect(v.threads[0]!.registers["eip"]).toBe(0x401000n);
    expect(v.memory.read(0x0012ff00n, 16)?.length).toBe(16);
    expect(v.modules[0]!.symbols[0]).toEqual({ name: "f", rva: 0x1000n, size: 0x10n });
    expect(v.threads[0]!.truth).toEqual([{ pc: 0x401000n, sp: 0x12ff00n, function: "f" }]);
  });

  it("accepts base64 memory", () => {
    const v = parseVector(JSON.stringify({ ...good, memory: [{ base: "0x0012ff00", base64: "AQIDBA==" }] }));
    expect([...v.memory.read(0x0012ff00n, 4)!]).toEqual([1, 2, 3, 4]);
  });

  it.each([
    ["not JSON", (_: any) => {}, "{ nope", "bad-json", "$", /^bad\.json: \$: not valid JSON: line 1, column 3: expected a member name in double quotes or "}", found "n"$/],
    ["wrong format id", (v: any) => (v.format = "stackwalk-vector/9"), undefined, "bad-value", "$.format", /unknown format/],
    ["unknown machine", (v: any) => (v.machine = "mips"), undefined, "unknown-machine", "$.machine", /unknown machine "mips"/],
    ["missing register", (v: any) => delete v.context.ebp, undefined, "missing-field", "$.context.ebp", /needs register "ebp"/],
    ["hex that does not parse", (v: any) => (v.context.eip = "0x40g000"), undefined, "bad-hex", "$.context.eip", /not a 0x-prefixed hex number/],
    ["a number where hex is expected", (v: any) => (v.context.eip = 4198400), undefined, "bad-type", "$.context.eip", /expected a string/],
    ["a register wider than the machine", (v: any) => (v.context.esp = "0x100000000"), undefined, "bad-value", "$.context.esp", /does not fit in 32 bits/],
    ["overlapping regions", (v: any) => v.memory.push({ base: "0x0012ff08", hex: "00" }), undefined, "overlap", "$.memory[1]", /overlaps/],
    ["odd hex bytes", (v: any) => (v.memory[0].hex = "abc"), undefined, "bad-hex", "$.memory[0].hex", /odd number/],
    ["non-hex bytes", (v: any) => (v.memory[0].hex = "zz"), undefined, "bad-hex", "$.memory[0].hex", /non-hex character at index 0/],
    ["both hex and base64", (v: any) => (v.memory[0].base64 = "AA=="), undefined, "missing-field", "$.memory[0]", /exactly one of/],
    ["an unknown field", (v: any) => (v.contxt = {}), undefined, "bad-value", "$.contxt", /unknown field "contxt"/],
    ["a symbol outside its module", (v: any) => (v.modules[0].symbols[0].rva = "0x3000"), undefined, "bad-value", "$.modules[0].symbols[0]", /outside the module/],
    ["truth without sp", (v: any) => delete v.truth[0].sp, undefined, "missing-field", "$.truth[0].sp", /missing required field "sp"/],
    ["memory that is not an array", (v: any) => (v.memory = {}), undefined, "bad-type", "$.memory", /expected an array/],
  ])("rejects %s with the JSON path", (_name, change, text, code, path, message) => {
    const e = errorOf(change, text);
    expect(e.code).toBe(code);
    expect(e.path).toBe(path);
    expect(e.file).toBe("bad.json");
    expect(e.message).toMatch(message);
    expect(e.message.split("\n")).toHaveLength(1);
  });

  it("formats vectors that load back to the same snapshot", () => {
    for (const { vector } of handVectors()) {
      const again = parseVector(formatVector(vector));
      expect(again.threads).toEqual(vector.threads);
      expect(again.modules).toEqual(vector.modules);
      expect(again.memory.regions.map((r) => [r.base, [...r.bytes]])).toEqual(vector.memory.regions.map((r) => [r.base, [...r.bytes]]));
      expect(formatVector(again)).toBe(formatVector(vector));
    }
  });

  it("keeps the committed hand-made vectors equal to their label-built source", () => {
    for (const { file, vector } of handVectors()) expect(readFileSync(file, "utf8")).toBe(formatVector(vector));
  });
});

describe("formatVector", () => {
  it("writes empty lists compactly and still loads", () => {
    const v = parseVector(JSON.stringify({ ...good, modules: [], memory: [], truth: [] }));
    const text = formatVector(v);
    expect(text).toContain(`"memory": [],`);
    expect(text).toContain(`"modules": [],`);
    expect(text).toContain(`"truth": []`);
    expect(parseVector(text).threads).toEqual(v.threads);
  });

  it("writes memory as lower-case hex, two digits a byte, and reads it back (any bytes, megabytes at once)", () => {
    expect(bytesToHex(Uint8Array.of(0x00, 0x0f, 0xa0, 0xff, 0x7e))).toBe("000fa0ff7e");
    fc.assert(fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => bytesToHex(bytes) === [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("")));
    const big = new Uint8Array(5 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 131) >>> 3;
    const text = formatVector(parseVector(JSON.stringify({ ...good, memory: [{ base: "0x10000000", hex: bytesToHex(big) }] })));
    expect(Buffer.from(parseVector(text).memory.read(0x1000_0000n, big.length)!).equals(big)).toBe(true);
  });
});

describe("ETW events in vectors", () => {
  it("loads, validates and writes back the on-disk item chain", () => {
    const item = "18000500000010002211000000000000001040003412400000000000";
    const v = parseVector(JSON.stringify({ ...good, etw: [{ hex: item, description: "user part" }] }));
    expect(v.threads[0]!.etw).toEqual([{ items: Uint8Array.from(item.match(/../g)!.map((b) => parseInt(b, 16))), description: "user part" }]);
    expect(parseVector(formatVector(v)).threads[0]!.etw).toEqual(v.threads[0]!.etw);
  });

  it("names the JSON path and the byte offset of a bad item chain", () => {
    const e = errorOf((v) => (v.etw = [{ hex: "0800050000001000" }]));
    expect([e.path, e.offset, e.reason]).toEqual(["$.etw[0].hex", 0, "ETW items: item size 8 is smaller than its header (8) plus DataSize 16"]);
  });
});

describe("zero-filled memory", () => {
  it("reads `zeros` regions as zero bytes and writes whole zero pages that way", () => {
    const v = parseVector(JSON.stringify({ ...good, memory: [{ base: "0x0012e000", zeros: "0x2000" }, { base: "0x00130000", hex: "0102" }] }));
    expect([...v.memory.read(0x0012fffen, 4)!]).toEqual([0, 0, 1, 2]);
    const text = formatVector(v);
    expect(text).toContain(`{ "base": "0x0012e000", "zeros": "0x00002000" }`);
    expect(parseVector(text).memory.read(0x0012e000n, 0x2002)).toEqual(v.memory.read(0x0012e000n, 0x2002));
  });

  it("round-trips random memory with zero pages exactly", () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.boolean(), fc.integer({ min: 1, max: 2 * 4096 + 100 })), { minLength: 1, maxLength: 4 }), fc.integer({ min: 0, max: 4095 }), (parts, skew) => {
        const chunks = parts.map(([zero, n]) => (zero ? new Uint8Array(n) : Uint8Array.from({ length: n }, (_, i) => (i % 251) + 1)));
        const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of chunks) {
          bytes.set(c, at);
          at += c.length;
        }
        const base = 0x00100000 + skew;
        const v = parseVector(JSON.stringify({ ...good, memory: [{ base: "0x" + base.toString(16), hex: Buffer.from(bytes).toString("hex") }] }));
        const again = parseVector(formatVector(v));
        expect(again.memory.read(BigInt(base), bytes.length)).toEqual(bytes);
        expect(again.memory.read(BigInt(base + bytes.length), 1)).toBeUndefined();
      }),
      { numRuns: 30 },
    );
  });

  it("refuses zero regions that would allocate more than the limit", () => {
    const e = errorOf((v) => (v.memory = [{ base: "0x00000000", zeros: "0x10000000" }, { base: "0x20000000", zeros: "0x1000" }]));
    expect([e.path, e.reason]).toEqual(["$.memory[1].zeros", "zero-filled regions add up to more than 268435456 bytes"]);
  });
});
