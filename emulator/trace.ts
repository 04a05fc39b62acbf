/**
 * The shadow call stack: ground truth for stack walkers, built from what the CPU executes
 * rather than from anything stored in the stack (DESIGN.md "Ground truth").
 *
 * Before each instruction the emulator shows the tracer the instruction's bytes and the stack
 * pointer. A near `call` pushes its return address; the tracer checks at the next instruction
 * that the CPU did exactly that (SP went down by one pointer and [SP] holds the address after
 * the call) and records the slot. An entry is retired when a `ret` returns through it, and also
 * whenever the stack pointer rises above its slot by any other means (a longjmp that reloads
 * SP, an epilogue that discards a frame), since a slot above SP is no longer part of the stack.
 * Jumps, tail calls included, leave the entries alone: the jumping frame's return address stays
 * in its slot and now belongs to the function jumped to.
 *
 * On AArch64 a call leaves its return address in the link register, not on the stack: `bl` and
 * `blr` (and the pointer-authenticating `blraa`/`blrab` forms) are checked at the next
 * instruction for LR = the address after the call, and the entry records the stack pointer at
 * the call, which is the caller's SP once the callee has returned. `ret Xn` (and `retaa`/`retab`,
 * which return through LR) returns through the newest entry when Xn holds its return address; an
 * entry is also retired when SP rises above the SP it was made with. The truth is the same
 * whether the return address is still in LR (a leaf, a prolog before it saves LR) or already on
 * the stack: the CPU made the call, so the caller is a frame.
 *
 * On 32-bit ARM (Thumb-2) a call also leaves its return address in LR, with the Thumb bit set:
 * `bl`, `blx label` and `blx Rm` are checked at the next instruction for LR = the address after
 * the call | 1 and an unchanged SP, and the entry records that SP. Thumb code returns in many
 * ways (`bx lr`, `pop {..., pc}`, `ldr pc, [sp], #n`, `ldm`), so a return is recognised by its
 * effect rather than its encoding: control arrives at the newest entry's return address by a
 * transfer (not by falling through) with SP back at or above the SP of the call. A conditional
 * call that an IT block skipped falls through to its return address with LR unchanged and
 * makes no entry.
 *
 * Interrupts are the exception to "only calls make frames": when execution enters a known
 * interrupt handler, the machine frame the CPU pushed (x64-unwind.md, UWOP_PUSH_MACHFRAME:
 * RIP, CS, RFLAGS, RSP, SS, optionally below an error code; on AArch64 MSFT_OP_MACHINE_FRAME's
 * SP then PC) names the interrupted frame, which becomes an entry of its own whose PC is the
 * interrupted instruction, not a return address.
 */
import type { Module, TruthFrame } from "../src/index.js";
import { pointerWidth, type CpuMode } from "./cpu-mode.js";
import { functionNameAt } from "./symbols.js";

/** One call the CPU made and has not yet returned from, or an interrupt being handled. */
export interface ShadowEntry {
  /** Where the return address sits: SP right after the call (or where a `ret` later found it); for an interrupt, the machine frame's RIP slot. */
  slot: bigint;
  /** The address of the instruction after the call; for an interrupt, the interrupted instruction. */
  returnAddress: bigint;
  /** The address of the call instruction; for an interrupt, the interrupted instruction. */
  callSite: bigint;
  /** Set for an interrupt: the interrupted frame's stack pointer, saved in the machine frame. */
  interruptedSp?: bigint;
  /** AArch64: the stack pointer when the call executed, the caller's SP after the return. */
  callerSp?: bigint;
}

/** An interrupt handler's entry point: execution reaching it finds a machine frame at SP. */
export interface InterruptHandler {
  address: bigint;
  /** True when the CPU pushed an error code below the machine frame. */
  errorCode: boolean;
}

