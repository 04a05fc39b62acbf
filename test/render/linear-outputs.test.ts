/**
 * Outputs linear in their input (issue 33): the JSON writer on a dump of many modules with a
 * symbol note for each, WinDbg's `~*k` on many threads, and `explain`'s grouping of the stack
 * reads of a frame that read thousands of words. Each test counts the work (the property reads the code makes), never
 * times it: a search per item would read n² times.
 */
import { describe, expect, it } from "vitest";
import { groupReads, type RawRead } from "../../src/analysis/explain-walk.js";
import type { Module } from "../../src/model/snapshot.js";
import { renderJson, writeJson, type ModuleSymbolSource } from "../../src/render/json.js";
import { renderWindbg } from "../../src/render/windbg.js";
import type { ThreadWalk } from "../../src/walk/walk.js";

/** `object` with its property `key` counting each read in `counter.reads`. */
function counting<T extends object>(object: T, key: keyof T, counter: { reads: number }): T {
  const value = object[key];
  Object.defineProperty(object, key, {
    get: () => {
      counter.reads++;
      return value;
    },
    enumerable: true,
  });
  return object;
}

describe("outputs linear in their input", () => {
  it("the JSON writer on 20,000 modules, each with a symbol note (the finding had 60,000): each note's module is read a few times, not once per module", () => {
    const n = 20_000;
    const modules: Module[] = Array.from({ length: n }, (_, i) => ({ name: `m${i}.dll`, base: 0x1000_0000n + BigInt(i) * 0x1000n, size: 0x2000n, symbols: [] }));
    const counter = { reads: 0 };
    const symbols: ModuleSymbolSource[] = modules.map((m, i) => counting({ module: m.name, detail: "", ...(i % 2 === 0 ? { file: `/s/${m.name}.sym` } : {}) }, "module", counter));
    const doc = JSON.parse(renderJson("x86", modules, [], { symbols })) as { modules: { filename: string; symbolFile: string | null }[] };
    expect(doc.modules).toHaveLength(n);
    expect(doc.modules[2]!.symbolFile).toBe("/s/m2.dll.sym");
    expect(doc.modules[3]!.symbolFile).toBeNull();
    expect(counter.reads).toBeLessThanOrEqual(2 * n);
  });

  it("the JSON writer hands the module list out an entry at a time: 20,000 modules never make one piece of text", () => {
    const n = 20_000;
    const modules: Module[] = Array.from({ length: n }, (_, i) => ({ name: `m${i}.dll`, base: 0x1000_0000n + BigInt(i) * 0x10n, size: 0x10_0000n, symbols: [], debugFile: `m${i}.pdb`, debugId: `${"0".repeat(31)}${i % 10}1` }));
    const pieces: number[] = [];
    let text = "";
    writeJson("x86", modules, [], (t) => {
      pieces.push(t.length);
      text += t;
    });
    expect((JSON.parse(text) as { modules: unknown[] }).modules).toHaveLength(n);
    // Pieces of about 64 Ki characters (chunks.ts); the whole list is some 8 MB.
    expect(text.length).toBeGreaterThan(n * 300);
    expect(Math.max(...pieces)).toBeLessThan(2 * 65_536);
  });

  it("WinDbg's ~*k on 20,000 threads (a thread list may hold 65,536): each thread's place in the process is looked up, not searched for", () => {
    const n = 20_000;
    const counter = { reads: 0 };
    const listed = Array.from({ length: n }, (_, i) => ({ id: i + 1, suspendCount: 1, teb: 0x7ffd_e000n }));
    const threads = new Proxy(listed, {
      get(target, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) counter.reads++;
        return Reflect.get(target, key, receiver);
      },
    });
    const walks: ThreadWalk[] = listed.map((t) => ({
      thread: { id: t.id, crashed: t.id === n, registers: { eip: 0x401000n, esp: 0x12ff00n, ebp: 0n } },
      walk: { frames: [], stop: { reason: "end-of-stack", detail: "" } },
    }));
    const text = renderWindbg("x86", [], walks, undefined, { processId: 0x10, threads });
    expect(text.split("\n").filter((l) => l.includes("Id: 10."))).toHaveLength(n);
    expect(text).toContain(".19999  Id: 10.4e20 Suspend: 1 Teb: 7ffde000 Unfrozen");
    expect(counter.reads).toBeLessThanOrEqual(3 * n);
  });

  it("explain's grouping of a frame's reads: 20,000 reads of 10,000 slots (each read twice) look at each read once", () => {
    const counter = { reads: 0 };
    const reads: RawRead[] = [];
    for (let i = 0; i < 20_000; i++) reads.push(counting({ frame: 1, address: 0x10_0000n + BigInt(i % 10_000) * 4n, size: 4, value: 0n }, "address", counter));
    reads.push({ frame: 2, address: 0x10_0000n, size: 4, value: 0n });
    const grouped = groupReads(reads);
    expect(grouped.get(1)).toHaveLength(10_000);
    expect(grouped.get(1)![9_999]!.address).toBe(0x10_0000n + 9_999n * 4n);
    expect(grouped.get(2)).toHaveLength(1);
    expect(counter.reads).toBeLessThanOrEqual(20_000 + 2);
  });
});
