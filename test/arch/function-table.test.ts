import { describe, expect, it } from "vitest";
import { entryTableCheck } from "../../src/arch/function-table.js";

const x64 = entryTableCheck("RUNTIME_FUNCTION");
const ia64 = entryTableCheck("IMAGE_IA64_RUNTIME_FUNCTION_ENTRY", { bytes: 16, name: "bundle-aligned" });
const table = (...entries: [number, number][]): Uint32Array => Uint32Array.from(entries.flatMap(([begin, end]) => [begin, end, 0x3000]));

describe("function tables a walk can binary-search", () => {
  it("accepts sorted, disjoint entries inside the image, touching ones included", () => {
    expect(x64(table([0x1000, 0x1010], [0x1010, 0x1040], [0x1100, 0x1200]), 0x4000)).toBeUndefined();
    expect(ia64(table([0x1000, 0x1010], [0x1010, 0x1040]), 0x4000)).toBeUndefined();
    expect(x64(new Uint32Array(0), 0x1000)).toBeUndefined();
  });

  it("names the first bad entry: empty, past SizeOfImage, out of order, overlapping", () => {
    expect(x64(table([0x1000, 0x1010], [0x1020, 0x1020]), 0x4000)).toBe("RUNTIME_FUNCTION 1 (0x1020..0x1020) is empty");
    expect(x64(table([0x3ff0, 0x4008]), 0x4000)).toBe("RUNTIME_FUNCTION 0 (0x3ff0..0x4008) runs past the image (SizeOfImage 0x4000)");
    expect(x64(table([0x2000, 0x2010], [0x1000, 0x1010]), 0x4000)).toBe("the RUNTIME_FUNCTION table is not sorted: entry 1 begins at 0x1000, before entry 0 (0x2000)");
    expect(x64(table([0x1000, 0x1040], [0x1020, 0x1050]), 0x4000)).toBe("RUNTIME_FUNCTION 1 (0x1020..0x1050) overlaps entry 0 (0x1000..0x1040)");
  });

  it("IA-64 entries begin and end on bundle boundaries; x64 ones need not", () => {
    expect(ia64(table([0x1000, 0x1018]), 0x4000)).toBe("IMAGE_IA64_RUNTIME_FUNCTION_ENTRY 0 (0x1000..0x1018) is not bundle-aligned");
    expect(x64(table([0x1001, 0x1017]), 0x4000)).toBeUndefined();
  });
});
