/**
 * llvm-symbolizer-14's answers for the pdb-inline programs (test/fixtures/pdb-inline/<target>/
 * symbolizer.txt, made by its build.sh with `--inlining`): address → frames as `function
 * file:line`, innermost first.
 */
import { fixtureBytes } from "./fixtures.js";

/** The symbolizer's answers for `target` (`x86`, `x64`), by address. */
export function symbolizer(target: string): Map<bigint, string[]> {
  const out = new Map<bigint, string[]>();
  for (const block of new TextDecoder().decode(fixtureBytes(`pdb-inline/${target}/symbolizer.txt`)).split("\n\n")) {
    const lines = block.split("\n").filter((l) => l !== "");
    if (lines.length === 0) continue;
    const frames: string[] = [];
    for (let i = 1; i + 1 < lines.length; i += 2) frames.push(`${lines[i]} ${lines[i + 1]!.replace(/:\d+$/, "")}`);
    out.set(BigInt(lines[0]!), frames);
  }
  return out;
}
