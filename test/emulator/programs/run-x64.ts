/**
 * Test driver for generated x64 programs: maps the image at its base under Unicorn, maps the
 * stack the program asks for (SizeOfStackReserve) below STACK_TOP, pushes the 0 sentinel return
 * address with a 48-byte home area above it (as emulator/run.ts does) and runs from `main` until
 * RIP is 0. Nonvolatile registers start with known values: general registers through the
 * engine, XMM6–XMM15 through a short loader snippet (the engine wrapper has no XMM access), read
 * back by a second snippet after the run.
 *
 * A code hook keeps a shadow call stack (push on E8, pop on C3 / F3 C3; a jump to a handler
 * pushes the interrupted frame its machine frame describes, popped at the resume label), checks
 * the x64 ABI (RSP ≡ 0 mod 16 at calls, ≡ 8 at function entry) and, at every capture label,
 * records the ground truth and what a reference unwinder makes of the stack. The unwinder
 * follows x64-unwind.md §1.4–§1.8 as Windows does (raw return addresses, v1 epilog detection by
 * instruction bytes, v2 EPILOG codes, the prolog walk with chaining, PUSH_MACHFRAME, leaves
 * without pdata); it is deliberately small and lives here, apart from the project's walkers.
 */
import { parsePe, type RuntimeFunction } from "../../../src/formats/pe.js";
import { loadAssembler } from "../../../emulator/assemble.js";
import { Unicorn } from "../../../emulator/unicorn.js";
import type { X64Program } from "../../../emulator/programs/x64-chain.js";

/** One past the highest stack address; the stack is mapped below it, clear of the image at 0x140000000. */
export const STACK_TOP = 0x1_0000_0000n;
/** RSP at the first instruction of main: it points at the sentinel, with 48 bytes above. */
export const INITIAL_RSP = STACK_TOP - 0x38n;

/** The nonvolatile general registers in CONTEXT order, and their values before the run. */
export const INITIAL = {
  rbx: 0x1111_1111_1111_1111n,
  rbp: 0x5555_5555_5555_5555n,
  rsi: 0x6666_6666_6666_6666n,
  rdi: 0x7777_7777_7777_7777n,
  r12: 0xcccc_cccc_cccc_ccccn,
  r13: 0xdddd_dddd_dddd_ddddn,
  r14: 0xeeee_eeee_eeee_eeeen,
  r15: 0xffff_ffff_ffff_fff0n,
} as const;

/** A nonvolatile general register. */
export type Nonvolatile = keyof typeof INITIAL;
const NONVOLATILE = Object.keys(INITIAL) as Nonvolatile[];
/** General registers by CONTEXT number (x64-unwind.md §1.1). */
const GPR = ["rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15"] as const;

/** The 16 bytes XMM<n> holds before the run: n repeated, then 0xA5 fill, so every register differs. */
export function initialXmm(n: number): Uint8Array {
  return Uint8Array.from({ length: 16 }, (_, i) => (i < 4 ? n : 0xa5));
}

/** One frame: pc, sp (what `ret` leaves, or the machine frame's RSP) and the nonvolatile registers it had. */
export interface Frame {
  pc: bigint;
  sp: bigint;
  regs: Record<Nonvolatile, bigint>;
}

/** An XMM register an unwind restored from a save slot. */
export interface XmmRestore {
  xmm: number;
  address: bigint;
  value: Uint8Array;
}

/** What the run saw at one capture label. */
export interface Capture {
  label: string;
  rip: bigint;
  rsp: bigint;
  /** Innermost first: the context, then each caller (or interrupted frame) with its registers at the call. */
  truth: Frame[];
  /** The same frames as the reference unwinder finds them, or the error it stopped with. */
  walk: Frame[] | Error;
  /** XMM registers the unwinder restored along the way. */
  xmm: XmmRestore[];
  /** The rules the unwinder applied per frame, for failure messages. */
  rules: string[];
}

