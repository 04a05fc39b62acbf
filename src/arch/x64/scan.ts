/**
 * Stack scanning on x64 (the x86 scanner's counterpart, minidump.md §5.3): the caller's RIP is
 * the first 64-bit word from RSP up that is a return address (it lies in a module, just after a
 * call instruction), and RSP is the slot above it. Bounded: 161 words for the context frame, 41
 * otherwise. The callee-saved registers are carried over by convention; none is recovered.
 */
import type { MemoryReader } from "../../memory/reader.js";
import type { Module, Registers } from "../../model/snapshot.js";
import type { FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../../walk/strategy.js";
import { isReturnAddress64, readWord, readWordBig, wordBig, wordNumber } from "./code.js";
import { inherited64 } from "./exec.js";

/** Words scanned above RSP for a caller frame (the window includes its last word). */
export const X64_SCAN_WORDS = 40;
/** The same for the context frame. */
export const X64_SCAN_WORDS_CONTEXT = 160;

export const RIP_RSP: readonly string[] = ["rip", "rsp"];
const MAX = BigInt(Number.MAX_SAFE_INTEGER);

const hex = (v: bigint): string => "0x" + v.toString(16);

/**
 * The first return address in the `words + 1` stack words from `start` up (stopping at the first
 * unreadable word): the caller's registers (RIP = it, RSP = the slot above, callee-saved ones
 * carried over from `registers`) and its slot, or undefined.
 */
export function scanForReturn64(
  stack: MemoryReader,
  modules: readonly Module[],
  images: MemoryReader,
  registers: Registers,
  start: bigint,
  words: number,
): { registers: Registers; slot: bigint } | undefined {
  for (let i = 0; i <= words; i++) {
    const slot = start + BigInt(8 * i);
    const readable = slot + 8n <= MAX ? readWord(stack, Number(slot)) : readWordBig(stack, slot);
    if (!readable) break;
    const value = wordBig();
    if (value === 0n || !isReturnAddress64(modules, images, value, wordNumber())) continue;
    const out = inherited64(registers);
    out["rip"] = value;
    out["rsp"] = slot + 8n;
    return { registers: out, slot };
  }
  return undefined;
}

function scanRule(words: number, modules: readonly Module[], images: MemoryReader): UnwindRule {
  return {
    describe: () => `scan: the first return address in ${words + 1} words from rsp`,
    exec(registers: Registers, stack: MemoryReader): UnwindResult {
      const rsp = registers["rsp"];
      if (rsp === undefined) return { ok: false, stop: { reason: "unsupported", detail: "scan: RSP is not known for this frame" } };
      const hit = scanForReturn64(stack, modules, images, registers, rsp, words);
      if (hit === undefined) return { ok: false, stop: { reason: "unsupported", detail: `scan: no return address in the ${words + 1} words from ${hex(rsp)}` } };
      return { ok: true, registers: hit.registers, recovered: RIP_RSP, rule: `scan from rsp=${hex(rsp)}: ra@[${hex(hit.slot)}]=${hex(hit.registers["rip"]!)}` };
    },
  };
}

/** Breakpad-style stack scanning for x64, the last resort (trust `scan`). */
export const x64Scan: UnwindStrategy = {
  name: "scan",
  trust: "scan",
  ruleFor: (site: FrameSite) => scanRule(site.index === 0 ? X64_SCAN_WORDS_CONTEXT : X64_SCAN_WORDS, site.modules, site.images),
};
