/**
 * Hand-built ExplainedWalk values for the SVG and HTML renderers' tests: an x86 stack with an EBP
 * chain under an FPO leaf, an x64 stack unwound from UNWIND_INFO, an IA-64 stack whose backing
 * store crosses a NaT collection word, a walk that stopped early on an input without truth, and a
 * generator for very deep stacks. Each is laid out by hand so that the tests know which word is
 * which.
 */
import { SaxesParser } from "saxes";
import type { Machine } from "../../src/model/machine.js";
import type { Frame, Trust, WalkStop } from "../../src/walk/frame.js";
import type { ExplainedFrame, ExplainedRead, ExplainedWalk, StackWord } from "../../src/analysis/explain-model.js";

interface FrameSpec {
  pc: bigint;
  sp: bigint;
  fp?: bigint;
  bsp?: bigint;
  ret?: bigint;
  trust: Trust;
  rule: string;
  location: string;
  functionName?: string;
  how: string[];
  reads?: ExplainedRead[];
  weaker?: string;
  truth?: ExplainedFrame["truth"];
}

const REGISTERS: Record<Machine, [string, string, string | null, string | null]> = {
  x86: ["eip", "esp", "ebp", null],
  x64: ["rip", "rsp", "rbp", null],
  ia64: ["stiip", "intsp", null, "rsbsp"],
  arm64: ["pc", "sp", "fp", null],
  arm: ["pc", "sp", "r11", null],
};

function frames(machine: Machine, specs: FrameSpec[]): ExplainedFrame[] {
  const [pc, sp, fp, bsp] = REGISTERS[machine];
  return specs.map((s, index): ExplainedFrame => {
    const registers: Record<string, bigint> = { [pc]: s.pc, [sp]: s.sp };
    if (fp !== null && s.fp !== undefined) registers[fp] = s.fp;
    if (bsp !== null && s.bsp !== undefined) registers[bsp] = s.bsp;
    const frame: Frame = {
      index,
      addrPC: s.pc,
      addrReturn: s.ret ?? specs[index + 1]?.pc ?? 0n,
      addrFrame: s.fp ?? 0n,
      addrStack: s.sp,
      addrBStore: s.bsp ?? 0n,
      params: [0n, 0n, 0n, 0n],
      far: false,
      virtual: false,
      trust: s.trust,
      rule: { kind: "custom", text: s.rule },
      registers,
    };
    const e: ExplainedFrame = { index, frame, location: s.location, how: s.how, reads: s.reads ?? [] };
    if (s.functionName !== undefined) e.functionName = s.functionName;
    if (s.weaker !== undefined) e.weaker = s.weaker;
    if (s.truth !== undefined) e.truth = s.truth;
    return e;
  });
}

function read(address: bigint, size: number, value: bigint, role: ExplainedRead["role"], extra: Partial<ExplainedRead> = {}): ExplainedRead {
  return { address, size, value, role, area: "stack", ...extra };
}

/** Memory-stack words from `from` (inclusive) to `to` (exclusive), owned by the frame whose SP is at or below each. */
function words(from: bigint, to: bigint, size: number, values: Map<bigint, bigint>, fs: readonly ExplainedFrame[], reads: boolean): StackWord[] {
  const out: StackWord[] = [];
  const roles = new Map<bigint, ExplainedRead>();
  if (reads) for (const f of fs) for (const r of f.reads) if (r.area === "stack" && r.role !== "scanned" && r.role !== "data") roles.set(r.address, r);
  let k = 0;
  for (let a = from; a < to; a += BigInt(size)) {
    while (k + 1 < fs.length && fs[k + 1]!.frame.addrStack <= a) k++;
    const w: StackWord = { address: a, value: values.has(a) ? values.get(a)! : 0xccccccccn & ((1n << BigInt(size * 8)) - 1n), frame: a < fs[k]!.frame.addrStack ? -1 : k };
    const r = roles.get(a);
    if (r !== undefined) {
      w.role = r.role;
      if (r.register !== undefined) w.register = r.register;
    }
    out.push(w);
  }
  return out;
}

/**
 * x86: `leaf` is FPO (8 bytes of locals, EBP left alone), `middle` and `main` have EBP frames,
 * `start` ends the chain with EBP = 0. Frame 1 comes from FPO_DATA, frames 2 and 3 from the chain.
 *
 * ```
 * 0x0012ff00  leaf's locals (2 words)         ESP of #0
 * 0x0012ff08  0x00401053  return into middle  ESP of #1 is 0x0012ff0c
 * 0x0012ff0c  middle's locals (3 words)
 * 0x0012ff18  0x0012ff30  middle's saved EBP  EBP of #0 and #1
 * 0x0012ff1c  0x00401017  return into main    ESP of #2 is 0x0012ff20
 * 0x0012ff20  main's locals (4 words)
 * 0x0012ff30  0x0012ff40  main's saved EBP    EBP of #2
 * 0x0012ff34  0x00401005  return into start   ESP of #3 is 0x0012ff38
 * 0x0012ff38  start's locals (2 words)
 * 0x0012ff40  0x00000000  start's saved EBP   EBP of #3
 * 0x0012ff44  0x00000000  no return address
 * ```
 */
