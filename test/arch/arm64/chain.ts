/**
 * A four-function ARM64 call chain whose functions have the prologs, epilogs and unwind data
 * clang-14 emits for four C shapes (arm64.md §1.8 and Part 6), and whose stack is what those
 * prologs store: `main` (alloca: packed CR 3, `stp x29, lr, [sp, #-16]!; mov x29, sp`) calls
 * `fregs` (packed `0x01A08071`: `str lr, [sp, #-48]!; stp d8, d9; stp d10, d11; str d12`), which
 * calls `bigframe` (the `.xdata` of the 8000-byte frame: `stp x29, lr, [sp, #-16]!; mov x15, #500;
 * bl __chkstk; sub sp, sp, x15, lsl #4`, x29 never set), which calls `leaf_locals` (packed
 * `0x01000025`: `sub sp, sp, #32`). The return address `bigframe` saves is signed (its top bits
 * hold a pointer authentication code, as `-mbranch-protection=pac-ret` code leaves it).
 *
 * The expected frames are worked out here from those prologs, never by a walker: frame k's pc is
 * the return address after the `bl`, its sp what the caller's sp was at the call.
 */
import { RegionMemory } from "../../../src/memory/region-memory.js";
import type { Registers, Snapshot } from "../../../src/model/snapshot.js";
import { StackBuilder } from "../../support/stack-builder.js";
import { BASE, CALLER, CLOBBERED, ImageBuilder, IMAGE_SIZE, xdata } from "./fixture.js";

/** Function starts (RVAs) and lengths in instructions. */
export const FN = {
  main: { rva: 0x3000, length: 16 },
  fregs: { rva: 0x3100, length: 28 },
  bigframe: { rva: 0x3200, length: 13 },
  leaf_locals: { rva: 0x3300, length: 9 },
} as const;
/** A tail-call stub with no `.pdata` entry (clang-14 emits none for `b ext`). */
export const STUB_RVA = 0x3400;
/** A dispatcher whose only code is MSFT_OP_MACHINE_FRAME: the machine frame at sp holds an interrupted sp and pc. */
export const DISPATCHER_RVA = 0x3500;

/** The address `k` instructions into a function. */
export const insn = (fn: keyof typeof FN, k: number): bigint => BASE + BigInt(FN[fn].rva + 4 * k);

/** The pointer authentication code `bigframe`'s signed return address carries in bits 48-54. */
export const PAC_BITS = 0x0035_0000_0000_0000n;

function bl(from: number, to: number): number {
  return (0x9400_0000 | (((to - from) >> 2) & 0x03ff_ffff)) >>> 0;
}

/** The chain's image: the four functions' `.pdata` entries and `.xdata`, nops with a real `bl` at each call site. */
export function chainImage(): Uint8Array {
  const b = new ImageBuilder();
  for (const f of Object.values(FN)) b.code(f.rva, f.length);
  b.code(STUB_RVA, 2);
  const word = (rva: number, w: number): void => void b.at(rva, [w & 0xff, (w >>> 8) & 0xff, (w >>> 16) & 0xff, (w >>> 24) & 0xff]);
  // The calls: main+8 -> fregs, fregs+0x18 -> bigframe, bigframe+0x14 -> leaf_locals.
  word(FN.main.rva + 8, bl(FN.main.rva + 8, FN.fregs.rva));
  word(FN.fregs.rva + 0x18, bl(FN.fregs.rva + 0x18, FN.bigframe.rva));
  word(FN.bigframe.rva + 0x14, bl(FN.bigframe.rva + 0x14, FN.leaf_locals.rva));
  // main: packed, Flag 1, 16 instructions, CR 3, FrameSize 1 (16 bytes) = 0x00E00041.
  b.fn(FN.main.rva, 0x00e00041);
  b.fn(FN.fregs.rva, 0x01a08071);
  // bigframe: header 0x1840000D, scope 0x01800009 (offset 9, index 6), codes C1F4 E3 E3 81 E4 | C100 C0F4 81 E4.
  b.fn(FN.bigframe.rva, xdata({ length: 13, scopes: [{ start: 9, index: 6 }], codes: [0xc1, 0xf4, 0xe3, 0xe3, 0x81, 0xe4, 0xc1, 0x00, 0xc0, 0xf4, 0x81, 0xe4] }));
  b.fn(FN.leaf_locals.rva, 0x01000025);
  b.code(DISPATCHER_RVA, 4).fn(DISPATCHER_RVA, xdata({ length: 4, epilog: 0, codes: [0xe9, 0xe4] }));
  return b.build();
}

/**
 * The chain's image as a file on disk: the same bytes with one section (RVA 0x1000 at file offset
 * 0x1000, to the end of the image), so the file's layout is the mapped one.
 */
