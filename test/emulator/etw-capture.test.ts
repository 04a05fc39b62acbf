import { beforeAll, describe, expect, it } from "vitest";
import { captureVectors, etwStacks } from "../../emulator/etw-capture.js";
import { buildEtwUserModule, ETW_EVENT_WRITE, ETW_SYSTEM_SERVICE, X86_KERNEL_SPACE } from "../../emulator/etw-modules.js";
import { buildX86Program } from "../../emulator/programs/x86-chain.js";
import { EBP_CHAIN_5, EBP_CHAIN_ETW, FPO_LEAF, FPO_LEAF_ETW, FPO_USEBP_ETW, KERNEL_USER, X86_ETW_SPECS } from "../../emulator/programs/x86-corpus.js";
import { decodeDiskItems, decodeStackTrace, EVENT_HEADER_EXT_TYPE } from "../../src/formats/etw/extended-data.js";
import { formatVector, parseVector, type Vector } from "../../src/formats/vector.js";
import { moduleAt, symbolAt, type Module } from "../../src/model/snapshot.js";

const runs = new Map<string, Vector[]>();

beforeAll(async () => {
  for (const spec of X86_ETW_SPECS) runs.set(spec.name, await captureVectors(spec));
});

const vectorsOf = (name: string): Vector[] => runs.get(name)!;

/** `module!function+0xN` for an address. */
function symbolise(modules: readonly Module[], address: bigint): string {
  const m = moduleAt(modules, address);
  if (m === undefined) return `0x${address.toString(16)}`;
  const s = symbolAt(m, address - m.base);
  return s === undefined ? `${m.name}+0x${(address - m.base).toString(16)}` : `${m.name}!${s.name}+0x${(address - m.base - s.rva).toString(16)}`;
}

/** The vector's truth and its ETW arrays, symbolised. */
function shown(v: Vector): { truth: string[]; etw: { matchId: bigint; addresses: string[] }[] } {
  const t = v.threads[0]!;
  return {
    truth: t.truth!.map((f) => symbolise(v.modules, f.pc)),
    etw: etwStacks(v).map((s) => ({ matchId: s.matchId, addresses: s.addresses.map((a) => symbolise(v.modules, a)) })),
  };
}

const returnAddresses = (v: Vector): bigint[] => v.threads[0]!.truth!.slice(1).map((f) => f.pc);
const capturePc = (v: Vector): bigint => v.threads[0]!.truth![0]!.pc;

/**
 * The logging path's prefix, worked out from the bytes: EtwpLogStack calls RtlWalkFrameChain
 * at +0x23 (push ebp; mov ebp, esp; two 10-byte MatchId stores; push 0; push 192; push
 * Callers), so it returns to +0x28; EtwEventWrite calls EtwpLogStack at +0x3 and gets +0x8
 * back; the program's logging call is 5 bytes after its capture label.
 */
const USER_PREFIX = ["etwlog.dll!EtwpLogStack+0x28", "etwlog.dll!EtwEventWrite+0x8"];

