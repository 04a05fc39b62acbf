/**
 * Stack scanning on x86 (minidump.md §5.3, x86-fpo.md §8 rule 5): the caller's EIP is the first
 * word from ESP up that is a return address (it lies in a module, just after a call), and ESP is
 * the slot above it. Bounded: 161 words for the context frame, 41 otherwise. Two strategies use
 * it: `x86RecordlessScan` for functions without a record in a module that has records (hand
 * assembly such as `__chkstk`), where the EBP chain cannot be trusted, and `x86Scan`, the last
 * resort of the `auto` walker.
 */
import { readU32, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../../walk/strategy.js";
import { scanForReturnAddress } from "./code.js";
import { EIP_ESP, EIP_ESP_EBP, hex, inherited, SCAN_WORDS, SCAN_WORDS_CONTEXT, U32, x86Site } from "./site.js";
import { findFpo, findFrameData } from "./tables.js";

/** Largest distance from a slot to the frame it links to for a scanned EBP to be believed (Breakpad: 128 KiB). */
const MAX_EBP_DISTANCE = 128n * 1024n;

function scanRule(site: FrameSite, label: string, recoverEbp: boolean, callee?: { start: bigint; end: bigint }): UnwindRule {
  const words = site.index === 0 ? SCAN_WORDS_CONTEXT : SCAN_WORDS;
  const { modules, images } = site;
  return {
    describe: () => `${label}: the first return address in ${words + 1} words from esp`,
    exec(registers: Registers, stack: MemoryReader): UnwindResult {
      const esp = registers["esp"] ?? 0n;
      const hit = scanForReturnAddress(stack, modules, images, esp, words, callee);
      if (hit === undefined) {
        return { ok: false, stop: { reason: "unsupported", detail: `${label}: no return address in the ${words + 1} words from ${hex(esp)}` } };
      }
      const out = inherited(registers);
      out["eip"] = hit.value;
      out["esp"] = (hit.slot + 4n) & U32;
      let note = "";
      let recovered = EIP_ESP;
      if (recoverEbp) {
        // The word below the return address is where an EBP frame keeps the caller's EBP (Breakpad's check).
        const below = (hit.slot - 4n) & U32;
        const candidate = readU32(stack, below);
        if (candidate !== undefined && candidate > below && candidate - below <= MAX_EBP_DISTANCE) {
          out["ebp"] = candidate;
          note = ` ebp=[${hex(below)}]`;
          recovered = EIP_ESP_EBP;
        }
      }
      return { ok: true, registers: out, recovered, rule: `${label} from esp=${hex(esp)}: ra@[${hex(hit.slot)}]=${hex(hit.value)}${note}` };
    },
  };
}

/** Scanning for a function that has no record in a module whose other functions have records (trust `scan`). */
export const x86RecordlessScan: UnwindStrategy = {
  name: "recordless-scan",
  trust: "scan",
  ruleFor(site: FrameSite): UnwindRule | undefined {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    if (findFrameData(found.tables.frameData, found.rva) !== undefined || findFpo(found.tables.fpo, found.rva) !== undefined) return undefined;
    return scanRule(site, `scan (no record at rva ${hex(found.rva)})`, false, found.callee);
  },
};

/** Breakpad-style stack scanning, the last resort (trust `scan`). */
export const x86Scan: UnwindStrategy = {
  name: "scan",
  trust: "scan",
  ruleFor: (site: FrameSite) => scanRule(site, "scan", true),
};
