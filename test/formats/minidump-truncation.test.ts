/**
 * Cut-off copies of every real dump in test/fixtures (minidump2 and Breakpad's corpus: Linux
 * x86_64, Windows x64, macOS) at many lengths: reading walks what the prefix holds. Each prefix
 * either gives a Breakpad report, with notes naming offsets inside the prefix whenever something
 * the dump declared is missing, or, when no thread can be walked, fails with an InputError whose
 * offset lies in the prefix; never anything else. Once the streams that describe the dump are
 * whole, the report's header and module list are the full dump's, and every thread whose stack
 * bytes are whole walks to the same frames.
 */
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { bytesSource, minidumpSnapshot, readMinidump, type Minidump } from "../../src/formats/minidump.js";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { parseVector } from "../../src/formats/vector.js";
import { breakpadReport, type BreakpadReport } from "../../src/analysis/breakpad-report.js";
import { renderBreakpad } from "../../src/render/breakpad.js";
import { splitHuman } from "../support/breakpad-report.js";

const CORPUS = "test/fixtures/breakpad-corpus";
const DUMPS = [
  "test/fixtures/breakpad/minidump2.dmp",
  ...readdirSync(CORPUS)
    .filter((f) => f.endsWith(".dmp"))
    .sort()
    .map((f) => `${CORPUS}/${f}`),
];

type Outcome = { ok: true; dump: Minidump; report: BreakpadReport; text: string } | { ok: false; error: unknown };

function walkPrefix(bytes: Uint8Array): Outcome {
  try {
    const dump = readMinidump(bytesSource(bytes), "cut.dmp");
    const report = breakpadReport(dump, minidumpSnapshot(dump), { walk: { maxFrames: 200 } });
    return { ok: true, dump, report, text: renderBreakpad(report) };
  } catch (error) {
    return { ok: false, error };
  }
}

const u32 = (b: Uint8Array, at: number): number => new DataView(b.buffer, b.byteOffset).getUint32(at, true);
const end = (rva: number, size: number | bigint): number => rva + Number(size);

/**
 * Where the parts of a dump end in the file: `meta`, everything the report's header, thread list
 * and module list are made of (the streams that say what the dump is, thread contexts, module
 * names and debug records); `declared`, everything any descriptor points at.
 */
function layout(bytes: Uint8Array, dump: Minidump): { meta: number; declared: number } {
  const described = new Set([3, 4, 5, 6, 7, 15, 0x47670001, 0x47670002]);
  let meta = dump.header.directoryRva + 12 * dump.streams.length;
  let declared = meta;
  for (const s of dump.streams) {
    if (s.streamType === 0) continue;
    declared = Math.max(declared, end(s.location.rva, s.location.dataSize));
    if (described.has(s.streamType)) meta = Math.max(meta, end(s.location.rva, s.location.dataSize));
  }
  for (const t of dump.threads) meta = Math.max(meta, end(t.contextLocation.rva, t.contextLocation.dataSize));
  if (dump.exception !== undefined) meta = Math.max(meta, end(dump.exception.contextLocation.rva, dump.exception.contextLocation.dataSize));
  if (dump.systemInfo?.csdVersionRva) meta = Math.max(meta, dump.systemInfo.csdVersionRva + 4 + u32(bytes, dump.systemInfo.csdVersionRva));
  for (const m of dump.modules) {
    const nameRva = u32(bytes, m.offset + 20);
    meta = Math.max(meta, nameRva + 4 + u32(bytes, nameRva) + 2, end(m.cvRecord.rva, m.cvRecord.dataSize), end(m.miscRecord.rva, m.miscRecord.dataSize));
  }
  for (const r of [...dump.memory, ...dump.threads.map((t) => t.stack)]) declared = Math.max(declared, end(r.rva, r.size));
  return { meta, declared: Math.max(declared, meta) };
}

/** The lengths to cut at: an even spread, the last 100 bytes and the last byte missing, and either side of every stream's end. */
function cuts(bytes: Uint8Array, dump: Minidump): number[] {
  const n = bytes.length;
  const at = new Set<number>([0, 20, 40, n - 100, n - 1]);
  for (let i = 1; i < 24; i++) at.add(Math.floor((n * i) / 24));
  for (const s of dump.streams) for (const k of [s.location.rva + 2, s.location.rva + s.location.dataSize - 1]) at.add(k);
  return [...at].filter((k) => k >= 0 && k < n).sort((a, b) => a - b);
}

