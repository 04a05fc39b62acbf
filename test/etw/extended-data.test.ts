import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import {
  decodeApiItems,
  decodeDiskItems,
  decodeStackTrace,
  encodeApiItems,
  encodeDiskItems,
  encodeStackTrace,
  EVENT_HEADER_EXT_TYPE,
  extTypeName,
  stackTraceCount,
  type ExtendedDataItem,
} from "../../src/etw/extended-data.js";

const hex = (s: string): Uint8Array => Uint8Array.from(s.replace(/\s+/g, "").match(/../g)!.map((b) => parseInt(b, 16)));

function errorOf(f: () => unknown): InputError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return e as InputError;
  }
  throw new Error("expected an InputError");
}

describe("EVENT_HEADER_EXTENDED_DATA_ITEM (etw.md §1.2)", () => {
  it("decodes the on-disk form byte for byte: size, type, linkage, DataSize, data padded to 8", () => {
    // STACK_TRACE32 with MatchId 0x1122 and two addresses (DataSize 16, total 24), then a TS_ID item.
    const bytes = hex("1800 0500 0100 1000  2211000000000000 00104000 34124000  1000 0300 0000 0400 07000000 00000000");
    const items = decodeDiskItems(bytes, 0x50);
    expect(items.map((i) => [i.offset, extTypeName(i.extType), i.linkage, i.data.length])).toEqual([
      [0x50, "STACK_TRACE32", true, 16],
      [0x68, "TS_ID", false, 4],
    ]);
    expect(decodeStackTrace(items[0]!)).toEqual({ matchId: 0x1122n, addressSize: 4, addresses: [0x00401000n, 0x00401234n] });
    expect(encodeDiskItems(items)).toEqual(bytes);
  });

  it("decodes the API form: 16-byte headers whose DataPtr points into a buffer", () => {
    const trace = encodeStackTrace({ matchId: 7n, addressSize: 8, addresses: [0xfffff80000001000n, 0x00007ff600001234n] });
    const { headers, data } = encodeApiItems([{ ...trace, linkage: false }], 0x10000n);
    expect([...headers]).toEqual([...hex("0000 0600 0000 1800 0000010000000000")]);
    const items = decodeApiItems(headers, 1, data, 0x10000n);
    expect(decodeStackTrace(items[0]!)).toEqual({ matchId: 7n, addressSize: 8, addresses: [0xfffff80000001000n, 0x00007ff600001234n] });
  });

  it("keeps unknown types as raw bytes with a hex name", () => {
    const items = decodeDiskItems(hex("1000 6300 0000 0300 aabbcc0000000000"));
    expect(extTypeName(items[0]!.extType)).toBe("0x0063");
    expect([...items[0]!.data]).toEqual([0xaa, 0xbb, 0xcc]);
    expect(extTypeName(EVENT_HEADER_EXT_TYPE.STACK_KEY64)).toBe("STACK_KEY64");
  });

  it("round-trips random item chains in both forms", () => {
    const item = fc.record({
      extType: fc.integer({ min: 0, max: 0xffff }),
      reserved2: fc.integer({ min: 0, max: 0x7fff }),
      data: fc.uint8Array({ maxLength: 64 }),
    });
    fc.assert(
      fc.property(fc.array(item, { minLength: 1, maxLength: 6 }), (raw) => {
        const items: ExtendedDataItem[] = raw.map((r, i) => ({ ...r, reserved1: 0, linkage: i < raw.length - 1 }));
        const disk = decodeDiskItems(encodeDiskItems(items));
        expect(disk.map(({ offset: _o, ...rest }) => ({ ...rest, data: [...rest.data] }))).toEqual(items.map((i) => ({ ...i, data: [...i.data] })));
        const { headers, data } = encodeApiItems(items, 0x2000n);
        const api = decodeApiItems(headers, items.length, data, 0x2000n);
        expect(api.map((a) => [a.extType, a.linkage, a.reserved2, [...a.data]])).toEqual(items.map((i) => [i.extType, i.linkage, i.reserved2, [...i.data]]));
      }),
    );
  });
});

describe("STACK_TRACE32/64 (etw.md §1.5)", () => {
  it.each([
    [8, 4, 0],
    [12, 4, 1],
    [16, 4, 2],
    [8, 8, 0],
    [16, 8, 1],
  ] as const)("DataSize %i with %i-byte addresses holds %i addresses", (size, width, count) => {
    expect(stackTraceCount(size, width)).toBe(count);
  });

  it.each([
    [0, 4, "at least 8 bytes"],
    [7, 8, "at least 8 bytes"],
    [9, 4, "leaves 1 byte(s) after MatchId"],
    [14, 4, "leaves 2 byte(s) after MatchId"],
    [12, 8, "leaves 4 byte(s) after MatchId"],
  ] as const)("rejects DataSize %i with %i-byte addresses", (size, width, message) => {
    expect(errorOf(() => stackTraceCount(size, width, 0x40)).message).toMatch(message);
  });

  it("decodes an empty address array as an empty stack", () => {
    const items = decodeDiskItems(hex("1000 0600 0000 0800 0500000000000000"));
    expect(decodeStackTrace(items[0]!)).toEqual({ matchId: 5n, addressSize: 8, addresses: [] });
  });

  it("names the item offset when a stack item's size is not whole", () => {
    const items = decodeDiskItems(hex("0800 0000 0100 0000  1800 0500 0000 0d00 00000000000000000010400000000000"));
    expect(errorOf(() => decodeStackTrace(items[1]!)).offset).toBe(8);
  });
});

describe("bad extended data", () => {
  it("rejects an item whose size is smaller than its header plus DataSize", () => {
    const e = errorOf(() => decodeDiskItems(hex("0800 0500 0000 1000 0000000000000000")));
    expect([e.offset, e.reason]).toEqual([0, "item size 8 is smaller than its header (8) plus DataSize 16"]);
  });

  it("rejects a Linkage chain that runs past the buffer", () => {
    const e = errorOf(() => decodeDiskItems(hex("1000 0300 0100 0400 0700000000000000")));
    expect([e.code, e.offset]).toEqual(["truncated", 16]);
  });

  it("rejects a truncated item", () => {
    const e = errorOf(() => decodeDiskItems(hex("1800 0500 0000 1000 00000000"), 0x100));
    expect([e.code, e.offset]).toEqual(["truncated", 0x100]);
  });

  it("rejects a DataPtr outside the data buffer, naming the DataPtr field", () => {
    const { headers, data } = encodeApiItems([encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [1n] })], 0x1000n);
    const e = errorOf(() => decodeApiItems(headers, 1, data.subarray(0, 8), 0x1000n, 0x200));
    expect(e.offset).toBe(0x208);
    expect(e.reason).toMatch(/DataPtr 0x1000 \+ DataSize 12 is outside the data buffer 0x1000\.\.0x1008/);
  });
});
