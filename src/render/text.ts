/** The default human output: one table row per frame with the dbghelp fields, its trust and the rule that found it. */
import { formatAddress, machineInfo, MACHINES, type Machine } from "../model/machine.js";
import type { Module } from "../model/snapshot.js";
import { ruleText } from "../arch/rule-text.js";
import type { ThreadWalk, ThreadWalks } from "../walk/walk.js";
import { chunked, collect } from "./chunks.js";
import { inlineLocationText, locate, locationText, sourceOf, type Location } from "../analysis/location.js";
import type { InlineFrame } from "../model/inline.js";
import type { CrashSummary } from "../analysis/breakpad-crash.js";

/** The register-role table of one or more machines, side by side when several. */
export function renderRoles(machines: readonly Machine[] = MACHINES): string {
  const infos = machines.map(machineInfo);
  const lines: string[] = [];
  if (infos.length === 1) {
    const info = infos[0]!;
    lines.push(`Register roles on ${info.title}:`);
    const width = Math.max(...info.roles.map((r) => r.role.length));
    const dwidth = Math.max(...info.roles.map((r) => r.display.length));
    for (const r of info.roles) lines.push(`  ${r.role.padEnd(width)}  ${r.display.padEnd(dwidth)}  ${r.explanation}`);
    return lines.join("\n") + "\n";
  }
  const roleWidth = Math.max(...infos[0]!.roles.map((r) => r.role.length), 4);
  const colWidth = infos.map((info) => Math.max(info.title.length, ...info.roles.map((r) => r.display.length)));
  lines.push(["role".padEnd(roleWidth), ...infos.map((info, i) => info.title.padEnd(colWidth[i]!))].join("  ").trimEnd());
  lines.push(["-".repeat(roleWidth), ...colWidth.map((w) => "-".repeat(w))].join("  "));
  for (let row = 0; row < infos[0]!.roles.length; row++) {
    const role = infos[0]!.roles[row]!.role;
    lines.push([role.padEnd(roleWidth), ...infos.map((info, i) => info.roles[row]!.display.padEnd(colWidth[i]!))].join("  ").trimEnd());
  }
  lines.push("");
  for (const info of infos) {
    lines.push(`${info.title}:`);
    for (const r of info.roles) lines.push(`  ${r.role}: ${r.explanation}`);
  }
  return lines.join("\n") + "\n";
}

/** ` [file:line]` for a location with a source line (a .sym file's line record, or the outermost inlined call's site), else nothing. */
export function sourceText(loc: Location): string {
  const source = sourceOf(loc);
  return source?.file === undefined ? "" : ` [${source.file}:${source.line}]`;
}

/** ` [file:line]` of an inline frame, else nothing. */
export function inlineSourceText(frame: InlineFrame): string {
  return frame.file === undefined ? "" : ` [${frame.file}:${frame.line ?? 0}]`;
}

/** The header that states a crash: its reason, the address it implicates and the thread, then the instruction when it is known. */
export function crashText(machine: Machine, crash: CrashSummary): string {
  const line = `crash: ${crash.reason} at ${formatAddress(machine, crash.address)} in thread ${crash.threadId}`;
  return crash.instruction === undefined ? line : `${line}\ninstruction: ${crash.instruction}`;
}

/**
 * Renders walks as text; `withRegisters` adds each frame's recovered registers, `crash` (a dump's)
 * a header line that states it.
 */
export function renderText(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[] | ThreadWalks, withRegisters = false, crash?: CrashSummary): string {
  return collect((write) => writeText(machine, modules, walks, write, withRegisters, crash));
}

/**
 * {@link renderText}'s text, handed to `write` piece by piece as it is made (a deep walk is never
 * held as one text). The `params:` line is printed only where the machine passes arguments on
 * the stack (x86): elsewhere StackWalk64's Params are always 0.
 */
export function writeText(
  machine: Machine,
  modules: readonly Module[],
  walks: readonly ThreadWalk[] | ThreadWalks,
  write: (text: string) => void,
  withRegisters = false,
  crash?: CrashSummary,
): void {
  const a = (v: bigint): string => formatAddress(machine, v);
  const info = machineInfo(machine);
  const w = info.pointerSize * 2 + 2;
  const out = chunked(write);
  const line = (text: string): void => out.push(`${text}\n`);
  if (crash !== undefined) line(crashText(machine, crash) + "\n");
  let first = true;
  for (const { thread, walk } of walks) {
    if (!first) line("");
    first = false;
    line(`thread ${thread.id}${thread.crashed ? " (crashed)" : ""}: ${walk.frames.length} frame${walk.frames.length === 1 ? "" : "s"}`);
    line(["  #", "AddrPC".padEnd(w), "AddrReturn".padEnd(w), "AddrFrame".padEnd(w), "AddrStack".padEnd(w), "trust".padEnd(13), "location"].join("  "));
    // An inline frame's row: its PC, three empty columns and its trust, then its location.
    const inlineColumns = `  ${"".padEnd(w)}  ${"".padEnd(w)}  ${"".padEnd(w)}  ${"inline".padEnd(13)}  `;
    for (const f of walk.frames) {
      const where = locate(modules, f);
      const pc = a(f.addrPC);
      // Inline frames come before their frame: they share its PC and have no registers of their own.
      for (const inline of where.inlines ?? []) line(`  -  ${pc}${inlineColumns}${inlineLocationText(where, inline, f.addrPC)}${inlineSourceText(inline)}`);
      const loc = locationText(where, pc) + sourceText(where);
      line([String(f.index).padStart(3), pc, a(f.addrReturn), a(f.addrFrame), a(f.addrStack), f.trust.padEnd(13), loc].join("  "));
      line(`     rule: ${ruleText(f.rule)}`);
      if (info.stackParams) line(`     params: ${f.params.map(a).join(" ")}`);
      if (withRegisters) line(`     registers: ${Object.entries(f.registers).map(([k, v]) => `${k}=${a(v)}`).join(" ")}`);
    }
    const at = walk.stop.address === undefined ? "" : ` at ${a(walk.stop.address)}`;
    out.push(`  stop: ${walk.stop.reason}${at}: ${walk.stop.detail}\n`);
  }
  out.end();
}
