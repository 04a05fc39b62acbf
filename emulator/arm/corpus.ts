/**
 * The synthetic ARM (Thumb-2) call chains of the vector corpus (vectors/arm/synthetic): each chain
 * is run by the instruction model (thumb-model.ts) from its outermost function's first
 * instruction, through every call, to its return, and swept: a snapshot before every prolog,
 * body and epilog instruction. The functions' unwind data is written from the documented
 * encodings (emulator/programs/arm-unwind-encode.ts): packed words of every field and `.xdata`
 * records whose prologs and epilogs use every unwind code, with one epilog in the header (E) or
 * epilog scopes, and leaves without a `.pdata` entry. The truth is the model's call stack: each
 * caller's return address (Thumb bit set) and its sp at the `bl`.
 *
 * An image: headers (machine 0x1C4, PE32), `bl` into the chain at 0x1000, functions from 0x2000
 * (0x100 apart; Thumb `nop`s around each `bl` to the next function), `.xdata` from 0x8000,
 * `.pdata` at 0xC000, a debug directory naming `<chain>.pdb` at 0xD000.
 */
import { createHash } from "node:crypto";
import { formatSweep, type Sweep, type SweepStep } from "../../src/entry/formats.js";
import { RegionMemory, type Module, type Registers, type Snapshot, type TruthFrame } from "../../src/index.js";
import { armPackedWord, armXdataBytes, type ArmPackedUnwind } from "../programs/arm-unwind-encode.js";
import { bytesOf, canonicalPacked, epilogCodes, insnSize, prologCodes, returns, ThumbMachine, type Insn } from "./thumb-model.js";

/** How a function's `.pdata` entry describes it. */
export type ArmUnwindSpec =
  | { kind: "none" }
  | ({ kind: "packed" } & ArmPackedUnwind)
  /** `.xdata` from the instructions' codes; `scope`: the epilog as an epilog scope rather than in the header (E). `movSp`: sp comes back from the frame pointer (the body moves sp). */
  | { kind: "xdata"; prolog: Insn[]; epilog: Insn[]; scope?: boolean; movSp?: boolean };

/** One function of a chain. */
export interface ArmFunctionSpec {
  name: string;
  unwind: ArmUnwindSpec;
  /** A dynamic allocation in the body (alloca), undone by the epilog's mov sp. */
  alloca?: number;
}

/** A chain: its functions outermost first; each calls the next. */
export interface ArmChainSpec {
  name: string;
  description: string;
  functions: ArmFunctionSpec[];
}

const BASE = 0x0040_0000n;
const IMAGE_SIZE = 0x1_0000;
const STACK_TOP = 0x0010_0000n;
const STACK_SIZE = 0x4000n;
const FIRST_FN = 0x2000;
const FN_SPACING = 0x100;
const XDATA = 0x8000;
const PDATA = 0xc000;
const DEBUG = 0xd000;
/** Halfwords of body before and after a call. */
const BODY_BEFORE = 2;
const BODY_AFTER = 2;

/** Values the chain's caller has in every preserved register; a prolog's saves change them to these plus 0x100. */
const ENTRY: Record<string, bigint> = {
  ...Object.fromEntries(Array.from({ length: 13 }, (_, i) => [`r${i}`, 0x1000_0000n + BigInt(i)])),
  ...Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`d${i + 8}`, 0xd000_0000_0000_0000n + BigInt(i)])),
};

const CLOBBER = (name: string): bigint | undefined => (name.startsWith("d") ? (ENTRY[name] ?? 0n) ^ 0xffn : name === "lr" ? 0x0bad_0001n : (ENTRY[name] ?? 0n) + 0x100n);

/** A function's prolog and epilog instructions. */
function shapeOf(f: ArmFunctionSpec): { prolog: Insn[]; epilog: Insn[] } {
  const u = f.unwind;
  if (u.kind === "none") return { prolog: [], epilog: [{ op: "ret", size: 2 }] };
  if (u.kind === "xdata") return { prolog: u.prolog, epilog: u.epilog };
  const c = canonicalPacked(u);
  if (c.epilog === undefined) throw new Error(`${f.name}: a chain function needs an epilog (Ret 3 has none)`);
  return { prolog: c.prolog, epilog: c.epilog };
}