/** How a run ended. */
export interface RunResult {
  captures: Capture[];
  finalRip: bigint;
  finalRsp: bigint;
  finalRegs: Record<Nonvolatile, bigint>;
  finalXmm: Uint8Array[];
  deepestCalls: number;
  /** ABI violations seen: misaligned calls or entries. */
  abi: string[];
  instructions: number;
}

const SNIPPETS = 0x7000_0000n;
const XMM_IN = SNIPPETS + 0x800n;
const XMM_OUT = SNIPPETS + 0xc00n;

/** Runs a program to completion under Unicorn; throws if it faults or runs away. */
export async function runX64(program: X64Program): Promise<RunResult> {
  const pe = parsePe(program.image);
  const image = pe.mapped();
  const base = program.base;
  const text = pe.sections.find((s) => s.name === ".text");
  if (text === undefined) throw new Error("no .text section");
  const functions = pe.runtimeFunctions();
  const captureAt = new Map<bigint, string[]>();
  for (const label of program.captures) {
    const address = program.labels[label]!;
    captureAt.set(address, [...(captureAt.get(address) ?? []), label]);
  }
  const handlers = new Map(program.machineFrames.map((m) => [program.labels[m.handler]!, m]));
  const resumes = new Set(program.machineFrames.map((m) => program.labels[m.resume]!));
  const entries = new Map<bigint, bigint>();
  for (const s of program.symbols) {
    if (s.name === "__chkstk" || s.name.endsWith("_chained")) continue;
    const m = program.machineFrames.find((x) => x.handler === s.name);
    entries.set(base + BigInt(s.rva), m?.errorCode === true ? 0n : 8n);
  }
  const chkstk = program.labels["__chkstk"];

  const assembler = await loadAssembler();
  const load = assembler.assemble(
    Array.from({ length: 10 }, (_, k) => `movdqu xmm${k + 6}, xmmword ptr [${XMM_IN + BigInt(16 * k)}]`).join("\n"),
    { mode: 64, address: SNIPPETS },
  );
  const store = assembler.assemble(
    Array.from({ length: 10 }, (_, k) => `movdqu xmmword ptr [${XMM_OUT + BigInt(16 * k)}], xmm${k + 6}`).join("\n"),
    { mode: 64, address: SNIPPETS + 0x400n },
  );

  const uc = Unicorn.open(64);
  try {
    uc.memMap(base, pe.sizeOfImage);
    uc.memWrite(base, image);
    uc.memMap(STACK_TOP - BigInt(program.stackReserve), program.stackReserve, 3);
    uc.memMap(SNIPPETS, 0x1000);
    uc.memWrite(SNIPPETS, load);
    uc.memWrite(SNIPPETS + 0x400n, store);
    for (let k = 0; k < 10; k++) uc.memWrite(XMM_IN + BigInt(16 * k), initialXmm(k + 6));
    uc.start(SNIPPETS, SNIPPETS + BigInt(load.length));

    for (const r of NONVOLATILE) uc.regWrite(r, INITIAL[r]);
    uc.regWrite("rsp", INITIAL_RSP);
    uc.memWrite(INITIAL_RSP, new Uint8Array(8));

    const read = (address: bigint, size: number): Uint8Array | undefined => {
      if (address >= base && address + BigInt(size) <= base + BigInt(image.length)) return image.subarray(Number(address - base), Number(address - base) + size);
      if (address < STACK_TOP - BigInt(program.stackReserve) || address + BigInt(size) > STACK_TOP) return undefined;
      return uc.memRead(address, size);
    };
    const regs = (): Record<Nonvolatile, bigint> => Object.fromEntries(NONVOLATILE.map((r) => [r, uc.regRead(r)])) as Record<Nonvolatile, bigint>;
    const shadow: (Frame & { slot: bigint | undefined })[] = [];
    const captures: Capture[] = [];
    const abi: string[] = [];
    let deepestCalls = 0;
    let instructions = 0;
    uc.hookCode(
      (address) => {
        instructions++;
        const rsp = uc.regRead("rsp");
        const residue = entries.get(address);
        if (residue !== undefined && rsp % 16n !== residue) abi.push(`entry 0x${address.toString(16)} with RSP 0x${rsp.toString(16)}`);
        const handler = handlers.get(address);
        if (handler !== undefined) {
          // The interrupted frame: RIP and RSP as the machine frame holds them (x64-unwind.md §1.3).
          const at = handler.errorCode ? 8n : 0n;
          shadow.push({ pc: u64(read(rsp + at, 8)!), sp: u64(read(rsp + at + 24n, 8)!), regs: regs(), slot: undefined });
        }
        if (resumes.has(address)) {
          const top = shadow.pop();
          if (top?.slot !== undefined) throw new Error(`resumed at 0x${address.toString(16)} with a call on top of the shadow stack`);
        }
        for (const label of captureAt.get(address) ?? []) {
          const all = GPR.map((r) => (r === "rsp" ? rsp : uc.regRead(r)));
          const truth: Frame[] = [{ pc: address, sp: rsp, regs: regs() }, ...[...shadow].reverse().map(({ pc, sp, regs: r }) => ({ pc, sp, regs: r }))];
          const xmm: XmmRestore[] = [];
          const rules: string[] = [];
          let walk: Frame[] | Error;
          try {
            walk = unwindX64({ base, functions, read, xmm, rules }, address, all);
          } catch (error) {
            walk = error instanceof Error ? error : new Error(String(error));
          }
          captures.push({ label, rip: address, rsp, truth, walk, xmm, rules });
        }
        const bytes = read(address, 2)!;
        if (bytes[0] === 0xe8) {
          const target = address + 5n + BigInt(new DataView(read(address + 1n, 4)!.slice().buffer).getInt32(0, true));
          if (target !== chkstk && rsp % 16n !== 0n) abi.push(`call at 0x${address.toString(16)} with RSP 0x${rsp.toString(16)}`);
          shadow.push({ pc: address + 5n, sp: rsp, regs: regs(), slot: rsp - 8n });
          deepestCalls = Math.max(deepestCalls, shadow.length);
        } else if (bytes[0] === 0xc3 || (bytes[0] === 0xf3 && bytes[1] === 0xc3)) {
          const top = shadow.pop();
          if (top !== undefined && top.slot !== rsp) throw new Error(`ret at 0x${address.toString(16)} through 0x${rsp.toString(16)}, not the slot 0x${top.slot?.toString(16)}`);
        }
      },
      { begin: base + BigInt(text.virtualAddress), end: base + BigInt(text.virtualAddress + text.virtualSize - 1) },
    );

    const stop = uc.start(base + BigInt(program.entryRva), 0n, { count: 5_000_000 });
    if (stop.reason !== "until") throw new Error(`the run ended with ${stop.reason} at 0x${stop.pc.toString(16)}`);
    const finalRip = uc.regRead("rip");
    const finalRsp = uc.regRead("rsp");
    const finalRegs = regs();
    uc.start(SNIPPETS + 0x400n, SNIPPETS + 0x400n + BigInt(store.length));
    const finalXmm = Array.from({ length: 10 }, (_, k) => uc.memRead(XMM_OUT + BigInt(16 * k), 16));
    return { captures, finalRip, finalRsp, finalRegs, finalXmm, deepestCalls, abi, instructions };
  } finally {
    uc.close();
  }
}

