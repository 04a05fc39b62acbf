/**
 * What an x86 walker reads from code bytes: whether a value is a return address (it lies in a
 * module and the bytes before it are a call), stack scanning for such values (minidump.md §5.3,
 * x86-fpo.md §3.1), and the two instruction shapes an unwinder must understand without a
 * record: an FPO prolog (x86-fpo.md §1.4 step 4) and an epilogue (step 5). The decoders know
 * exactly the encodings the spec lists (plus `lea esp,[ebp+d]`, which clang uses to undo a
 * realignment); anything else ends the decode, and the caller falls back.
 */
import { hex } from "../../hex.js";
import { readU32, readU32n, type MemoryReader } from "../../memory/reader.js";
import { machineInfo } from "../../model/machine.js";
import { moduleAt, type Module, type Registers } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, type UnwindCache } from "../../unwind/cache.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { work } from "../../unwind/work.js";

const U32 = 0xffff_ffffn;

/** Registers by ModRM number, as the one-byte `push r32` / `pop r32` opcodes (50+r / 58+r) name them. */
const REG32 = machineInfo("x86").general as readonly Reg32[];

/** An x86 general register's name. */
type Reg32 = "eax" | "ecx" | "edx" | "ebx" | "esp" | "ebp" | "esi" | "edi";

/** The `n` bytes before `ra`, or undefined. */
function bytesBefore(images: MemoryReader, ra: bigint, n: number): Uint8Array | undefined {
  return ra >= BigInt(n) ? images.read(ra - BigInt(n), n) : undefined;
}

/**
 * The call instruction that ends just before `ra`, by encoding: `E8 rel32`, or `FF /2` in any of
 * its 32-bit addressing forms. Undefined when none fits, or when the bytes cannot be read.
 */
export function callBefore(images: MemoryReader, ra: bigint): string | undefined {
  work.units++;
  const b5 = bytesBefore(images, ra, 5);
  if (b5 !== undefined && b5[0] === 0xe8) return "call rel32";
  const b2 = bytesBefore(images, ra, 2);
  if (b2 !== undefined && b2[0] === 0xff) {
    const m = b2[1]!;
    if ((m & 0x38) === 0x10 && ((m & 0xc0) === 0xc0 || ((m & 0xc0) === 0 && (m & 7) !== 4 && (m & 7) !== 5))) return "call r/m32";
  }
  const b3 = bytesBefore(images, ra, 3);
  if (b3 !== undefined && b3[0] === 0xff) {
    const m = b3[1]!;
    if (m === 0x14 && (b3[2]! & 7) !== 5) return "call [sib]";
    if ((m & 0xf8) === 0x50 && m !== 0x54) return "call [r32+disp8]";
  }
  const b4 = bytesBefore(images, ra, 4);
  if (b4 !== undefined && b4[0] === 0xff && b4[1] === 0x54) return "call [sib+disp8]";
  const b6 = bytesBefore(images, ra, 6);
  if (b6 !== undefined && b6[0] === 0xff && !paddingTail(b6, 2)) {
    const m = b6[1]!;
    if (m === 0x15) return "call [disp32]";
    if ((m & 0xf8) === 0x90 && m !== 0x94) return "call [r32+disp32]";
  }
  const b7 = bytesBefore(images, ra, 7);
  if (b7 !== undefined && b7[0] === 0xff && !paddingTail(b7, 3) && (b7[1] === 0x94 || (b7[1] === 0x14 && (b7[2]! & 7) === 5))) return "call [sib+disp32]";
  return undefined;
}

/**
 * Whether the bytes of `b` from `from` on are alignment padding (all `nop` 0x90 or all `int3`
 * 0xCC): a 32-bit displacement made of padding is the end of one function and the gap before
 * the next, not a call whose return address is the next function's first byte.
 */
function paddingTail(b: Uint8Array, from: number): boolean {
  const pad = b[from];
  if (pad !== 0x90 && pad !== 0xcc) return false;
  for (let i = from + 1; i < b.length; i++) if (b[i] !== pad) return false;
  return true;
}