/** A Thumb `bl` from `from` to `to`. */
function thumbBl(from: number, to: number): number[] {
  const offset = to - (from + 4);
  const s = offset < 0 ? 1 : 0;
  const imm = offset & 0x1ff_ffff;
  const j1 = (~((imm >> 23) & 1) ^ s) & 1;
  const j2 = (~((imm >> 22) & 1) ^ s) & 1;
  const hw1 = 0xf000 | (s << 10) | ((imm >> 12) & 0x3ff);
  const hw2 = 0xd000 | (j1 << 13) | (j2 << 11) | ((imm >> 1) & 0x7ff);
  return [hw1 & 0xff, hw1 >> 8, hw2 & 0xff, hw2 >> 8];
}

interface Laid {
  spec: ArmFunctionSpec;
  rva: number;
  prolog: Insn[];
  epilog: Insn[];
  /** Where the `bl` to the next function is (RVA), or undefined for the innermost. */
  call?: number;
  length: number;
}

/** Lays the chain out and writes the image. */
function buildImage(chain: ArmChainSpec): { image: Uint8Array; laid: Laid[]; module: Module } {
  const image = new Uint8Array(IMAGE_SIZE);
  const view = new DataView(image.buffer);
  image[0] = 0x4d;
  image[1] = 0x5a;
  view.setUint32(0x3c, 0x40, true);
  view.setUint32(0x40, 0x4550, true);
  view.setUint16(0x44, 0x01c4, true);
  view.setUint16(0x54, 224, true);
  const oh = 0x58;
  view.setUint16(oh, 0x10b, true);
  view.setUint32(oh + 56, IMAGE_SIZE, true);
  view.setUint32(oh + 92, 16, true);
  const laid: Laid[] = chain.functions.map((spec, i) => {
    const { prolog, epilog } = shapeOf(spec);
    const rva = FIRST_FN + FN_SPACING * i;
    const inner = i === chain.functions.length - 1;
    const body = 2 * BODY_BEFORE + (inner ? 0 : 4) + 2 * BODY_AFTER;
    const length = bytesOf(prolog) + body + bytesOf(epilog);
    const call = inner ? undefined : rva + bytesOf(prolog) + 2 * BODY_BEFORE;
    return { spec, rva, prolog, epilog, length, ...(call === undefined ? {} : { call }) };
  });
  for (let i = 0; i < laid.length; i++) {
    const l = laid[i]!;
    for (let a = l.rva; a < l.rva + l.length; a += 2) view.setUint16(a, 0xbf00, true);
    if (l.call !== undefined) image.set(thumbBl(l.call, laid[i + 1]!.rva), l.call);
  }
  // The `bl` into the chain from its caller's code.
  image.set(thumbBl(0x1000, FIRST_FN), 0x1000);
  // .pdata and .xdata.
  let xdataAt = XDATA;
  const entries: [number, number][] = [];
  for (const l of laid) {
    const u = l.spec.unwind;
    if (u.kind === "none") continue;
    if (u.kind === "packed") {
      entries.push([l.rva | 1, armPackedWord(l.length, u)]);
      continue;
    }
    const prolog = prologCodes(l.prolog, u.movSp === true);
    const epilog = epilogCodes(l.epilog);
    const shared = prolog.length === epilog.length && prolog.every((b, k) => b === epilog[k]);
    const codes = shared ? prolog : [...prolog, ...epilog];
    const index = shared ? 0 : prolog.length;
    const start = l.length - bytesOf(l.epilog);
    const bytes = u.scope === true ? armXdataBytes({ length: l.length, codes, scopes: [{ start, index }] }) : armXdataBytes({ length: l.length, codes, epilogIndex: index });
    image.set(bytes, xdataAt);
    entries.push([l.rva | 1, xdataAt]);
    xdataAt = (xdataAt + bytes.length + 3) & ~3;
  }
  entries.forEach(([b, u], k) => {
    view.setUint32(PDATA + 8 * k, b, true);
    view.setUint32(PDATA + 8 * k + 4, u, true);
  });
  const dirs = oh + 96;
  view.setUint32(dirs + 3 * 8, entries.length === 0 ? 0 : PDATA, true);
  view.setUint32(dirs + 3 * 8 + 4, 8 * entries.length, true);
  // A debug directory with a CodeView record naming <chain>.pdb, its GUID from the image so far.
  const pdb = new TextEncoder().encode(`${chain.name}.pdb`);
  const guid = createHash("sha256").update(image).digest().subarray(0, 16);
  const cv = DEBUG + 28;
  view.setUint32(DEBUG + 12, 2, true);
  view.setUint32(DEBUG + 16, 24 + pdb.length + 1, true);
  view.setUint32(DEBUG + 20, cv, true);
  view.setUint32(cv, 0x53445352, true);
  image.set(guid, cv + 4);
  view.setUint32(cv + 20, 1, true);
  image.set(pdb, cv + 24);
  view.setUint32(dirs + 6 * 8, DEBUG, true);
  view.setUint32(dirs + 6 * 8 + 4, 28, true);
  const module: Module = {
    name: `${chain.name}.exe`,
    base: BASE,
    size: BigInt(IMAGE_SIZE),
    symbols: [{ name: "start", rva: 0x1000n, size: 0x10n }, ...laid.map((l) => ({ name: l.spec.name, rva: BigInt(l.rva), size: BigInt(l.length) }))],
  };
  return { image, laid, module };
}

