import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../../src/errors.js";
import {
  decodeApiFile,
  decodeApiItems,
  decodeDiskEvents,
  decodeDiskItems,
  detectItemsForm,
  decodeStackTrace,
  encodeApiItems,
  encodeDiskItems,
  encodeStackTrace,
  EVENT_HEADER_EXT_TYPE,
  extTypeName,
  stackTraceCount,
  type ExtendedDataItem,
} from "../../../src/formats/etw/extended-data.js";

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

describe("the count formula on real items at the boundary sizes (etw.md §1.5)", () => {
  /** An on-disk item of `type` whose data is `size` bytes: MatchId 0x0102030405060708, then 0x11, 0x22, ... */
  function item(type: number, size: number): ExtendedDataItem {
    const data = new Uint8Array(size);
    if (size >= 8) new DataView(data.buffer).setBigUint64(0, 0x0102_0304_0506_0708n, true);
    for (let i = 8; i < size; i++) data[i] = ((i - 7) * 0x11) & 0xff;
    return decodeDiskItems(encodeDiskItems([{ extType: type, linkage: false, reserved1: 0, reserved2: 0, data }]), 0x40)[0]!;
  }

  it.each([
    [8, []],
    [12, [0x44332211n]],
    [16, [0x44332211n, 0x88776655n]],
    [20, [0x44332211n, 0x88776655n, 0xccbbaa99n]],
  ] as const)("STACK_TRACE32 with DataSize %i holds (DataSize − 8) / 4 addresses", (size, addresses) => {
    const t = decodeStackTrace(item(EVENT_HEADER_EXT_TYPE.STACK_TRACE32, size));
    expect(t).toEqual({ matchId: 0x0102_0304_0506_0708n, addressSize: 4, addresses });
    expect(t.addresses).toHaveLength((size - 8) / 4);
  });

  it.each([
    [8, []],
    [16, [0x8877665544332211n]],
    [24, [0x8877665544332211n, 0x10ffeeddccbbaa99n]],
  ] as const)("STACK_TRACE64 with DataSize %i holds (DataSize − 8) / 8 addresses", (size, addresses) => {
    expect(decodeStackTrace(item(EVENT_HEADER_EXT_TYPE.STACK_TRACE64, size))).toEqual({ matchId: 0x0102_0304_0506_0708n, addressSize: 8, addresses });
  });

  it.each([
    [EVENT_HEADER_EXT_TYPE.STACK_TRACE64, 12, "leaves 4 byte(s) after MatchId that are not a whole 8-byte address"],
    [EVENT_HEADER_EXT_TYPE.STACK_TRACE64, 20, "leaves 4 byte(s)"],
    [EVENT_HEADER_EXT_TYPE.STACK_TRACE32, 13, "leaves 1 byte(s)"],
    [EVENT_HEADER_EXT_TYPE.STACK_TRACE32, 15, "leaves 3 byte(s)"],
    [EVENT_HEADER_EXT_TYPE.STACK_TRACE32, 4, "needs at least 8 bytes for MatchId, DataSize is 4"],
    [EVENT_HEADER_EXT_TYPE.STACK_TRACE64, 0, "DataSize is 0"],
  ] as const)("type %i with DataSize %i is a typed error at the item's offset", (type, size, message) => {
    const e = errorOf(() => decodeStackTrace(item(type, size)));
    expect([e.code, e.offset]).toEqual(["bad-value", 0x40]);
    expect(e.reason).toContain(message);
  });

  it("encodes exactly 8 + 4·n and 8 + 8·n bytes of data", () => {
    for (const n of [0, 1, 2, 5]) {
      const addresses = Array.from({ length: n }, (_, i) => BigInt(0x401000 + i));
      expect(encodeStackTrace({ matchId: 1n, addressSize: 4, addresses }).data).toHaveLength(8 + 4 * n);
      expect(encodeStackTrace({ matchId: 1n, addressSize: 8, addresses }).data).toHaveLength(8 + 8 * n);
    }
  });
});