/** {@link returnAddressInfo}: not a return address. */
export const NOT_A_RETURN_ADDRESS = -1;
/** {@link returnAddressInfo}: a return address after an indirect call. */
export const UNKNOWN_CALL_TARGET = -2;
/** {@link returnAddressInfo}: a word in a module whose code the snapshot lacks, so no call site can be checked. */
export const UNCHECKED_RETURN_ADDRESS = -3;

/** Slots of the direct-mapped front of the return-address answers (a power of two). */
const FRONT_SLOTS = 1024;

/**
 * Answers by value, for one module list and image memory: a direct-mapped front for the values
 * seen last, the map for all of them, and the last answer (a rule asks about the word its scan
 * just classified).
 */
interface ReturnAddressAnswers {
  keys: Float64Array;
  infos: Float64Array;
  all: Map<number, number>;
  lastValue: number;
  lastInfo: number;
}

const ANSWERS = cacheSlot("x86 return addresses", () => new ImageKeyed<readonly Module[], ReturnAddressAnswers>());

function newAnswers(): ReturnAddressAnswers {
  return { keys: new Float64Array(FRONT_SLOTS).fill(-1), infos: new Float64Array(FRONT_SLOTS), all: new Map(), lastValue: -1, lastInfo: 0 };
}

/**
 * What `value` is as a return address: {@link NOT_A_RETURN_ADDRESS}; the target of the direct
 * call before it (a number ≥ 0); {@link UNKNOWN_CALL_TARGET} after an indirect call; or
 * {@link UNCHECKED_RETURN_ADDRESS} when the code is not in the snapshot. A return address lies after
 * `value − 1` in a module, and the bytes before it are a call instruction; when the module's
 * code is not in the snapshot at all, lying in a module is enough (as for Breakpad without
 * symbols). Answers are kept in the walk's cache per images and module list: code does not
 * change during a walk.
 */
export function returnAddressInfo(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint): number {
  return value > U32 ? NOT_A_RETURN_ADDRESS : returnAddressInfoN(cache, modules, images, Number(value));
}

/** {@link returnAddressInfo} for a 32-bit value given as a number. */
export function returnAddressInfoN(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: number): number {
  return answerOf(cache.get(ANSWERS).get(images, modules, newAnswers), modules, images, value);
}

/** The answers of a cache for a module list and its images (one lookup for a whole scan). */
function answersOf(cache: UnwindCache, modules: readonly Module[], images: MemoryReader): ReturnAddressAnswers {
  return cache.get(ANSWERS).get(images, modules, newAnswers);
}

function answerOf(answers: ReturnAddressAnswers, modules: readonly Module[], images: MemoryReader, value: number): number {
  if (value === answers.lastValue) return answers.lastInfo;
  answers.lastValue = value;
  answers.lastInfo = returnAddressInfoFront(answers, modules, images, value);
  return answers.lastInfo;
}

function returnAddressInfoFront(cache: ReturnAddressAnswers, modules: readonly Module[], images: MemoryReader, value: number): number {
  const slot = (value ^ (value >>> 10)) & (FRONT_SLOTS - 1);
  if (cache.keys[slot] === value) return cache.infos[slot]!;
  let info = cache.all.get(value);
  if (info === undefined) {
    info = classifyReturnAddress(modules, images, BigInt(value));
    cache.all.set(value, info);
  }
  cache.keys[slot] = value;
  cache.infos[slot] = info;
  return info;
}

function classifyReturnAddress(modules: readonly Module[], images: MemoryReader, value: bigint): number {
  const call = lookupAddress(value, true);
  if (value < 0x1000n || moduleAt(modules, call) === undefined) return NOT_A_RETURN_ADDRESS;
  if (callBefore(images, value) !== undefined) {
    const target = directCallTarget(images, value);
    return target === undefined ? UNKNOWN_CALL_TARGET : Number(target);
  }
  return images.read(call, 1) === undefined ? UNCHECKED_RETURN_ADDRESS : NOT_A_RETURN_ADDRESS;
}

/** Whether `value` can be a return address (see {@link returnAddressInfo}). */
export function isReturnAddress(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint): boolean {
  return returnAddressInfo(cache, modules, images, value) !== NOT_A_RETURN_ADDRESS;
}

/** A return address found by scanning: its slot and its value. */
export interface ScanHit {
  slot: bigint;
  value: bigint;
}

