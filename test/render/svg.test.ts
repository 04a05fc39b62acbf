import { describe, expect, it } from "vitest";
import { escapeXml, fitName, renderSvg, SVG_MAX_FRAMES, SVG_MAX_ROWS } from "../../src/render/svg.js";
import type { ExplainedWalk } from "../../src/analysis/explain-model.js";
import { allElements, deepText, deepWalk, flatText, ia64Walk, IA64_NAT_WORD, parseXml, stoppedWalk, x64Walk, x86Walk, type XmlElement } from "../support/explained.js";

const SVG_NS = "http://www.w3.org/2000/svg";

/** The picture of a walk: its elements, the words its text elements draw (wrapped lines joined), its source. */
function svgOf(e: ExplainedWalk, options: Parameters<typeof renderSvg>[1] = {}): { root: XmlElement; all: XmlElement[]; text: string; source: string } {
  const source = renderSvg(e, options);
  const root = parseXml(source);
  const all = allElements(root);
  return { root, all, text: all.filter((el) => el.name === "text").map(deepText).join(" ").replace(/\s+/g, " "), source };
}

/** How often `part` occurs in `text`. */
const count = (text: string, part: string): number => text.split(part).length - 1;

/**
 * The text elements that would run past the picture's right edge, drawn in a font whose
 * characters are 0.602 em wide (DejaVu Sans Mono, Menlo), the widest of those the picture names.
 */