/** What the reference unwinder reads: the image's RUNTIME_FUNCTIONs and memory (code and stack). */
export interface UnwindEnvironment {
  base: bigint;
  functions: readonly RuntimeFunction[];
  read: (address: bigint, size: number) => Uint8Array | undefined;
  /** XMM registers restored from save slots are appended here. */
  xmm: XmmRestore[];
  /** One line per frame: the rule that unwound it. */
  rules: string[];
}

/** A decoded UNWIND_INFO: the header fields, the raw code slots and the chained parent. */
interface Info {
  version: number;
  flags: number;
  sizeOfProlog: number;
  frameRegister: number;
  frameOffset: number;
  slots: { offset: number; op: number; info: number; raw: number }[];
  parent: RuntimeFunction | undefined;
}

const CHAININFO = 4;

/**
 * Walks from a context to the 0 sentinel and returns every frame, innermost first (x64-unwind.md
 * §1.8): frame 0 and a frame reached through a machine frame use their PC as it is; caller frames
 * use the raw return address, falling back to the entry of `ra − 1` only when `ra` has none or
 * begins its entry. An address with no entry is a leaf: RIP = [RSP], RSP += 8.
 */
export function unwindX64(env: UnwindEnvironment, rip: bigint, gprs: readonly bigint[]): Frame[] {
  const regs = [...gprs];
  const view = (): Record<Nonvolatile, bigint> => Object.fromEntries(NONVOLATILE.map((r) => [r, regs[GPR.indexOf(r)]!])) as Record<Nonvolatile, bigint>;
  const frames: Frame[] = [{ pc: rip, sp: regs[4]!, regs: view() }];
  let pc = rip;
  let exact = true;
  for (let depth = 0; depth < 5000; depth++) {
    const rva = Number(pc - env.base);
    let entry = lookup(env, rva);
    let body = false;
    if (!exact && (entry === undefined || entry.beginRva === rva)) {
      entry = lookup(env, rva - 1);
      body = true;
    }
    let machine = false;
    if (entry === undefined) {
      if (!exact) throw new Error(`no RUNTIME_FUNCTION for the return address 0x${pc.toString(16)}`);
      pc = read64(env, regs[4]!);
      regs[4] = regs[4]! + 8n;
      env.rules.push("leaf");
    } else {
      const result = virtualUnwind(env, entry, pc, regs, body);
      pc = result.rip;
      machine = result.machine;
    }
    if (pc === 0n) return frames;
    frames.push({ pc, sp: regs[4]!, regs: view() });
    exact = machine;
  }
  throw new Error("the walk did not end");
}