describe("x86 ETW capture by executed code (x86-fpo.md §6)", () => {
  it("logs once per capture label, one STACK_TRACE32 item with MatchId 0 per event", () => {
    for (const spec of [EBP_CHAIN_ETW, FPO_LEAF_ETW, FPO_USEBP_ETW]) {
      const vectors = vectorsOf(spec.name);
      const labels = vectors.map((v) => /: at (\w+),/.exec(v.description ?? "")?.[1]);
      expect(labels).toEqual(spec === FPO_USEBP_ETW ? ["capture_worker", "capture"] : ["capture"]);
      for (const v of vectors) {
        const events = v.threads[0]!.etw!;
        expect(events).toHaveLength(1);
        const items = decodeDiskItems(events[0]!.items);
        expect(items.map((i) => i.extType)).toEqual([EVENT_HEADER_EXT_TYPE.STACK_TRACE32]);
        expect(items[0]!.linkage).toBe(false);
        const trace = decodeStackTrace(items[0]!);
        expect(trace.matchId).toBe(0n);
        expect(trace.addressSize).toBe(4);
      }
    }
  });

  it("ebp-chain-etw: after the logging prefix the array is the truth's return addresses", () => {
    const [v] = vectorsOf("ebp-chain-etw");
    const [trace] = etwStacks(v!);
    expect(trace!.addresses.slice(0, 3).map((a) => symbolise(v!.modules, a))).toEqual([...USER_PREFIX, "ebp-chain-etw.exe!f4+0x12"]);
    expect(trace!.addresses[2]).toBe(capturePc(v!) + 5n);
    expect(trace!.addresses.slice(3)).toEqual(returnAddresses(v!));
    expect(shown(v!)).toEqual({
      truth: [
        "ebp-chain-etw.exe!f4+0xd",
        "ebp-chain-etw.exe!f3+0x2b",
        "ebp-chain-etw.exe!f2+0xd",
        "ebp-chain-etw.exe!f1+0x24",
        "ebp-chain-etw.exe!main+0x17",
        "etwlog.dll!RtlUserThreadStart+0x6",
      ],
      etw: [
        {
          matchId: 0n,
          addresses: [
            ...USER_PREFIX,
            "ebp-chain-etw.exe!f4+0x12",
            "ebp-chain-etw.exe!f3+0x2b",
            "ebp-chain-etw.exe!f2+0xd",
            "ebp-chain-etw.exe!f1+0x24",
            "ebp-chain-etw.exe!main+0x17",
            "etwlog.dll!RtlUserThreadStart+0x6",
          ],
        },
      ],
    });
  });

  it("fpo-leaf-etw: the array skips the FPO leaf's caller (effect 1)", () => {
    const [v] = vectorsOf("fpo-leaf-etw");
    const [trace] = etwStacks(v!);
    const ras = returnAddresses(v!);
    // truth: leaf, then the returns into caller, main and the thread-start thunk; the chain
    // goes from the leaf's logging call through caller's EBP frame, whose [ebp+4] returns to main.
    expect(trace!.addresses.slice(3)).toEqual([ras[1], ras[2]]);
    expect(shown(v!)).toEqual({
      truth: ["fpo-leaf-etw.exe!leaf+0x12", "fpo-leaf-etw.exe!caller+0x23", "fpo-leaf-etw.exe!main+0x17", "etwlog.dll!RtlUserThreadStart+0x6"],
      etw: [{ matchId: 0n, addresses: [...USER_PREFIX, "fpo-leaf-etw.exe!leaf+0x17", "fpo-leaf-etw.exe!main+0x17", "etwlog.dll!RtlUserThreadStart+0x6"] }],
    });
  });

  it("fpo-usebp-etw: garbage in EBP truncates the array (effect 2)", () => {
    const [inWorker, inInner] = vectorsOf("fpo-usebp-etw");
    // In worker EBP holds garbage: EtwEventWrite's saved EBP is out of bounds, so the walk ends
    // right after the return into worker.
    expect(inWorker!.threads[0]!.registers["ebp"]).toBe(0xbad0_02efn);
    expect(shown(inWorker!)).toEqual({
      truth: ["fpo-usebp-etw.exe!worker+0x1b", "fpo-usebp-etw.exe!outer+0x1c", "fpo-usebp-etw.exe!main+0x17", "etwlog.dll!RtlUserThreadStart+0x6"],
      etw: [{ matchId: 0n, addresses: [...USER_PREFIX, "fpo-usebp-etw.exe!worker+0x20"] }],
    });
    // In inner the chain reaches inner's frame, whose link is worker's garbage: it records the
    // return into worker and stops, without outer, main or the thunk.
    expect(shown(inInner!)).toEqual({
      truth: [
        "fpo-usebp-etw.exe!inner+0xd",
        "fpo-usebp-etw.exe!worker+0x2a",
        "fpo-usebp-etw.exe!outer+0x1c",
        "fpo-usebp-etw.exe!main+0x17",
        "etwlog.dll!RtlUserThreadStart+0x6",
      ],
      etw: [{ matchId: 0n, addresses: [...USER_PREFIX, "fpo-usebp-etw.exe!inner+0x12", "fpo-usebp-etw.exe!worker+0x2a"] }],
    });
    expect(etwStacks(inInner!)[0]!.addresses.slice(3)).toEqual(returnAddresses(inInner!).slice(0, 1));
  });

  it("kernel-user: a kernel part and a user part sharing one nonzero MatchId (etw.md §2.3)", () => {
    const [v] = vectorsOf("kernel-user");
    const events = v!.threads[0]!.etw!;
    expect(events.map((e) => e.description)).toEqual([expect.stringMatching(/^kernel part/), expect.stringMatching(/^user part/)]);
    const [kernel, user] = etwStacks(v!);
    expect(kernel!.matchId).not.toBe(0n);
    expect(user!.matchId).toBe(kernel!.matchId);
    expect(kernel!.addresses.every((a) => a >= X86_KERNEL_SPACE)).toBe(true);
    expect(user!.addresses.every((a) => a < X86_KERNEL_SPACE)).toBe(true);
    // KiSystemService calls NtTraceEvent at +0x1b (its prolog, then three trap-frame stores of
    // 3 + 5 bytes each); NtTraceEvent calls at +0x3; EtwpLogKernelStack calls RtlWalkFrameChain at +0x38.
    const kernelPath = ["etwkrnl.sys!EtwpLogKernelStack+0x3d", "etwkrnl.sys!NtTraceEvent+0x8", "etwkrnl.sys!KiSystemService+0x20"];
    expect(shown(v!)).toEqual({
      truth: ["kernel-user.exe!submit+0xe", "kernel-user.exe!request+0x24", "kernel-user.exe!main+0x17", "etwlog.dll!RtlUserThreadStart+0x6"],
      etw: [
        { matchId: 1n, addresses: kernelPath },
        { matchId: 1n, addresses: ["kernel-user.exe!submit+0x13", "kernel-user.exe!request+0x24", "kernel-user.exe!main+0x17", "etwlog.dll!RtlUserThreadStart+0x6"] },
      ],
    });
    // Stitched, kernel first: the kernel frames down to the user/kernel boundary, then the user
    // part: the trap frame's Eip (submit+0x13, where submit resumes after the system call), then
    // the EBP chain from the trap frame's Ebp. Frame 0 of the truth is submit at the snapshot
    // (before the call), so from submit+0x13 on the user part is the truth's stack, in full.
    const stitched = [...kernel!.addresses, ...user!.addresses];
    expect(stitched.slice(0, kernelPath.length).map((a) => symbolise(v!.modules, a))).toEqual(kernelPath);
    expect(symbolise(v!.modules, user!.addresses[0]!)).toBe("kernel-user.exe!submit+0x13");
    expect(user!.addresses.slice(1)).toEqual(returnAddresses(v!));
  });

  it("programs call the loggers at their fixed addresses", async () => {
    const user = await buildEtwUserModule();
    expect(user.labels["EtwEventWrite"]).toBe(ETW_EVENT_WRITE);
    expect((await buildX86Program(FPO_LEAF_ETW)).asm).toContain(`call 0x${ETW_EVENT_WRITE.toString(16).toUpperCase().padStart(8, "0")}`);
    expect((await buildX86Program(KERNEL_USER)).asm).toContain(`call 0x${ETW_SYSTEM_SERVICE.toString(16).toUpperCase().padStart(8, "0")}`);
  });

  it("leaves specs without etw as they were", async () => {
    const plain = await buildX86Program(FPO_LEAF);
    const logging = await buildX86Program(FPO_LEAF_ETW);
    expect(plain.etw).toBeUndefined();
    expect(plain.asm).not.toContain("EtwEventWrite");
    expect(logging.etw).toBe("user");
    expect((await buildX86Program({ ...EBP_CHAIN_5 })).image).toEqual((await buildX86Program(EBP_CHAIN_5)).image);
    await expect(captureVectors(FPO_LEAF)).rejects.toThrow("does not log");
  });

  it("round-trips through the vector format, etw included", () => {
    for (const vectors of runs.values()) {
      for (const v of vectors) {
        const again = parseVector(formatVector(v));
        expect(again.threads[0]!.etw).toEqual(v.threads[0]!.etw);
        expect(again.threads[0]!.truth).toEqual(v.threads[0]!.truth);
      }
    }
  });

  it("is deterministic", async () => {
    for (const spec of [FPO_USEBP_ETW, KERNEL_USER]) {
      const again = await captureVectors(spec);
      expect(again.map(formatVector)).toEqual(vectorsOf(spec.name).map(formatVector));
    }
  });
});
