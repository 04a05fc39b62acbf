/**
 * The output-format table (render/output-formats.ts): `--format` is a lookup in it, and a single
 * input, a batch and a library caller write through the same entries. Breakpad's entries are
 * checked against Breakpad's own reports of minidump2.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { walkDocument } from "../../src/analysis/walk-document.js";
import { FORMATS, WALK_USAGE } from "../../src/cli/walk.js";
import { loadSnapshot } from "../../src/node/index.js";
import { formatNames, OUTPUT_FORMAT_NAMES, OUTPUT_FORMATS, outputFormat } from "../../src/render/output-formats.js";
import { summaryRow } from "../../src/render/summary.js";
import { fixtureFile } from "../support/fixtures.js";

const DUMP = fixtureFile("breakpad/minidump2.dmp");
const STORE = fixtureFile("breakpad/symbols");

/** Everything an entry writes of minidump2 with its symbols. */
async function written(name: string, request = {}): Promise<string> {
  const input = await loadSnapshot(DUMP, { symbols: [STORE] });
  let text = "";
  await outputFormat(name)!.write(walkDocument(input, request), (t) => (text += t));
  input.close();
  return text;
}

describe("the output-format table", () => {
  it("is what `--format` takes and what walk's usage names", () => {
    expect([...FORMATS]).toEqual(OUTPUT_FORMAT_NAMES);
    const usage = WALK_USAGE.slice(WALK_USAGE.indexOf("  --format F"));
    for (const name of OUTPUT_FORMAT_NAMES) expect(usage, name).toMatch(new RegExp(`\\b${name.replace("-", "\\-")}\\b`));
    expect(formatNames("batch")).toEqual(["jsonl", "summary"]);
    expect(outputFormat("html")).toBeUndefined();
    expect(outputFormat("toString")).toBeUndefined();
    for (const name of OUTPUT_FORMAT_NAMES) expect(OUTPUT_FORMATS[name].name).toBe(name);
  });

  it("its breakpad and breakpad-m entries write Breakpad's own reports of minidump2, byte for byte", async () => {
    expect(await written("breakpad")).toBe(readFileSync(fixtureFile("breakpad/minidump2.stackwalk.out"), "utf8"));
    expect(await written("breakpad-m")).toBe(readFileSync(fixtureFile("breakpad/minidump2.stackwalk.machine_readable.out"), "utf8"));
  });

  it("its jsonl entry writes one line naming the input; json the same document laid out", async () => {
    const line = await written("jsonl");
    expect(line.endsWith("\n") && !line.slice(0, -1).includes("\n")).toBe(true);
    const record = JSON.parse(line) as { file: string };
    expect(record.file).toBe(DUMP);
    const { file: _file, ...rest } = record;
    expect(JSON.parse(await written("json"))).toEqual(rest);
  });

  it("loads the disassembler only for a dump whose crashing instruction it decodes (x86-64, with an exception)", async () => {
    const x64 = fixtureFile("breakpad-corpus/linux_divide_by_zero.dmp");
    for (const [file, symbols, loads] of [[DUMP, [STORE], 0], [x64, [], 1]] as const) {
      for (const name of ["json", "jsonl", "text"]) {
        const input = await loadSnapshot(file, { symbols: [...symbols] });
        let calls = 0;
        const disassembler = async (): Promise<{ missing: string }> => {
          calls++;
          return { missing: "none here" };
        };
        let text = "";
        await outputFormat(name)!.write(walkDocument({ ...input, disassembler }), (t) => (text += t));
        input.close();
        expect(calls, `${file} ${name}`).toBe(loads);
        // The x86-64 crash says why its instruction is null; the x86 one needs no disassembler.
        if (name === "json") expect(text.includes("none here"), file).toBe(loads === 1);
      }
    }
  });

  it("a batch's summary row reuses the first thread's walk its JSON Lines record made", async () => {
    const input = await loadSnapshot(DUMP, { symbols: [STORE] });
    const document = walkDocument(input);
    const made = [...document.walks()];
    expect(document.firstWalk()).toBe(made[0]);
    const row = summaryRow(document);
    expect(row).toMatchObject({ machine: "x86", crash: "EXCEPTION_ACCESS_VIOLATION_WRITE", threads: made.length, frames: made[0]!.walk.frames.length });
    expect(row.top).toContain("CrashFunction");
    // Alone, the row walks only that thread: the same row.
    expect(summaryRow(walkDocument(input))).toEqual(row);
    input.close();
  });
});
