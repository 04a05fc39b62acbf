import { beforeAll, describe, expect, it } from "vitest";
import { loadAssembler } from "../../emulator/assemble.js";
import { mapTeb32 } from "../../emulator/etw-capture.js";
import {
  buildEtwKernelModule,
  buildEtwUser64Module,
  buildEtwUserModule,
  ETW_KERNEL_DATA,
  ETW_TEB,
  NT_TIB32,
  type EtwModule,
} from "../../emulator/etw-modules.js";
import { mapPeImage } from "../../emulator/pe-loader.js";
import { mapStack, type StackLayout } from "../../emulator/run.js";
import { UC_PROT, Unicorn } from "../../emulator/unicorn.js";
import { IMAGE_DEBUG_TYPE, parsePe } from "../../src/formats/pe.js";
import { decodeFpoTable, FRAME_FPO, FRAME_NONFPO } from "../../src/model/fpo-data.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";

let user: EtwModule;
let kernel: EtwModule;
let user64: EtwModule;

beforeAll(async () => {
  [user, kernel, user64] = await Promise.all([buildEtwUserModule(), buildEtwKernelModule(), buildEtwUser64Module()]);
});

/** A stack whose SP starts low, so hand-built frames fit above the driver's own frames. */
const STACK: StackLayout = { base: 0x0012_0000n, size: 0x1_0000n, initialSp: 0x0012_1000n };
const STACK_BASE = STACK.base + STACK.size;
/** The Callers buffer. */
const BUFFER = 0x0050_0000n;

/** One hand-built EBP frame: [at] = next, [at+4] = ra. */
type Frame = readonly [at: bigint, next: bigint, ra: bigint];

interface WalkSetup {
  module: EtwModule;
  /** EBP when the driver calls RtlWalkFrameChain: its own frame links to this. */
  ebp: bigint;
  frames: readonly Frame[];
  count?: number;
  flags?: 0 | 1;
  /** Where the driver's code goes (user space by default). */
  driver?: bigint;
  /** Kernel module: KTRAP_FRAME.Ebp for a Flags 1 walk. */
  trapEbp?: bigint;
  /** Kernel module: KTRAP_FRAME.Eip for a Flags 1 walk. */
  trapEip?: bigint;
}

/**
 * Calls the module's RtlWalkFrameChain from a small driver with EBP set to `ebp`, over a stack
 * holding `frames`; returns the driver's return address (RtlWalkFrameChain's own frame records
 * it first) and the addresses stored, as many as the routine returned in EAX.
 */
async function walk(s: WalkSetup): Promise<{ driverReturn: bigint; addresses: bigint[] }> {
  const asm = await loadAssembler();
  const driver = s.driver ?? 0x0040_1000n;
  const code = asm.assembleProgram(
    [
      `mov ebp, ${s.ebp}`,
      `push ${s.flags ?? 0}`,
      `push ${s.count ?? 16}`,
      `push ${BUFFER}`,
      `call ${s.module.labels["RtlWalkFrameChain"]}`,
      "back:",
      "ret",
    ].join("\n"),
    { mode: 32, address: driver },
  );
  const uc = Unicorn.open(32);
  try {
    mapPeImage(uc, parsePe(s.module.image), { name: s.module.name });
    mapStack(uc, STACK);
    mapTeb32(uc, STACK);
    uc.memMap(driver, 0x1000, UC_PROT.READ | UC_PROT.EXEC);
    uc.memWrite(driver, code.bytes);
    uc.memMap(BUFFER, 0x1000, UC_PROT.READ | UC_PROT.WRITE);
    const u32 = (v: bigint): Uint8Array => {
      const b = new Uint8Array(4);
      new DataView(b.buffer).setUint32(0, Number(v), true);
      return b;
    };
    for (const [at, next, ra] of s.frames) {
      uc.memWrite(at, u32(next));
      uc.memWrite(at + 4n, u32(ra));
    }
    if (s.trapEbp !== undefined) uc.memWrite(ETW_KERNEL_DATA.trapFrame, u32(s.trapEbp));
    if (s.trapEip !== undefined) uc.memWrite(ETW_KERNEL_DATA.trapFrame + 4n, u32(s.trapEip));
    uc.regWrite("esp", STACK.initialSp);
    const stop = uc.start(driver, 0n, { count: 10_000 });
    expect(stop.reason).toBe("until");
    const count = Number(uc.regRead("eax"));
    const bytes = uc.memRead(BUFFER, 4 * count);
    const view = new DataView(bytes.buffer, bytes.byteOffset);
    return { driverReturn: code.labels.get("back")!, addresses: Array.from({ length: count }, (_, i) => BigInt(view.getUint32(4 * i, true))) };
  } finally {
    uc.close();
  }
}

