import { describe, expect, it } from "vitest";
import { ETW_MAX_ADDRESSES, stackBoundsAround, walkFrameChain } from "../../src/analysis/ebp-chain.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import { StackBuilder } from "../support/stack-builder.js";

/** Three EBP frames: f0 -> f1 -> f2, whose saved EBP is 0. */
function chain(): { memory: RegionMemory; labels: Record<string, bigint>; base: bigint; end: bigint } {
  const s = new StackBuilder(0x0012_f000n);
  s.fill(8, 0)
    .mark("f0")
    .u32(s.ref("f1"))
    .u32(0x0040_1010)
    .fill(2, 0xcccc_cccc)
    .mark("f1")
    .u32(s.ref("f2"))
    .u32(0x0040_1020)
    .mark("f2")
    .u32(0)
    .u32(0x0040_1030)
    .fill(2, 0);
  const built = s.build();
  return { memory: new RegionMemory([{ base: built.base, bytes: built.bytes }]), labels: built.labels, base: built.base, end: built.base + BigInt(built.bytes.length) };
}

describe("stack bounds from a snapshot", () => {
  it("is the contiguous readable range around the stack pointer", () => {
    const { memory, labels, base, end } = chain();
    expect(stackBoundsAround(memory, labels["f1"]!)).toEqual({ limit: base, base: end });
    expect(stackBoundsAround(memory, 0x1000n)).toBeUndefined();
  });

  it("spans adjacent regions and pages", () => {
    const memory = new RegionMemory([
      { base: 0x10_0000n, bytes: new Uint8Array(0x1800) },
      { base: 0x10_1800n, bytes: new Uint8Array(0x2804) },
    ]);
    expect(stackBoundsAround(memory, 0x10_2000n)).toEqual({ limit: 0x10_0000n, base: 0x10_4004n });
  });
});

describe("the EBP-chain capture (x86-fpo.md §6)", () => {
  it("records [fp+4] and follows [fp] while it goes up; a saved EBP of 0 ends it", () => {
    const { memory, labels, base, end } = chain();
    const c = walkFrameChain(memory, labels["f0"]!, { limit: base, base: end });
    expect(c.steps.map((s) => [s.fp, s.ra])).toEqual([
      [labels["f0"], 0x0040_1010n],
      [labels["f1"], 0x0040_1020n],
      [labels["f2"], 0x0040_1030n],
    ]);
    expect(c.stop).toMatchObject({ reason: "next-not-above", value: 0n, fp: labels["f2"] });
  });

  it("stops at once when the start is outside the stack (garbage in EBP)", () => {
    const { memory, base, end } = chain();
    const c = walkFrameChain(memory, 0xbad0_02efn, { limit: base, base: end });
    expect(c.steps).toEqual([]);
    expect(c.stop).toMatchObject({ reason: "fp-out-of-bounds", value: 0xbad0_02efn });
  });

  it("stops when a saved EBP points at or above StackBase, after recording that frame", () => {
    const { memory, labels, base } = chain();
    const c = walkFrameChain(memory, labels["f0"]!, { limit: base, base: labels["f1"]! });
    expect(c.steps).toHaveLength(1);
    expect(c.stop).toMatchObject({ reason: "next-out-of-bounds", value: labels["f1"] });
  });

  it("stops when fewer than 8 bytes remain below StackBase", () => {
    const { memory, labels, base } = chain();
    const c = walkFrameChain(memory, labels["f0"]!, { limit: base, base: labels["f0"]! + 6n });
    expect(c.stop.reason).toBe("fp-near-base");
  });

  it("stops when the word above the frame pointer is a stack address", () => {
    const s = new StackBuilder(0x0012_f000n);
    s.mark("fp").u32(0).u32(s.ref("fp", 0x10)).fill(6, 0);
    const built = s.build();
    const memory = new RegionMemory([{ base: built.base, bytes: built.bytes }]);
    const c = walkFrameChain(memory, built.base, { limit: built.base - 0x100n, base: built.base + 0x20n });
    expect(c.steps).toEqual([]);
    expect(c.stop).toMatchObject({ reason: "ra-in-stack", value: built.base + 0x10n });
  });

  it("reports an unreadable frame as a read fault", () => {
    const { memory, base } = chain();
    const c = walkFrameChain(memory, base - 0x10n, { limit: base - 0x100n, base: base + 0x100n });
    expect(c.stop.reason).toBe("read-fault");
  });

  it("records at most the array's size", () => {
    const { memory, labels, base, end } = chain();
    expect(ETW_MAX_ADDRESSES).toBe(192);
    const c = walkFrameChain(memory, labels["f0"]!, { limit: base, base: end }, 2);
    expect(c.steps).toHaveLength(2);
    expect(c.stop.reason).toBe("count");
  });
});