describe("cut-off real dumps walk what is there", () => {
  for (const file of DUMPS) {
    const name = file.slice(file.lastIndexOf("/") + 1);
    it(name, () => {
      const all = new Uint8Array(readFileSync(file));
      const full = walkPrefix(all);
      if (!full.ok) throw full.error;
      expect(full.dump.notes).toEqual([]);
      const { meta, declared } = layout(all, full.dump);
      const fullParts = splitHuman(full.text);
      const wrong: string[] = [];
      let reported = 0;
      for (const length of cuts(all, full.dump)) {
        const r = walkPrefix(all.subarray(0, length));
        if (!r.ok) {
          const e = r.error;
          if (!(e instanceof InputError) || e.offset === undefined || e.offset > length || e.file !== "cut.dmp") wrong.push(`${length}: ${String(e)}`);
          continue;
        }
        reported++;
        // Every note names a field inside the prefix.
        for (const note of r.dump.notes) {
          const offset = /^offset 0x([0-9a-f]+): /.exec(note);
          if (offset !== null && parseInt(offset[1]!, 16) > length) wrong.push(`${length}: a note names an offset past the cut: ${note}`);
        }
        // Something the dump declared is missing: a note says so.
        if (length < declared && r.dump.notes.length === 0) wrong.push(`${length}: nothing noted although the dump declares bytes up to ${declared}`);
        if (length < meta) continue;
        // The streams that describe the dump are whole: the same header, thread list and modules.
        const parts = splitHuman(r.text);
        if (parts.nonFrames !== fullParts.nonFrames) wrong.push(`${length}: the report's header or module list differs`);
        for (const t of r.report.threads) {
          const whole = full.report.threads.find((f) => f.index === t.index)!;
          const source = r.dump.threads.find((d) => d.id === t.thread.id)!;
          const frames = (x: typeof t) => x.walk.frames.map((f) => `${f.addrPC}/${f.addrStack}/${f.trust}`).join(" ");
          if (t.walk.frames[0]?.addrPC !== whole.walk.frames[0]?.addrPC) wrong.push(`${length}: thread ${t.thread.id} has another frame 0`);
          if (source.stack.declared === undefined && frames(t) !== frames(whole)) wrong.push(`${length}: thread ${t.thread.id}, whose stack is whole, walks differently`);
        }
      }
      expect(wrong).toEqual([]);
      expect(reported).toBeGreaterThan(0);
    });
  }

  it("a dump missing only its last 100 bytes: minidump2 reports what Breakpad reports of the whole file", () => {
    const all = new Uint8Array(readFileSync(DUMPS[0]!));
    const cut = walkPrefix(all.subarray(0, all.length - 100));
    if (!cut.ok) throw cut.error;
    const whole = walkPrefix(all);
    if (!whole.ok) throw whole.error;
    expect(cut.text).toBe(whole.text);
    // The lost bytes are the end of the dump-writer thread's stack, named by its descriptor's DataSize.
    expect(cut.dump.notes[0]).toMatch(/^offset 0x1d8: thread 1 \(id 4544\) Stack: the range 0x97f6e8\.\.0x980000 .* runs past the end of the file \(0x2bd1 bytes\); 2228 of its bytes are read$/);
  });

  it("every prefix of a dump the writer made (x64, exception, MemoryList or Memory64List) reads or fails with an InputError in the prefix", () => {
    const v = parseVector(readFileSync("vectors/x64/synthetic/chained-capture.json", "utf8"));
    for (const memoryList of ["MemoryList", "Memory64List"] as const) {
      const all = minidumpBytes(v, { memoryList });
      const wrong: string[] = [];
      for (let length = 0; length < all.length; length++) {
        const r = walkPrefix(all.subarray(0, length));
        if (r.ok) {
          if (r.dump.notes.length === 0) wrong.push(`${length}: read although cut, and nothing noted`);
        } else if (!(r.error instanceof InputError) || r.error.offset === undefined || r.error.offset > length) wrong.push(`${length}: ${String(r.error)}`);
        if (wrong.length >= 10) break;
      }
      expect(wrong, memoryList).toEqual([]);
      expect(walkPrefix(all).ok).toBe(true);
    }
  });

  it("nothing to walk: the header, the directory or the thread list cut is an error naming the field", () => {
    const all = new Uint8Array(readFileSync(DUMPS[0]!));
    const at = (length: number): InputError => {
      const r = walkPrefix(all.subarray(0, length));
      if (r.ok || !(r.error instanceof InputError)) throw new Error(`prefix ${length} did not fail with an InputError`);
      return r.error;
    };
    expect(at(4)).toMatchObject({ code: "truncated", offset: 4 });
    expect(at(20)).toMatchObject({ code: "truncated", offset: 20 });
    // No directory entry fits: NumberOfStreams is named.
    expect(at(40)).toMatchObject({ code: "bad-value", offset: 8 });
    // Two entries fit, the ThreadList's data lies past the cut: its Rva field is named.
    expect(at(60)).toMatchObject({ code: "truncated", offset: 32 + 8 });
  });
});
