/**
 * Names in a symbol store (src/formats/store-path.ts): which module names and code ids name a
 * store directory, and why one does not, first reason first.
 */
import { describe, expect, it } from "vitest";
import { imageStoreKey, isPeCodeId, storeFileName, STORE_NAME_MAX_BYTES } from "../../src/formats/store-path.js";
import { InputError } from "../../src/errors.js";

function refusal(name: string): string {
  try {
    storeFileName(name, "module");
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  return "taken";
}

describe("store names", () => {
  it("a PE code id is a TimeDateStamp of 8 hex digits then a SizeOfImage of 1 to 8; an ELF build id is not one", () => {
    expect(["5A1B2C3D1000", "5a1b2c3d1f", "0000000012345678", "5A1B2C3D1"].map(isPeCodeId)).toEqual([true, true, true, true]);
    // Too short, too long, not hex, an ELF build id (minidump.md §3.2).
    expect(["5A1B2C3D", "5A1B2C3D123456789", "5A1B2C3G1000", "c0bcc3f19827fe653058404b2831d9e6d3bdd72b"].map(isPeCodeId)).toEqual([false, false, false, false]);
    expect(imageStoreKey("C:\\Windows\\kernel32.dll", "5a1b2c3dABC")).toEqual({ name: "kernel32.dll", key: "5A1B2C3Dabc" });
    expect(() => imageStoreKey("libc.so.6", "c0bcc3f19827fe653058404b2831d9e6d3bdd72b")).toThrow(/code id "c0bc.*" is not a PE TimeDateStamp and SizeOfImage/);
  });

  it("a refused name gives the first reason it has, in the order the checks are listed", () => {
    expect(refusal("memfd:mozilla-ipc (deleted)")).toMatch(/has a character no Windows file name has \(:\)/);
    // A control character comes before the colon and the trailing dot.
    expect(refusal("a\u0001b:c.")).toMatch(/a control character/);
    expect(refusal("name:stream.")).toMatch(/\(:\)/);
    expect(refusal("trailing.")).toMatch(/ending in a dot or a space/);
    expect(refusal("COM1.dll")).toMatch(/the name of a Windows device/);
    expect(refusal("..")).toMatch(/no usable file name/);
    expect(refusal("/usr/lib/libc.so.6")).toBe("taken");
  });

  it(`a name of more than ${STORE_NAME_MAX_BYTES} bytes of UTF-8 is refused, counted in bytes, not characters`, () => {
    // 66 three-byte characters are 198 bytes, 67 are 201; 200 ASCII characters are 200 bytes.
    expect(refusal("\u4e00".repeat(66))).toBe("taken");
    expect(refusal("\u4e00".repeat(67))).toMatch(/a name of more than 200 bytes/);
    expect(refusal("a".repeat(200))).toBe("taken");
    expect(refusal("a".repeat(201))).toMatch(/a name of more than 200 bytes/);
    // A character outside the BMP: two UTF-16 units, four bytes.
    expect(refusal("\u{1f600}".repeat(50))).toBe("taken");
    expect(refusal("\u{1f600}".repeat(50) + "a")).toMatch(/a name of more than 200 bytes/);
  });
});