/** Runs a chain and sweeps it. */
export function sweepChain(chain: ArmChainSpec): Sweep {
  const { image, laid, module } = buildImage(chain);
  const m = new ThumbMachine({ ...ENTRY, sp: STACK_TOP - 0x40n, lr: 0n, pc: BASE + BigInt(FIRST_FN), cpsr: 0x20n }, CLOBBER);
  const steps: SweepStep[] = [];
  const stackLow = STACK_TOP - STACK_SIZE;
  const memory = [
    { base: BASE, bytes: image },
    { base: stackLow, bytes: new Uint8Array(Number(STACK_SIZE)) },
  ];
  /** The callers: return address and sp at the call, innermost last. */
  const callers: TruthFrame[] = [];
  let written = new Map<bigint, bigint>();
  let step = 0;
  const snap = (): void => {
    const writes = [...m.words].filter(([a, v]) => written.get(a) !== v).map(([a, v]) => ({ address: a, bytes: Uint8Array.of(Number(v & 0xffn), Number((v >> 8n) & 0xffn), Number((v >> 16n) & 0xffn), Number((v >> 24n) & 0xffn)) }));
    written = new Map(m.words);
    const registers: Registers = { ...m.regs };
    const fn = laid.find((l) => m.regs["pc"]! >= BASE + BigInt(l.rva) && m.regs["pc"]! < BASE + BigInt(l.rva + l.length));
    const truth: TruthFrame[] = [{ pc: m.regs["pc"]!, sp: m.regs["sp"]!, ...(fn === undefined ? {} : { function: fn.spec.name }) }, ...[...callers].reverse()];
    steps.push({ step: step++, registers, writes, truth });
  };
  const run = (k: number): void => {
    const l = laid[k]!;
    const at = (rva: number): void => void (m.regs["pc"] = BASE + BigInt(rva));
    let pc = l.rva;
    at(pc);
    for (const i of l.prolog) {
      snap();
      m.run(i);
      pc += insnSize(i);
      at(pc);
    }
    // The body: nops, the call, nops; an alloca moves sp below the frame.
    if (l.spec.alloca !== undefined) m.regs["sp"]! -= BigInt(l.spec.alloca);
    for (let h = 0; h < BODY_BEFORE; h++) {
      snap();
      pc += 2;
      at(pc);
    }
    if (l.call !== undefined) {
      snap();
      const ret = BASE + BigInt(l.call + 4) + 1n;
      callers.push({ pc: ret, sp: m.regs["sp"]!, function: l.spec.name });
      m.regs["lr"] = ret;
      run(k + 1);
      callers.pop();
      pc = l.call + 4;
      at(pc);
      m.regs["lr"] = CLOBBER("lr")!;
    }
    for (let h = 0; h < BODY_AFTER; h++) {
      snap();
      pc += 2;
      at(pc);
    }
    for (const i of l.epilog) {
      snap();
      m.run(i);
      if (returns(i)) break;
      pc += insnSize(i);
      at(pc);
    }
    // Back in the caller, in Thumb state: bit 0 of the return address is the T bit, not the pc's.
    m.regs["pc"] = m.regs["pc"]! & ~1n;
  };
  run(0);
  const fnNames = chain.functions.map((f) => f.name).join(" -> ");
  return {
    machine: "arm",
    description: `${chain.description} (${fnNames}), swept at every instruction`,
    provenance: "model: synthetic ARM Thumb-2 chain (emulator/arm/corpus.ts, instructions run by emulator/arm/thumb-model.ts); truth from the model's call stack",
    modules: [module],
    memory,
    steps,
  };
}