/** Three chained frames in the stack, returning into 0x00401111, 0x00402222 and 0x00403333; the last links to 0. */
const F1 = 0x0012_2000n;
const F2 = 0x0012_4000n;
const F3 = 0x0012_6000n;
const CHAIN: readonly Frame[] = [
  [F1, F2, 0x0040_1111n],
  [F2, F3, 0x0040_2222n],
  [F3, 0n, 0x0040_3333n],
];

describe("RtlWalkFrameChain in machine code (x86-fpo.md §6)", () => {
  it("starts at its own EBP and follows the chain until next is not above fp", async () => {
    const r = await walk({ module: user, ebp: F1, frames: CHAIN });
    expect(r.addresses).toEqual([r.driverReturn, 0x0040_1111n, 0x0040_2222n, 0x0040_3333n]);
  });

  it("stops before a return address that lies inside the stack", async () => {
    const r = await walk({ module: user, ebp: F1, frames: [CHAIN[0]!, [F2, F3, 0x0012_5000n], CHAIN[2]!] });
    expect(r.addresses).toEqual([r.driverReturn, 0x0040_1111n]);
  });

  it("records ra, then stops when next is not above fp", async () => {
    const r = await walk({ module: user, ebp: F1, frames: [[F1, F1 - 0x100n, 0x0040_1111n], CHAIN[1]!] });
    expect(r.addresses).toEqual([r.driverReturn, 0x0040_1111n]);
  });

  it("records ra, then stops when next is at or above StackBase", async () => {
    const r = await walk({ module: user, ebp: F1, frames: [[F1, STACK_BASE, 0x0040_1111n]] });
    expect(r.addresses).toEqual([r.driverReturn, 0x0040_1111n]);
  });

  it("stops when fewer than 8 bytes remain above fp, and reads a frame that has exactly 8", async () => {
    const short = await walk({ module: user, ebp: F1, frames: [[F1, STACK_BASE - 4n, 0x0040_1111n]] });
    expect(short.addresses).toEqual([short.driverReturn, 0x0040_1111n]);
    const exact = await walk({ module: user, ebp: F1, frames: [[F1, STACK_BASE - 8n, 0x0040_1111n], [STACK_BASE - 8n, 0n, 0x0040_4444n]] });
    expect(exact.addresses).toEqual([exact.driverReturn, 0x0040_1111n, 0x0040_4444n]);
  });

  it("ends after the first frame when EBP holds garbage", async () => {
    const r = await walk({ module: user, ebp: 0xbad0_02efn, frames: [] });
    expect(r.addresses).toEqual([r.driverReturn]);
  });

  it("stores at most Count addresses", async () => {
    const r = await walk({ module: user, ebp: F1, frames: CHAIN, count: 2 });
    expect(r.addresses).toEqual([r.driverReturn, 0x0040_1111n]);
  });

  it("kernel, Flags 0: ends at the first user-mode return address", async () => {
    const fromUser = await walk({ module: kernel, ebp: F1, frames: CHAIN });
    expect(fromUser.addresses).toEqual([]);
    const frames: Frame[] = [
      [F1, F2, 0x8040_1234n],
      [F2, F3, 0x0040_2222n],
      [F3, 0n, 0x8040_5678n],
    ];
    const fromKernel = await walk({ module: kernel, ebp: F1, frames, driver: 0x8050_1000n });
    expect(fromKernel.addresses).toEqual([fromKernel.driverReturn, 0x8040_1234n]);
  });

  it("kernel, Flags 1: records the trap frame's Eip, then walks from its Ebp through user-mode addresses", async () => {
    const r = await walk({ module: kernel, ebp: 0n, frames: CHAIN, flags: 1, trapEbp: F1, trapEip: 0x0040_0f0fn });
    expect(r.addresses).toEqual([0x0040_0f0fn, 0x0040_1111n, 0x0040_2222n, 0x0040_3333n]);
  });
});

