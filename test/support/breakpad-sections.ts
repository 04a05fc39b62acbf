/**
 * The thread sections of Breakpad's minidump_stackwalk reports (minidump.md §6): what the walk
 * decides, apart from the header, crash lines and module list.
 */

/** The human report's threads: from the first `Thread ` line up to `Loaded modules:`. */
export function humanThreads(report: string): string {
  const lines = report.split("\n");
  const start = lines.findIndex((l) => l.startsWith("Thread "));
  const end = lines.findIndex((l) => l === "Loaded modules:");
  return start < 0 ? "" : lines.slice(start, end < 0 ? undefined : end).join("\n");
}

/** The `-m` report's frame lines (`thread|frame|module|function|file|line|offset`). */
export function machineThreads(report: string): string {
  return report
    .split("\n")
    .filter((l) => /^\d+\|\d+\|/.test(l))
    .join("\n");
}