const packed = (p: Partial<ArmPackedUnwind>): ArmUnwindSpec => ({ kind: "packed", ret: 1, h: false, reg: 0, r: false, l: true, c: false, stackAdjust: 0, ...p });

/** The chains of the corpus, each one sweep. */
export const ARM_CORPUS: readonly ArmChainSpec[] = [
  {
    name: "packed-shapes",
    description: "packed .pdata words: r4-rN with lr (Ret 0, 1, 2), a frame chain (C), homed arguments (H, with L, and without it in the innermost function, which keeps lr), d8-dE (R), a plain and a large Stack Adjust, folded into the push (PF), the pop (EF) or both",
    functions: [
      { name: "p_ret0", unwind: packed({ ret: 0, reg: 3, stackAdjust: 2 }) },
      { name: "p_chain", unwind: packed({ ret: 1, reg: 1, c: true, stackAdjust: 4 }) },
      { name: "p_home", unwind: packed({ ret: 2, h: true, reg: 0, stackAdjust: 0x90 }) },
      { name: "p_vfp", unwind: packed({ ret: 1, r: true, reg: 2, l: true, stackAdjust: 3 }) },
      { name: "p_pf", unwind: packed({ ret: 0, reg: 1, stackAdjust: 0x3f5 }) },
      { name: "p_ef", unwind: packed({ ret: 1, reg: 2, stackAdjust: 0x3f9 }) },
      { name: "p_both", unwind: packed({ ret: 2, r: true, reg: 1, c: true, stackAdjust: 0x3fe }) },
      { name: "p_chain_only", unwind: packed({ ret: 1, r: true, reg: 7, c: true, l: true, stackAdjust: 0 }) },
      // Without L the function keeps lr in its register: only the innermost may.
      { name: "p_home_nolr", unwind: packed({ ret: 1, h: true, l: false, reg: 2, stackAdjust: 1 }) },
    ],
  },
  {
    name: "xdata-codes",
    description: ".xdata records whose prologs and epilogs use every unwind code: add sp (00-7F, E8-EB, F7-FA), pop masks (80-BF, EC-ED), pop r4-rX (D0-DF), vpop (E0-E7, F5, F6), mov sp (C0-CF) after an alloca, ldr lr (EF), nops (FB, FC), ends FD, FE, FF, one epilog in the header or an epilog scope",
    functions: [
      {
        name: "x_pop_w",
        unwind: {
          kind: "xdata",
          prolog: [{ op: "push", regs: ["r4", "r8", "r9", "lr"], size: 4 }, { op: "sub-sp", n: 0x800, size: 4 }],
          epilog: [{ op: "add-sp", n: 0x800, size: 4 }, { op: "pop", regs: ["r4", "r8", "r9", "pc"], size: 4 }],
        },
      },
      {
        name: "x_frame",
        alloca: 0x30,
        unwind: {
          kind: "xdata",
          movSp: true,
          prolog: [{ op: "push", regs: ["r4", "r5", "r6", "r7", "lr"], size: 2 }, { op: "set-fp", reg: "r7", n: 0, size: 2 }, { op: "sub-sp", n: 8, size: 2 }],
          epilog: [{ op: "mov-sp", reg: "r7", size: 2 }, { op: "pop", regs: ["r4", "r5", "r6", "r7", "pc"], size: 2 }],
        },
      },
      {
        name: "x_vfp",
        unwind: {
          kind: "xdata",
          scope: true,
          prolog: [{ op: "push", regs: ["r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr"], size: 4 }, { op: "vpush", first: 8, last: 11 }, { op: "vpush", first: 16, last: 17 }, { op: "sub-sp", n: 0x10, size: 2 }],
          epilog: [{ op: "add-sp", n: 0x10, size: 2 }, { op: "vpop", first: 16, last: 17 }, { op: "vpop", first: 8, last: 11 }, { op: "pop", regs: ["r4", "r5", "r6", "r7", "r8", "r9", "r10", "r11", "lr"], size: 4 }, { op: "ret", size: 4 }],
        },
      },
      {
        name: "x_lo",
        unwind: {
          kind: "xdata",
          prolog: [{ op: "push", regs: ["r0", "r2", "lr"], size: 2 }, { op: "vpush", first: 1, last: 3 }, { op: "nop", size: 2 }, { op: "nop", size: 4 }],
          epilog: [{ op: "vpop", first: 1, last: 3 }, { op: "pop", regs: ["r0", "r2", "lr"], size: 4 }, { op: "ret", size: 2 }],
        },
      },
      {
        name: "x_ldr_lr",
        unwind: {
          kind: "xdata",
          scope: true,
          prolog: [{ op: "str-lr", n: 8 }, { op: "push", regs: ["r4", "r5", "r6"], size: 2 }, { op: "sub-sp", n: 0x400, size: 2 }, { op: "sub-sp", n: 0x1000, size: 4 }],
          epilog: [{ op: "add-sp", n: 0x1000, size: 4 }, { op: "add-sp", n: 0x400, size: 2 }, { op: "pop", regs: ["r4", "r5", "r6"], size: 2 }, { op: "ldr-pc", n: 8 }],
        },
      },
      {
        name: "x_chain",
        unwind: {
          kind: "xdata",
          prolog: [{ op: "push", regs: ["r11", "lr"], size: 4 }, { op: "set-fp", reg: "r11", n: 0, size: 2 }, { op: "sub-sp", n: 0x20, size: 2 }],
          epilog: [{ op: "add-sp", n: 0x20, size: 2 }, { op: "pop", regs: ["r11", "lr"], size: 4 }, { op: "ret", size: 2 }],
        },
      },
      { name: "leaf", unwind: { kind: "none" } },
    ],
  },
];

