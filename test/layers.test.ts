/**
 * The layer order of docs/architecture.md ("Layers") and docs/DESIGN.md: a module imports only from its own layer or lower ones.
 * errors (with hex) → memory → model → formats (bytes in, bytes out: every codec) → unwind
 * (frame, step and rule types, per-walk caches) → arch → walk → analysis (crosscheck, the EBP
 * chain ETW follows, the explain model, reports gathered from walks) → render → cli and node (the
 * edges). src/index.ts and the named entries under src/entry/ re-export from anywhere. The emulator
 * uses only the package's entry points (src/index.ts, src/entry/*.ts, src/node/index.ts) and its
 * own files.
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
  if (top === "entry") return "entry";
  if (top === "cli" || top === "node" || top === "testing" || top === "site") return "edge";
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
    expect(against).toEqual([]);
  });

  it("outside src/arch/, a machine folder is reached only through its front door (src/arch/<machine>/index.ts)", () => {
    const machineFile = new RegExp(`^src\\${sep}arch\\${sep}(x86|x64|arm64|ia64)\\${sep}(?!index\\.ts$)`);
    const against: string[] = [];
    for (const file of files("src")) {
      if (file.startsWith(join("src", "arch") + sep)) continue;
      for (const target of imports(file)) if (machineFile.test(target)) against.push(`${file} imports ${target}`);
    }
    expect(against).toEqual([]);
  });

  it("renderers draw walks they are given: no file under src/render runs a walk", () => {
    const against = files(join("src", "render")).filter((f) => /\bwalk(Thread|Snapshot)\b/.test(readFileSync(f, "utf8")));
    expect(against).toEqual([]);
  });

  it("`--format` is a lookup in render/output-formats.ts: no file of the edges compares a format by its name", () => {
    const edges = ["cli", "site", "node"].flatMap((d) => files(join("src", d)));
    const against = edges.filter((f) => /\bformat\s*[!=]==\s*"|"\s*[!=]==\s*(options\.)?format\b/.test(readFileSync(f, "utf8")));
    expect(against).toEqual([]);
  });

  it("the emulator imports only its own files and the package's entry points (src/index.ts, src/entry/*.ts, src/node/index.ts)", () => {
    const entries = [join("src", "index.ts"), join("src", "node", "index.ts"), ...files(join("src", "entry"))];
    const against: string[] = [];
    for (const file of files("emulator")) {
      for (const target of imports(file)) {
        if (!target.startsWith(`emulator${sep}`) && !entries.includes(target)) against.push(`${file} imports ${target}`);
      }
    }
    expect(against).toEqual([]);
  });

  it("the emulator never runs a walker: its truth comes from the CPU alone", () => {
    const walkers = /\b(walkThread|walkSnapshot|execRule|unwindStep|archWalker|strategiesFor|stackWalk64|stackWalk64Detailed|compareWithTruth)\b/;
    expect(files("emulator").filter((f) => walkers.test(readFileSync(f, "utf8")))).toEqual([]);
  });
});
