/**
 * Splits a `minidump_stackwalk` report (minidump.md §6) into the part that says what the dump is
 * (OS, CPU, crash, uptime, thread headers and order, module list) and the frames of each thread,
 * so tests can compare the two separately.
 */

/** A human report (§6.1): everything but the frame lines, and each thread's frame lines. */
export interface HumanParts {
  /** The header up to the first thread, each thread's title line, and the module list. */
  nonFrames: string;
  threads: { title: string; frames: string }[];
}

/** A `-m` report (§6.2): the OS/CPU/GPU/Crash/Module lines and the thread order, and the frame lines per thread. */
export interface MachineParts {
  /** The lines before the blank line, then `threads:` and the thread numbers in print order. */
  nonFrames: string;
  threads: { index: string; frames: string }[];
}

/** Splits a human report: a thread section runs from its `Thread N…` line to the blank line before the next section. */
export function splitHuman(text: string): HumanParts {
  const lines = text.split("\n");
  const kept: string[] = [];
  const threads: { title: string; frames: string }[] = [];
  let current: { title: string; frames: string[] } | undefined;
  for (const line of lines) {
    if (current !== undefined) {
      if (line !== "") {
        current.frames.push(line);
        continue;
      }
      threads.push({ title: current.title, frames: current.frames.join("\n") });
      current = undefined;
    }
    if (/^Thread \d+/.test(line)) current = { title: line, frames: [] };
    kept.push(line);
  }
  if (current !== undefined) threads.push({ title: current.title, frames: current.frames.join("\n") });
  return { nonFrames: kept.join("\n"), threads };
}

/** Splits a `-m` report: the header lines end at the first blank line; frame lines start with their thread number. */
export function splitMachine(text: string): MachineParts {
  const blank = text.indexOf("\n\n");
  const head = blank < 0 ? text : text.slice(0, blank + 1);
  const rest = blank < 0 ? "" : text.slice(blank + 2);
  const threads: { index: string; frames: string[] }[] = [];
  for (const line of rest.split("\n")) {
    if (line === "") continue;
    const index = line.slice(0, line.indexOf("|"));
    if (threads.at(-1)?.index !== index) threads.push({ index, frames: [] });
    threads.at(-1)!.frames.push(line);
  }
  return {
    nonFrames: `${head}threads: ${threads.map((t) => t.index).join(",")}\n`,
    threads: threads.map((t) => ({ index: t.index, frames: t.frames.join("\n") })),
  };
}