/** The target of the direct call (`E8 rel32`) that ends just before `ra`, or undefined for any other call. */
export function directCallTarget(images: MemoryReader, ra: bigint): bigint | undefined {
  const b = ra >= 5n ? images.read(ra - 5n, 5) : undefined;
  if (b === undefined || b[0] !== 0xe8) return undefined;
  const rel = (b[1]! | (b[2]! << 8) | (b[3]! << 16) | (b[4]! << 24)) >> 0;
  return (ra + BigInt(rel)) & U32;
}

/** Where a scan looks for return addresses: the modules and their images, and the function being unwound (−1: unknown). */
export interface ScanScope {
  modules: readonly Module[];
  images: MemoryReader;
  calleeStart: number;
  calleeEnd: number;
}

/** The word at the slot {@link scanSlots} last returned, one object per cache. */
export const SCANNED = cacheSlot("x86 scanned word", () => ({ value: 0 }));

/**
 * Scans `words + 1` stack words from `start` upwards (minidump.md §5.3: the window includes its
 * last word) for a return address; stops at the first unreadable word. With the callee's range in
 * `scope`, a return address that follows a direct call to another function (a stale one, such as
 * a stack probe's) is passed over for a later one in the window that follows a direct call into
 * the callee; when there is none the first return address wins.
 */
export function scanForReturnAddress(cache: UnwindCache, stack: MemoryReader, scope: ScanScope, start: bigint, words: number): ScanHit | undefined {
  const at = scanSlots(cache, stack, scope, Number(start & U32), words);
  return at < 0 ? undefined : { slot: BigInt(at), value: BigInt(cache.get(SCANNED).value) };
}

/** {@link scanForReturnAddress} on numbers: the slot found, or −1; the word there is left in the cache's {@link SCANNED}. */
export function scanSlots(cache: UnwindCache, stack: MemoryReader, scope: ScanScope, start: number, words: number): number {
  const { modules, images, calleeStart, calleeEnd } = scope;
  const scanned = cache.get(SCANNED);
  const answers = answersOf(cache, modules, images);
  let first = -1;
  let firstValue = 0;
  let slot = start;
  for (let i = 0; i <= words; i++, slot = (slot + 4) >>> 0) {
    work.units++;
    const value = readU32n(stack, slot);
    if (value === undefined) break;
    const info = answerOf(answers, modules, images, value);
    if (info === NOT_A_RETURN_ADDRESS) continue;
    const known = info >= 0;
    if (calleeStart < 0 || ((!known || (info >= calleeStart && info < calleeEnd)) && (first < 0 || known))) {
      scanned.value = value;
      return slot;
    }
    if (first < 0) {
      first = slot;
      firstValue = value;
    }
  }
  scanned.value = firstValue;
  return first;
}

/** A 32-bit memory operand: base + index·scale + disp, any part absent. */
interface MemOperand {
  base?: Reg32;
  index?: Reg32;
  scale: number;
  disp: number;
}

/** A register or memory operand of a ModRM byte. */
type RmOperand = { reg: Reg32 } | { mem: MemOperand };

/** One instruction the return simulation runs (see {@link decodeToReturn}). */
type SimOp =
  | { op: "push"; reg: Reg32 }
  | { op: "pop"; reg: Reg32 }
  | { op: "mov-imm"; reg: Reg32; value: number }
  | { op: "mov-to-reg"; reg: Reg32; src: RmOperand }
  | { op: "mov-to-mem"; dst: MemOperand; reg: Reg32 }
  | { op: "lea"; reg: Reg32; src: MemOperand }
  | { op: "arith"; kind: "add" | "sub" | "and"; reg: Reg32; value: number }
  | { op: "xchg"; a: Reg32; b: Reg32 }
  | { op: "leave" }
  | { op: "nop" }
  | { op: "ret"; pop: number }
  | { op: "jmp"; target: { rel: bigint } | RmOperand };

/** A decoded instruction with its text. */
export interface SimInstruction {
  op: SimOp;
  text: string;
}

/** The most instructions simulated from a PC to its function's return. */
const MAX_SIM_INSTRUCTIONS = 24;
const MAX_SIM_BYTES = 128;