function overflowing(root: XmlElement): string[] {
  const width = Number(root.attributes["width"]);
  return allElements(root)
    .filter((el) => el.name === "text")
    .filter((el) => Number(el.attributes["x"]) + [...deepText(el)].length * Number(el.attributes["font-size"] ?? 12) * 0.602 > width)
    .map((el) => deepText(el));
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
    expect(flatText(bands[1]!)).toContain("#1 middle");
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

  it("a walk that stopped early without truth says so in words, once, and shows unreadable words", () => {
    const e = stoppedWalk();
    const { all, text } = svgOf(e);
    expect(text).toContain("Stopped early: The walk stopped: memory it needed at 0x0012ff80 is not in the snapshot");
    expect(count(text, e.stopText)).toBe(1);
    expect(text).toContain("The input has no ground truth");
    expect(text).not.toContain("Ground truth:");
    expect(deepText(rowAt(all, "0x0012ff10")!)).toContain("????????");
    expect(deepText(rowAt(all, "0x0012ff10")!)).toContain("not in the snapshot");
    expect(deepText(rowAt(all, "0x0012ff0c")!)).toContain("return address → #1");
    // The back chain leaves the drawn words: no arrow into nowhere, and the row says so in words.
    expect(byClass(all, "chain")).toHaveLength(0);
    expect(flatText(rowAt(all, "0x0012ff08")!)).toContain("saved EBP (back chain) → a word not drawn");
    expect(text).not.toContain("off");
  });

  it("the end of the back chain is said in words on the saved frame pointer", () => {
    const e = x86Walk();
    // start's saved EBP, 0, as a walk that went one frame further would have read it.
    const word = e.stack.find((w) => w.address === 0x0012ff40n)!;
    Object.assign(word, { role: "saved-frame-pointer", register: "ebp" });
    const { all, text } = svgOf(e);
    expect(flatText(rowAt(all, "0x0012ff40")!)).toContain("saved EBP = 0: the back chain ends");
    expect(text).not.toMatch(/↓|\boff\b/);
  });

  it("without a heading (a page shows it) the stop is not said, and without a frame list no frames are listed", () => {
    const e = stoppedWalk();
    const { all, text } = svgOf(e, { heading: false, frameList: false });
    expect(count(text, e.stopText)).toBe(0);
    expect(text).not.toContain(e.title);
    expect(byClass(all, "legend-frame")).toHaveLength(0);
    expect(byClass(all, "band").length).toBeGreaterThan(0);
  });

  it("a walk with no frames still draws a picture that says why", () => {
    const e: ExplainedWalk = { ...stoppedWalk(), frames: [], stack: [], stop: { reason: "unsupported", detail: "no walker for this machine" }, stopText: "The walk stopped: no rule applies to the next frame (unsupported: no walker for this machine)." };
    const { text } = svgOf(e);
    expect(text).toContain("(no frames)");
    expect(count(text, "no walker for this machine")).toBe(1);
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
    expect(flatText(gaps[0]!)).toMatch(/⋯ 5,00\d words that no unwind read: 0x0012ff/);
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
    // What the caps left out is said once, at the top, with or without the heading.
    expect(count(text, `frames #${SVG_MAX_FRAMES}..#9999 (${(10_000 - SVG_MAX_FRAMES).toLocaleString("en-US")}) are not drawn`)).toBe(1);
    expect(count(svgOf(e, { heading: false, frameList: false }).text, `frames #${SVG_MAX_FRAMES}..#9999`)).toBe(1);
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

  it("is about one column of words wide, and no text runs past its right edge", () => {
    const long = x86Walk();
    long.frames[0]!.location = "demo.exe!`anonymous namespace'::Parser<std::basic_string<char>, std::allocator<char>>::read_token_with_a_long_name(int, char const*)+0x12";
    long.frames[0]!.functionName = "`anonymous namespace'::Parser<std::basic_string<char>, std::allocator<char>>::read_token_with_a_long_name(int, char const*)";
    long.frames[0]!.source = { file: "c:\\src\\very\\deeply\\nested\\folders\\of\\a\\project\\that\\has\\many\\levels\\parser.cc", line: 1234 };
    long.notes.push("A note long enough to need several lines in a picture of this width, which the heading wraps at spaces where it can.");
    for (const [e, most] of [[long, 760], [x64Walk(), 860], [ia64Walk(), 860], [stoppedWalk(), 760], [deepWalk(300), 760]] as const) {
      const { root } = svgOf(e);
      expect(Number(root.attributes["width"])).toBeLessThanOrEqual(most);
      expect(overflowing(root), e.title).toEqual([]);
    }
  });

  it("keeps a long name's innermost part in its band and the whole name in the band's title", () => {
    const e = x86Walk();
    e.frames[1]!.location = "demo.exe!`anonymous namespace'::CrashFunction+0xe";
    e.frames[1]!.functionName = "`anonymous namespace'::CrashFunction";
    e.frames[1]!.source = { file: "c:\\test_app.cc", line: 58 };
    const { all } = svgOf(e);
    const band = byClass(all, "band").find((b) => b.attributes["data-frame"] === "1")!;
    const label = band.children.filter((c) => c.name === "text").map(deepText);
    expect(label[0]).toBe("#1 …::CrashFunction");
    const title = band.children.find((c) => c.name === "title")!;
    expect(deepText(title)).toBe("frame 1: demo.exe!`anonymous namespace'::CrashFunction+0xe — c:\\test_app.cc:58 (fpo)");
    // The frame list says the whole name and the source line.
    const listed = byClass(all, "legend-frame").find((el) => el.attributes["data-frame"] === "1")!;
    expect(flatText(listed)).toContain("#1 demo.exe!`anonymous namespace'::CrashFunction+0xe · fpo · exact");
    expect(flatText(listed)).toContain("c:\\test_app.cc:58");
  });

  it("fitName keeps what follows the last :: outside template arguments and parameters", () => {
    expect(fitName("main", 10)).toBe("main");
    expect(fitName("`anonymous namespace'::CrashFunction", 16)).toBe("…::CrashFunction");
    expect(fitName("std::vector<std::pair<int, int>>::push_back(std::pair<int, int> const&)", 40)).toBe("…::push_back(std::pair<int, int> const&)");
    expect(fitName("ns::f(a::b)", 8)).toBe("…::f(a:…");
    expect(fitName("RtlUserThreadStartWithALongName", 12)).toBe("RtlUserThre…");
  });

  it("the legend explains only what the picture draws", () => {
    const x64 = svgOf(x64Walk()).text;
    expect(x64).toContain("saved register");
    expect(x64).not.toContain("scanned, passed over");
    expect(x64).not.toContain("NaT collection word");
    expect(svgOf(ia64Walk()).text).toContain("NaT collection word");
    expect(svgOf(x86Walk()).text).toContain("saved frame pointer → the slot it points at (the back chain)");
  });

  it("ia64: the backing store column stands below the memory stack, so the picture stays one column wide", () => {
    const { all } = svgOf(ia64Walk());
    const heading = (t: string): XmlElement => all.find((el) => el.name === "text" && deepText(el) === t)!;
    const stackRows = byClass(all, "row").filter((r) => !r.attributes["data-address"]!.startsWith("0x6"));
    const lastStackY = Math.max(...stackRows.map((r) => Number(r.children.find((c) => c.name === "rect")!.attributes["y"])));
    expect(Number(heading("Backing store (RSE)").attributes["y"])).toBeGreaterThan(lastStackY);
    expect(heading("Backing store (RSE)").attributes["x"]).toBe(heading("Memory stack").attributes["x"]);
  });
});
