import { describe, expect, it } from "vitest";
import { HTML_MAX_FRAMES, renderHtml } from "../../src/render/html.js";
import { allElements, deepText, deepWalk, ia64Walk, parseXml, stoppedWalk, x64Walk, x86Walk } from "../support/explained.js";

/** The inline SVG pictures of a page. */
const svgs = (html: string): string[] => [...html.matchAll(/<svg[\s\S]*?<\/svg>/g)].map((m) => m[0]);

describe("renderHtml", () => {
  it("is one self-contained page: inline style and script, no URL it could fetch", () => {
    const html = renderHtml([x86Walk(), x64Walk(), ia64Walk()]);
    expect(html.startsWith("<!DOCTYPE html>")).toBe(true);
    expect(html).toContain(`<meta http-equiv="Content-Security-Policy" content="default-src 'none';`);
    // The only URL on the page is the SVG namespace name, which nothing fetches.
    const urls = [...html.matchAll(/[a-z][a-z0-9+.-]*:\/\/[^\s"'<>)]*/gi)].map((m) => m[0]);
    expect(new Set(urls)).toEqual(new Set(["http://www.w3.org/2000/svg"]));
    expect(html).not.toMatch(/<(script|img|link|iframe)[^>]*\s(src|href)=/i);
    expect(html).not.toMatch(/@import|url\((?!#)/);
    expect(html.match(/<script>/g)).toHaveLength(1);
    // The page's own style sheet, and one inside each picture (which a standalone SVG needs too).
    expect(html.match(/<style>/g)).toHaveLength(1 + svgs(html).length);
    expect(html).not.toMatch(/<link/i);
  });

  it("lists every frame with its explanation, reads and the weaker walker's mistake", () => {
    const e = x86Walk();
    const html = renderHtml([e]);
    for (const f of e.frames) expect(html).toContain(`<li class="frame" id="w0-frame-${f.index}" data-frame="${f.index}"`);
    expect(html).toContain("FPO_DATA for leaf (rva 0x1060)");
    expect(html).toContain(`<td><code>0x0012ff08</code><br><span class="as">ESP+8</span></td><td><code>0x00401053</code></td><td>return-address → eip</td>`);
    expect(html).toContain("A weaker walker:</strong> The frame-pointer chain misses this frame");
    expect(html).toContain("EIP 0x00401053 · ESP 0x0012ff0c · EBP 0x0012ff18 · return 0x00401017");
    expect(html).toContain(`<span class="badge truth-exact"`);
    expect(html).toContain("frame 0 (1 of 4)");
    expect(html).not.toContain(`<select id="thread-picker">`);
  });

  it("names IA-64's registers as the machine does", () => {
    const html = renderHtml([ia64Walk()]);
    expect(html).toContain("StIIP 0x00000001000010a0 · SP (r12) 0x000007ffefffffb0 · RsBSP 0x60000000000001e0");
    expect(html).toContain(`<br><span class="as">RsBSP</span></td><td><code>0x0000000100001060</code></td><td>return-address → stiip<br><span class="area">backing-store</span></td>`);
  });

  it("embeds each thread's diagram, well-formed and with ids unique on the page, and a thread picker", () => {
    const html = renderHtml([x86Walk(), stoppedWalk(), ia64Walk()]);
    const pictures = svgs(html);
    expect(pictures).toHaveLength(3);
    for (const p of pictures) expect(parseXml(p).name).toBe("svg");
    const ids = [...html.matchAll(/ id="([^"]+)"/g)].map((m) => m[1]!);
    expect(new Set(ids).size).toBe(ids.length);
    expect(html).toContain(`<select id="thread-picker">`);
    expect(html.match(/<option value="\d+">/g)).toHaveLength(3);
    expect(html).toContain(`<option value="1">thread 3 · 2 frames</option>`);
    // Without script every thread shows, under its own heading; the script shows one and the picker.
    expect(html).toContain(`<p class="picker" hidden>`);
    expect(html).toContain(`<section class="walk" id="walk-1" data-walk="1" data-thread="3" aria-label="thread 3">\n<h2 class="thread-name">thread 3 · 2 frames</h2>`);
    expect(html).not.toMatch(/<section[^>]* hidden>/);
  });

  it("says each fact once: machine and walker in the page heading, the stop above the panes, not in the diagram", () => {
    const e = stoppedWalk();
    const html = renderHtml([e]);
    // What a reader sees: not the page's and the picture's titles and descriptions.
    const shown = html.replace(/<(title|desc)[^>]*>[\s\S]*?<\/\1>/g, "");
    expect(shown.split(e.stopText).length - 1).toBe(1);
    expect(shown.split("x86 (I386)").length - 1).toBe(1);
    expect(html).toContain("x86 (I386) · walker frame-pointer: the stack walk frame by frame.");
    expect(html).toContain(`<p class="meta">thread 3 · 2 frames</p>`);
    // The diagram has neither the heading nor the frame list the page has.
    const svg = allElements(parseXml(svgs(html)[0]!));
    expect(svg.filter((el) => el.attributes["class"] === "legend-frame")).toEqual([]);
    expect(svg.filter((el) => el.name === "text").map(deepText)).not.toContain(e.title);
  });

  it("shows each frame's source file and line", () => {
    const e = x86Walk();
    e.frames[1]!.source = { file: "c:\\demo\\middle.c", line: 42 };
    const html = renderHtml([e]);
    expect(html).toContain(`<span class="loc">demo.exe!middle+0x23</span>`);
    expect(html).toContain(`<p class="src" title="source file and line">c:\\demo\\middle.c:42</p>`);
    expect(html.match(/class="src"/g)).toHaveLength(1);
  });

  it("shows a walk that stopped early, on an input without truth, honestly", () => {
    const html = renderHtml([stoppedWalk()]);
    expect(html).toContain(`<p class="stop stop-early"><strong>Stopped early:</strong> The walk stopped: memory it needed at 0x0012ff80 is not in the snapshot`);
    expect(html).toContain(`<ul class="notes"><li>The input has no ground truth`);
    expect(html).not.toContain("Ground truth:");
  });

  it("never renders a blank page", () => {
    const none = renderHtml([]);
    expect(none).toContain("The input has no threads to walk.");
    const empty = renderHtml([{ ...stoppedWalk(), frames: [], stack: [] }]);
    expect(empty).toContain(`<p class="empty">The walk found no frames. The walk stopped`);
    expect(empty).toContain("no frames");
  });

  it("escapes text from the input", () => {
    const e = x86Walk();
    e.frames[2]!.how.push(`<img src=x onerror="alert(1)"> & </script>`);
    const html = renderHtml([e]);
    expect(html).toContain("<title>x86 &lt;ebp &amp; fpo&gt; &quot;demo&quot; — stack walk</title>");
    expect(html).toContain("<li>&lt;img src=x onerror=&quot;alert(1)&quot;&gt; &amp; &lt;/script&gt;</li>");
    expect(html).not.toContain("<img");
  });

  it("stays bounded for a 10,000-frame walk and says how many frames it left out", () => {
    const html = renderHtml([deepWalk(10_000)]);
    expect(html.match(/<li class="frame"/g)).toHaveLength(HTML_MAX_FRAMES);
    expect(html).toContain(`Frames #${HTML_MAX_FRAMES}..#9999 (${(10_000 - HTML_MAX_FRAMES).toLocaleString("en-US")} more) are not listed`);
    expect(html.length).toBeLessThan(1_500_000);
  });
});
