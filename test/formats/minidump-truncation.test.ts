/**
 * Every prefix of Breakpad's minidump2.dmp: reading it (readMinidump, minidumpSnapshot, and each
 * thread's stack through the snapshot's memory) either works or throws an InputError whose offset
 * lies in the prefix, never anything else, and all 11317 prefixes take well under a second or two.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { parseVector } from "../../src/formats/vector.js";

const DMP = "../shared/fixtures/breakpad/minidump2.dmp";

type Outcome = { ok: true } | { ok: false; error: unknown };

function readPrefix(bytes: Uint8Array): Outcome {
  try {
    const dump = readMinidump(bytesSource(bytes), "cut.dmp");
    const snapshot = minidumpSnapshot(dump);
    for (const t of dump.threads) {
      // The stack through the lazy memory reader, word by word as a walk reads it, and at once.
      const size = Number(t.stack.size);
      snapshot.memory.read(t.stack.start, size);
      for (let at = 0; at + 4 <= size; at += 4) snapshot.memory.read(t.stack.start + BigInt(at), 4);
    }
    return { ok: true };
  } catch (error) {
    return { ok: false, error };
  }
}

describe("truncated minidumps", () => {
  it("every prefix of minidump2.dmp reads or fails with an InputError at an offset in the prefix", () => {
    const all = new Uint8Array(readFileSync(DMP));
    const started = performance.now();
    const wrong: string[] = [];
    const codes = new Map<string, number>();
    let succeeded = 0;
    for (let length = 0; length <= all.length; length++) {
      const outcome = readPrefix(all.subarray(0, length));
      if (outcome.ok) {
        succeeded++;
        continue;
      }
      const e = outcome.error;
      // An offset names the field that is wrong or cut: at most the prefix's end, where the first missing byte would be.
      if (!(e instanceof InputError) || typeof e.offset !== "number" || e.offset < 0 || e.offset > length || e.file !== "cut.dmp") {
        if (wrong.length < 10) wrong.push(`${length}: ${e instanceof Error ? `${e.name}: ${e.message}` : String(e)}`);
        continue;
      }
      codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
    }
    const ms = performance.now() - started;
    expect(wrong).toEqual([]);
    // The whole file reads; every shorter prefix cuts something the reader checks.
    expect(succeeded).toBe(1);
    expect([...codes.keys()].sort()).toEqual(["bad-value", "truncated"]);
    expect(ms).toBeLessThan(10_000);
  }, 30_000);

  it("so does every prefix of a dump the writer made (x64, with an exception, MemoryList and Memory64List)", () => {
    const v = parseVector(readFileSync("vectors/x64/synthetic/chained-capture.json", "utf8"));
    for (const memoryList of ["MemoryList", "Memory64List"] as const) {
      const all = minidumpBytes(v, { memoryList });
      const wrong: string[] = [];
      for (let length = 0; length < all.length; length++) {
        const r = readPrefix(all.subarray(0, length));
        if (r.ok) wrong.push(`${length}: read although cut`);
        else if (!(r.error instanceof InputError) || r.error.offset === undefined || r.error.offset > length) wrong.push(`${length}: ${String(r.error)}`);
        if (wrong.length >= 10) break;
      }
      expect(wrong, memoryList).toEqual([]);
      expect(readPrefix(all).ok).toBe(true);
    }
  });

  it("the offset of a cut field is where the prefix ends, and of a cut range its descriptor", () => {
    const all = new Uint8Array(readFileSync(DMP));
    const at = (length: number): InputError => {
      const r = readPrefix(all.subarray(0, length));
      if (r.ok || !(r.error instanceof InputError)) throw new Error(`prefix ${length} did not fail with an InputError`);
      return r.error;
    };
    expect(at(4)).toMatchObject({ code: "truncated", offset: 4 });
    expect(at(20)).toMatchObject({ code: "truncated", offset: 20 });
    // Past the header, a directory that does not fit names NumberOfStreams.
    expect(at(40)).toMatchObject({ code: "bad-value", offset: 8 });
    // The last byte missing: the last stream's or range's bytes run past the end.
    const last = at(all.length - 1);
    expect(last.offset).toBeLessThan(all.length - 1);
    expect(last.message).toMatch(/^cut\.dmp: offset 0x[0-9a-f]+: .*run past the end of the file/);
  });
});