/** RtlVirtualUnwind for one entry (x64-unwind.md §1.4–§1.7); updates `regs` and returns the new RIP. */
function virtualUnwind(env: UnwindEnvironment, first: RuntimeFunction, controlPc: bigint, regs: bigint[], body: boolean): { rip: bigint; machine: boolean } {
  const entry = resolve(env, first);
  const info = decodeInfo(env, entry.unwindData);
  const rel = Number(controlPc - env.base);
  const prologOffset = body ? Number.POSITIVE_INFINITY : (rel - entry.beginRva) >>> 0;

  // Establisher frame (§1.4): the base of every SAVE offset, computed once.
  let establisher = regs[4]!;
  if (info.frameRegister !== 0) {
    const framed = regs[info.frameRegister]! - BigInt(16 * info.frameOffset);
    if (prologOffset >= info.sizeOfProlog || (info.flags & CHAININFO) !== 0) {
      establisher = framed;
    } else {
      for (let i = 0; i < info.slots.length; i += slotCount(info.slots[i]!)) {
        if (info.slots[i]!.op === 3) {
          if (prologOffset >= info.slots[i]!.offset) establisher = framed;
          break;
        }
      }
    }
  }

  if (!body) {
    const epilog = info.version < 2 ? v1Epilog(env, entry, info, rel, regs) : v2Epilog(env, entry, info, rel, regs);
    if (epilog !== undefined) return { rip: epilog, machine: false };
  }

  // The prolog walk (§1.7): codes whose instruction has run are undone; chained parents follow.
  let current = entry;
  let currentInfo = info;
  for (let depth = 0; depth <= 32; depth++) {
    const offset = body ? Number.POSITIVE_INFINITY : (rel - current.beginRva) >>> 0;
    let machine = false;
    let rip = 0n;
    const applied: string[] = [];
    for (let i = 0; i < currentInfo.slots.length; i += slotCount(currentInfo.slots[i]!)) {
      const code = currentInfo.slots[i]!;
      if (code.op === 6 || offset < code.offset) continue;
      const next = (k: number): number => currentInfo.slots[i + k]!.raw;
      switch (code.op) {
        case 0:
          regs[code.info] = read64(env, regs[4]!);
          regs[4] = regs[4]! + 8n;
          applied.push(`push ${GPR[code.info]}`);
          break;
        case 1: {
          const size = code.info === 0 ? next(1) * 8 : next(1) + next(2) * 0x1_0000;
          regs[4] = regs[4]! + BigInt(size);
          applied.push(`alloc 0x${size.toString(16)}`);
          break;
        }
        case 2:
          regs[4] = regs[4]! + BigInt(code.info * 8 + 8);
          applied.push(`alloc 0x${(code.info * 8 + 8).toString(16)}`);
          break;
        case 3:
          regs[4] = regs[currentInfo.frameRegister]! - BigInt(16 * currentInfo.frameOffset);
          applied.push("set_fpreg");
          break;
        case 4:
        case 5: {
          const at = establisher + BigInt(code.op === 4 ? next(1) * 8 : next(1) + next(2) * 0x1_0000);
          regs[code.info] = read64(env, at);
          applied.push(`save ${GPR[code.info]}`);
          break;
        }
        case 8:
        case 9: {
          const at = establisher + BigInt(code.op === 8 ? next(1) * 16 : next(1) + next(2) * 0x1_0000);
          const value = env.read(at, 16);
          if (value === undefined) throw new Error(`unreadable XMM save slot 0x${at.toString(16)}`);
          env.xmm.push({ xmm: code.info, address: at, value: value.slice() });
          applied.push(`save xmm${code.info}`);
          break;
        }
        case 10: {
          const at = code.info === 0 ? 0n : 8n;
          rip = read64(env, regs[4]! + at);
          regs[4] = read64(env, regs[4]! + at + 24n);
          machine = true;
          applied.push("machframe");
          break;
        }
        default:
          throw new Error(`unwind op ${code.op} is not valid`);
      }
    }
    if ((currentInfo.flags & CHAININFO) !== 0) {
      env.rules.push(`prolog [${applied.join(", ")}] then chain`);
      current = currentInfo.parent!;
      currentInfo = decodeInfo(env, current.unwindData);
      continue;
    }
    env.rules.push(`prolog [${applied.join(", ")}]`);
    if (!machine) {
      rip = read64(env, regs[4]!);
      regs[4] = regs[4]! + 8n;
    }
    return { rip, machine };
  }
  throw new Error("the chain is deeper than 32");
}

