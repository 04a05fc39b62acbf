import { describe, expect, it } from "vitest";
import { hex, hexPadded, hexUpper } from "../src/hex.js";

describe("hex text", () => {
  it("prefixes, pads and upper-cases as each form says", () => {
    expect(hex(0x1f)).toBe("0x1f");
    expect(hex(0x7c816fd7n)).toBe("0x7c816fd7");
    expect(hex(-8)).toBe("-0x8");
    expect(hex(0)).toBe("0x0");
    expect(hexPadded(0x45n, 8)).toBe("0x00000045");
    expect(hexPadded(0x12fe84, 16)).toBe("0x000000000012fe84");
    expect(hexUpper(0x5a9832e5, 8)).toBe("5A9832E5");
    expect(hexUpper(0xan, 4)).toBe("000A");
  });
});
