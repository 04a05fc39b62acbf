/**
 * What the ARM walkers read from code: whether a value is a return address. A return address
 * with bit 0 set returns to Thumb code: the call before it is a 32-bit `bl`/`blx` (its target from
 * the instruction) or a 16-bit `blx rM`. An even one returns to ARM code, 4-aligned, after an ARM
 * `bl` (cond 1011), `blx imm` or `blx rM`.
 */
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, type Module } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, type UnwindCache } from "../../unwind/cache.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { NOT_RETURN, UNCHECKED, UNKNOWN_TARGET } from "../scan.js";
import { work } from "../../unwind/work.js";

function halfword(images: MemoryReader, address: bigint): number | undefined {
  work.units++;
  const b = images.read(address, 2);
  return b === undefined ? undefined : b[0]! | (b[1]! << 8);
}

/** The target of the Thumb-2 `bl`/`blx` whose halfwords are `hw1`, `hw2` at `address`, or undefined when it is neither. */
export function thumbCallTarget(hw1: number, hw2: number, address: bigint): bigint | undefined {
  if ((hw1 & 0xf800) !== 0xf000 || (hw2 & 0xc000) !== 0xc000) return undefined;
  const s = (hw1 >>> 10) & 1;
  const i1 = ~(((hw2 >>> 13) & 1) ^ s) & 1;
  const i2 = ~(((hw2 >>> 11) & 1) ^ s) & 1;
  const imm = (s << 24) | (i1 << 23) | (i2 << 22) | ((hw1 & 0x3ff) << 12) | ((hw2 & 0x7ff) << 1);
  const offset = (imm << 7) >> 7;
  const target = address + 4n + BigInt(offset);
  // blx (bit 12 clear) switches to ARM code: the target is word-aligned.
  return (hw2 & 0x1000) !== 0 ? target : target & ~3n;
}

/** True for the 16-bit `blx rM`. */
export function isThumbRegisterCall(hw: number): boolean {
  return (hw & 0xff87) === 0x4780;
}

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

function classify(modules: readonly Module[], images: MemoryReader, value: bigint): number {
  if (value < 0x1000n || moduleAt(modules, lookupAddress(value, true, "arm")) === undefined) return NOT_RETURN;
  if ((value & 1n) === 1n) {
    const ret = value & ~1n;
    const last = halfword(images, ret - 2n);
    if (last === undefined) return UNCHECKED;
    if (isThumbRegisterCall(last)) return UNKNOWN_TARGET;
    const first = halfword(images, ret - 4n);
    const target = first === undefined ? undefined : thumbCallTarget(first, last, ret - 4n);
    if (target === undefined) return NOT_RETURN;
    return target >= 0n && target <= MAX_EXACT ? Number(target) : UNKNOWN_TARGET;
  }
  if ((value & 3n) !== 0n) return NOT_RETURN;
  const b = images.read(value - 4n, 4);
  work.units++;
  if (b === undefined) return UNCHECKED;
  const insn = (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  if ((insn & 0x0fff_fff0) >>> 0 === 0x012f_ff30 || (insn & 0xfe00_0000) >>> 0 === 0xfa00_0000) return UNKNOWN_TARGET;
  if ((insn & 0x0f00_0000) >>> 0 === 0x0b00_0000 && insn >>> 28 !== 0xf) {
    const target = value - 4n + 8n + BigInt(((insn << 8) >> 8) * 4);
    return target >= 0n && target <= MAX_EXACT ? Number(target) : UNKNOWN_TARGET;
  }
  return NOT_RETURN;
}

interface Answers {
  map: Map<bigint, number>;
}

const ANSWERS = cacheSlot("arm return addresses", () => new ImageKeyed<readonly Module[], Answers>());

/**
 * What `value` is as a return address (the scan.ts classification): not one; the target of the
 * call before it (≥ 0); after a call through a register; or in a module whose code the snapshot
 * lacks. Answers are kept in the walk's cache per images and module list.
 */
export function returnAddressInfoArm(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint): number {
  const answers = cache.get(ANSWERS).get(images, modules, () => ({ map: new Map() }));
  let answer = answers.map.get(value);
  if (answer === undefined) {
    answer = classify(modules, images, value);
    answers.map.set(value, answer);
  }
  return answer;
}
