/** The README's examples, as the tests that run them read them. */
import { readFileSync } from "node:fs";
import { ROOT } from "./corpus.js";

/**
 * The lines of the first fenced block after the first line of README.md that contains `marker`,
 * without the block's indentation (a block in a list item is indented) and without trailing
 * white space on each line.
 */
export function readmeBlockAfter(marker: string): string[] {
  const readme = readFileSync(`${ROOT}README.md`, "utf8");
  const at = readme.indexOf(marker);
  if (at < 0) throw new Error(`README.md has no "${marker}"`);
  const m = /^( *)```[^\n]*\n([\s\S]*?)^ *```$/m.exec(readme.slice(at));
  if (m === null) throw new Error(`README.md has no code block after "${marker}"`);
  const indent = m[1]!.length;
  return m[2]!.replace(/\n$/, "").split("\n").map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)).trimEnd());
}
