import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { decodeDiskItems, decodeStackTrace, EVENT_HEADER_EXT_TYPE } from "../../src/formats/etw/extended-data.js";
import { parseVector } from "../../src/formats/vector.js";
import { explainWalk } from "../../src/analysis/explain-walk.js";
import { formatExplanation } from "../../src/render/explain.js";
import { ROOT } from "../support/corpus.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const load = (file: string) => parseVector(readFileSync(`${ROOT}${file}`, "utf8"), file);

/** The return addresses of a vector's ETW stack (the first STACK_TRACE item of its first event). */
function etwAddresses(file: string): bigint[] {
  const v = load(file);
  const items = decodeDiskItems(v.threads[0]!.etw![0]!.items);
  const item = items.find((i) => i.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE32 || i.extType === EVENT_HEADER_EXT_TYPE.STACK_TRACE64)!;
  return decodeStackTrace(item).addresses;
}

describe("explain", () => {
  it("names the return-address slot and the saved EBP of an EBP frame with their addresses and values", () => {
    const v = load("vectors/x86/ebp-chain-4.json");
    const e = explainWalk(v, v.threads[0]!);
    const f1 = e.frames[1]!;
    // Ground truth: frame 1's SP is just above the slot its return address was read from.
    expect(v.threads[0]!.truth![1]!.sp).toBe(f1.frame.addrStack);
    const ra = f1.reads.find((r) => r.role === "return-address")!;
    expect(ra.address + 4n).toBe(v.threads[0]!.truth![1]!.sp);
    expect(ra.value).toBe(v.threads[0]!.truth![1]!.pc);
    expect(ra.relative).toBe("EBP+4");
    expect(f1.how).toContain(`[EBP+4] = [0x${ra.address.toString(16).padStart(8, "0")}] = 0x${ra.value.toString(16).padStart(8, "0")} → return address: EIP ← 0x${ra.value.toString(16).padStart(8, "0")}`);
    expect(f1.reads.some((r) => r.role === "saved-frame-pointer" && r.relative === "EBP")).toBe(true);
    expect(e.truth?.exact).toBe(true);
    expect(e.frames.every((f) => f.truth === "exact")).toBe(true);
  });

  it("says why the EBP chain loses the caller of an FPO leaf, the frame the emulated CPU's ETW capture also lost", () => {
    const file = "vectors/x86/etw/fpo-leaf-etw.json";
    const v = load(file);
    const e = explainWalk(v, v.threads[0]!, { walker: "fpo" });
    expect(e.truth?.exact).toBe(true);
    const etw = etwAddresses(file);
    // The frames ETW's EBP-chain capture did not record (the array holds return addresses).
    const missing = e.frames.filter((f) => f.index > 0 && !etw.includes(f.frame.addrPC)).map((f) => f.index);
    expect(missing).toEqual([1]);
    const flagged = e.frames.filter((f) => f.weaker !== undefined && /misses this frame|never reaches/.test(f.weaker)).map((f) => f.index);
    expect(flagged).toEqual(missing);
    expect(e.frames[1]!.weaker).toMatch(/leaf does not set up EBP as a frame pointer \(frame-pointer omission\)/);
    expect(e.frames[1]!.weaker).toMatch(/straight to leaf's caller's caller/);
    expect(e.frames[1]!.how[0]).toMatch(/^FPO_DATA for leaf \(rva 0x1060\): 8 bytes of locals, 0 saved registers, 8 bytes of parameters → return address at ESP\+8/);
  });

  it("lists each UNWIND_INFO operation undone, and the saved registers it restores with their slots", () => {
    const v = load("vectors/x64/synthetic/push-nonvol-capture.json");
    const e = explainWalk(v, v.threads[0]!);
    expect(e.truth?.exact).toBe(true);
    const f1 = e.frames[1]!;
    expect(f1.how).toContain("UWOP_PUSH_NONVOL rbx: RBX ← [RSP], RSP += 8");
    const rbx = f1.reads.find((r) => r.register === "rbx")!;
    expect(rbx.role).toBe("saved-register");
    expect(rbx.value).toBe(f1.frame.registers["rbx"]);
    // The return address sits 8 bytes below the caller's SP from the truth.
    const ra = f1.reads.find((r) => r.role === "return-address")!;
    expect(ra.address + 8n).toBe(v.threads[0]!.truth![1]!.sp);
    expect(f1.weaker).toMatch(/The frame-pointer chain never reaches this frame/);
  });

  it("names each pushed register's slot where the assembly pushed it, also when several held the same value", () => {
    // `# saver: pushes [rbp, rbx, rsi, rdi], …`: the registers each function pushes, in push order.
    const pushes = new Map(
      [...readFileSync(`${ROOT}vectors/programs/x64/push-nonvol.asm`, "utf8").matchAll(/^# (\w+): pushes \[([^\]]*)\]/gm)].map((m) => [m[1]!, m[2]!.split(", ")]),
    );
    const v = load("vectors/x64/synthetic/push-nonvol-capture.json");
    const e = explainWalk(v, v.threads[0]!);
    expect(e.truth?.exact).toBe(true);
    let checked = 0;
    let shared = 0;
    for (const f of e.frames.slice(1)) {
      const callee = e.frames[f.index - 1]!.functionName!;
      const ra = f.reads.find((r) => r.role === "return-address")!;
      // The k-th push lands 8(k+1) bytes below the return address.
      const slots = f.reads.filter((r) => r.register !== undefined && r.role !== "return-address").map((r) => [r.register, Number(ra.address - r.address) / 8 - 1]);
      expect(slots.sort((a, b) => Number(a[1]) - Number(b[1])), callee).toEqual(pushes.get(callee)!.map((reg, k) => [reg, k]));
      const values = f.reads.filter((r) => r.role !== "return-address").map((r) => r.value);
      if (new Set(values).size < values.length) shared++;
      checked++;
    }
    expect(checked).toBe(3);
    // saver's rbp, rsi and rdi all held 0: the slots are told apart by the rule, not by value.
    expect(shared).toBeGreaterThan(0);
    const saver = e.frames.find((f) => e.frames[f.index - 1]?.functionName === "saver")!;
    expect(saver.reads.filter((r) => r.role === "saved-frame-pointer").map((r) => r.register)).toEqual(["rbp"]);
  });

  it("names the frame register's operation and every operation of the prolog, read from the rule's fields", () => {
    const v = load("vectors/x64/synthetic/epilog-lea-capture.json");
    const e = explainWalk(v, v.threads[0]!);
    expect(e.frames[2]!.how.slice(1, 6)).toEqual([
      "UWOP_SET_FPREG: RSP ← RBP − 0x0 (the frame register marks the frame; the allocations below are undone from it)",
      "UWOP_ALLOC_LARGE 0x90: RSP += 0x90",
      "UWOP_PUSH_NONVOL rdi: RDI ← [RSP], RSP += 8",
      "UWOP_PUSH_NONVOL rsi: RSI ← [RSP], RSP += 8",
      "UWOP_PUSH_NONVOL rbp: RBP ← [RSP], RSP += 8",
    ]);
  });

  it("on IA-64, reads rp from the backing store and moves BSP down by the caller's sol across a NaT collection slot", () => {
    const v = load("vectors/ia64/synthetic/nat-crossing.json");
    const e = explainWalk(v, v.threads[0]!);
    expect(e.truth?.exact).toBe(true);
    // Truth from the model executor: each caller's BSP; the words between are the caller's registers.
    const truth = v.threads[0]!.truth!;
    const crossing = e.frames.find((f) => f.index > 0 && /across 1 NaT collection slot/.test(f.how.join("\n")))!;
    expect(crossing).toBeDefined();
    const callee = truth[crossing.index - 1]!.bsp!;
    const caller = truth[crossing.index]!.bsp!;
    let nat = 0;
    for (let a = caller; a < callee; a += 8n) if (((a >> 3n) & 0x3fn) === 0x3fn) nat++;
    expect(nat).toBe(1);
    expect(crossing.how.join("\n")).toContain(`BSP ← BSP − sol(${Number((callee - caller) / 8n) - 1})`);
    expect(e.backingStore!.some((w) => w.natCollection === true)).toBe(true);
    const ra = e.frames.flatMap((f) => f.reads).find((r) => r.role === "return-address" && r.area === "backing-store");
    expect(ra).toBeDefined();
  });

  it("marks the stack words by frame and role for the diagrams", () => {
    const v = load("vectors/x86/ebp-chain-4.json");
    const e = explainWalk(v, v.threads[0]!);
    expect(e.stack[0]!.address).toBe(e.frames[0]!.frame.addrStack);
    for (const f of e.frames.slice(1)) {
      const slot = e.stack.find((w) => w.address === f.frame.addrStack - 4n)!;
      expect(slot.role).toBe("return-address");
      expect(slot.value).toBe(f.frame.addrPC);
      // The slot belongs to the callee's area (from its SP up to the caller's).
      expect(slot.frame).toBe(f.index - 1);
    }
  });

  it("says when the input has no truth, and once why the walk stopped early", () => {
    const v = load("vectors/x86/ebp-chain-4.json");
    const { truth: _truth, ...thread } = v.threads[0]!;
    const e = explainWalk(v, thread, { maxFrames: 2 });
    expect(e.notes[0]).toMatch(/no ground truth/);
    // The stop is the walk's stopText, said once: at the end of the explanation.
    expect(e.stopText).toMatch(/^The walk stopped at its frame limit/);
    expect(e.notes.join(" ")).not.toContain(e.stopText);
    const text = formatExplanation(e);
    expect(text).toMatch(/^stop: The walk stopped at its frame limit \(max-frames:/m);
    expect(text.split(e.stopText).length - 1).toBe(1);
  });

  it("prints the same text for the CLI as the committed explanations", async () => {
    const cases: [string, string[]][] = [
      ["x86-ebp-chain-4.txt", ["vectors/x86/ebp-chain-4.json"]],
      ["x86-fpo-leaf.txt", ["vectors/x86/etw/fpo-leaf-etw.json"]],
      ["x64-push-nonvol.txt", ["vectors/x64/synthetic/push-nonvol-capture.json"]],
      ["ia64-nat-crossing.txt", ["vectors/ia64/synthetic/nat-crossing.json"]],
      ["minidump2.txt", ["test/fixtures/breakpad/minidump2.dmp", "--symbols", "test/fixtures/breakpad/symbols", "--thread", "3060"]],
    ];
    for (const [name, args] of cases) {
      const { code, out } = await cli("explain", ...args.map((a) => (a.startsWith("--") || /^\d+$/.test(a) ? a : `${ROOT}${a}`)));
      expect(code).toBe(0);
      await expect(out.replaceAll(ROOT, "")).toMatchFileSnapshot(`explain/${name}`);
    }
  });

  it("rejects a thread that is not there, naming the threads", async () => {
    const { code, err } = await cli("explain", `${ROOT}vectors/x86/ebp-chain-4.json`, "--thread", "7");
    expect(code).toBe(2);
    expect(err).toMatch(/no thread with id 7 \(threads: 0\)/);
  });
});
