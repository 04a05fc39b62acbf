/**
 * `explain` as text: one block per frame of an explained walk (src/analysis/explain-walk.ts) with
 * its source line, registers, trust and the words of how it was found, then the stop and the truth.
 */
import { formatAddress, machineInfo } from "../model/machine.js";
import type { ExplainedWalk } from "../analysis/explain-model.js";
import { registerName } from "../analysis/explain-words.js";
import { chunked, collect } from "./chunks.js";

/** The explanation as text: one block per frame, then the stop and the truth. */
export function formatExplanation(e: ExplainedWalk): string {
  return collect((write) => writeExplanation(e, write));
}

/** {@link formatExplanation}'s text, handed to `write` in pieces as it is made (a walk of 16,384 frames explained is tens of MB). */
export function writeExplanation(e: ExplainedWalk, write: (text: string) => void): void {
  const chunks = chunked(write);
  const out = { push: (line: string): void => chunks.push(`${line}\n`) };
  const a = (v: bigint): string => formatAddress(e.machine, v);
  const arch = machineInfo(e.machine);
  out.push(`${e.title}: ${machineInfo(e.machine).title}, thread ${e.threadId}, walker ${e.walker}`);
  for (const n of e.notes) out.push(`note: ${n}`);
  for (const f of e.frames) {
    const regs = [`${registerName(e.machine, arch.pc)}=${a(f.frame.addrPC)}`, `${registerName(e.machine, arch.sp)}=${a(f.frame.addrStack)}`];
    if (arch.fp !== null) regs.push(`${registerName(e.machine, arch.fp)}=${a(f.frame.addrFrame)}`);
    if (arch.bstore !== null) regs.push(`${registerName(e.machine, arch.bstore)}=${a(f.frame.addrBStore)}`);
    out.push("");
    // Inline frames first, innermost first: each is a call the compiler inlined into this frame's function.
    for (const inline of f.inlines ?? []) {
      out.push(`inline  ${inline.location}  [inline]${inline.source !== undefined ? `  source: ${inline.source.file}:${inline.source.line}` : ""}`);
      out.push(`  inlined into frame ${f.index}: no registers or stack of its own; it runs in frame ${f.index}'s stack area`);
    }
    out.push(`frame ${f.index}  ${f.location}  [${f.frame.trust}]${f.truth !== undefined ? `  truth: ${f.truth}` : ""}`);
    if (f.source !== undefined) out.push(`  source: ${f.source.file}:${f.source.line}`);
    out.push(`  ${regs.join("  ")}`);
    for (const line of f.how) out.push(`  ${line}`);
    if (f.weaker !== undefined) out.push(`  weaker walker: ${f.weaker}`);
  }
  out.push("");
  out.push(`stop: ${e.stopText}`);
  if (e.truth !== undefined) out.push(`truth: ${e.truth.text}`);
  chunks.end();
}
