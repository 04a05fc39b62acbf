import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { corpusFiles, GENERATED_FOLDERS, type CorpusFile } from "../../emulator/corpus.js";
import { parseJsonInput } from "../../src/formats/input.js";

let files: CorpusFile[] = [];

beforeAll(async () => {
  files = await corpusFiles();
});

describe("the generated vector corpus", () => {
  it("is committed exactly as `npm run vectors` regenerates it", () => {
    const differing = files.filter(({ file, text }) => readFileSync(file, "utf8") !== text).map((f) => f.file);
    expect(differing).toEqual([]);
  });

  it("has no file in a generated folder that the generator no longer makes", () => {
    const made = new Set(files.map((f) => f.file));
    const stale = GENERATED_FOLDERS.flatMap((folder) => readdirSync(folder).filter((n) => n.endsWith(".json")).map((n) => join(folder, n))).filter((f) => !made.has(f));
    expect(stale).toEqual([]);
  });

  it("gives every vector and every sweep snapshot its ground truth", () => {
    for (const { file, text } of files) {
      const input = parseJsonInput(text, file);
      const truths = input.kind === "vector" ? [input.vector.threads[0]!.truth] : input.sweep.steps.map((s) => s.truth);
      expect(truths.every((t) => t !== undefined && t.length > 0), file).toBe(true);
    }
  });

  it("covers the minimum x86 synthetic corpus", () => {
    const names = files.map((f) => f.file);
    for (const program of ["ebp-chain-5", "fpo-leaf", "fpo-usebp", "mixed-8", "stdcall", "recursion-1000", "alloca"]) {
      expect(names.some((n) => n.startsWith(`vectors/x86/synthetic/${program}`)), program).toBe(true);
    }
    for (const program of ["fpo-leaf-etw", "fpo-usebp-etw", "ebp-chain-etw", "kernel-user"]) {
      expect(names.some((n) => n.startsWith(`vectors/x86/etw/${program}`)), program).toBe(true);
    }
    for (const f of files.filter((x) => x.file.startsWith("vectors/x86/etw/"))) {
      const v = parseJsonInput(f.text);
      expect(v.kind === "vector" && (v.vector.threads[0]!.etw?.length ?? 0) > 0, f.file).toBe(true);
    }
    const deep = files.find((f) => f.file === "vectors/x86/synthetic/recursion-1000.json")!;
    const v = parseJsonInput(deep.text);
    expect(v.kind === "vector" && v.vector.threads[0]!.truth!.length).toBeGreaterThan(1000);
  });
});