function memText(m: MemOperand): string {
  const parts: string[] = [];
  if (m.base !== undefined) parts.push(m.base);
  if (m.index !== undefined) parts.push(m.scale === 1 ? m.index : `${m.scale}*${m.index}`);
  if (m.disp !== 0 || parts.length === 0) parts.push(m.disp < 0 && parts.length > 0 ? `-${-m.disp}` : hex(m.disp >>> 0));
  return `[${parts.join("+").replace("+-", "-")}]`;
}
const rmText = (o: RmOperand): string => ("reg" in o ? o.reg : memText(o.mem));

/** Decodes a ModRM (and SIB, displacement) at `at`: the reg field, the r/m operand and the length. */
function decodeModRm(bytes: Uint8Array, view: DataView, at: number): { reg: number; rm: RmOperand; length: number } | undefined {
  if (at >= bytes.length) return undefined;
  const modrm = bytes[at]!;
  const mod = modrm >> 6;
  const reg = (modrm >> 3) & 7;
  const rm = modrm & 7;
  if (mod === 3) return { reg, rm: { reg: REG32[rm]! }, length: 1 };
  let length = 1;
  const mem: MemOperand = { scale: 1, disp: 0 };
  if (rm === 4) {
    if (at + 1 >= bytes.length) return undefined;
    const sib = bytes[at + 1]!;
    length += 1;
    const index = (sib >> 3) & 7;
    const base = sib & 7;
    if (index !== 4) {
      mem.index = REG32[index]!;
      mem.scale = 1 << (sib >> 6);
    }
    if (base === 5 && mod === 0) {
      if (at + length + 4 > bytes.length) return undefined;
      mem.disp = view.getInt32(at + length, true);
      length += 4;
    } else mem.base = REG32[base]!;
  } else if (rm === 5 && mod === 0) {
    if (at + 5 > bytes.length) return undefined;
    mem.disp = view.getInt32(at + 1, true);
    return { reg, rm: { mem }, length: 5 };
  } else mem.base = REG32[rm]!;
  if (mod === 1) {
    if (at + length + 1 > bytes.length) return undefined;
    mem.disp = view.getInt8(at + length);
    length += 1;
  } else if (mod === 2) {
    if (at + length + 4 > bytes.length) return undefined;
    mem.disp = view.getInt32(at + length, true);
    length += 4;
  }
  return { reg, rm: { mem }, length };
}

/**
 * Decodes the straight-line code from `pc` to the function's exit: register and stack moves
 * (`push`, `pop`, `mov`, `lea`, `add/sub/and r32,imm`, `xchg`, `leave`, `nop`, `test`/`cmp`),
 * ending in `ret`, `ret n` or a `jmp` (a tail call when it leaves the function). Direct jumps
 * that stay in the function (`inFunction`) are followed. This covers epilogues (x86-fpo.md §1.4
 * step 5), shared epilogues reached by a jump, and the tails of stack-probe routines that move
 * ESP before returning. Undefined at the first conditional branch, call, stack switch (ESP
 * loaded from memory) or other instruction.
 */
export function decodeToReturn(images: MemoryReader, start: bigint, inFunction: (address: bigint) => boolean): SimInstruction[] | undefined {
  const out: SimInstruction[] = [];
  let pc = start;
  for (let jumps = 0; jumps < 4; jumps++) {
    const next = decodeRun(images, pc, out);
    if (next === undefined) return undefined;
    if (next === "done") return out;
    if (!inFunction(next)) {
      out.push({ op: { op: "jmp", target: { rel: next } }, text: `jmp ${hex(next)}` });
      return out;
    }
    out.push({ op: { op: "nop" }, text: `jmp ${hex(next)}` });
    pc = next;
  }
  return undefined;
}