export function x86Walk(): ExplainedWalk {
  const fs = frames("x86", [
    {
      pc: 0x00401072n, sp: 0x0012ff00n, fp: 0x0012ff18n, trust: "context", rule: "context",
      location: "demo.exe!leaf+0x12", functionName: "leaf", truth: "exact",
      how: ["The context: the registers the thread stopped with (EIP = 0x00401072, ESP = 0x0012ff00, EBP = 0x0012ff18)."],
    },
    {
      pc: 0x00401053n, sp: 0x0012ff0cn, fp: 0x0012ff18n, trust: "fpo", rule: "fpo rva=0x1060 locals=8 regs=0 params=8 ra@esp+8",
      location: "demo.exe!middle+0x23", functionName: "middle", truth: "exact",
      how: ["FPO_DATA for leaf (rva 0x1060): 8 bytes of locals, 0 saved registers → return address at ESP+8.", "[ESP+8] = [0x0012ff08] = 0x00401053 → return address: EIP ← 0x00401053", "ESP ← 0x0012ff0c"],
      reads: [read(0x0012ff08n, 4, 0x00401053n, "return-address", { register: "eip", relative: "ESP+8" })],
      weaker: "The frame-pointer chain misses this frame: leaf does not set up EBP (frame-pointer omission), so EBP there still belonged to another frame.",
    },
    {
      pc: 0x00401017n, sp: 0x0012ff20n, fp: 0x0012ff30n, trust: "frame-pointer", rule: "ebp-chain ebp=0x0012ff18",
      location: "demo.exe!main+0x17", functionName: "main", truth: "exact",
      how: ["The frame-pointer chain: middle began with push ebp; mov ebp, esp.", "[EBP] = [0x0012ff18] = 0x0012ff30 → the caller's saved frame pointer: EBP ← 0x0012ff30", "[EBP+4] = [0x0012ff1c] = 0x00401017 → return address: EIP ← 0x00401017"],
      reads: [
        read(0x0012ff18n, 4, 0x0012ff30n, "saved-frame-pointer", { register: "ebp", relative: "EBP" }),
        read(0x0012ff1cn, 4, 0x00401017n, "return-address", { register: "eip", relative: "EBP+4" }),
      ],
    },
    {
      pc: 0x00401005n, sp: 0x0012ff38n, fp: 0x0012ff40n, trust: "frame-pointer", rule: "ebp-chain ebp=0x0012ff30",
      location: "demo.exe!start+0x5", functionName: "start", truth: "exact",
      how: ["The frame-pointer chain: main began with push ebp; mov ebp, esp.", "[EBP] = [0x0012ff30] = 0x0012ff40 → EBP ← 0x0012ff40", "[EBP+4] = [0x0012ff34] = 0x00401005 → EIP ← 0x00401005"],
      reads: [
        read(0x0012ff30n, 4, 0x0012ff40n, "saved-frame-pointer", { register: "ebp", relative: "EBP" }),
        read(0x0012ff34n, 4, 0x00401005n, "return-address", { register: "eip", relative: "EBP+4" }),
      ],
    },
  ]);
  const values = new Map<bigint, bigint>([
    [0x0012ff08n, 0x00401053n], [0x0012ff18n, 0x0012ff30n], [0x0012ff1cn, 0x00401017n],
    [0x0012ff30n, 0x0012ff40n], [0x0012ff34n, 0x00401005n], [0x0012ff40n, 0n], [0x0012ff44n, 0n],
  ]);
  return {
    machine: "x86",
    title: "x86 <ebp & fpo> \"demo\"",
    threadId: 7,
    walker: "auto",
    frames: fs,
    stop: { reason: "end-of-stack", detail: "the return address is 0: this is the outermost frame" },
    stopText: "The walk reached the outermost frame (end-of-stack: the return address is 0: this is the outermost frame).",
    wordSize: 4,
    stack: words(0x0012ff00n, 0x0012ff58n, 4, values, fs, true),
    truth: { exact: true, text: "exact: all 4 frames equal the ground truth" },
    notes: [],
  };
}

