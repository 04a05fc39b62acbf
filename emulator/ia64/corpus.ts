/**
 * The synthetic IA-64 call chains of the vector corpus (vectors/ia64/synthetic), one per edge case
 * of ia64.md §5.4, run by the model executor. Backing-store positions are given as the slot (word
 * index, 0-62) of the 512-byte group a BSP starts in, since that is what decides which NaT
 * collection slots a frame crosses.
 *
 * Every function that has a callee allocates a memory frame (at least the 16-byte scratch area
 * its callees may use): the walk loop's progress rule wants each caller's sp above its callee's.
 */
import { formatVector } from "../../src/entry/formats.js";
import { runChain, type Ia64ChainSpec, type Ia64FunctionSpec } from "./executor.js";

/** The group the backing store starts in by default (its slot 0). */
export const RBS_GROUP = 0x7ff_e000_0000n;

/** The backing-store address of word `slot` of the default group. */
export const rbsAt = (slot: number): bigint => RBS_GROUP + BigInt(8 * slot);

/** main with rp in r32 and ar.pfs in r33 (GCC's `.prologue` shape), `outs` outputs and a 32-byte frame. */
function main(outs: number, extra: Partial<Ia64FunctionSpec> = {}): Ia64FunctionSpec {
  return { name: "main", ins: 0, locals: 2, outs, frameBytes: 32, rp: { gr: 32 }, pfs: { gr: 33 }, ...extra };
}

/** A function with rp and ar.pfs in its first two locals and a fixed frame. */
function fn(name: string, ins: number, locals: number, outs: number, frameBytes: number, extra: Partial<Ia64FunctionSpec> = {}): Ia64FunctionSpec {
  return { name, ins, locals, outs, frameBytes, rp: { gr: 32 + ins }, pfs: { gr: 33 + ins }, ...extra };
}

/** A leaf innermost function. */
function leaf(name: string, ins: number, locals: number, frameBytes: number, extra: Partial<Ia64FunctionSpec> = {}): Ia64FunctionSpec {
  return fn(name, ins, locals, 0, frameBytes, { leaf: true, ...extra });
}

