/**
 * llvm-symbolizer-14's answers, as test/support/symbolize-text.sh writes them (`--inlining
 * --print-address`, every byte of an image's code): address → frames as `function file:line`,
 * innermost first. The fixtures: test/fixtures/pdb-inline/<target>/symbolizer.txt (the inline
 * program) and test/fixtures/c-programs-symbolizer/<target>/<program>.txt (the C test programs).
 */
import { fixtureBytes } from "./fixtures.js";

/** The symbolizer's answers in fixture `rel` (relative to test/fixtures), by address. */
export function symbolizerAnswers(rel: string): Map<bigint, string[]> {
  const out = new Map<bigint, string[]>();
  for (const block of new TextDecoder().decode(fixtureBytes(rel)).split("\n\n")) {
    const lines = block.split("\n").filter((l) => l !== "");
    if (lines.length === 0) continue;
    const frames: string[] = [];
    for (let i = 1; i + 1 < lines.length; i += 2) frames.push(`${lines[i]} ${lines[i + 1]!.replace(/:\d+$/, "")}`);
    out.set(BigInt(lines[0]!), frames);
  }
  return out;
}

/** The symbolizer's answers for the inline program built for `target` (`x86`, `x64`), by address. */
export function symbolizer(target: string): Map<bigint, string[]> {
  return symbolizerAnswers(`pdb-inline/${target}/symbolizer.txt`);
}
