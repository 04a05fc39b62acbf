/** Running one rule or working one out, as a walk would, for tests of single strategies. */
import { execRule } from "../../src/arch/exec.js";
import type { UnwindRule } from "../../src/arch/rule.js";
import type { MemoryReader } from "../../src/memory/reader.js";
import type { Registers } from "../../src/model/snapshot.js";
import { UnwindCache } from "../../src/unwind/cache.js";
import { lookupAddress } from "../../src/unwind/lookup-address.js";
import { execContext, type ExecContext, type UnwindResult } from "../../src/arch/step.js";
import type { FrameSite } from "../../src/unwind/step.js";
import { frameRule } from "../../src/arch/rule.js";
import { ruleText } from "../../src/arch/rule-text.js";

/** Runs `rule` on `registers` with what a walk would know of the frame (`known`: PC, SP, what found it…). */
export function runRule(rule: UnwindRule, registers: Registers, memory: MemoryReader, known: Partial<ExecContext> = {}): UnwindResult {
  return execRule(rule, registers, memory, { ...execContext(known.cache ?? new UnwindCache()), ...known });
}

/**
 * A frame's site as a walk fills it in: `pc` is the frame's PC (a return address for index > 0,
 * looked up at pc − 1), the cache a new one unless given.
 */
export function frameSite(site: Omit<FrameSite, "lookupPc" | "cache" | "interrupted" | "calleeParams"> & Partial<Pick<FrameSite, "cache" | "interrupted" | "calleeParams">>): FrameSite {
  const interrupted = site.interrupted ?? false;
  return {
    ...site,
    interrupted,
    calleeParams: site.calleeParams ?? 0,
    lookupPc: lookupAddress(site.pc, site.index > 0 && !interrupted),
    cache: site.cache ?? new UnwindCache(),
  };
}

/** The text of a successful step's rule, as its caller frame carries it. */
export function stepText(result: UnwindResult | undefined): string | false {
  return result !== undefined && result.ok && ruleText(frameRule(result.rule, result.registers));
}