describe("the logging modules", () => {
  it("etwlog.dll: a freestanding PE32 with symbols, FPO_DATA and its log site", () => {
    const pe = parsePe(user.image);
    expect(pe.machine).toBe(IMAGE_FILE_MACHINE.I386);
    expect(pe.imageBase).toBe(user.base);
    expect(pe.hasImports).toBe(false);
    expect(pe.debug.map((d) => d.type)).toEqual([IMAGE_DEBUG_TYPE.CODEVIEW, IMAGE_DEBUG_TYPE.FPO]);
    expect(decodeFpoTable(pe.fpoData()!)).toEqual(user.fpo);
    expect(user.symbols.map((s) => s.name)).toEqual(["EtwEventWrite", "EtwpLogStack", "RtlWalkFrameChain", "RtlUserThreadStart"]);
    expect(user.fpo.map((r) => [r.cbFrame, r.cbRegs, r.cdwParams, r.cbProlog])).toEqual([
      [FRAME_NONFPO, 0, 0, 3],
      [FRAME_NONFPO, 0, 0, 3],
      [FRAME_NONFPO, 3, 3, 6],
      [FRAME_FPO, 0, 0, 0],
    ]);
    // After the call (+0x28): the 5-byte count store and the 6-byte event-count increment.
    expect(user.logSites.map((s) => s.breakSpec)).toEqual(["etwlog.dll!EtwpLogStack+0x33"]);
    expect(user.asm).toContain("RtlWalkFrameChain_loop:");
  });

  it("etwkrnl.sys: lives in kernel space and logs two parts", () => {
    const pe = parsePe(kernel.image);
    expect(pe.imageBase).toBeGreaterThanOrEqual(0x8000_0000n);
    expect(kernel.symbols.map((s) => s.name)).toEqual(["KiSystemService", "NtTraceEvent", "EtwpLogKernelStack", "EtwpLogUserStack", "RtlWalkFrameChain"]);
    expect(kernel.logSites.map((s) => [s.label, s.record])).toEqual([
      ["EtwpLogKernelStack_logged", ETW_KERNEL_DATA.kernelRecord],
      ["EtwpLogUserStack_logged", ETW_KERNEL_DATA.userRecord],
    ]);
  });

  it("etwlog64.dll: a PE32+ whose framed functions have unwind data", () => {
    const pe = parsePe(user64.image);
    expect(pe.is64).toBe(true);
    const functions = pe.runtimeFunctions();
    expect(functions.map((f) => f.beginRva)).toEqual(user64.symbols.slice(0, 2).map((s) => Number(s.rva)));
    // Version 1, a 4-byte prolog, one code: UWOP_ALLOC_SMALL of 4·8 + 8 = 40 bytes at offset 4.
    expect([...pe.readRva(functions[0]!.unwindData, 6)!]).toEqual([0x01, 4, 1, 0, 4, 0x42]);
    expect(user64.logSites.map((s) => s.breakSpec)).toEqual(["etwlog64.dll!NtTraceEvent+0x5"]);
  });

  it("the TEB the runner maps holds the stack's bounds", () => {
    const uc = Unicorn.open(32);
    try {
      mapTeb32(uc, STACK);
      const tib = new DataView(uc.memRead(ETW_TEB, 0x1c).buffer);
      expect(tib.getUint32(NT_TIB32.stackBase, true)).toBe(Number(STACK_BASE));
      expect(tib.getUint32(NT_TIB32.stackLimit, true)).toBe(Number(STACK.base));
      expect(tib.getUint32(NT_TIB32.self, true)).toBe(Number(ETW_TEB));
    } finally {
      uc.close();
    }
  });
});