describe("both item forms, offset for offset", () => {
  const trace32 = encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [0x00401000n, 0x00401234n, 0x77001008n] });
  const tsId: ExtendedDataItem = { extType: EVENT_HEADER_EXT_TYPE.TS_ID, linkage: false, reserved1: 0, reserved2: 0, data: Uint8Array.of(7, 0, 0, 0) };

  it("on disk: item sizes round up to 8, the next item starts at +size, Linkage on all but the last", () => {
    const bytes = encodeDiskItems([{ ...trace32, reserved2: 0x1234 }, tsId]);
    // 8-byte header + 20 bytes of data = 28, rounded up to 32; then 8 + 4 rounded up to 16.
    expect(bytes).toHaveLength(48);
    expect([...bytes.subarray(0, 8)]).toEqual([0x20, 0, 0x05, 0, 0x69, 0x24, 20, 0]);
    expect([...bytes.subarray(28, 32)]).toEqual([0, 0, 0, 0]);
    expect([...bytes.subarray(32, 40)]).toEqual([0x10, 0, 0x03, 0, 0, 0, 4, 0]);
    const items = decodeDiskItems(bytes, 0x1000);
    expect(items.map((i) => [i.offset, i.linkage, i.reserved2, i.data.length])).toEqual([
      [0x1000, true, 0x1234, 20],
      [0x1020, false, 0, 4],
    ]);
  });

  it("API form: 16-byte headers, DataPtr to data 8-aligned after them, Reserved1 kept", () => {
    const { headers, data } = encodeApiItems([{ ...trace32, reserved1: 0xbeef, linkage: true }, tsId], 0x7ff0_0000_0000n);
    expect([...headers.subarray(0, 16)]).toEqual([...hex("efbe 0500 0100 1400 00000000f07f0000")]);
    expect([...headers.subarray(16, 32)]).toEqual([...hex("0000 0300 0000 0400 18000000f07f0000")]);
    expect(data).toHaveLength(32);
    const items = decodeApiItems(headers, 2, data, 0x7ff0_0000_0000n, 0x80);
    expect(items.map((i) => [i.offset, i.reserved1, i.linkage, i.data.length])).toEqual([
      [0x80, 0xbeef, true, 20],
      [0x90, 0, false, 4],
    ]);
    expect(decodeStackTrace(items[0]!).addresses).toEqual([0x00401000n, 0x00401234n, 0x77001008n]);
  });

  it("an API-form file: headers up to the first without Linkage, DataPtr values are file offsets", () => {
    const items = [{ ...trace32, linkage: true }, tsId];
    const { headers, data } = encodeApiItems(items, 32n);
    const file = new Uint8Array([...headers, ...data]);
    expect(detectItemsForm(file)).toBe("api");
    const decoded = decodeApiFile(file);
    expect(decoded.map((i) => [i.offset, i.extType, [...i.data]])).toEqual(items.map((it, n) => [16 * n, it.extType, [...it.data]]));
  });

  it("several on-disk chains in a row are several events; zero padding after them is not an event", () => {
    const one = encodeDiskItems([trace32]);
    const two = encodeDiskItems([tsId, trace32]);
    const file = new Uint8Array([...one, ...two, 0, 0, 0, 0, 0, 0, 0, 0]);
    expect(detectItemsForm(file)).toBe("disk");
    const events = decodeDiskEvents(file);
    expect(events.map((e) => e.map((i) => [i.offset, extTypeName(i.extType)]))).toEqual([
      [[0, "STACK_TRACE32"]],
      [
        [32, "TS_ID"],
        [48, "STACK_TRACE32"],
      ],
    ]);
    expect(decodeDiskEvents(new Uint8Array(0))).toEqual([]);
  });
});

describe("bad extended data in both forms", () => {
  it("DataSize that lies: more than the item's size on disk", () => {
    const bytes = encodeDiskItems([encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [1n] })]);
    new DataView(bytes.buffer).setUint16(6, 40, true);
    const e = errorOf(() => decodeDiskItems(bytes, 0x30));
    expect([e.code, e.offset, e.reason]).toEqual(["bad-value", 0x30, "item size 24 is smaller than its header (8) plus DataSize 40"]);
  });

  it("DataSize that lies in the API form: past the data buffer, naming the DataPtr field", () => {
    const { headers, data } = encodeApiItems([encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [1n] })], 16n);
    new DataView(headers.buffer).setUint16(6, 0x100, true);
    const e = errorOf(() => decodeApiFile(new Uint8Array([...headers, ...data])));
    expect([e.code, e.offset]).toEqual(["bad-value", 8]);
  });

  it("an API Linkage chain that runs past the file", () => {
    const { headers } = encodeApiItems([{ ...encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [] }), linkage: true }], 16n);
    const e = errorOf(() => decodeApiFile(new Uint8Array([...headers, ...new Uint8Array(8)])));
    expect([e.code, e.offset]).toEqual(["truncated", 16]);
    expect(e.reason).toMatch(/Linkage bit of item 0 says another item follows/);
  });

  it("an on-disk chain whose second event is cut short names the second event's offset", () => {
    const one = encodeDiskItems([encodeStackTrace({ matchId: 0n, addressSize: 4, addresses: [1n] })]);
    const file = new Uint8Array([...one, 0x18, 0, 0x05, 0, 0, 0, 0x10, 0, 1, 2]);
    const e = errorOf(() => decodeDiskEvents(file));
    expect([e.code, e.offset]).toEqual(["truncated", one.length]);
  });

  it("never crashes on random bytes: every failure is an InputError", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 96 }), (bytes) => {
        for (const decode of [() => decodeDiskEvents(bytes), () => decodeApiFile(bytes)]) {
          try {
            for (const item of [decode()].flat(2)) if (item.extType === 5 || item.extType === 6) decodeStackTrace(item);
          } catch (e) {
            expect(e).toBeInstanceOf(InputError);
          }
        }
      }),
    );
  });
});