/** The chains of the corpus, each one vector. */
export const IA64_CORPUS: readonly Ia64ChainSpec[] = [
  {
    name: "nat-crossing",
    description: "frames crossing NaT collection slots: main at slot 60 (sol 2) puts a at slot 62; a's sol 1 puts b at +0x10, slot 0 of the next group, so unwinding b is skip(bsp, -1) back over the collection word",
    rbsBase: rbsAt(60),
    functions: [
      main(1),
      { name: "a", ins: 0, locals: 1, outs: 1, frameBytes: 32, rp: { psprel: 6 }, pfs: { gr: 32 } },
      leaf("b", 1, 2, 16),
    ],
    stop: { step: "restore-rp" },
  },
  {
    name: "rp-after-collection",
    description: "a's frame starts at slot 62 with ar.pfs in r32 and rp in r33: r33 is at bsp+0x10, past the collection word at bsp+0x8 (which is not a code address)",
    rbsBase: rbsAt(60),
    functions: [
      main(1),
      { name: "a", ins: 0, locals: 2, outs: 1, frameBytes: 32, rp: { gr: 33 }, pfs: { gr: 32 } },
      leaf("b", 1, 3, 0),
    ],
    stop: { step: "ret" },
  },
  {
    name: "frame-63",
    description: "sol = 63 from slot 0 of a group B (main: its callee's BSP is B+0x200) and sol = sof = 63 from slot 1 (b at B'+0x8: its callee's BSP is B'+0x208); each crosses one collection slot; b has no outputs, so c has sof 0 until its alloc",
    rbsBase: rbsAt(0),
    functions: [
      main(1, { locals: 63 }),
      { name: "a", ins: 0, locals: 1, outs: 1, frameBytes: 32, rp: { psprel: 6 }, pfs: { gr: 32 } },
      fn("b", 1, 62, 0, 16),
      leaf("c", 0, 2, 0),
    ],
    stop: { step: "alloc", offset: 1 },
  },
  {
    name: "frame-96-callers",
    description: "two callers of 96 registers: main from slot 30 (one collection slot inside the frame; its end pointer skip(bsp, 96) = B+0x400 is past a second one) and a from slot 34 (two collection slots inside)",
    rbsBase: rbsAt(30),
    functions: [
      { name: "main", ins: 0, locals: 4, outs: 92, frameBytes: 32, rp: { gr: 32 }, pfs: { gr: 33 } },
      fn("a", 2, 4, 90, 48),
      leaf("b", 2, 2, 0),
    ],
    stop: { step: "ret" },
  },
  {
    name: "frame-96-innermost",
    description: "the innermost frame has 96 registers from slot 30 (bsp = B+0xf0): RsBSPSTORE = skip(bsp, 96) = B+0x400, past the collection slot at B+0x3f8",
    rbsBase: rbsAt(24),
    functions: [main(2, { locals: 6 }), fn("a", 2, 3, 91, 32)],
    stop: { step: "call" },
  },
  {
    name: "nat-at-bspstore",
    description: "hand-built RsBSPSTORE on a collection slot: the innermost frame ends at a 512-byte boundary and the RSE has not stored that group's collection yet, so rp's NaT bit (collection address = RsBSPSTORE) comes from RsRNAT, not from the stale all-ones word in memory",
    rbsBase: rbsAt(50),
    functions: [main(2, { locals: 3 }), fn("a", 2, 4, 4, 32)],
    stop: { step: "call" },
    bspstoreOnCollection: true,
  },
  {
    name: "rp-at-save",
    description: "the IP is exactly at the `mov r33 = b0` slot: the save has not executed, so rp comes from b0",
    functions: [main(2), fn("a", 1, 3, 1, 32), fn("b", 1, 2, 0, 16, { prologue: ["alloc", "sp", "rp"] })],
    stop: { step: "rp" },
  },
  {
    name: "rp-after-save",
    description: "the IP is one slot after the `mov r33 = b0` save: rp comes from r33",
    functions: [main(2), fn("a", 1, 3, 1, 32), fn("b", 1, 2, 0, 16, { prologue: ["alloc", "sp", "rp"] })],
    stop: { step: "rp", offset: 1 },
  },
  {
    name: "sp-at-adjust",
    description: "the IP is at the sp adjust (`adds sp = -48, sp`): it has not executed, so psp = sp",
    functions: [main(1), fn("a", 1, 2, 1, 48)],
    stop: { step: "sp" },
  },
  {
    name: "sp-after-adjust",
    description: "the IP is one slot after the sp adjust: psp = sp + 48 (mem_stack_f)",
    functions: [main(1), fn("a", 1, 2, 1, 48)],
    stop: { step: "sp", offset: 1 },
  },
  {
    name: "before-alloc",
    description: "the IP is at slot 0, before alloc: the frame is the caller's outputs (sof 2, sol 0), rp is in b0 and ar.pfs is live",
    functions: [main(2), fn("a", 2, 2, 2, 16), fn("b", 2, 2, 0, 16)],
    stop: 0,
  },
  {
    name: "sprel-saves",
    description: "sp-relative saves: a keeps rp at sp+0x10 and ar.pfs at sp+0x18 (P8 rp_sprel, pfs_sprel) in a caller frame; b does the same and is stopped in its body",
    functions: [
      main(1),
      { name: "a", ins: 1, locals: 1, outs: 1, frameBytes: 48, rp: { sprel: 4 }, pfs: { sprel: 6 } },
      { name: "b", ins: 1, locals: 1, outs: 1, frameBytes: 32, rp: { sprel: 4 }, pfs: { sprel: 6 } },
    ],
    stop: { step: "call" },
  },
  {
    name: "psprel-saves",
    description: "psp-relative saves: a keeps rp at psp-0x8 and ar.pfs at psp-0x10 (P7 rp_psprel, pfs_psprel); the frameless innermost leaf b keeps them in its caller's scratch area, at psp+0x0 and psp+0x8",
    functions: [
      main(1),
      { name: "a", ins: 1, locals: 1, outs: 1, frameBytes: 32, rp: { psprel: 6 }, pfs: { psprel: 8 } },
      { name: "b", ins: 1, locals: 0, outs: 0, frameBytes: 0, rp: { psprel: 4 }, pfs: { psprel: 2 }, leaf: true },
    ],
    stop: { step: "restore-rp" },
  },
  {
    name: "mem-stack-v-gr",
    description: "variable frames (mem_stack_v) with psp kept in a GR (psp_gr): a caller and the innermost frame, stopped after its sp adjust",
    functions: [main(2), fn("a", 2, 3, 1, 64, { variable: { gr: 36 } }), fn("b", 1, 3, 0, 48, { variable: { gr: 35 } })],
    stop: { step: "sp", offset: 1 },
  },
  {
    name: "mem-stack-v-sprel",
    description: "variable frames (mem_stack_v) with psp stored at sp+0x10 (psp_sprel) before sp moves: a caller and the innermost frame, stopped after its sp adjust",
    functions: [main(2), fn("a", 2, 2, 1, 64, { variable: { sprel: 4 } }), fn("b", 1, 2, 0, 32, { variable: { sprel: 4 } })],
    stop: { step: "sp", offset: 1 },
  },
  {
    name: "epilogue-at-restore",
    description: "the IP is at the epilogue's sp restore: it has not executed, so psp = sp + size and the sp-relative rp save is still used",
    functions: [main(1), { name: "a", ins: 1, locals: 1, outs: 1, frameBytes: 48, rp: { sprel: 4 }, pfs: { gr: 33 } }],
    stop: { step: "restore-sp" },
  },
  {
    name: "epilogue-after-restore",
    description: "the IP is right after the epilogue's sp restore (the br.ret slot, slot 2 of the last bundle): psp = sp, and the sp-relative rp save is dropped, so rp comes from b0, which the epilogue restored",
    functions: [main(1), { name: "a", ins: 1, locals: 1, outs: 1, frameBytes: 48, rp: { sprel: 4 }, pfs: { gr: 33 } }],
    stop: { step: "ret" },
  },
  {
    name: "r2-header",
    description: "R2 prologue headers (rp, ar.pfs and psp in consecutive GRs from grsave): with rp_when/pfs_when before the header's implied locations, after them, and with no *_when at all (saves dated at the prologue's last slot)",
    functions: [
      fn("main", 0, 2, 2, 32, { header: "R2" }),
      fn("a", 2, 3, 2, 32, { header: "R2", order: "location-first" }),
      fn("b", 2, 3, 1, 64, { header: "R2", whenRecords: false, variable: { gr: 36 } }),
      fn("c", 1, 2, 0, 16, { header: "R2" }),
    ],
    stop: { step: "rp", offset: 1 },
  },
  {
    name: "degenerate-frames",
    description: "a sol = 0 caller (a: no inputs or locals, rp and ar.pfs in memory), so b's BSP equals a's; b has sof = sol (no outputs), so c starts with sof 0; c is stopped before its alloc",
    functions: [
      main(1),
      { name: "a", ins: 0, locals: 0, outs: 2, frameBytes: 32, rp: { psprel: 6 }, pfs: { sprel: 4 } },
      fn("b", 2, 2, 0, 16),
      fn("c", 0, 2, 0, 16),
    ],
    stop: 0,
  },
  {
    name: "high-addresses",
    description: "image, memory stack and backing store all at addresses ≥ 2^63 (region 7), with the backing store starting at slot 62",
    imageBase: 0xe000_0000_0100_0000n,
    stackTop: 0xe000_0000_8000_0000n,
    rbsBase: 0xe000_0000_4000_0000n + 8n * 62n,
    functions: [main(2), fn("a", 2, 3, 2, 32), fn("b", 2, 2, 1, 16), leaf("c", 1, 2, 0)],
    stop: { step: "rp", offset: 1 },
  },
  {
    name: "call-last-bundle",
    description: "a calls b from its last bundle (a noreturn call), so the return address into a is a's end and b's start: the caller is looked up at the call bundle",
    functions: [main(1), fn("a", 1, 2, 1, 16, { noReturn: true }), leaf("b", 1, 2, 16)],
    stop: { step: "restore-sp" },
  },
  {
    name: "leaf-last-slot",
    description: "a frameless leaf with no saves stopped at its br.ret, slot 2 of its last bundle (AddrPC = bundle + 8)",
    functions: [main(1), fn("a", 1, 2, 1, 32), { name: "b", ins: 0, locals: 0, outs: 0, frameBytes: 0, rp: "none", pfs: "none", leaf: true }],
    stop: { step: "ret" },
  },
  {
    name: "leaf-rp-br",
    description: "the innermost leaf was called with `br.call b1`: its return link is b1 (rp_br), b0 still holds a stale value",
    functions: [main(1), fn("a", 1, 2, 1, 32), { name: "b", ins: 0, locals: 0, outs: 0, frameBytes: 0, rp: { br: 1 }, pfs: "none", leaf: true, bodySlots: 4 }],
    stop: 3,
  },
  {
    name: "mixed-8",
    description: "eight frames mixing every save form: GRs, psp- and sp-relative memory, fixed and variable frames, R1/R2/R3 headers, stopped inside the innermost prologue",
    rbsBase: rbsAt(57),
    functions: [
      main(3, { locals: 5 }),
      fn("f1", 3, 4, 2, 32, { header: "R3" }),
      { name: "f2", ins: 2, locals: 1, outs: 3, frameBytes: 64, rp: { psprel: 8 }, pfs: { gr: 34 } },
      fn("f3", 3, 2, 4, 48, { variable: { sprel: 6 } }),
      { name: "f4", ins: 4, locals: 0, outs: 1, frameBytes: 32, rp: { sprel: 4 }, pfs: { psprel: 6 } },
      fn("f5", 1, 3, 5, 80, { header: "R2", variable: { gr: 35 } }),
      fn("f6", 5, 20, 8, 16),
      fn("f7", 8, 2, 0, 16, { prologue: ["alloc", "sp", "rp"] }),
    ],
    stop: { step: "sp", offset: 1 },
  },
  {
    name: "recursion-1000",
    description: "main -> recurse x1000 -> leaf: 1002 frames through one call site, each recurse frame 3 registers and 16 bytes of memory stack",
    functions: [main(1), fn("recurse", 1, 2, 1, 16, { repeat: 1000 }), leaf("leaf", 1, 2, 0)],
    stop: { step: "rp", offset: 1 },
  },
];

/** The folder the IA-64 chains are written to. */
export const IA64_VECTOR_FOLDER = "vectors/ia64/synthetic";

/** Every IA-64 corpus vector: `vectors/ia64/synthetic/<chain>.json`. */
export function ia64CorpusFiles(): { file: string; text: string }[] {
  return IA64_CORPUS.map((chain) => ({ file: `${IA64_VECTOR_FOLDER}/${chain.name}.json`, text: formatVector(runChain(chain).vector) }));
}