/** Decodes from `pc` into `out` up to an exit ("done") or a direct jump (its target). */
function decodeRun(images: MemoryReader, pc: bigint, out: SimInstruction[]): bigint | "done" | undefined {
  let bytes: Uint8Array | undefined;
  // As many bytes as are readable, up to MAX_SIM_BYTES: an epilogue may end a code window.
  for (let n = MAX_SIM_BYTES; n >= 1 && bytes === undefined; n = n > 8 ? n >> 1 : n - 1) bytes = images.read(pc, n);
  if (bytes === undefined) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  while (out.length < MAX_SIM_INSTRUCTIONS && i < bytes.length) {
    work.units++;
    const b = bytes[i]!;
    const left = bytes.length - i;
    const push = (op: SimOp, text: string, length: number): void => {
      out.push({ op, text });
      i += length;
    };
    if (b >= 0x50 && b <= 0x57) push({ op: "push", reg: REG32[b - 0x50]! }, `push ${REG32[b - 0x50]}`, 1);
    else if (b === 0x5c) return undefined;
    else if (b >= 0x58 && b <= 0x5f) push({ op: "pop", reg: REG32[b - 0x58]! }, `pop ${REG32[b - 0x58]}`, 1);
    else if (b >= 0xb8 && b <= 0xbf && left >= 5) {
      const value = view.getUint32(i + 1, true);
      push({ op: "mov-imm", reg: REG32[b - 0xb8]!, value }, `mov ${REG32[b - 0xb8]},${hex(value)}`, 5);
    } else if (b === 0x90) push({ op: "nop" }, "nop", 1);
    else if (b > 0x90 && b <= 0x97) push({ op: "xchg", a: "eax", b: REG32[b - 0x90]! }, `xchg eax,${REG32[b - 0x90]}`, 1);
    else if (b === 0xc9) push({ op: "leave" }, "leave", 1);
    else if (b === 0xc3) {
      push({ op: "ret", pop: 0 }, "ret", 1);
      return "done";
    } else if (b === 0xc2 && left >= 3) {
      const n = view.getUint16(i + 1, true);
      push({ op: "ret", pop: n }, `ret ${n}`, 3);
      return "done";
    } else if (b === 0xe9 && left >= 5) {
      return (pc + BigInt(i + 5) + BigInt(view.getInt32(i + 1, true))) & U32;
    } else if (b === 0xeb && left >= 2) {
      return (pc + BigInt(i + 2) + BigInt(view.getInt8(i + 1))) & U32;
    } else if (b === 0x89 || b === 0x8b || b === 0x8d || b === 0x87 || b === 0x85 || b === 0x39 || b === 0x3b || b === 0xff) {
      const m = decodeModRm(bytes, view, i + 1);
      if (m === undefined) return undefined;
      const reg = REG32[m.reg]!;
      const length = 1 + m.length;
      if (b === 0x89) {
        if ("reg" in m.rm) push({ op: "mov-to-reg", reg: m.rm.reg, src: { reg } }, `mov ${m.rm.reg},${reg}`, length);
        else push({ op: "mov-to-mem", dst: m.rm.mem, reg }, `mov ${memText(m.rm.mem)},${reg}`, length);
      } else if (b === 0x8b) {
        if (reg === "esp" && "mem" in m.rm) return undefined;
        push({ op: "mov-to-reg", reg, src: m.rm }, `mov ${reg},${rmText(m.rm)}`, length);
      }
      else if (b === 0x8d) {
        if ("reg" in m.rm) return undefined;
        push({ op: "lea", reg, src: m.rm.mem }, `lea ${reg},${memText(m.rm.mem)}`, length);
      } else if (b === 0x87) {
        if (!("reg" in m.rm)) return undefined;
        push({ op: "xchg", a: reg, b: m.rm.reg }, `xchg ${m.rm.reg},${reg}`, length);
      } else if (b === 0x3b) push({ op: "nop" }, `cmp ${reg},${rmText(m.rm)}`, length);
      else if (b === 0x85 || b === 0x39) push({ op: "nop" }, `${b === 0x85 ? "test" : "cmp"} ${rmText(m.rm)},${reg}`, length);
      else {
        if (m.reg !== 4) return undefined;
        push({ op: "jmp", target: m.rm }, `jmp ${rmText(m.rm)}`, length);
        return "done";
      }
    } else if ((b === 0x83 || b === 0x81) && left >= (b === 0x83 ? 3 : 6)) {
      const m = decodeModRm(bytes, view, i + 1);
      if (m === undefined || !("reg" in m.rm)) return undefined;
      const kind = m.reg === 0 ? "add" : m.reg === 5 ? "sub" : m.reg === 4 ? "and" : undefined;
      if (kind === undefined) return undefined;
      const value = b === 0x83 ? view.getInt8(i + 2) : view.getInt32(i + 2, true);
      push({ op: "arith", kind, reg: m.rm.reg, value }, `${kind} ${m.rm.reg},${value}`, b === 0x83 ? 3 : 6);
    } else return undefined;
  }
  return undefined;
}

