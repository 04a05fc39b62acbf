import { describe, expect, it } from "vitest";
import { isKernelAddress, kernelThreshold, stitchStacks, type EtwStackItem } from "../../../src/formats/etw/stitch.js";

const item = (source: string, matchId: bigint, addresses: bigint[], addressSize: 4 | 8 = 4, thread?: number): EtwStackItem => {
  const i: EtwStackItem = { trace: { matchId, addressSize, addresses }, source };
  if (thread !== undefined) i.thread = thread;
  return i;
};
const K = (n: number): bigint => 0x8040_1000n + BigInt(n);
const U = (n: number): bigint => 0x0040_1000n + BigInt(n);

describe("kernel-mode addresses (etw.md §2.3)", () => {
  it("classifies by the trace's pointer size", () => {
    expect(kernelThreshold(4)).toBe(0x8000_0000n);
    expect(kernelThreshold(8)).toBe(0xffff_0000_0000_0000n);
    expect([isKernelAddress(0x7fff_ffffn, 4), isKernelAddress(0x8000_0000n, 4)]).toEqual([false, true]);
    expect([isKernelAddress(0x8000_0000n, 8), isKernelAddress(0xfffff800_00001000n, 8)]).toEqual([false, true]);
  });
});

describe("stitching by MatchId (etw.md §2.3)", () => {
  it("MatchId 0 is a complete stack on its own", () => {
    const [s] = stitchStacks([item("a", 0n, [K(0), U(0), U(1)])]);
    expect(s).toMatchObject({ matchId: 0n, status: "complete", addresses: [K(0), U(0), U(1)], notes: [] });
    expect(s!.parts).toEqual([{ role: "whole", source: "a", start: 0, count: 3 }]);
  });

  it("joins the kernel part first and the user part after it, whatever else comes between", () => {
    const stacks = stitchStacks([item("kernel", 7n, [K(0), K(1)]), item("other", 0n, [U(9)]), item("user", 7n, [U(0), U(1), U(2)])]);
    expect(stacks.map((s) => [s.matchId, s.status, s.addresses])).toEqual([
      [7n, "complete", [K(0), K(1), U(0), U(1), U(2)]],
      [0n, "complete", [U(9)]],
    ]);
    expect(stacks[0]!.parts.map((p) => [p.role, p.source, p.start, p.count])).toEqual([
      ["kernel", "kernel", 0, 2],
      ["user", "user", 2, 3],
    ]);
  });

  it("joins a user part of half a million addresses (more than a call's arguments can hold)", () => {
    const user = Array.from({ length: 500_000 }, (_, i) => U(i));
    const [s] = stitchStacks([item("k", 7n, [K(0)]), item("u", 7n, user)]);
    expect(s!.addresses).toHaveLength(500_001);
    expect(s!.addresses.at(-1)).toBe(U(499_999));
  });

  it("keeps an unmatched kernel half and an unmatched user half, flagged", () => {
    const stacks = stitchStacks([item("u", 3n, [U(0)]), item("k", 4n, [K(0)])]);
    expect(stacks.map((s) => [s.matchId, s.status])).toEqual([
      [3n, "user-half"],
      [4n, "kernel-half"],
    ]);
    expect(stacks[0]!.notes).toEqual(["user part with MatchId 0x3: no kernel part with that MatchId came before it"]);
    expect(stacks[1]!.notes[0]).toMatch(/^kernel part with MatchId 0x4: its user part never came/);
  });

  it("a second kernel part with the same MatchId leaves the first one unmatched", () => {
    const stacks = stitchStacks([item("k1", 5n, [K(0)]), item("k2", 5n, [K(1)]), item("u", 5n, [U(0)])]);
    expect(stacks.map((s) => [s.status, s.addresses])).toEqual([
      ["kernel-half", [K(0)]],
      ["complete", [K(1), U(0)]],
    ]);
    expect(stacks[0]!.notes[0]).toMatch(/a second kernel part with MatchId 0x5 \(k2\)/);
  });

  it("uses the thread as a second key when it is known", () => {
    const stacks = stitchStacks([item("k-t1", 1n, [K(0)], 4, 1), item("u-t2", 1n, [U(0)], 4, 2), item("u-t1", 1n, [U(1)], 4, 1)]);
    expect(stacks.map((s) => [s.status, s.addresses])).toEqual([
      ["complete", [K(0), U(1)]],
      ["user-half", [U(0)]],
    ]);
  });

  it("an item is a kernel part when its outermost address is kernel-mode (a mixed one ending in user mode is a user part)", () => {
    const stacks = stitchStacks([item("k", 2n, [K(0)]), item("mixed", 2n, [K(5), U(0)])]);
    expect(stacks).toHaveLength(1);
    expect(stacks[0]!.addresses).toEqual([K(0), K(5), U(0)]);
  });

  it("classifies 8-byte items with the 8-byte threshold, or the trace's pointer size when given", () => {
    const k64 = 0xfffff800_0000_1000n;
    expect(stitchStacks([item("k", 1n, [k64], 8), item("u", 1n, [0x7ff6_0000_1000n], 8)])[0]!.status).toBe("complete");
    // A 32-bit address in a STACK_TRACE64 item of a WOW64 process is user mode for an 8-byte trace.
    expect(stitchStacks([item("u", 1n, [0x8000_1000n], 8)])[0]!.status).toBe("user-half");
    expect(stitchStacks([item("k", 1n, [0x8000_1000n], 8)], { pointerSize: 4 })[0]!.status).toBe("kernel-half");
  });

  it("an empty item is an empty stack with a note; with a nonzero MatchId it pairs by order", () => {
    const [empty] = stitchStacks([item("e", 0n, [])]);
    expect(empty).toMatchObject({ status: "complete", addresses: [] });
    expect(empty!.notes).toEqual(["e: the address array is empty (DataSize 8: MatchId only)"]);
    const paired = stitchStacks([item("k", 9n, []), item("u", 9n, [U(0)])]);
    expect(paired.map((s) => [s.status, s.parts.map((p) => p.role)])).toEqual([["complete", ["kernel", "user"]]]);
    const afterKernel = stitchStacks([item("k", 9n, [K(0)]), item("u", 9n, [])]);
    expect(afterKernel.map((s) => [s.status, s.addresses])).toEqual([["complete", [K(0)]]]);
  });

  it("widens the address size when the parts differ", () => {
    const [s] = stitchStacks([item("k", 1n, [K(0)], 4), item("u", 1n, [U(0)], 8)]);
    expect(s!.addressSize).toBe(8);
  });
});
