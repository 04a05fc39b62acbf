/** The ARM64 pieces the package's core entry gives users, on the spec's worked example G1 (arm64.md §1.8). */
import { describe, expect, it } from "vitest";
import { arm64DecodeCode, arm64ExpandPacked, arm64PackedFields, arm64StripPac, ARM64_LINK_REGISTER } from "../../../src/entry/arch.js";

describe("the ARM64 exports of stackwalk-emu", () => {
  it("expand clang-14's packed leaf_locals word 0x01000025 into alloc_s(32), end; strip a signed return address", () => {
    expect(arm64PackedFields(0x01000025)).toEqual({ flag: 1, functionLength: 9, regF: 0, regI: 0, h: false, cr: 0, frameSize: 2 });
    const data = arm64ExpandPacked(0x01000025);
    expect([...data.codes.slice(0, 2)]).toEqual([0x02, 0xe4]);
    expect(arm64DecodeCode(data.codes, 0).code).toEqual({ op: "alloc", name: "alloc_s", size: 32 });
    expect(data).toMatchObject({ functionLength: 9, epilogInHeader: true, epilogIndex: 0 });
    expect(arm64StripPac(0x0035_0001_4000_311cn)).toBe(0x1_4000_311cn);
    expect(ARM64_LINK_REGISTER).toContain("AddrReturn");
  });
});
