/**
 * The text of a rule: what `walk` prints after "rule:" and JSON carries under "rule". The one
 * place a rule becomes words, dispatching on its kind to the words of the kinds every machine
 * shares (unwind/rule-text.ts) and of each machine's own (arch/<machine>/rule.ts); a kind without
 * words is a compile error. Everything else reads the rule's fields (rule.ts).
 */
import { sharedRuleText } from "../unwind/rule-text.js";
import { arm64RuleText } from "./arm64/rule.js";
import { armRuleText } from "./arm/rule.js";
import { ia64RuleText } from "./ia64/rule.js";
import type { Rule } from "./rule.js";
import { x64RuleText } from "./x64/rule.js";
import { x86RuleText } from "./x86/rule.js";

export { fpoLabel } from "./x86/rule.js";
export { unwindOpText } from "./x64/rule.js";
export { arm64OpInstruction, arm64OpText } from "./arm64/rule.js";
export { armOpInstruction, armOpText } from "./arm/rule.js";
export { ia64Label, pspText, saveLocationText, stateText } from "./ia64/rule.js";

/** A rule in words, with the values it used, e.g. "ebp-chain ebp=0x0012ff70: eip=[0x0012ff74]=0x00401234 …". */
export function ruleText(rule: Rule): string {
  switch (rule.kind) {
    case "context":
    case "frame-pointer":
    case "cfi":
    case "scan":
    case "leaf":
    case "custom":
      return sharedRuleText(rule);
    case "fpo":
    case "frame-data":
    case "site-check":
    case "x86-epilog":
      return x86RuleText(rule);
    case "unwind-info":
    case "rescan":
      return x64RuleText(rule);
    case "arm64-unwind":
    case "link-register":
    case "arm64-breakpad-fp":
      return arm64RuleText(rule);
    case "arm-unwind":
    case "arm-link-register":
    case "arm-breakpad-fp":
      return armRuleText(rule);
    case "ia64":
      return ia64RuleText(rule);
  }
}
