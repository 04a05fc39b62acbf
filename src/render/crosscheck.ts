/**
 * A cross-check report (src/analysis/crosscheck.ts) as text and as plain JSON values: the truth
 * line, then per ETW stack its aligned rows, its differences with their diagnoses, and counts.
 */
import { hex } from "../hex.js";
import { machineInfo } from "../model/machine.js";
import type { AlignedRow, CrossCheckReport } from "../analysis/crosscheck.js";
import { addressText, plural } from "../analysis/crosscheck-diagnose.js";

/** Renders a report as text: the truth line, then per stack its rows, differences and counts. */
export function crossCheckText(report: CrossCheckReport, title: string): string {
  const lines: string[] = [];
  const address = (v: bigint | undefined): string => (v === undefined ? "-" : addressText(report.machine, v));
  const width = machineInfo(report.machine).pointerSize * 2 + 2;
  lines.push(title);
  if (report.truth !== undefined) lines.push(`  walk vs truth: ${report.truth.exact ? `exact (${report.truth.walkedFrames} frames)` : report.truth.difference!.text}`);
  for (const note of report.notes) lines.push(`  note: ${note}`);
  report.stacks.forEach((c, s) => {
    const st = c.stack;
    const parts = st.parts.map((p) => `${p.role} ${p.source}${p.description !== undefined ? ` "${p.description}"` : ""}`).join(" + ");
    lines.push("");
    lines.push(`ETW stack ${s + 1} of ${report.stacks.length}: MatchId ${hex(st.matchId)}, ${plural(st.addresses.length, "address", "addresses")}, ${st.status} (${parts})`);
    for (const note of c.notes) lines.push(`  note: ${note}`);
    if (c.rows.length > 0) {
      lines.push(`  ${"etw".padEnd(4)} ${"address".padEnd(width)}  ${"walk".padEnd(4)} ${"AddrPC".padEnd(width)}  ${"status".padEnd(12)}  location`);
      for (const r of c.rows) {
        const status = r.diagnosis?.cause === "capture-site" ? "capture site" : r.diagnosis?.cause === "unexplained" ? `${r.kind}!` : r.kind;
        lines.push(`  ${String(r.etwIndex ?? "-").padEnd(4)} ${address(r.etw).padEnd(width)}  ${String(r.walkIndex ?? "-").padEnd(4)} ${address(r.walk).padEnd(width)}  ${status.padEnd(12)}  ${r.location}`);
      }
    }
    if (c.prefix > 0) {
      const prefix = c.rows.filter((r) => r.kind === "prefix");
      const kernel = prefix.filter((r) => r.diagnosis?.cause === "kernel").length;
      const kinds = [kernel > 0 ? `${kernel} kernel-mode` : "", c.prefix - kernel > 0 ? `${c.prefix - kernel} of the logging path` : ""].filter((k) => k !== "");
      lines.push(`  prefix: ${plural(c.prefix, "frame")} skipped (${kinds.join(", ")}; etw.md §3.1)`);
    }
    if (c.model !== undefined) lines.push(`  EBP chain: ${c.model}`);
    // One line per difference; a run of rows with the same reason (a deep recursion, the frames
    // after a truncation) prints the first in full and the rest as one line.
    const diffs = c.rows.filter((r) => r.kind === "etw-only" || r.kind === "walk-only");
    for (let i = 0; i < diffs.length; ) {
      const r = diffs[i]!;
      let j = i + 1;
      while (j < diffs.length && diffs[j]!.kind === r.kind && diffs[j]!.diagnosis!.cause === r.diagnosis!.cause && reasonOf(diffs[j]!) === reasonOf(r)) j++;
      lines.push(`  ${r.diagnosis!.cause === "unexplained" ? "UNEXPLAINED" : r.kind} ${r.diagnosis!.text}`);
      if (j - i > 1) {
        const rest = diffs.slice(i + 1, j);
        const index = (x: AlignedRow): number => (r.kind === "walk-only" ? x.walkIndex! : x.etwIndex!);
        const names = [...new Set(rest.map((x) => x.location.replace(/\+0x[0-9a-f]+$/, "").replace(/^[^!]*!/, "")))];
        const shown = names.length > 6 ? `${names.slice(0, 6).join(", ")}, ...` : names.join(", ");
        lines.push(`    and ${plural(rest.length, `more ${r.kind} row`)} for the same reason (${r.kind === "walk-only" ? "walked frames" : "ETW addresses"} ${index(rest[0]!)}..${index(rest[rest.length - 1]!)}: ${shown})`);
      }
      i = j;
    }
    if (c.truncation !== undefined) lines.push(`  truncation: ${c.truncation.diagnosis.text}`);
    if (c.comparable) {
      const verdict = c.agrees ? "agree" : c.unexplained > 0 ? "differ, NOT all explained" : "differ, all explained";
      lines.push(`  ${c.matched} matched, ${c.etwOnly} etw-only, ${c.walkOnly} walk-only, ${c.unexplained} unexplained: ${verdict}`);
    } else lines.push("  not compared");
  });
  return lines.join("\n") + "\n";
}

/** A difference's reason without the address and place it starts with. */
function reasonOf(r: AlignedRow): string {
  const text = r.diagnosis?.text ?? "";
  const at = text.indexOf(" missing from ETW: ");
  return at >= 0 ? text.slice(at) : text.replace(/^0x[0-9a-f]+ \([^)]*\)/, "");
}

/** A report as plain JSON values (addresses as hex strings). */
export function crossCheckJson(report: CrossCheckReport): unknown {
  const address = (v: bigint): string => addressText(report.machine, v);
  return {
    machine: report.machine,
    agrees: report.agrees,
    unexplained: report.unexplained,
    truth: report.truth ?? null,
    notes: report.notes,
    stacks: report.stacks.map((c) => ({
      matchId: c.stack.matchId.toString(),
      status: c.stack.status,
      parts: c.stack.parts,
      addresses: c.stack.addresses.map(address),
      comparable: c.comparable,
      method: c.method,
      model: c.model ?? null,
      prefix: c.prefix,
      matched: c.matched,
      etwOnly: c.etwOnly,
      walkOnly: c.walkOnly,
      unexplained: c.unexplained,
      agrees: c.agrees,
      truncation: c.truncation ?? null,
      notes: c.notes,
      rows: c.rows.map((r) => ({
        kind: r.kind,
        etwIndex: r.etwIndex ?? null,
        etw: r.etw === undefined ? null : address(r.etw),
        walkIndex: r.walkIndex ?? null,
        walk: r.walk === undefined ? null : address(r.walk),
        location: r.location,
        cause: r.diagnosis?.cause ?? null,
        diagnosis: r.diagnosis?.text ?? null,
      })),
    })),
  };
}
