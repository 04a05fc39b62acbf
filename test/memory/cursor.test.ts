import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { ByteCursor } from "../../src/memory/cursor.js";

describe("ByteCursor", () => {
  it("reads little-endian values and advances", () => {
    const c = new ByteCursor(Uint8Array.from([0x01, 0x34, 0x12, 0x78, 0x56, 0x34, 0x12, 1, 0, 0, 0, 0, 0, 0, 0x80]));
    expect(c.u8()).toBe(1);
    expect(c.u16()).toBe(0x1234);
    expect(c.u32()).toBe(0x12345678);
    expect(c.u64()).toBe(0x8000000000000001n);
    expect(c.remaining).toBe(0);
  });

  it("respects the byteOffset of a sub-array view", () => {
    const backing = Uint8Array.from([0xff, 0xff, 0x44, 0x33, 0x22, 0x11]);
    const c = new ByteCursor(backing.subarray(2));
    expect(c.u32()).toBe(0x11223344);
  });

  it("throws an InputError naming the absolute offset of a truncated read", () => {
    const c = new ByteCursor(new Uint8Array(6), 0x100);
    c.u32();
    try {
      c.u32("NumberOfStreams");
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(InputError);
      const err = e as InputError;
      expect(err.code).toBe("truncated");
      expect(err.offset).toBe(0x104);
      expect(err.message).toMatch(/offset 0x104: NumberOfStreams: needs 4 byte/);
    }
  });

  it("keeps absolute offsets in sub-cursors", () => {
    const c = new ByteCursor(new Uint8Array(16), 0x40);
    c.skip(8);
    const sub = c.sub(4);
    sub.u16();
    expect(() => sub.u32("field")).toThrow(/offset 0x4a/);
  });
});