export function chainImageFile(): Uint8Array {
  const b = chainImage();
  const v = new DataView(b.buffer);
  const oh = 0x58;
  v.setUint16(0x46, 1, true); // NumberOfSections
  v.setUint32(oh + 32, 0x1000, true); // SectionAlignment
  v.setUint32(oh + 36, 0x200, true); // FileAlignment
  v.setUint32(oh + 60, 0x1000, true); // SizeOfHeaders
  const sh = oh + 240;
  b.set([0x2e, 0x74, 0x65, 0x78, 0x74], sh); // ".text"
  v.setUint32(sh + 8, IMAGE_SIZE - 0x1000, true); // VirtualSize
  v.setUint32(sh + 12, 0x1000, true); // VirtualAddress
  v.setUint32(sh + 16, IMAGE_SIZE - 0x1000, true); // SizeOfRawData
  v.setUint32(sh + 20, 0x1000, true); // PointerToRawData
  return b;
}

/** Where the chain's stack is. */
export const CHAIN_STACK = 0x0020_0000n;

/** The chain stopped in `leaf_locals`, `k` instructions in (0 = before its `sub sp`, 8 = at its `ret`), or in the stub. */
export interface ChainStop {
  snapshot: Snapshot;
  registers: Registers;
  /** The expected frames, innermost first: pc and sp; the walk ends after them (main returns to 0). */
  truth: { pc: bigint; sp: bigint; function: string }[];
  /** Stack labels: sp0 (frame 0), L (leaf_locals' entry sp), B (bigframe's), F (fregs'), M (main's). */
  labels: Record<string, bigint>;
}

/**
 * A snapshot of the chain (see the file comment) stopped at instruction `k` of leaf_locals (its
 * body: 1-6); or in the stub without an entry; or in the dispatcher, below a machine frame whose
 * interrupted pc is in the stub (its return address still in lr). `pac` is the code bigframe's
 * signed return address carries (default {@link PAC_BITS}).
 */
export function chainStop(at: { leaf: number } | "stub" | "dispatcher" = { leaf: 4 }, pac = PAC_BITS): ChainStop {
  const inLeafFrame = typeof at === "object" && at.leaf >= 1 && at.leaf <= 7;
  const s = new StackBuilder(CHAIN_STACK - (at === "dispatcher" ? 0x20n : 0n), 8);
  if (at === "dispatcher") s.mark("dispatcher").u64(s.ref("L")).u64(BASE + BigInt(STUB_RVA + 4)).zeros(16);
  s.mark("sp0");
  if (inLeafFrame) s.fill(4, 0x1eaf_0000n);
  s.mark("L").zeros(8000);
  // bigframe's record: the x29 it was given (main's, = F) and its signed return address into fregs.
  s.mark("recB").u64(s.ref("F")).u64(insn("fregs", 7) | pac);
  s.mark("B").u64(insn("main", 3));
  for (let d = 8; d <= 12; d++) s.u64(CALLER[`d${d}`]!);
  // main's record: the outermost frame (x29 0, return address 0).
  s.mark("F").u64(0n).u64(0n);
  s.mark("M").fill(4, 0x7777n);
  const stack = s.build();
  const L = stack.labels;
  const registers: Registers = {
    ...CLOBBERED,
    pc: at === "stub" ? BASE + BigInt(STUB_RVA + 4) : at === "dispatcher" ? BASE + BigInt(DISPATCHER_RVA + 4) : insn("leaf_locals", at.leaf),
    sp: at === "dispatcher" ? L["dispatcher"]! : L["sp0"]!,
    fp: L["F"]!,
    lr: insn("bigframe", 6),
  };
  const snapshot: Snapshot = {
    machine: "arm64",
    threads: [{ id: 1, crashed: true, registers }],
    memory: new RegionMemory([{ base: BASE, bytes: chainImage() }, { base: stack.base, bytes: stack.bytes }]),
    modules: [
      {
        name: "chain.exe",
        base: BASE,
        size: BigInt(IMAGE_SIZE),
        symbols: [
          ...Object.entries(FN).map(([name, f]) => ({ name, rva: BigInt(f.rva), size: BigInt(4 * f.length) })),
          { name: "tail_stub", rva: BigInt(STUB_RVA), size: 8n },
          { name: "dispatcher", rva: BigInt(DISPATCHER_RVA), size: 16n },
        ],
      },
    ],
  };
  const truth = [
    ...(at === "dispatcher" ? [{ pc: registers["pc"]!, sp: L["dispatcher"]!, function: "dispatcher" }] : []),
    { pc: at === "dispatcher" ? BASE + BigInt(STUB_RVA + 4) : registers["pc"]!, sp: L["sp0"]!, function: typeof at === "object" ? "leaf_locals" : "tail_stub" },
    { pc: insn("bigframe", 6), sp: L["L"]!, function: "bigframe" },
    { pc: insn("fregs", 7), sp: L["B"]!, function: "fregs" },
    { pc: insn("main", 3), sp: L["F"]!, function: "main" },
  ];
  return { snapshot, registers, truth, labels: L };
}