/** x64: `inner` saved RBX with UWOP_PUSH_NONVOL and allocated 0x20 bytes; `outer` is a leaf-like caller of it. */
export function x64Walk(): ExplainedWalk {
  const fs = frames("x64", [
    {
      pc: 0x0000000140001010n, sp: 0x000000000014fe00n, fp: 0n, trust: "context", rule: "context",
      location: "app.exe!inner+0x10", functionName: "inner", truth: "exact",
      how: ["The context: the registers the thread stopped with."],
    },
    {
      pc: 0x0000000140001080n, sp: 0x000000000014fe30n, fp: 0n, trust: "unwind-info", rule: "unwind-info ops=[alloc 0x20; push rbx]",
      location: "app.exe!outer+0x20", functionName: "outer", truth: "exact",
      how: ["UNWIND_INFO for inner: the prolog's operations are undone in reverse order:", "UWOP_ALLOC_SMALL 0x20: RSP += 0x20", "UWOP_PUSH_NONVOL rbx: RBX ← [RSP], RSP += 8", "then the return: RIP ← [RSP], RSP += 8"],
      reads: [
        read(0x000000000014fe20n, 8, 0x1234n, "saved-register", { register: "rbx", relative: "RSP+0x20" }),
        read(0x000000000014fe28n, 8, 0x0000000140001080n, "return-address", { register: "rip", relative: "RSP+0x28" }),
      ],
    },
    {
      pc: 0x00000001400010c0n, sp: 0x000000000014fe40n, fp: 0n, trust: "unwind-info", rule: "unwind-info ops=[]",
      location: "app.exe!main+0x8", functionName: "main", truth: "exact",
      how: ["UNWIND_INFO for outer: no operations", "then the return: RIP ← [RSP], RSP += 8"],
      reads: [read(0x000000000014fe38n, 8, 0x00000001400010c0n, "return-address", { register: "rip", relative: "RSP+0x8" })],
    },
  ]);
  const values = new Map<bigint, bigint>([
    [0x000000000014fe20n, 0x1234n], [0x000000000014fe28n, 0x0000000140001080n], [0x000000000014fe38n, 0x00000001400010c0n], [0x000000000014fe48n, 0n],
  ]);
  return {
    machine: "x64",
    title: "x64 unwind",
    threadId: 1,
    walker: "unwind",
    frames: fs,
    stop: { reason: "end-of-stack", detail: "the return address is 0: this is the outermost frame" },
    stopText: "The walk reached the outermost frame (end-of-stack: the return address is 0: this is the outermost frame).",
    wordSize: 8,
    stack: words(0x000000000014fe00n, 0x000000000014fe60n, 8, values, fs, true),
    truth: { exact: true, text: "exact: all 3 frames equal the ground truth" },
    notes: [],
  };
}

/** Backing-store base of the IA-64 fixture: 0x6000000000000000, so the word at +0x1f8 is a NaT collection. */
export const IA64_NAT_WORD = 0x60000000000001f8n;

/**
 * IA-64: three frames. `c` (frame 0) is a leaf; `b` (frame 1) saved rp in a stacked register at
 * the bottom of its backing-store frame; `a` (frame 2) saved rp on the memory stack; `main`
 * (frame 3) has no stacked registers (its BSP equals a's). The backing store runs from a's BSP
 * (0x…1c0) to c's (0x…228), crossing the NaT collection word at 0x…1f8 inside b's frame.
 */