/** How far above ESP a return address held in a register is looked for in memory (64 KiB). */
const MAX_VALUE_SEARCH_WORDS = 16384;

/** The first stack slot at or above `from` holding `value`: where a return address copied into a register still lies. */
function findValue(memory: MemoryReader, from: bigint, value: bigint): bigint | undefined {
  for (let i = 0; i < MAX_VALUE_SEARCH_WORDS; i++) {
    const slot = (from + BigInt(i * 4)) & U32;
    const v = readU32(memory, slot);
    if (v === undefined) return undefined;
    if (v === value) return slot;
  }
  return undefined;
}

function withFrom(value: bigint, slot: bigint | undefined): { value: bigint; from?: bigint } {
  return slot === undefined ? { value } : { value, from: slot };
}

/** Result of simulating to the return: the caller's registers and where the return address was. */
export type SimRun =
  | { ok: true; registers: Registers; raSlot: bigint; tailCall?: bigint }
  | { ok: false; address?: bigint; what: string };

/**
 * Runs decoded instructions on a copy of `registers`, reading the stack and images through
 * `memory` and keeping its own writes aside. `ret` reads the return address and leaves ESP just
 * above it (an unwind does not apply `ret n`, so the caller's ESP matches what a caller frame has
 * everywhere else). A final `jmp` is a tail call only when `leavesFunction` says its target is
 * outside the function; then the return address is at ESP, as at a `ret`.
 */
export function runToReturn(ops: readonly SimInstruction[], registers: Registers, memory: MemoryReader, leavesFunction: (target: bigint) => boolean): SimRun {
  const r: Registers = { ...registers };
  // Each register and written word remembers the stack slot its value was loaded from, so the
  // return address is reported where it lies in the snapshot, even after the code copies it.
  const written = new Map<bigint, { value: bigint; from?: bigint }>();
  const from = new Map<string, bigint>();
  const get = (reg: string): bigint => r[reg] ?? 0n;
  const load = (address: bigint): { value: bigint; from?: bigint } | undefined => {
    const w = written.get(address);
    if (w !== undefined) return w;
    const v = readU32(memory, address);
    return v === undefined ? undefined : { value: v, from: address };
  };
  const read = (address: bigint): bigint | undefined => load(address)?.value;
  const setReg = (reg: string, v: { value: bigint; from?: bigint }): void => {
    r[reg] = v.value;
    if (v.from === undefined) from.delete(reg);
    else from.set(reg, v.from);
  };
  const ea = (m: MemOperand): bigint => ((m.base === undefined ? 0n : get(m.base)) + (m.index === undefined ? 0n : get(m.index) * BigInt(m.scale)) + BigInt(m.disp)) & U32;
  const value = (o: RmOperand): bigint | undefined => ("reg" in o ? get(o.reg) : read(ea(o.mem)));
  for (const { op: o, text } of ops) {
    switch (o.op) {
      case "push": {
        const esp = (get("esp") - 4n) & U32;
        written.set(esp, withFrom(get(o.reg), from.get(o.reg)));
        r["esp"] = esp;
        break;
      }
      case "pop": {
        const esp = get("esp");
        const v = load(esp);
        if (v === undefined) return { ok: false, address: esp, what: text };
        r["esp"] = (esp + 4n) & U32;
        setReg(o.reg, v);
        break;
      }
      case "mov-imm":
        setReg(o.reg, { value: BigInt(o.value) });
        break;
      case "mov-to-reg": {
        if ("reg" in o.src) {
          setReg(o.reg, withFrom(get(o.src.reg), from.get(o.src.reg)));
          break;
        }
        const v = load(ea(o.src.mem));
        if (v === undefined) return { ok: false, address: ea(o.src.mem), what: text };
        setReg(o.reg, v);
        break;
      }
      case "mov-to-mem":
        written.set(ea(o.dst), withFrom(get(o.reg), from.get(o.reg)));
        break;
      case "lea":
        setReg(o.reg, { value: ea(o.src) });
        break;
      case "arith": {
        const v = get(o.reg);
        const k = BigInt(o.value) & U32;
        setReg(o.reg, { value: (o.kind === "add" ? v + k : o.kind === "sub" ? v - k : v & k) & U32 });
        break;
      }
      case "xchg": {
        const a = withFrom(get(o.a), from.get(o.a));
        setReg(o.a, withFrom(get(o.b), from.get(o.b)));
        setReg(o.b, a);
        break;
      }
      case "leave": {
        const ebp = get("ebp");
        const v = load(ebp);
        if (v === undefined) return { ok: false, address: ebp, what: text };
        setReg("ebp", v);
        r["esp"] = (ebp + 4n) & U32;
        break;
      }
      case "nop":
        break;
      case "ret":
      case "jmp": {
        let tailCall: bigint | undefined;
        if (o.op === "jmp") {
          const target = "rel" in o.target ? o.target.rel : value(o.target);
          if (target === undefined || !leavesFunction(target)) return { ok: false, what: `${text} (not a tail call)` };
          tailCall = target;
        }
        const esp = get("esp");
        const ra = load(esp);
        if (ra === undefined) return { ok: false, address: esp, what: text };
        const raSlot = ra.from ?? findValue(memory, esp, ra.value) ?? esp;
        r["eip"] = ra.value;
        r["esp"] = (raSlot + 4n) & U32;
        return tailCall === undefined ? { ok: true, registers: r, raSlot } : { ok: true, registers: r, raSlot, tailCall };
      }
    }
  }
  return { ok: false, what: "code that does not reach a return" };
}