/** Version-1 epilog detection and emulation by instruction bytes (x64-unwind.md §1.5); undefined outside an epilog. */
function v1Epilog(env: UnwindEnvironment, entry: RuntimeFunction, info: Info, rel: number, regs: bigint[]): bigint | undefined {
  const b = env.read(env.base + BigInt(rel), 32);
  if (b === undefined) return undefined;
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  let rsp = regs[4]!;
  if (b[0] === 0x48 && b[1] === 0x83 && b[2] === 0xc4) {
    rsp += BigInt(view.getInt8(3));
    i = 4;
  } else if (b[0] === 0x48 && b[1] === 0x81 && b[2] === 0xc4) {
    rsp += BigInt(view.getInt32(3, true));
    i = 7;
  } else if ((b[0]! & 0xfe) === 0x48 && b[1] === 0x8d) {
    const modrm = b[2]!;
    const fp = ((b[0]! & 1) << 3) | (modrm & 7);
    if (fp !== 0 && fp === info.frameRegister) {
      if ((modrm & 0xf8) === 0x60) {
        rsp = regs[fp]! + BigInt(view.getInt8(3));
        i = 4;
      } else if ((modrm & 0xf8) === 0xa0) {
        rsp = regs[fp]! + BigInt(view.getInt32(3, true));
        i = 7;
      }
    }
  }
  const pops: number[] = [];
  for (;;) {
    if ((b[i]! & 0xf8) === 0x58) {
      pops.push(b[i]! & 7);
      i += 1;
    } else if ((b[i]! & 0xf0) === 0x40 && (b[i + 1]! & 0xf8) === 0x58) {
      pops.push(((b[i]! & 1) << 3) | (b[i + 1]! & 7));
      i += 2;
    } else {
      break;
    }
  }
  if (b[i] === 0xf2) i += 1;
  let epilog = false;
  if (b[i] === 0xc3 || b[i] === 0xc2 || (b[i] === 0xf3 && b[i + 1] === 0xc3)) {
    epilog = true;
  } else if (b[i] === 0xeb || b[i] === 0xe9) {
    const length = b[i] === 0xeb ? 2 : 5;
    const target = rel + i + length + (b[i] === 0xeb ? view.getInt8(i + 1) : view.getInt32(i + 1, true));
    const primary = primaryOf(env, entry);
    const owner = lookup(env, target);
    const outside = target < entry.beginRva || target >= entry.endRva;
    const sameFunction = owner !== undefined && primaryOf(env, owner).beginRva === primary.beginRva;
    epilog = (outside && (!sameFunction || target === primary.beginRva)) || (target === entry.beginRva && (info.flags & CHAININFO) === 0);
  } else if (b[i] === 0xff && b[i + 1] === 0x25) {
    epilog = true;
  } else if ((b[i]! & 0xf8) === 0x48 && b[i + 1] === 0xff && (b[i + 2]! & 0x38) === 0x20) {
    epilog = true;
  }
  if (!epilog) return undefined;
  regs[4] = rsp;
  for (const r of pops) {
    regs[r] = read64(env, regs[4]);
    regs[4] += 8n;
  }
  const rip = read64(env, regs[4]);
  regs[4] += 8n;
  env.rules.push(`v1 epilog (${pops.length} pops)`);
  return rip;
}