/** A call or return decoded from instruction bytes. */
export type ControlTransfer =
  | { kind: "call"; form: "rel" | "indirect" }
  | { kind: "ret"; /** Bytes of arguments `ret n` releases after popping the return address. */ release: number };

/**
 * Decodes an AArch64 call or return from the instruction word at the start of `bytes`: `bl`,
 * `blr Xn`, `blraa`/`blrab`/`blraaz`/`blrabz`, `ret Xn`, `retaa`/`retab`. `register` is the
 * register a return branches through (30 for LR).
 */
export function decodeArm64ControlTransfer(bytes: Uint8Array): (ControlTransfer & { register?: number }) | undefined {
  if (bytes.length < 4) return undefined;
  const word = (bytes[0]! | (bytes[1]! << 8) | (bytes[2]! << 16) | (bytes[3]! << 24)) >>> 0;
  if ((word & 0xfc00_0000) >>> 0 === 0x9400_0000) return { kind: "call", form: "rel" };
  // BLR: 1101011 0001 11111 000000 Rn 00000; BLRAAZ/BLRABZ: op3 00001x, Rm 11111; BLRAA/BLRAB: 1101011 1001 11111 00001x Rn Rm.
  if ((word & 0xffff_fc1f) >>> 0 === 0xd63f_0000) return { kind: "call", form: "indirect" };
  if ((word & 0xffff_f81f) >>> 0 === 0xd63f_081f) return { kind: "call", form: "indirect" };
  if ((word & 0xffff_f800) >>> 0 === 0xd73f_0800) return { kind: "call", form: "indirect" };
  // RET Xn: 1101011 0010 11111 000000 Rn 00000; RETAA/RETAB: D65F0BFF / D65F0FFF (through LR).
  if ((word & 0xffff_fc1f) >>> 0 === 0xd65f_0000) return { kind: "ret", release: 0, register: (word >>> 5) & 31 };
  if (word === 0xd65f_0bff || word === 0xd65f_0fff) return { kind: "ret", release: 0, register: 30 };
  return undefined;
}

/**
 * Decodes a Thumb call from the halfwords at the start of `bytes`: `bl label` (T1), `blx label`
 * (T2) and `blx Rm`. Returns the instruction's size in bytes, or undefined for anything else.
 */
export function decodeThumbCall(bytes: Uint8Array): 2 | 4 | undefined {
  if (bytes.length < 2) return undefined;
  const first = bytes[0]! | (bytes[1]! << 8);
  // BLX Rm: 010001 11 1 Rm(4) 000.
  if ((first & 0xff87) === 0x4780) return 2;
  if (bytes.length < 4 || (first & 0xf800) !== 0xf000) return undefined;
  const second = bytes[2]! | (bytes[3]! << 8);
  // BL: 11110 S imm10 | 11 J1 1 J2 imm11; BLX: 11110 S imm10H | 11 J1 0 J2 imm10L 0.
  if ((second & 0xd000) === 0xd000) return 4;
  if ((second & 0xd001) === 0xc000) return 4;
  return undefined;
}

/** Reads an AArch64 general register by number (0-30), or a 32-bit ARM one (0-14, LR is 14). */
export type RegisterReader = (register: number) => bigint;

/** The x86 legacy prefixes: operand size, address size, rep/repne (bnd), lock and segment overrides. */
const LEGACY_PREFIXES = new Set([0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x36, 0x3e, 0x26, 0x64, 0x65]);

/**
 * Decodes a near call (`E8 rel`, `FF /2`) or near return (`C3`, `C2 iw`) from the start of
 * `bytes`, after any legacy prefixes and, in 64-bit mode, a REX prefix. Anything else, far
 * calls and returns included, is not a transfer the shadow stack follows.
 */
