/**
 * What an x64 walker reads from code bytes and the stack besides the unwind tables: whether a
 * value is a return address (it lies in a module, just after a call instruction), and 64-bit
 * stack words read fast. The call forms are `E8 rel32` and `FF /2` in every 64-bit addressing
 * form (register, [reg], [reg+disp8/32], SIB, RIP-relative), with or without a REX prefix.
 */
import type { MemoryReader } from "../../memory/reader.js";
import { Words } from "../../memory/words.js";
import { moduleAt, type Module } from "../../model/snapshot.js";
import { cacheSlot, ImageKeyed, type UnwindCache } from "../../unwind/cache.js";
import { lookupAddress } from "../../unwind/lookup-address.js";
import { work } from "../../unwind/work.js";

/** The bytes a `FF /2` call takes after its opcode, from its ModRM (and SIB) byte, in 64-bit mode. */
function modrmLength(modrm: number, sib: number): number {
  const mod = modrm >> 6;
  const rm = modrm & 7;
  if (mod === 3) return 1;
  if (rm === 4) return 2 + (mod === 1 ? 1 : mod === 2 ? 4 : (sib & 7) === 5 ? 4 : 0);
  if (mod === 0) return rm === 5 ? 5 : 1;
  return 1 + (mod === 1 ? 1 : 4);
}

/** Whether the bytes just before `ra` are a call instruction (undefined when they cannot be read). */
export function callBefore64(images: MemoryReader, ra: bigint): boolean | undefined {
  work.units++;
  let b: Uint8Array | undefined;
  let n = 8;
  for (; n >= 2 && b === undefined; n--) if (ra >= BigInt(n)) b = images.read(ra - BigInt(n), n);
  if (b === undefined) return undefined;
  const len = b.length;
  if (len >= 5 && b[len - 5] === 0xe8) return true;
  for (let k = 2; k <= len; k++) {
    const at = len - k;
    if (b[at] === 0xff && ((b[at + 1]! >> 3) & 7) === 2 && modrmLength(b[at + 1]!, b[at + 2] ?? 0) === k - 1) return true;
    if (k >= 3 && (b[at]! & 0xf0) === 0x40 && b[at + 1] === 0xff && ((b[at + 2]! >> 3) & 7) === 2 && modrmLength(b[at + 2]!, b[at + 3] ?? 0) === k - 2) return true;
  }
  return false;
}

/** Answers by value for one module list and image memory, and the last one (a recursion asks about one return address again and again). */
interface Answers {
  map: Map<number, number>;
  lastValue: number;
  lastAnswer: number;
}

const ANSWERS = cacheSlot("x64 return addresses", () => new ImageKeyed<readonly Module[], Answers>());
const newAnswers = (): Answers => ({ map: new Map(), lastValue: -1, lastAnswer: 0 });

/** {@link returnAddressInfo64}: not a return address. */
export const NOT_A_RETURN_ADDRESS_64 = -1;
/** {@link returnAddressInfo64}: a return address after an indirect call. */
export const UNKNOWN_CALL_TARGET_64 = -2;
/** {@link returnAddressInfo64}: a word in a module whose code the snapshot lacks, so no call site can be checked. */
export const UNCHECKED_RETURN_ADDRESS_64 = -3;

function classify(modules: readonly Module[], images: MemoryReader, value: bigint): number {
  if (value < 0x1000n || moduleAt(modules, lookupAddress(value, true)) === undefined) return NOT_A_RETURN_ADDRESS_64;
  const call = callBefore64(images, value);
  // A module whose code is not in the snapshot: lying in it is all that can be checked.
  if (call === undefined) return UNCHECKED_RETURN_ADDRESS_64;
  if (!call) return NOT_A_RETURN_ADDRESS_64;
  const b = images.read(value - 5n, 5);
  if (b === undefined || b[0] !== 0xe8) return UNKNOWN_CALL_TARGET_64;
  const target = value + BigInt((b[1]! | (b[2]! << 8) | (b[3]! << 16) | (b[4]! << 24)) >> 0);
  return target >= 0n && target <= MAX_EXACT ? Number(target) : UNKNOWN_CALL_TARGET_64;
}

const MAX_EXACT = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * What `value` is as a return address: {@link NOT_A_RETURN_ADDRESS_64}; the target of the
 * direct call (`E8 rel32`) before it, a number ≥ 0; {@link UNKNOWN_CALL_TARGET_64} after an
 * indirect call; or {@link UNCHECKED_RETURN_ADDRESS_64} in a module whose code the snapshot lacks,
 * where lying in it is all that can be checked. A return address lies after `value − 1` in a module and the bytes before it are a
 * call. `n` is the same value as a number when it is below 2^53, else −1. Answers are kept in
 * the walk's cache per images and module list.
 */
export function returnAddressInfo64(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint, n: number): number {
  if (n < 0) return classify(modules, images, value);
  const answers = cache.get(ANSWERS).get(images, modules, newAnswers);
  // The same return address again (a recursion): no map lookup.
  if (n === answers.lastValue) return answers.lastAnswer;
  let answer = answers.map.get(n);
  if (answer === undefined) {
    answer = classify(modules, images, value);
    answers.map.set(n, answer);
  }
  answers.lastValue = n;
  answers.lastAnswer = answer;
  return answer;
}

/** Whether `value` can be a return address (see {@link returnAddressInfo64}). */
export function isReturnAddress64(cache: UnwindCache, modules: readonly Module[], images: MemoryReader, value: bigint, n: number): boolean {
  return returnAddressInfo64(cache, modules, images, value, n) !== NOT_A_RETURN_ADDRESS_64;
}

export { Words };

/** The word reader of a cache. */
export const WORDS = cacheSlot("x64 words", () => new Words());