export function ia64Walk(): ExplainedWalk {
  const fs = frames("ia64", [
    {
      pc: 0x00000001000010c4n, sp: 0x000007ffefffffb0n, bsp: 0x6000000000000228n, trust: "context", rule: "context",
      location: "nat.exe!c+0x4", functionName: "c", truth: "exact",
      how: ["The context: StIIP, SP (r12), RsBSP."],
    },
    {
      pc: 0x00000001000010a0n, sp: 0x000007ffefffffb0n, bsp: 0x60000000000001e0n, trust: "ia64-unwind", rule: "ia64 t=1 rp=b0 pfs=r33 psp=sp",
      location: "nat.exe!b+0x20", functionName: "b", truth: "exact",
      how: ["IA-64 unwind descriptors for c.", "BSP ← 0x60000000000001e0 (8 stacked registers of the caller, across 1 NaT collection word)"],
      reads: [read(0x6000000000000220n, 8, 0xc000000000000388n, "saved-register", { register: "rspfs", relative: "RsBSP+0x8", area: "backing-store" })],
      weaker: "A walker without c's unwind descriptors is lost here: IA-64 has no frame-pointer chain.",
    },
    {
      pc: 0x0000000100001060n, sp: 0x000007ffefffffc0n, bsp: 0x60000000000001c0n, trust: "ia64-unwind", rule: "ia64 t=6 rp=r32 pfs=r33 psp=sp+0x10",
      location: "nat.exe!a+0x20", functionName: "a", truth: "exact",
      how: ["IA-64 unwind descriptors for b.", "[RsBSP] = [0x60000000000001e0] = 0x0000000100001060 → return address: StIIP ← 0x0000000100001060"],
      reads: [
        read(0x60000000000001e0n, 8, 0x0000000100001060n, "return-address", { register: "stiip", relative: "RsBSP", area: "backing-store" }),
        read(0x60000000000001e8n, 8, 0xc000000000000204n, "saved-register", { register: "rspfs", relative: "RsBSP+0x8", area: "backing-store" }),
      ],
    },
    {
      pc: 0x0000000100001020n, sp: 0x000007ffefffffe0n, bsp: 0x60000000000001c0n, ret: 0n, trust: "ia64-unwind", rule: "ia64 t=6 rp=[psp-0x8] psp=sp+0x20",
      location: "nat.exe!main+0x20", functionName: "main", truth: "exact",
      how: ["IA-64 unwind descriptors for a.", "[SP (r12)+0x18] = [0x000007ffefffffd8] = 0x0000000100001020 → return address: StIIP ← 0x0000000100001020"],
      reads: [read(0x000007ffefffffd8n, 8, 0x0000000100001020n, "return-address", { register: "stiip", relative: "SP (r12)+0x18" })],
    },
  ]);
  const stackValues = new Map<bigint, bigint>([[0x000007ffefffffd8n, 0x0000000100001020n]]);
  const stack = words(0x000007ffefffffb0n, 0x000007ff_f0000000n, 8, stackValues, fs, true);
  const bsValues = new Map<bigint, bigint>([
    [0x60000000000001e0n, 0x0000000100001060n], [0x60000000000001e8n, 0xc000000000000204n], [0x6000000000000220n, 0xc000000000000388n], [IA64_NAT_WORD, 0n],
  ]);
  const backingStore: StackWord[] = [];
  for (let a = 0x60000000000001c0n; a < 0x6000000000000228n; a += 8n) {
    const owner = a >= 0x60000000000001e0n ? 1 : 2;
    const w: StackWord = { address: a, value: bsValues.get(a) ?? 0x1200000000000000n + (a & 0xfffn), frame: owner };
    if (((a >> 3n) & 0x3fn) === 0x3fn) w.natCollection = true;
    const r = fs.flatMap((f) => f.reads).find((x) => x.area === "backing-store" && x.address === a);
    if (r !== undefined) {
      w.role = r.role;
      if (r.register !== undefined) w.register = r.register;
    }
    backingStore.push(w);
  }
  return {
    machine: "ia64",
    title: "ia64 NaT collection",
    threadId: 0,
    walker: "auto",
    frames: fs,
    stop: { reason: "end-of-stack", detail: "the return address is 0: this is the outermost frame" },
    stopText: "The walk reached the outermost frame (end-of-stack: the return address is 0: this is the outermost frame).",
    wordSize: 8,
    stack,
    backingStore,
    truth: { exact: true, text: "exact: all 4 frames equal the ground truth" },
    notes: [],
  };
}

/** x86, no ground truth, stopped by a read fault after two frames; the words past 0x0012ff10 are not in the snapshot. */
export function stoppedWalk(): ExplainedWalk {
  const fs = frames("x86", [
    {
      pc: 0x00401072n, sp: 0x0012ff00n, fp: 0x0012ff08n, trust: "context", rule: "context",
      location: "0x00401072", how: ["The context."],
    },
    {
      pc: 0x00401053n, sp: 0x0012ff10n, fp: 0x0012ff80n, trust: "frame-pointer", rule: "ebp-chain ebp=0x0012ff08",
      location: "demo.exe!middle+0x23", functionName: "middle",
      how: ["[EBP] = [0x0012ff08] = 0x0012ff80 → EBP ← 0x0012ff80", "[EBP+4] = [0x0012ff0c] = 0x00401053 → EIP ← 0x00401053"],
      reads: [
        read(0x0012ff08n, 4, 0x0012ff80n, "saved-frame-pointer", { register: "ebp", relative: "EBP" }),
        read(0x0012ff0cn, 4, 0x00401053n, "return-address", { register: "eip", relative: "EBP+4" }),
      ],
    },
  ]);
  const stack = words(0x0012ff00n, 0x0012ff20n, 4, new Map([[0x0012ff08n, 0x0012ff80n], [0x0012ff0cn, 0x00401053n]]), fs, true);
  for (const w of stack) if (w.address >= 0x0012ff10n) w.value = undefined;
  const stop: WalkStop = { reason: "read-fault", address: 0x0012ff80n, detail: "cannot read the saved EBP at 0x0012ff80" };
  return {
    machine: "x86",
    title: "no-truth.json",
    threadId: 3,
    walker: "frame-pointer",
    frames: fs,
    stop,
    stopText: "The walk stopped: memory it needed at 0x0012ff80 is not in the snapshot (read-fault: cannot read the saved EBP at 0x0012ff80).",
    wordSize: 4,
    stack,
    notes: ["The input has no ground truth: the frames below are what the walker found, unchecked."],
  };
}

