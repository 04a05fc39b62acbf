/**
 * What the ARM64 walkers read from code: whether a value is a return address. Every instruction is
 * 4 bytes, so a return address is 4-aligned and the instruction before it is the call: `bl`
 * (`100101` + imm26, a direct call whose target is pc + 4·imm26), `blr Xn`, or the pointer
 * authenticating `blraa`/`blrab` forms.
 */
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, type Module } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, type UnwindCache } from "../../unwind/cache.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { NOT_RETURN, UNCHECKED, UNKNOWN_TARGET } from "../scan.js";
import { work } from "../../unwind/work.js";

/** The instruction word at `address`, or undefined. */
export function instructionAt(images: MemoryReader, address: bigint): number | undefined {
  work.units++;
  const b = images.read(address, 4);
  return b === undefined ? undefined : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
}

/** `bl imm26`: its target from the instruction's address, else undefined. */
export function blTarget(insn: number, address: bigint): bigint | undefined {
  if ((insn & 0xfc00_0000) >>> 0 !== 0x9400_0000) return undefined;
  const imm = (insn << 6) >> 6;
  return address + BigInt(imm * 4);
}

/** `blr Xn`, or `blraa`/`blrab`/`blraaz`/`blrabz` (the call forms through a register). */
export function isRegisterCall(insn: number): boolean {
  return (insn & 0xffff_fc1f) >>> 0 === 0xd63f_0000 || (insn & 0xfeff_f800) >>> 0 === 0xd63f_0800;
}

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

function classify(modules: readonly Module[], images: MemoryReader, value: bigint): number {
  if (value < 0x1000n || (value & 3n) !== 0n || moduleAt(modules, lookupAddress(value, true, "arm64")) === undefined) return NOT_RETURN;
  const insn = instructionAt(images, value - 4n);
  if (insn === undefined) return UNCHECKED;
  const target = blTarget(insn, value - 4n);
  if (target !== undefined) return target >= 0n && target <= MAX_EXACT ? Number(target) : UNKNOWN_TARGET;
  return isRegisterCall(insn) ? UNKNOWN_TARGET : NOT_RETURN;
}

/** Answers by value for one module list and image memory, and the last one asked. */
interface Answers {
  map: Map<bigint, number>;
  lastValue: bigint;
  lastAnswer: number;
}

const ANSWERS = cacheSlot("arm64 return addresses", () => new ImageKeyed<readonly Module[], Answers>());

/**
 * What `value` is as a return address (the scan.ts classification): not one; the target of the
 * `bl` before it (≥ 0); after a call through a register; or in a module whose code the snapshot
 * lacks. Answers are kept in the walk's cache per images and module list.
 */
export function returnAddressInfoArm64(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint): number {
  const answers = cache.get(ANSWERS).get(images, modules, () => ({ map: new Map(), lastValue: -1n, lastAnswer: 0 }));
  if (value === answers.lastValue) return answers.lastAnswer;
  let answer = answers.map.get(value);
  if (answer === undefined) {
    answer = classify(modules, images, value);
    answers.map.set(value, answer);
  }
  answers.lastValue = value;
  answers.lastAnswer = answer;
  return answer;
}