/** What part of an FPO prolog ran before the PC (x86-fpo.md §1.4 step 4). */
export interface PrologState {
  /** Bytes pushed or allocated so far: the return address is at esp + pushed. */
  pushed: number;
  /** Registers pushed so far, each with the running total after its push (its slot is esp + pushed − total). */
  saves: { reg: Reg32; total: number }[];
  /** `mov ebp,esp` has run. */
  framePointer: boolean;
  /** The instructions, as text. */
  text: string[];
}

/**
 * Decodes prolog bytes from `start` up to `pc`: `push r32`, `sub esp,imm8/imm32`, `mov ebp,esp`,
 * and `mov eax,imm32` followed by a call (the stack probe, which runs after the caller's frame
 * as seen at the return address). Undefined when anything else comes first.
 */
export function decodeProlog(images: MemoryReader, start: bigint, pc: bigint): PrologState | undefined {
  const length = Number(pc - start);
  if (length < 0 || length > 255) return undefined;
  const state: PrologState = { pushed: 0, saves: [], framePointer: false, text: [] };
  if (length === 0) return state;
  const bytes = images.read(start, length);
  if (bytes === undefined) return undefined;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let i = 0;
  while (i < length) {
    work.units++;
    const b = bytes[i]!;
    const left = length - i;
    if (b >= 0x50 && b <= 0x57) {
      const reg = REG32[b - 0x50]!;
      state.pushed += 4;
      state.saves.push({ reg, total: state.pushed });
      state.text.push(`push ${reg}`);
      i += 1;
    } else if (b === 0x83 && left >= 3 && bytes[i + 1] === 0xec) {
      state.pushed += view.getInt8(i + 2);
      state.text.push(`sub esp,${view.getInt8(i + 2)}`);
      i += 3;
    } else if (b === 0x81 && left >= 6 && bytes[i + 1] === 0xec) {
      state.pushed += view.getInt32(i + 2, true);
      state.text.push(`sub esp,${view.getInt32(i + 2, true)}`);
      i += 6;
    } else if (left >= 2 && ((b === 0x8b && bytes[i + 1] === 0xec) || (b === 0x89 && bytes[i + 1] === 0xe5))) {
      state.framePointer = true;
      state.text.push("mov ebp,esp");
      i += 2;
    } else if (b === 0xb8 && left >= 5) {
      state.text.push(`mov eax,${view.getUint32(i + 1, true)}`);
      i += 5;
    } else if (b === 0xe8 && left === 5) {
      state.text.push("call");
      i += 5;
    } else return undefined;
  }
  return state;
}