export function decodeControlTransfer(bytes: Uint8Array, mode: CpuMode): ControlTransfer | undefined {
  let i = 0;
  while (i < bytes.length && LEGACY_PREFIXES.has(bytes[i]!)) i++;
  if (mode === 64 && i < bytes.length && (bytes[i]! & 0xf0) === 0x40) i++;
  const opcode = bytes[i];
  switch (opcode) {
    case 0xe8:
      return { kind: "call", form: "rel" };
    case 0xff: {
      const modrm = bytes[i + 1];
      // ModRM.reg selects the operation of opcode FF: /2 is a near indirect call.
      return modrm !== undefined && ((modrm >> 3) & 7) === 2 ? { kind: "call", form: "indirect" } : undefined;
    }
    case 0xc3:
      return { kind: "ret", release: 0 };
    case 0xc2: {
      const lo = bytes[i + 1];
      const hi = bytes[i + 2];
      return lo !== undefined && hi !== undefined ? { kind: "ret", release: lo | (hi << 8) } : undefined;
    }
    default:
      return undefined;
  }
}

/** The CPU did something the shadow stack cannot account for (say, a call that pushed nothing). */
export class TraceError extends Error {
  /** The instruction the tracer was checking. */
  readonly address: bigint;

  constructor(message: string, address: bigint) {
    super(message);
    this.name = "TraceError";
    this.address = address;
  }
}

/** Reads one pointer-sized value; the tracer only reads the stack, which is always mapped. */
export type PointerReader = (address: bigint) => bigint;

/** The shadow call stack of one thread. Feed it every instruction with {@link before}. */
export class ShadowStack {
  /** 4 on x86, 8 on x64 and AArch64: the size of a return-address slot. */
  readonly width: 4n | 8n;
  private readonly stack: ShadowEntry[] = [];
  /** A call that executed: checked and pushed at the next instruction. */
  private pendingCall: { site: bigint; sp: bigint; returnAddress: bigint } | undefined;
  /** A `ret` that executed through this entry: retired at the next instruction. */
  private pendingReturn: ShadowEntry | undefined;
  /** 32-bit ARM: where the previous instruction ends, to tell a transfer from falling through. */
  private fallThrough: bigint | undefined;

  private readonly handlers: ReadonlyMap<bigint, InterruptHandler>;

  /**
   * `readRegister` is needed on AArch64 and 32-bit ARM only, where calls go through LR.
   */
  constructor(
    readonly mode: CpuMode,
    private readonly readPointer: PointerReader,
    handlers: readonly InterruptHandler[] = [],
    private readonly readRegister?: RegisterReader,
  ) {
    this.width = BigInt(pointerWidth(mode)) as 4n | 8n;
    this.handlers = new Map(handlers.map((h) => [h.address, h]));
    if ((mode === "arm64" || mode === "arm") && readRegister === undefined) throw new RangeError(`an ${mode === "arm" ? "ARM" : "AArch64"} shadow stack needs a register reader`);
    if (mode === "arm64" && handlers.some((h) => h.errorCode)) throw new RangeError("an AArch64 machine frame has no error code");
    if (mode === "arm" && handlers.length > 0) throw new RangeError("the ARM shadow stack follows no interrupt handlers");
  }

  /** The calls in progress, outermost first. */
  get entries(): readonly ShadowEntry[] {
    return this.stack;
  }

