/**
 * The pictures of docs/learn.md's "Learn" section: one call chain (vectors/programs/chains/
 * config-parser.json) built for the six targets of `stackwalk compare`, each walked with its
 * table walker and drawn by `render`. `npm run pictures` writes them to vectors/pictures/, and the
 * six snapshots they are drawn from to vectors/compare/ with a file that names them (what the
 * playground opens as its examples, and compares side by side as `stackwalk compare` does); a
 * test keeps the committed files equal to a fresh run.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { parseChainSpec, runCompareTargets, type CompareTarget } from "../../emulator/compare.js";
import { explainWalk } from "../../src/analysis/explain-walk.js";
import { formatVector } from "../../src/formats/vector.js";
import { renderSvg } from "../../src/render/svg.js";
import type { WalkerName } from "../../src/walk/registry.js";

const ROOT = new URL("../../", import.meta.url).pathname;

/** The chain the pictures show. */
export const LEARN_CHAIN = "vectors/programs/chains/config-parser.json";
/** Where the pictures go. */
export const PICTURES_FOLDER = "vectors/pictures";
/** Where the chain's snapshots go. */
export const COMPARE_FOLDER = "vectors/compare";

const WALKER: Record<CompareTarget, WalkerName> = { "x86-fp": "frame-pointer", "x86-fpo": "fpo", x64: "unwind", arm64: "unwind", arm: "unwind", ia64: "ia64" };
const TITLE: Record<CompareTarget, string> = {
  "x86-fp": "x86 with frame pointers",
  "x86-fpo": "x86 with frame-pointer omission",
  x64: "x64",
  arm64: "ARM64",
  arm: "ARM (Thumb-2)",
  ia64: "IA-64",
};

/** The pictures, then the snapshots and the file naming them, as files relative to the repository root. */
export async function learnPictures(): Promise<{ file: string; text: string }[]> {
  const spec = parseChainSpec(readFileSync(`${ROOT}${LEARN_CHAIN}`, "utf8"), LEARN_CHAIN);
  const runs = await runCompareTargets(spec);
  const pictures = runs.map((r) => {
    const e = explainWalk(r.vector, r.vector.threads[0]!, { walker: WALKER[r.target], title: `${spec.name} on ${TITLE[r.target]}` });
    return { file: `${PICTURES_FOLDER}/${spec.name}-${r.target}.svg`, text: renderSvg(e) };
  });
  const vectors = runs.map((r) => ({ file: `${COMPARE_FOLDER}/${spec.name}-${r.target}.json`, text: formatVector(r.vector) }));
  const manifest = {
    format: "stackwalk-compare/1",
    name: spec.name,
    description: spec.description,
    chain: spec.functions.map((f) => f.name),
    targets: runs.map((r) => ({ target: r.target, title: TITLE[r.target], walker: WALKER[r.target], build: r.build, etwSource: r.etwSource, vector: `${spec.name}-${r.target}.json` })),
  };
  return [...pictures, ...vectors, { file: `${COMPARE_FOLDER}/${spec.name}.json`, text: JSON.stringify(manifest, null, 2) + "\n" }];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  for (const p of await learnPictures()) {
    mkdirSync(dirname(`${ROOT}${p.file}`), { recursive: true });
    writeFileSync(`${ROOT}${p.file}`, p.text);
    process.stdout.write(`wrote ${p.file} (${p.text.length.toLocaleString("en-US")} bytes)\n`);
  }
}
