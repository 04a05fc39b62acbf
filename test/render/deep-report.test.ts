/**
 * Deep stacks in the walk, the Breakpad report and the JSON walk: a 150,000-frame EBP chain
 * written as a minidump is walked whole by default (the frame cap is 2^20) and cut by
 * --max-frames; the report and the JSON are handed out in pieces of about 64 KiB as they are
 * made, and the pieces are the whole text, as JSON.stringify lays the document out.
 */
import { describe, expect, it } from "vitest";
import { minidumpBytes } from "../../src/formats/minidump-write.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { RegionMemory } from "../../src/memory/region-memory.js";
import type { Snapshot } from "../../src/model/snapshot.js";
import { breakpadReport } from "../../src/analysis/breakpad-report.js";
import { renderBreakpad, renderBreakpadMachineReadable, writeBreakpad, writeBreakpadMachineReadable } from "../../src/render/breakpad.js";
import { renderJson, walkJson, writeJson } from "../../src/render/json.js";
import { DEFAULT_MAX_FRAMES, walkSnapshot, walkThread } from "../../src/walk/walk.js";
import { assertWalkDocument } from "../support/walk-schema.js";

const DEPTH = 150_000;

/** The chain's return addresses lie in no module, so it is walked by its frame pointers alone. */
const FP = { walker: "frame-pointer" } as const;

/**
 * An x86 thread whose EBP chain is `depth` frames long, in one stack range 16 bytes above ESP:
 * [EBP] the caller's EBP, [EBP+4] a return address.
 */
function chain(depth: number): Snapshot {
  const sp = 0x0100_0000n;
  const bytes = new Uint8Array(16 + depth * 8);
  const view = new DataView(bytes.buffer);
  const frame = (i: number): number => 16 + i * 8;
  for (let i = 0; i < depth - 1; i++) {
    view.setUint32(frame(i), Number(sp) + frame(i + 1), true);
    view.setUint32(frame(i) + 4, 0x0040_1000 + (i % 64), true);
  }
  return {
    machine: "x86",
    threads: [{ id: 7, crashed: true, registers: { eip: 0x0040_1000n, esp: sp, ebp: sp + 16n } }],
    memory: new RegionMemory([{ base: sp, bytes }]),
    modules: [],
  };
}

describe("a 150,000-frame stack", () => {
  const snapshot = chain(DEPTH);

  it("is walked whole by default; --max-frames still cuts it", () => {
    expect(DEFAULT_MAX_FRAMES).toBe(1 << 20);
    const walk = walkThread(snapshot, snapshot.threads[0]!, FP);
    expect(walk.frames).toHaveLength(DEPTH);
    expect(walk.stop.reason).toBe("end-of-stack");
    const cut = walkThread(snapshot, snapshot.threads[0]!, { ...FP, maxFrames: 100_000 });
    expect(cut.frames).toHaveLength(100_000);
    expect(cut.stop).toEqual({ reason: "max-frames", detail: "the walk reached the frame cap of 100000" });
  });

  it("as a minidump, gives a Breakpad report written piece by piece, the pieces making the whole report", () => {
    const dump = readMinidump(bytesSource(minidumpBytes(snapshot)));
    const report = breakpadReport(dump, minidumpSnapshot(dump), { walk: FP });
    expect(report.threads[0]!.walk.frames).toHaveLength(DEPTH);
    const texts = ([
      [writeBreakpad, renderBreakpad],
      [writeBreakpadMachineReadable, renderBreakpadMachineReadable],
    ] as const).map(([write, render]) => {
      const pieces: string[] = [];
      write(report, (text) => pieces.push(text));
      expect(pieces.join("")).toBe(render(report));
      expect(pieces.length).toBeGreaterThan(10);
      // About 64 KiB each: a piece goes out once it reaches 64 Ki characters, so none is more than one frame over.
      for (const p of pieces) expect(p.length).toBeLessThan((1 << 16) + 256);
      return pieces.join("");
    });
    const text = texts[0]!;
    expect(text.match(/Found by: previous frame's frame pointer/g)).toHaveLength(DEPTH - 1);
    expect(text).toContain(`\n149999  0x${(0x0040_1000 + (149_998 % 64)).toString(16)}\n    eip = 0x${(0x0040_1000 + (149_998 % 64)).toString(16).padStart(8, "0")}`);
  });

  it("repeats the crashed thread's frames in crashing_thread, from their kept texts up to 4,096 frames and made again past that", () => {
    for (const depth of [1, 4096, 4097]) {
      const [crashed] = walkSnapshot(chain(depth), FP);
      const other = { thread: { id: 9, crashed: false, registers: {} }, walk: { frames: [], stop: { reason: "unsupported" as const, detail: "none" } } };
      for (const indent of [true, false]) {
        let text = "";
        writeJson("x86", [], [other, crashed!], (t) => (text += t), undefined, { indent });
        const doc = JSON.parse(text) as { threads: { frames: unknown[] }[]; crashing_thread: { threads_index: number; frames: unknown[] } };
        expect(doc.crashing_thread.threads_index).toBe(1);
        expect(doc.crashing_thread.frames).toHaveLength(depth);
        expect(doc.crashing_thread.frames).toEqual(doc.threads[1]!.frames);
        expect(text).toBe(indent ? JSON.stringify(doc, null, 2) + "\n" : JSON.stringify(doc) + "\n");
      }
    }
  });

  it("gives JSON written piece by piece, the same text as the whole document laid out by JSON.stringify", () => {
    const walks = walkSnapshot(chain(20_000), FP);
    const pieces: string[] = [];
    writeJson("x86", [], walks, (text) => pieces.push(text));
    expect(pieces.length).toBeGreaterThan(10);
    for (const p of pieces) expect(p.length).toBeLessThan((1 << 16) + 2048);
    expect(pieces.join("")).toBe(JSON.stringify(walkJson("x86", [], walks), null, 2) + "\n");
    assertWalkDocument(JSON.parse(pieces.join("")));
    // Several threads, one with no frames, none at all, and notes, one of them the text that
    // stands in for the items while the document is laid out.
    const [one] = walkSnapshot(chain(3), FP);
    const shapes = [[one!, { thread: { id: 9, crashed: false, registers: {} }, walk: { frames: [], stop: { reason: "unsupported" as const, detail: "none" } } }, one!], []];
    for (const ws of shapes) {
      for (const notes of [undefined, ["a note", "\u0000items"]]) {
        const text = renderJson("x86", [], ws, notes);
        expect(text).toBe(JSON.stringify(walkJson("x86", [], ws, notes), null, 2) + "\n");
        assertWalkDocument(JSON.parse(text));
        // The JSON Lines form: the same document on one line.
        let line = "";
        writeJson("x86", [], ws, (t) => (line += t), notes, { indent: false });
        expect(line).toBe(JSON.stringify(walkJson("x86", [], ws, notes)) + "\n");
      }
    }
  });
});