  /**
   * Accounts for everything the previous instruction did, then looks at the instruction about
   * to execute at `pc` (its bytes, as many as it has) with the stack pointer `sp`.
   */
  before(pc: bigint, sp: bigint, bytes: Uint8Array): void {
    if (this.mode === "arm64") {
      this.beforeArm64(pc, sp, bytes);
      return;
    }
    if (this.mode === "arm") {
      this.beforeThumb(pc, sp, bytes);
      return;
    }
    const call = this.pendingCall;
    if (call !== undefined) {
      this.pendingCall = undefined;
      const expected = call.sp - this.width;
      if (sp !== expected) {
        throw new TraceError(`the call at 0x${call.site.toString(16)} left SP at 0x${sp.toString(16)}, not 0x${expected.toString(16)}`, call.site);
      }
      const pushed = this.readPointer(sp);
      if (pushed !== call.returnAddress) {
        throw new TraceError(
          `the call at 0x${call.site.toString(16)} pushed 0x${pushed.toString(16)}, not its return address 0x${call.returnAddress.toString(16)}`,
          call.site,
        );
      }
      this.stack.push({ slot: sp, returnAddress: call.returnAddress, callSite: call.site });
    }
    // A slot below SP is outside the stack: whatever moved SP past it ended that call.
    this.retire(sp);

    const handler = this.handlers.get(pc);
    if (handler !== undefined) {
      // The machine frame, from its lowest slot: RIP, CS, RFLAGS, RSP, SS (error code below it).
      const frame = sp + (handler.errorCode ? this.width : 0n);
      const rip = this.readPointer(frame);
      this.stack.push({ slot: frame, returnAddress: rip, callSite: rip, interruptedSp: this.readPointer(frame + 3n * this.width) });
    }

    const transfer = decodeControlTransfer(bytes, this.mode);
    if (transfer === undefined) return;
    if (transfer.kind === "call") {
      this.pendingCall = { site: pc, sp, returnAddress: pc + BigInt(bytes.length) };
      return;
    }
    // A `ret` returns through the newest call when it pops that call's return address. The
    // address may have been moved to a lower slot first (the x86 probe routine copies it to
    // the new stack top); from here on that copy is the one `ret` uses. A `ret` to any other
    // address is a jump (push target; ret) and retires nothing by itself.
    const newest = this.stack[this.stack.length - 1];
    if (newest !== undefined && this.readPointer(sp) === newest.returnAddress) {
      newest.slot = sp;
      this.pendingReturn = newest;
    }
  }

  /** Retires the entry the previous instruction returned through, and every entry whose slot is below `sp`. */
  private retire(sp: bigint): void {
    const returned = this.pendingReturn;
    if (returned !== undefined) {
      this.pendingReturn = undefined;
      const at = this.stack.lastIndexOf(returned);
      if (at >= 0) this.stack.length = at;
    }
    while (this.stack.length > 0 && this.stack[this.stack.length - 1]!.slot < sp) this.stack.pop();
  }

  /** {@link before} for AArch64: calls leave the return address in LR and keep SP. */
  private beforeArm64(pc: bigint, sp: bigint, bytes: Uint8Array): void {
    const readRegister = this.readRegister!;
    const call = this.pendingCall;
    if (call !== undefined) {
      this.pendingCall = undefined;
      const lr = readRegister(30);
      if (lr !== call.returnAddress) {
        throw new TraceError(`the call at 0x${call.site.toString(16)} left LR at 0x${lr.toString(16)}, not its return address 0x${call.returnAddress.toString(16)}`, call.site);
      }
      if (sp !== call.sp) throw new TraceError(`the call at 0x${call.site.toString(16)} moved SP from 0x${call.sp.toString(16)} to 0x${sp.toString(16)}`, call.site);
      this.stack.push({ slot: sp, returnAddress: call.returnAddress, callSite: call.site, callerSp: sp });
    }
    // A callee's SP never rises above the SP it was called with: whatever moved SP past it
    // (a longjmp) ended that call.
    this.retire(sp);

    if (this.handlers.has(pc)) {
      // The ARM64 machine frame (MSFT_OP_MACHINE_FRAME, arm64.md §1.9): the interrupted SP at
      // [SP], the interrupted PC at [SP+8].
      const interrupted = this.readPointer(sp + 8n);
      this.stack.push({ slot: sp, returnAddress: interrupted, callSite: interrupted, interruptedSp: this.readPointer(sp) });
    }

    const transfer = decodeArm64ControlTransfer(bytes);
    if (transfer === undefined) return;
    if (transfer.kind === "call") {
      this.pendingCall = { site: pc, sp, returnAddress: pc + 4n };
      return;
    }
    const newest = this.stack[this.stack.length - 1];
    const target = transfer.register === 31 ? undefined : readRegister(transfer.register ?? 30);
    if (newest !== undefined && target !== undefined && stripPac(target) === newest.returnAddress) this.pendingReturn = newest;
  }