/** An x86 EBP chain `count` frames deep, each frame four words (locals, a local, saved EBP, return address). */
export function deepWalk(count: number): ExplainedWalk {
  const base = 0x00100000n;
  const specs: FrameSpec[] = [];
  for (let k = 0; k < count; k++) {
    const sp = base + BigInt(k) * 16n;
    specs.push({
      pc: 0x00401000n + BigInt(k % 64) * 0x10n + 5n,
      sp,
      fp: sp + 8n,
      trust: k === 0 ? "context" : "frame-pointer",
      rule: k === 0 ? "context" : `ebp-chain ebp=0x${(sp - 8n).toString(16)}`,
      location: `deep.exe!f${k}+0x5`,
      functionName: `f${k}`,
      how: [k === 0 ? "The context." : `[EBP+4] = return address of frame ${k}`],
      reads: k === 0 ? [] : [
        read(sp - 8n, 4, sp + 8n, "saved-frame-pointer", { register: "ebp", relative: "EBP" }),
        read(sp - 4n, 4, 0x00401000n + BigInt(k % 64) * 0x10n + 5n, "return-address", { register: "eip", relative: "EBP+4" }),
      ],
    });
  }
  const fs = frames("x86", specs);
  const values = new Map<bigint, bigint>();
  for (let k = 0; k < count; k++) {
    const sp = base + BigInt(k) * 16n;
    values.set(sp + 8n, sp + 24n);
    values.set(sp + 12n, 0x00401000n + BigInt((k + 1) % 64) * 0x10n + 5n);
  }
  return {
    machine: "x86",
    title: `deep chain of ${count}`,
    threadId: 0,
    walker: "frame-pointer",
    frames: fs,
    stop: { reason: "max-frames", detail: `the frame cap (${count}) was reached` },
    stopText: `The walk stopped at its frame limit (max-frames: the frame cap (${count}) was reached).`,
    wordSize: 4,
    stack: words(base, base + BigInt(count) * 16n, 4, values, fs, true),
    notes: [],
  };
}

/** One element of a parsed XML document. */
export interface XmlElement {
  name: string;
  /** Namespace URI of the element. */
  uri: string;
  attributes: Record<string, string>;
  children: XmlElement[];
  /** The element's own text (not its children's). */
  text: string;
}

/**
 * Parses a document with a conforming XML 1.0 parser (saxes, with namespaces), throwing on the
 * first well-formedness or namespace error; returns the root element.
 */
export function parseXml(source: string): XmlElement {
  const parser = new SaxesParser({ xmlns: true });
  const stack: XmlElement[] = [];
  let root: XmlElement | undefined;
  let error: Error | undefined;
  parser.on("error", (e) => {
    error ??= e;
  });
  parser.on("opentag", (tag) => {
    const attributes: Record<string, string> = {};
    for (const [name, a] of Object.entries(tag.attributes)) attributes[name] = a.value;
    const el: XmlElement = { name: tag.local, uri: tag.uri, attributes, children: [], text: "" };
    if (stack.length > 0) stack.at(-1)!.children.push(el);
    else root = el;
    stack.push(el);
  });
  parser.on("text", (t) => {
    if (stack.length > 0) stack.at(-1)!.text += t;
  });
  parser.on("closetag", () => {
    stack.pop();
  });
  parser.write(source).close();
  if (error !== undefined) throw error;
  if (root === undefined) throw new Error("no root element");
  return root;
}

/** Every element below (and including) `el`, depth first. */
export function allElements(el: XmlElement): XmlElement[] {
  return [el, ...el.children.flatMap(allElements)];
}

/** The text of an element and all its descendants, concatenated. */
export function deepText(el: XmlElement): string {
  return el.text + el.children.map(deepText).join("");
}

/** The text of an element and its descendants with each run of white space made one space, as a reader sees wrapped lines. */
export function flatText(el: XmlElement): string {
  return deepText(el).replace(/\s+/g, " ");
}
