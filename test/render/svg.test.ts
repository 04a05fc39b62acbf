import { describe, expect, it } from "vitest";
import { escapeXml, renderSvg, SVG_MAX_FRAMES, SVG_MAX_ROWS } from "../../src/render/svg.js";
import type { ExplainedWalk } from "../../src/analysis/explain-model.js";
import { allElements, deepText, deepWalk, ia64Walk, IA64_NAT_WORD, parseXml, stoppedWalk, x64Walk, x86Walk, type XmlElement } from "../support/explained.js";

const SVG_NS = "http://www.w3.org/2000/svg";

function svgOf(e: ExplainedWalk): { root: XmlElement; all: XmlElement[]; text: string; source: string } {
  const source = renderSvg(e);
  const root = parseXml(source);
  const all = allElements(root);
  return { root, all, text: deepText(root), source };
}

const byClass = (all: XmlElement[], cls: string): XmlElement[] => all.filter((el) => (el.attributes["class"] ?? "").split(" ").includes(cls));
const rowAt = (all: XmlElement[], address: string): XmlElement | undefined => byClass(all, "row").find((el) => el.attributes["data-address"] === address);

describe("renderSvg", () => {
  it("is a well-formed SVG document for every fixture", () => {
    for (const e of [x86Walk(), x64Walk(), ia64Walk(), stoppedWalk(), deepWalk(300)]) {
      const { root } = svgOf(e);
      expect(root.name).toBe("svg");
      expect(root.uri).toBe(SVG_NS);
      expect(Number(root.attributes["width"])).toBeGreaterThan(0);
      expect(Number(root.attributes["height"])).toBeGreaterThan(0);
    }
  });

  it("x86: one band per frame, labelled with the number and the function, the FPO frame's trust shown", () => {
    const { all } = svgOf(x86Walk());
    const bands = byClass(all, "band");
    expect(bands.map((b) => b.attributes["data-frame"])).toEqual(["0", "1", "2", "3"]);
    expect(deepText(bands[1]!)).toContain("#1 middle");
    expect(deepText(bands[1]!)).toContain("fpo");
    expect(deepText(bands[2]!)).toContain("frame-pointer");
    // Each band's colour differs from its neighbour's.
    const fills = bands.map((b) => b.children.find((c) => c.name === "rect")!.attributes["fill"]);
    expect(new Set(fills).size).toBe(4);
  });

  it("x86: return-address slots are marked, with an arrow to the frame each returns into", () => {
    const { all } = svgOf(x86Walk());
    const ra = byClass(all, "role-return-address").map((el) => el.attributes["data-address"]);
    expect(ra).toEqual(["0x0012ff08", "0x0012ff1c", "0x0012ff34"]);
    expect(deepText(rowAt(all, "0x0012ff08")!)).toContain("return address → #1");
    expect(rowAt(all, "0x0012ff1c")!.attributes["data-reads"]).toBe("2");
    const arrows = byClass(all, "ra");
    expect(arrows.map((a) => a.attributes["data-reads"])).toEqual(["1", "2", "3"]);
    for (const a of arrows) expect(a.children.find((c) => c.name === "path")!.attributes["marker-end"]).toMatch(/^url\(#.+\)$/);
  });

  it("x86: saved EBP words carry back-chain arrows to the slot they point at", () => {
    const { all } = svgOf(x86Walk());
    expect(byClass(all, "role-saved-frame-pointer").map((el) => el.attributes["data-address"])).toEqual(["0x0012ff18", "0x0012ff30"]);
    const chain = byClass(all, "chain");
    expect(chain).toHaveLength(2);
    for (const c of chain) expect(c.children.some((p) => p.name === "path")).toBe(true);
    // The chain's marks: EBP of frames 0 and 1 point at the first slot.
    expect(deepText(rowAt(all, "0x0012ff18")!)).toContain("EBP #0 #1");
    expect(deepText(rowAt(all, "0x0012ff0c")!)).toContain("ESP #1");
  });

  it("labels its orientation and the walk's end", () => {
    const { text } = svgOf(x86Walk());
    expect(text).toContain("addresses increase downward; frame 0 (innermost) is at the top");
    expect(text).toContain("The walk reached the outermost frame");
    expect(text).toContain("Ground truth: exact");
  });

  it("x64: the saved RBX and both return addresses", () => {
    const { all } = svgOf(x64Walk());
    expect(deepText(rowAt(all, "0x000000000014fe20")!)).toContain("saved RBX");
    expect(byClass(all, "ra")).toHaveLength(2);
    expect(byClass(all, "chain")).toHaveLength(0);
    expect(deepText(rowAt(all, "0x000000000014fe28")!)).toContain("0x0000000140001080");
  });

  it("ia64: the backing store is a second column with the NaT collection word shaded and each BSP marked", () => {
    const { all, text } = svgOf(ia64Walk());
    expect(text).toContain("Memory stack");
    expect(text).toContain("Backing store (RSE)");
    const nat = byClass(all, "nat");
    expect(nat).toHaveLength(1);
    expect(nat[0]!.attributes["data-address"]).toBe("0x" + IA64_NAT_WORD.toString(16).padStart(16, "0"));
    expect(nat[0]!.children.find((c) => c.attributes["class"] === "value")!.attributes["fill"]).toBe("#9ca3af");
    expect(deepText(nat[0]!)).toContain("NaT collection");
    expect(deepText(rowAt(all, "0x60000000000001e0")!)).toContain("BSP #1");
    expect(deepText(rowAt(all, "0x60000000000001c0")!)).toContain("BSP #2 #3");
    // The return address b saved in a stacked register, with its arrow to frame 2.
    expect(deepText(rowAt(all, "0x60000000000001e0")!)).toContain("return address → #2");
    expect(byClass(all, "ra").map((a) => a.attributes["data-reads"]).sort()).toEqual(["2", "3"]);
    // Bands in both columns: frames 1 and 2 own backing-store words.
    const bands = byClass(all, "band").map((b) => b.attributes["data-frame"]);
    expect(bands.filter((k) => k === "1")).toHaveLength(2);
    // Every frame is listed, including the leaf (frame 0) that owns no words.
    expect(byClass(all, "legend-frame").map((el) => el.attributes["data-frame"])).toEqual(["0", "1", "2", "3"]);
  });

  it("a walk that stopped early without truth says so in words, and shows unreadable words", () => {
    const e = stoppedWalk();
    const { all, text } = svgOf(e);
    expect(text).toContain("Stopped early: The walk stopped: memory it needed at 0x0012ff80 is not in the snapshot");
    expect(text).toContain("walk stopped early");
    expect(text).toContain("The input has no ground truth");
    expect(text).not.toContain("Ground truth:");
    expect(deepText(rowAt(all, "0x0012ff10")!)).toContain("????????");
    expect(deepText(rowAt(all, "0x0012ff10")!)).toContain("not in the snapshot");
    expect(deepText(rowAt(all, "0x0012ff0c")!)).toContain("return address → #1");
    // The back chain leaves the drawn words: a stub, not an arrow into nowhere.
    expect(byClass(all, "chain")).toHaveLength(1);
    expect(byClass(all, "chain")[0]!.children.some((c) => c.name === "path")).toBe(false);
  });

  it("a walk with no frames still draws a picture that says why", () => {
    const e: ExplainedWalk = { ...stoppedWalk(), frames: [], stack: [], stop: { reason: "unsupported", detail: "no walker for this machine" }, stopText: "The walk stopped: no rule applies to the next frame (unsupported: no walker for this machine)." };
    const { text } = svgOf(e);
    expect(text).toContain("(no frames)");
    expect(text).toContain("no walker for this machine");
  });

  it("escapes every text it draws", () => {
    const e = x86Walk();
    e.frames[1]!.location = `demo.exe!operator<<(a&b, "c")+0x1 \u0001 ]]>`;
    e.frames[1]!.functionName = "operator<<";
    e.notes.push(`<script>alert("x")</script> & more`);
    const { source, text } = svgOf(e);
    expect(source).not.toContain("<script>");
    expect(text).toContain(`<script>alert("x")</script> & more`);
    expect(text).toContain("#1 operator<<");
    expect(text).toContain("operator<<(a&b, \"c\")+0x1 \ufffd ]]>");
    expect(escapeXml(`<a b="c" d='e'>&\u0000\ud800`)).toBe("&lt;a b=&quot;c&quot; d=&#39;e&#39;&gt;&amp;\ufffd\ufffd");
  });

  it("folds long runs of words no unwind read into one row", () => {
    const e = x86Walk();
    // Frame 3's area grows by 5000 words of locals nobody reads.
    const last = e.stack.at(-1)!;
    for (let i = 1; i <= 5000; i++) e.stack.push({ address: last.address + BigInt(4 * i), value: 0n, frame: 3 });
    const { all, source } = svgOf(e);
    const gaps = byClass(all, "gap");
    expect(gaps).toHaveLength(1);
    expect(deepText(gaps[0]!)).toMatch(/⋯ 5,00\d more words/);
    expect(source.length).toBeLessThan(40_000);
  });

  it("caps a 10,000-frame stack: bounded size, and the picture says what it left out", () => {
    const e = deepWalk(10_000);
    const { all, text, source } = svgOf(e);
    expect(source.length).toBeLessThan(400_000);
    expect(byClass(all, "row").length).toBeLessThanOrEqual(SVG_MAX_ROWS);
    const bands = new Set(byClass(all, "band").map((b) => Number(b.attributes["data-frame"])));
    expect(Math.max(...bands)).toBeLessThan(SVG_MAX_FRAMES);
    expect(byClass(all, "legend-frame")).toHaveLength(SVG_MAX_FRAMES);
    expect(text).toContain(`this diagram draws at most ${SVG_MAX_FRAMES} frames and ${SVG_MAX_ROWS} rows per column`);
    expect(text).toContain(`frames #${SVG_MAX_FRAMES}..#9999 (${(10_000 - SVG_MAX_FRAMES).toLocaleString("en-US")}) are not drawn`);
    expect(text).toContain("more frames not drawn");
    expect(text).toContain("Stopped early");
  });

  it("uses the id prefix it is given, so that several pictures can share a page", () => {
    const a = renderSvg(x86Walk(), { idPrefix: "w0-" });
    const b = renderSvg(x86Walk(), { idPrefix: "w1-" });
    const ids = (s: string): string[] => [...s.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!);
    expect(ids(a).every((id) => id.startsWith("w0-"))).toBe(true);
    expect(ids(a).filter((id) => ids(b).includes(id))).toEqual([]);
    expect(new Set(ids(a)).size).toBe(ids(a).length);
  });
});
