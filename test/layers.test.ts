/**
 * The layer order of ../shared/DESIGN.md: a module imports only from its own layer or lower ones.
 * errors (with hex) → memory → model → formats (bytes in, bytes out; the ETW decoders) → unwind
 * (frame, step and rule types, per-walk caches) → arch → walk → analysis (crosscheck, the EBP
 * chain ETW follows, the explain model, reports gathered from walks) → render → cli and node (the
 * edges). src/index.ts re-exports from anywhere. The emulator uses only the package's entry
 * points (src/index.ts, src/node/index.ts) and its own files.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

const ORDER = ["errors", "memory", "model", "formats", "unwind", "arch", "walk", "analysis", "render", "edge"] as const;
type Layer = (typeof ORDER)[number] | "entry";

/** The layer of a file under src/. */
function layerOf(file: string): Layer {
  // The emulator is imported only by the command line's emulator commands.
  if (!file.startsWith(`src${sep}`)) return "edge";
  const parts = relative("src", file).split(sep);
  const [top] = parts;
  if (parts.length === 1) return top === "index.ts" ? "entry" : "errors";
  if (top === "etw") return "formats";
  if (top === "cli" || top === "node" || top === "testing") return "edge";
  if ((ORDER as readonly string[]).includes(top!)) return top as Layer;
  throw new Error(`${file}: a folder the layer order does not name`);
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p) : /\.(ts|mts)$/.test(p) && !p.endsWith(".d.ts") ? [p] : [];
  });
}

/** Relative module specifiers a file imports or re-exports (static and dynamic). */
function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)"(\.{1,2}\/[^"]+)"/g)].map((m) => normalize(join(dirname(file), m[1]!)).replace(/\.js$/, ".ts"));
}

/** Imports against the order that are still being moved; the list only shrinks. */
const KNOWN: readonly string[] = [
];

describe("imports point down the layer order", () => {
  it("every src module imports only its own layer or lower ones", () => {
    const against: string[] = [];
    for (const file of files("src")) {
      const from = layerOf(file);
      if (from === "entry") continue;
      for (const target of imports(file)) {
        const to = layerOf(target);
        if (to === "entry" || ORDER.indexOf(to) > ORDER.indexOf(from)) against.push(`${from} → ${to}: ${file} imports ${target}`);
      }
    }
    if (process.env["LAYERS_PRINT"] !== undefined) console.log(JSON.stringify(against, null, 2));
    expect(against.filter((a) => !KNOWN.includes(a))).toEqual([]);
    expect(KNOWN.filter((k) => !against.includes(k))).toEqual([]);
  });

  it("renderers draw walks they are given: no file under src/render runs a walk", () => {
    const against = files(join("src", "render")).filter((f) => /\bwalk(Thread|Snapshot)\b/.test(readFileSync(f, "utf8")));
    expect(against.filter((a) => !KNOWN_RENDER.includes(a))).toEqual([]);
    expect(KNOWN_RENDER.filter((k) => !against.includes(k))).toEqual([]);
  });

  it("the emulator imports from src only through the package's entry points", () => {
    const against: string[] = [];
    for (const file of files("emulator")) {
      for (const target of imports(file)) {
        if (target.startsWith(`src${sep}`) && target !== join("src", "index.ts") && target !== join("src", "node", "index.ts")) against.push(`${file} imports ${target}`);
      }
    }
    if (process.env["LAYERS_PRINT"] !== undefined) console.log(JSON.stringify(against, null, 2));
    expect(against.filter((a) => !KNOWN_EMULATOR.includes(a))).toEqual([]);
    expect(KNOWN_EMULATOR.filter((k) => !against.includes(k))).toEqual([]);
  });
});

/** Emulator imports of src internals that are still being moved; the list only shrinks. */
const KNOWN_EMULATOR: readonly string[] = [
    "emulator/compare.ts imports src/errors.ts",
    "emulator/compare.ts imports src/formats/json-input.ts",
    "emulator/compare.ts imports src/formats/vector.ts",
    "emulator/corpus.ts imports src/formats/vector.ts",
    "emulator/etw-capture.ts imports src/etw/extended-data.ts",
    "emulator/etw-capture.ts imports src/formats/pe.ts",
    "emulator/etw-capture.ts imports src/formats/sweep.ts",
    "emulator/etw-capture.ts imports src/formats/vector.ts",
    "emulator/etw-capture.ts imports src/model/snapshot.ts",
    "emulator/etw-modules.ts imports src/model/fpo-data.ts",
    "emulator/etw-modules.ts imports src/model/snapshot.ts",
    "emulator/ia64/corpus.ts imports src/formats/vector.ts",
    "emulator/ia64/executor.ts imports src/errors.ts",
    "emulator/ia64/executor.ts imports src/memory/region-memory.ts",
    "emulator/ia64/executor.ts imports src/formats/vector.ts",
    "emulator/ia64/executor.ts imports src/model/snapshot.ts",
    "emulator/image-writer.ts imports src/model/fpo-data.ts",
    "emulator/image-writer.ts imports src/model/machine.ts",
    "emulator/pe-loader.ts imports src/errors.ts",
    "emulator/pe-loader.ts imports src/formats/pe.ts",
    "emulator/pe-loader.ts imports src/model/machine.ts",
    "emulator/pe-loader.ts imports src/model/snapshot.ts",
    "emulator/programs/program-file.ts imports src/errors.ts",
    "emulator/programs/program-file.ts imports src/formats/json-input.ts",
    "emulator/programs/program-file.ts imports src/model/snapshot.ts",
    "emulator/programs/unwind-encode.ts imports src/formats/pe.ts",
    "emulator/programs/x64-chain.ts imports src/formats/pe.ts",
    "emulator/programs/x86-chain.ts imports src/model/fpo-data.ts",
    "emulator/real-programs.ts imports src/formats/pe.ts",
    "emulator/real-programs.ts imports src/formats/sweep.ts",
    "emulator/real-programs.ts imports src/formats/vector.ts",
    "emulator/run.ts imports src/errors.ts",
    "emulator/run.ts imports src/formats/pe.ts",
    "emulator/run.ts imports src/formats/sweep.ts",
    "emulator/run.ts imports src/formats/vector.ts",
    "emulator/run.ts imports src/memory/region-memory.ts",
    "emulator/run.ts imports src/model/machine.ts",
    "emulator/run.ts imports src/model/snapshot.ts",
    "emulator/symbols.ts imports src/errors.ts",
    "emulator/symbols.ts imports src/formats/pdb.ts",
    "emulator/symbols.ts imports src/formats/pe.ts",
    "emulator/symbols.ts imports src/model/machine.ts",
    "emulator/symbols.ts imports src/model/snapshot.ts",
    "emulator/trace.ts imports src/model/snapshot.ts",
];

/** Renderers that still run walks themselves; the list only shrinks. */
const KNOWN_RENDER: readonly string[] = [];