  /** {@link before} for 32-bit ARM in Thumb state: calls leave the return address | 1 in LR and keep SP. */
  private beforeThumb(pc: bigint, sp: bigint, bytes: Uint8Array): void {
    const call = this.pendingCall;
    const arrivedBy = this.fallThrough;
    if (call !== undefined) {
      this.pendingCall = undefined;
      const lr = this.readRegister!(14);
      const skipped = pc === call.returnAddress - 1n && lr !== call.returnAddress;
      if (!skipped) {
        if (lr !== call.returnAddress) {
          throw new TraceError(`the call at 0x${call.site.toString(16)} left LR at 0x${lr.toString(16)}, not its return address 0x${call.returnAddress.toString(16)}`, call.site);
        }
        if (sp !== call.sp) throw new TraceError(`the call at 0x${call.site.toString(16)} moved SP from 0x${call.sp.toString(16)} to 0x${sp.toString(16)}`, call.site);
        this.stack.push({ slot: sp, returnAddress: call.returnAddress, callSite: call.site, callerSp: sp });
      }
    }
    const newest = this.stack[this.stack.length - 1];
    if (newest !== undefined && pc !== arrivedBy && pc === newest.returnAddress - 1n && sp >= newest.callerSp!) this.stack.pop();
    this.retire(sp);
    const size = decodeThumbCall(bytes);
    if (size !== undefined) this.pendingCall = { site: pc, sp, returnAddress: (pc + BigInt(size)) | 1n };
    this.fallThrough = pc + BigInt(bytes.length);
  }

  /**
   * Ground truth for a snapshot taken before the instruction at `pc`, with stack pointer
   * `sp`: frame 0 is the context; frame k ≥ 1 is the k-th newest call in progress, with the
   * return address as `pc` and the address just past its slot as `sp`. Functions are named
   * from `modules`' symbols: the one containing `pc` for frame 0, the one containing the call
   * (return address − 1) for the callers.
   */
  truth(pc: bigint, sp: bigint, modules: readonly Module[]): TruthFrame[] {
    const frames: TruthFrame[] = [named({ pc, sp }, functionNameAt(modules, pc))];
    for (let i = this.stack.length - 1; i >= 0; i--) {
      const e = this.stack[i]!;
      if (e.interruptedSp !== undefined) frames.push(named({ pc: e.returnAddress, sp: e.interruptedSp }, functionNameAt(modules, e.returnAddress)));
      else if (e.callerSp !== undefined) frames.push(named({ pc: e.returnAddress, sp: e.callerSp }, functionNameAt(modules, this.mode === "arm" ? e.callSite : callerAddress(e.returnAddress))));
      else frames.push(named({ pc: e.returnAddress, sp: e.slot + this.width }, functionNameAt(modules, callerAddress(e.returnAddress))));
    }
    return frames;
  }
}

/**
 * The address that identifies the caller's function: the last byte of the call instruction.
 * The return address itself can lie past the caller's end when the callee never returns.
 */
function callerAddress(returnAddress: bigint): bigint {
  return returnAddress - 1n;
}

/**
 * A return address without a pointer-authentication code: `retaa`/`retab` authenticate LR and
 * branch to the plain address, which is what the entry recorded. User addresses have bit 55
 * clear, so the code bits above the 48-bit virtual address are cleared (arm64.md §1.12).
 */
function stripPac(address: bigint): bigint {
  return (address >> 55n) & 1n ? address : address & 0xffff_ffff_ffffn;
}

function named(frame: TruthFrame, name: string | undefined): TruthFrame {
  if (name !== undefined) frame.function = name;
  return frame;
}
