/**
 * The words of the rule kinds every machine shares (rule.ts): what `walk` prints after "rule:"
 * and JSON carries under "rule". arch/rule-text.ts `ruleText` is the one place a rule becomes
 * words; it gives these kinds to {@link sharedRuleText} and each machine's to the machine.
 */
import { hex, hexPadded } from "../hex.js";
import type { FramePointerRule, SharedRule } from "./rule.js";

/** A shared rule in words, with the values it used, e.g. "ebp-chain ebp=0x0012ff70: eip=[0x0012ff74]=0x00401234 …". */
export function sharedRuleText(rule: SharedRule): string {
  switch (rule.kind) {
    case "context":
      return "context";
    case "frame-pointer":
      return chainText(rule);
    case "cfi":
      return `cfi rva=${hex(rule.rva)}: ${rule.rules.map(([name, expression]) => `${name}: ${expression}`).join(" ")}`;
    case "scan": {
      const label = rule.noRecordRva === undefined ? "scan" : `scan (no record at rva ${hex(rule.noRecordRva)})`;
      const fp = rule.fp === undefined ? "" : ` ${rule.registers.fp}=${hex(rule.fp)}`;
      return `${label} from ${rule.registers.sp}=${hex(rule.sp)}: ra@[${hex(rule.slot)}]=${hex(rule.value)}${fp}`;
    }
    case "leaf":
      return `leaf: ra@[${hex(rule.slot)}]=${hex(rule.value)}`;
    case "custom":
      return rule.text;
  }
}

/** `ebp-chain ebp=…: eip=[…]=… ebp=[…]=… esp=…`. */
function chainText(r: FramePointerRule): string {
  const { pc, sp, fp, width } = r.chain;
  const mask = width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const w = BigInt(width);
  const h = (v: bigint): string => hexPadded(v, width * 2);
  return `${fp}-chain ${fp}=${h(r.fp)}: ${pc}=[${h((r.fp + w) & mask)}]=${h(r.pc)} ${fp}=[${h(r.fp)}]=${h(r.savedFp)} ${sp}=${h((r.fp + 2n * w) & mask)}`;
}
