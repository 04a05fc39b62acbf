/**
 * Breakpad's ARM context, MDRawContextARM (minidump_cpu_arm.h): 368 bytes, the form Breakpad's
 * clients write for 32-bit ARM (Android, Linux, iOS) and the only one its processor reads.
 * context_flags (u32) at 0 with CPU bit 0x40000000 (MD_CONTEXT_ARM; 0x40, MD_CONTEXT_ARM_OLD, in
 * old dumps), iregs[16] from 4 (r0-r12, sp, lr, pc), cpsr at 0x44, then float_save: fpscr (u64)
 * at 0x48, regs[32] (d0-d31, u64) from 0x50, extra[8] (u32) from 0x150. Its first 0x50 bytes
 * have the offsets of the Windows ARM CONTEXT's (context-layout.ts), whose Fpscr is a u32.
 */
import { CONTEXT_ARM, CONTEXT_ARM_CONTROL, CONTEXT_ARM_FLOATING_POINT, CONTEXT_ARM_INTEGER } from "../../model/context-layout.js";
import type { Registers } from "../../model/snapshot.js";

/** sizeof(MDRawContextARM). */
export const BREAKPAD_ARM_CONTEXT_SIZE = 368;
/** MD_CONTEXT_ARM, Breakpad's own CPU bit. */
export const MD_CONTEXT_ARM = 0x4000_0000;
/** MD_CONTEXT_ARM_OLD, Windows CE's value, in old dumps. */
export const MD_CONTEXT_ARM_OLD = 0x40;
/** MD_CONTEXT_ARM_INTEGER | MD_CONTEXT_ARM_FLOATING_POINT (MD_CONTEXT_ARM_FULL). */
export const MD_CONTEXT_ARM_FULL = MD_CONTEXT_ARM | 0x02 | 0x04;

const IREGS = 0x04;
const CPSR = 0x44;
const FPSCR = 0x48;
const DREGS = 0x50;

/** Register names of iregs[0..15]. */
const IREG_NAMES = [...Array.from({ length: 13 }, (_, i) => `r${i}`), "sp", "lr", "pc"];

/** The registers of a 368-byte MDRawContextARM, and its flags as the Windows CONTEXT_ARM bits. */
export function decodeBreakpadArmContext(bytes: Uint8Array): { contextFlags: number; registers: Registers } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, BREAKPAD_ARM_CONTEXT_SIZE);
  const flags = view.getUint32(0, true);
  const registers: Registers = {};
  IREG_NAMES.forEach((name, i) => (registers[name] = BigInt(view.getUint32(IREGS + 4 * i, true))));
  registers["cpsr"] = BigInt(view.getUint32(CPSR, true));
  registers["fpscr"] = BigInt(view.getUint32(FPSCR, true));
  for (let i = 8; i < 16; i++) registers[`d${i}`] = view.getBigUint64(DREGS + 8 * i, true);
  let contextFlags = CONTEXT_ARM;
  // MD_CONTEXT_ARM_INTEGER covers r0-r15 and cpsr; the old value has no class bits (all present).
  if ((flags & 0x02) !== 0 || (flags & MD_CONTEXT_ARM) === 0) contextFlags |= CONTEXT_ARM_CONTROL | CONTEXT_ARM_INTEGER;
  if ((flags & 0x04) !== 0) contextFlags |= CONTEXT_ARM_FLOATING_POINT;
  return { contextFlags, registers };
}

/** A 368-byte MDRawContextARM holding `registers` (absent ones 0), with MD_CONTEXT_ARM_FULL. */
export function encodeBreakpadArmContext(registers: Registers): Uint8Array {
  const out = new Uint8Array(BREAKPAD_ARM_CONTEXT_SIZE);
  const view = new DataView(out.buffer);
  view.setUint32(0, MD_CONTEXT_ARM_FULL, true);
  IREG_NAMES.forEach((name, i) => view.setUint32(IREGS + 4 * i, Number((registers[name] ?? 0n) & 0xffff_ffffn), true));
  view.setUint32(CPSR, Number((registers["cpsr"] ?? 0n) & 0xffff_ffffn), true);
  view.setBigUint64(FPSCR, (registers["fpscr"] ?? 0n) & 0xffff_ffffn, true);
  for (let i = 8; i < 16; i++) view.setBigUint64(DREGS + 8 * i, (registers[`d${i}`] ?? 0n) & 0xffff_ffff_ffff_ffffn, true);
  return out;
}