/**
 * A recursion `depth` calls deep for the bench: `entry` (packed: push {r4, lr}) calls `recurse`
 * (packed: push {r4, r5, lr}; sub sp, sp, #8), which calls itself `depth` times and then `bottom`
 * (no `.pdata` entry), where the snapshot is taken; its truth is the model's call stack.
 */
export function armRecursionSnapshot(depth: number): Snapshot {
  const chain: ArmChainSpec = {
    name: "arm-recursion",
    description: `ARM recursion ${depth} calls deep`,
    functions: [
      { name: "entry", unwind: packed({ ret: 0, reg: 0 }) },
      { name: "recurse", unwind: packed({ ret: 0, reg: 1, stackAdjust: 2 }) },
      { name: "bottom", unwind: { kind: "none" } },
    ],
  };
  const { image, laid, module } = buildImage(chain);
  const [entry, recurse, bottom] = laid as [Laid, Laid, Laid];
  const m = new ThumbMachine({ ...ENTRY, sp: STACK_TOP - 0x40n, lr: 0n, pc: 0n, cpsr: 0x20n }, CLOBBER);
  const truth: TruthFrame[] = [];
  const call = (l: Laid): void => {
    l.prolog.forEach((i) => m.run(i));
    const ret = BASE + BigInt(l.call! + 4) + 1n;
    truth.unshift({ pc: ret, sp: m.regs["sp"]!, function: l.spec.name });
    m.regs["lr"] = ret;
  };
  call(entry);
  for (let k = 0; k <= depth; k++) call(recurse);
  m.regs["pc"] = BASE + BigInt(bottom.rva + 2);
  truth.unshift({ pc: m.regs["pc"]!, sp: m.regs["sp"]!, function: "bottom" });
  const low = m.regs["sp"]! & ~0xfffn;
  const stack = new Uint8Array(Number(STACK_TOP - low));
  const view = new DataView(stack.buffer);
  for (const [a, v] of m.words) view.setUint32(Number(a - low), Number(v), true);
  return {
    machine: "arm",
    threads: [{ id: 0, crashed: true, registers: { ...m.regs }, truth }],
    memory: new RegionMemory([{ base: BASE, bytes: image }, { base: low, bytes: stack }]),
    modules: [module],
  };
}

/** The corpus's files. */
export function armCorpusFiles(): { file: string; text: string }[] {
  return ARM_CORPUS.map((chain) => ({ file: `vectors/arm/synthetic/${chain.name}.sweep.json`, text: formatSweep(sweepChain(chain)) }));
}