/** Version-2 epilog test and emulation from EPILOG codes (x64-unwind.md §1.6); undefined outside an epilog. */
function v2Epilog(env: UnwindEnvironment, entry: RuntimeFunction, info: Info, rel: number, regs: bigint[]): bigint | undefined {
  const header = info.slots[0];
  if (header === undefined || header.op !== 6) return undefined;
  const size = header.offset;
  let start: number | undefined;
  if ((header.info & 1) !== 0 && ((rel - (entry.endRva - size)) >>> 0) < size) start = entry.endRva - size;
  for (let k = 1; start === undefined && k < info.slots.length && info.slots[k]!.op === 6; k++) {
    const offset = info.slots[k]!.offset | (info.slots[k]!.info << 8);
    if (offset === 0) break;
    if (((rel - (entry.endRva - offset)) >>> 0) < size) start = entry.endRva - offset;
  }
  if (start === undefined) return undefined;
  const epilogOffset = rel - start;
  let i = 0;
  while (i < info.slots.length && info.slots[i]!.op !== 0 && info.slots[i]!.op !== 10) i += slotCount(info.slots[i]!);
  let cur = 0;
  let popped = 0;
  for (; i < info.slots.length && info.slots[i]!.op === 0; i++) {
    const r = info.slots[i]!.info;
    if (cur >= epilogOffset) {
      regs[r] = read64(env, regs[4]!);
      regs[4] = regs[4]! + 8n;
      popped++;
    }
    cur += r < 8 ? 1 : 2;
  }
  const rip = read64(env, regs[4]!);
  regs[4] = regs[4]! + 8n;
  env.rules.push(`v2 epilog at +${epilogOffset} (${popped} pops)`);
  return rip;
}

