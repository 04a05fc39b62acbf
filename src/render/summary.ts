/** The summary of a batch: one row per input (the crashed or first thread's frame 0, its depth and stop), and the totals. */
import type { WalkDocument } from "../analysis/walk-document.js";
import { crashReason } from "../analysis/breakpad-crash.js";
import { locate, locationText } from "../analysis/location.js";
import { formatAddress } from "../model/machine.js";

/** One line of the summary table. */
export interface SummaryRow {
  file: string;
  machine: string;
  /** The crash reason, when the input is a dump with an Exception stream. */
  crash: string | null;
  threads: number;
  /** Frames of the first walked thread (the crashed one when there is one). */
  frames: number;
  /** Where that thread's frame 0 is. */
  top: string;
  stop: string;
}

/** One input of a batch: its row, or why it could not be walked. */
export interface SummaryEntry {
  file: string;
  result: { ok: true; row: SummaryRow } | { ok: false; error: string };
}

/** The summary row of a document's input: its first thread's walk (the one already made, else walked now). */
export function summaryRow(document: WalkDocument): SummaryRow {
  const { file, snapshot, dump } = document.input;
  const first = document.firstWalk();
  const top = first?.walk.frames[0];
  return {
    file,
    machine: snapshot.machine,
    crash: dump === undefined ? null : (crashReason(dump)?.reason ?? null),
    threads: document.walks().threads.length,
    frames: first?.walk.frames.length ?? 0,
    top: top === undefined ? "-" : locationText(locate(snapshot.modules, top), formatAddress(snapshot.machine, top.addrPC)),
    stop: first?.walk.stop.reason ?? "-",
  };
}

/** The summary table: a header, one row per input (an error row for one that failed), and the totals. */
export function formatSummary(results: readonly SummaryEntry[]): string {
  const rows = results.map(({ file, result }) =>
    result.ok ? [file, result.row.machine, result.row.crash ?? "-", String(result.row.threads), String(result.row.frames), result.row.stop, result.row.top] : [file, "error", result.error],
  );
  const head = ["input", "machine", "crash", "threads", "frames", "stop", "frame 0 of the crashed (or first) thread"];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.filter((r) => r.length === head.length).map((r) => r[i]!.length)));
  const line = (cells: string[]): string => (cells.length === head.length ? cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ") : `${cells[0]!.padEnd(widths[0]!)}  ${cells[1]}: ${cells[2]}`).trimEnd();
  const failed = results.filter((r) => !r.result.ok).length;
  return [line(head), ...rows.map(line), `${results.length} input${results.length === 1 ? "" : "s"}: ${results.length - failed} walked, ${failed} failed`].join("\n") + "\n";
}
