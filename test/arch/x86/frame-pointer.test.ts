import { ruleText } from "../../../src/arch/rule-text.js";
import { describe, expect, it } from "vitest";
import { walkThread } from "../../../src/walk/walk.js";
import { codeAddress, moduleWith, snapshotOf } from "../../support/snapshots.js";
import { StackBuilder } from "../../support/stack-builder.js";

const app = moduleWith("app.exe", 0x00400000n, ["main", "a", "b", "c"]);
const ret = (fn: string, off: number): bigint => codeAddress(app, fn, off);

function walk(stack: StackBuilder, eip: bigint, espLabel: string, ebpLabel: string | bigint, extra: Parameters<typeof snapshotOf>[2] = []) {
  const built = stack.build();
  const ebp = typeof ebpLabel === "bigint" ? ebpLabel : built.labels[ebpLabel]!;
  const snap = snapshotOf("x86", { eip, esp: built.labels[espLabel]!, ebp }, [built, ...extra], [app]);
  return { result: walkThread(snap, snap.threads[0]!, { walker: "frame-pointer" }), labels: built.labels };
}

describe("x86 frame-pointer walk", () => {
  it("follows a 3-frame chain: EIP=[EBP+4], ESP=EBP+8, EBP=[EBP]", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").fill(2)
      .mark("ebp0").u32(s.ref("ebp1")).u32(ret("b", 0x10))
      .mark("sp1").u32(11).u32(22).u32(33).u32(44)
      .mark("ebp1").u32(s.ref("ebp2")).u32(ret("main", 0x20))
      .mark("sp2").fill(1)
      .mark("ebp2").u32(0).u32(0);
    const { result, labels } = walk(s, ret("c", 5), "esp0", "ebp0");
    expect(result.frames.map((f) => [f.addrPC, f.addrStack, f.addrFrame, f.addrReturn])).toEqual([
      [ret("c", 5), labels["esp0"], labels["ebp0"], ret("b", 0x10)],
      [ret("b", 0x10), labels["sp1"], labels["ebp1"], ret("main", 0x20)],
      [ret("main", 0x20), labels["sp2"], labels["ebp2"], 0n],
    ]);
    expect(result.frames.map((f) => f.trust)).toEqual(["context", "frame-pointer", "frame-pointer"]);
    expect(result.frames[0]!.params).toEqual([11n, 22n, 33n, 44n]);
    expect(ruleText(result.frames[1]!.rule)).toBe(
      `ebp-chain ebp=0x0012ff08: eip=[0x0012ff0c]=0x00401090 ebp=[0x0012ff08]=0x0012ff20 esp=0x0012ff10`,
    );
    expect(result.frames[1]!.registers).toEqual({ eip: ret("b", 0x10), esp: labels["sp1"], ebp: labels["ebp1"] });
    expect(result.stop.reason).toBe("end-of-stack");
  });

  it("ends with end-of-stack when EBP is 0, keeping the frame whose saved EBP was 0", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").fill(1).mark("ebp0").u32(0).u32(ret("main", 4)).mark("sp1").fill(2);
    const { result, labels } = walk(s, ret("a", 1), "esp0", "ebp0");
    expect(result.frames).toHaveLength(2);
    expect(result.frames[1]!.addrFrame).toBe(0n);
    expect(result.frames[1]!.addrStack).toBe(labels["sp1"]);
    expect(result.stop).toEqual({ reason: "end-of-stack", detail: "EBP is 0: the frame chain ends here" });
  });

  it("stops with read-fault naming the address when [EBP] cannot be read", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").fill(2);
    const { result } = walk(s, ret("a", 1), "esp0", 0x0012ff40n);
    expect(result.frames).toHaveLength(1);
    expect(result.stop.reason).toBe("read-fault");
    expect(result.stop.address).toBe(0x0012ff44n);
  });

  it("stops with read-fault when the saved EBP slot is readable but the return slot is not", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").fill(1).mark("ebp0").u32(0x0012ff00);
    const { result } = walk(s, ret("a", 1), "esp0", "ebp0");
    expect(result.stop).toMatchObject({ reason: "read-fault", address: 0x0012ff08n });
  });

  it("stops a cyclic EBP chain with no-progress", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").fill(1)
      .mark("ebp0").u32(s.ref("ebp1")).u32(ret("b", 8))
      .mark("ebp1").u32(s.ref("ebp0")).u32(ret("a", 8));
    const { result } = walk(s, ret("c", 1), "esp0", "ebp0");
    expect(result.frames.length).toBeLessThan(4);
    expect(result.stop.reason).toBe("no-progress");
  });

  it("ends at a return address of 0", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").mark("ebp0").u32(s.ref("ebp1")).u32(0).mark("ebp1").u32(0).u32(0);
    const { result } = walk(s, ret("c", 1), "esp0", "ebp0");
    expect(result.frames).toHaveLength(1);
    expect(result.frames[0]!.addrReturn).toBe(0n);
    expect(result.stop.reason).toBe("end-of-stack");
  });

  it("rejects a return address below 0x1000 as bad-pc", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").mark("ebp0").u32(s.ref("ebp1")).u32(0x45).mark("ebp1").u32(0).u32(0);
    const { result } = walk(s, ret("c", 1), "esp0", "ebp0");
    expect(result.frames).toHaveLength(1);
    expect(result.stop).toMatchObject({ reason: "bad-pc", address: 0x45n });
    expect(result.frames[0]!.addrReturn).toBe(0x45n);
  });

  it("stops with read-fault when the chain leaves the stack region", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").mark("ebp0").u32(0x00200000).u32(ret("b", 2)).fill(2);
    const { result } = walk(s, ret("c", 1), "esp0", "ebp0");
    expect(result.frames).toHaveLength(2);
    expect(result.frames[1]!.addrFrame).toBe(0x00200000n);
    expect(result.stop).toMatchObject({ reason: "read-fault", address: 0x00200004n });
  });

  it("rejects a caller frame below the callee (a chain pointing down the stack)", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("low").u32(0).u32(ret("a", 3))
      .fill(2)
      .mark("esp0").mark("ebp0").u32(s.ref("low")).u32(ret("b", 2))
      .fill(2);
    const { result } = walk(s, ret("c", 1), "esp0", "ebp0");
    expect(result.frames).toHaveLength(2);
    expect(result.stop.reason).toBe("no-progress");
  });

  it("honours the frame cap", () => {
    const s = new StackBuilder(0x0012f000n);
    s.mark("esp0");
    for (let i = 0; i < 50; i++) s.mark(`ebp${i}`).u32(s.ref(`ebp${i + 1}`)).u32(ret("a", 3));
    s.mark("ebp50").u32(0).u32(0);
    const built = s.build();
    const snap = snapshotOf("x86", { eip: ret("a", 1), esp: built.labels["esp0"]!, ebp: built.labels["ebp0"]! }, [built], [app]);
    const full = walkThread(snap, snap.threads[0]!);
    expect(full.frames).toHaveLength(51);
    expect(full.stop.reason).toBe("end-of-stack");
    const capped = walkThread(snap, snap.threads[0]!, { maxFrames: 10 });
    expect(capped.frames).toHaveLength(10);
    expect(capped.stop.reason).toBe("max-frames");
    expect(capped.frames[9]!.addrReturn).toBe(ret("a", 3));
  });

  it("fills missing parameter slots with the previous slot's value", () => {
    const s = new StackBuilder(0x0012ff00n);
    s.mark("esp0").mark("ebp0").u32(0).u32(0).u32(0x77);
    const { result } = walk(s, ret("c", 1), "esp0", "ebp0");
    expect(result.frames[0]!.params).toEqual([0x77n, 0x77n, 0x77n, 0x77n]);
  });
});