/** The entry whose [Begin, End) holds `rva`, by binary search over the sorted table (§1.1). */
function lookup(env: UnwindEnvironment, rva: number): RuntimeFunction | undefined {
  let low = 0;
  let high = env.functions.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    const f = env.functions[mid]!;
    if (rva < f.beginRva) high = mid - 1;
    else if (rva >= f.endRva) low = mid + 1;
    else return f;
  }
  return undefined;
}

/** Follows indirect entries (UnwindData bit 0) to the entry that owns an UNWIND_INFO. */
function resolve(env: UnwindEnvironment, entry: RuntimeFunction): RuntimeFunction {
  let e = entry;
  for (let depth = 0; (e.unwindData & 1) !== 0; depth++) {
    if (depth > 32) throw new Error("indirect entries loop");
    const bytes = env.read(env.base + BigInt(e.unwindData & ~1), 12)!;
    const v = new DataView(bytes.buffer, bytes.byteOffset, 12);
    e = { beginRva: v.getUint32(0, true), endRva: v.getUint32(4, true), unwindData: v.getUint32(8, true) };
  }
  return e;
}

/** The primary entry of a function: the end of the CHAININFO links. */
function primaryOf(env: UnwindEnvironment, entry: RuntimeFunction): RuntimeFunction {
  let e = resolve(env, entry);
  for (let depth = 0; depth <= 32; depth++) {
    const info = decodeInfo(env, e.unwindData);
    if ((info.flags & CHAININFO) === 0) return e;
    e = resolve(env, info.parent!);
  }
  throw new Error("the chain is deeper than 32");
}

/** Decodes an UNWIND_INFO header, its code slots and its chained parent (x64-unwind.md §1.2). */
function decodeInfo(env: UnwindEnvironment, rva: number): Info {
  const header = env.read(env.base + BigInt(rva), 4);
  if (header === undefined) throw new Error(`unreadable UNWIND_INFO at 0x${rva.toString(16)}`);
  const count = header[2]!;
  const flags = header[0]! >> 3;
  const codes = env.read(env.base + BigInt(rva + 4), 2 * count + 12)!;
  const slots = Array.from({ length: count }, (_, k) => ({
    offset: codes[2 * k]!,
    op: codes[2 * k + 1]! & 0xf,
    info: codes[2 * k + 1]! >> 4,
    raw: codes[2 * k]! | (codes[2 * k + 1]! << 8),
  }));
  let parent: RuntimeFunction | undefined;
  if ((flags & CHAININFO) !== 0) {
    const at = 2 * ((count + 1) & ~1);
    const v = new DataView(codes.buffer, codes.byteOffset + at, 12);
    parent = { beginRva: v.getUint32(0, true), endRva: v.getUint32(4, true), unwindData: v.getUint32(8, true) };
  }
  return { version: header[0]! & 7, flags, sizeOfProlog: header[1]!, frameRegister: header[3]! & 0xf, frameOffset: header[3]! >> 4, slots, parent };
}

/** Slots an op takes as the prolog walk steps (§1.3): EPILOG counts 2. */
function slotCount(code: { op: number; info: number }): number {
  switch (code.op) {
    case 1:
      return code.info === 0 ? 2 : 3;
    case 4:
    case 6:
    case 8:
      return 2;
    case 5:
    case 7:
    case 9:
      return 3;
    default:
      return 1;
  }
}

function read64(env: UnwindEnvironment, address: bigint): bigint {
  const bytes = env.read(address, 8);
  if (bytes === undefined) throw new Error(`unreadable stack at 0x${address.toString(16)}`);
  return u64(bytes);
}

function u64(bytes: Uint8Array): bigint {
  return new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true);
}
