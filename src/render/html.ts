/**
 * One self-contained HTML page that steps through explained walks frame by frame: the stack
 * diagram of svg.ts inline, beside the list of frames with the rule that found each, its source
 * line, the plain words of explain.ts and the memory each unwind read. Previous/Next buttons and
 * the arrow keys move a highlight from frame to frame: the frame's band in the diagram, the words
 * its unwind read, and its explanation. Several threads get a picker. All CSS and script are
 * inline and a Content-Security-Policy forbids every network request, so the page works from a
 * file:// URL with no network; without script every thread and every explanation is shown.
 *
 * The diagram is drawn at its own size beside the frames from 1200 px wide on (its smallest text
 * 12 px), and scales down to its pane below that (never wider than the pane, never larger than
 * drawn), so the page has no horizontal scroll at any width; below 1200 px the panes stack. The
 * page's parts (style, script, the walks' sections) are shared with the playground (src/site),
 * which shows the same walks in a page of its own: the two cannot diverge. Each fact is
 * said once: the machine and walker in the page's heading, each thread's name and frame count in
 * the picker (a heading of its own without script), its stop reason, truth and notes above the
 * panes; the diagram leaves out its own heading and frame list, which the page has.
 */
import { formatAddress, machineInfo } from "../model/machine.js";
import { ruleText } from "../arch/rule-text.js";
import { hex, hexPadded } from "../hex.js";
import type { ExplainedFrame, ExplainedWalk } from "../analysis/explain-model.js";
import { escapeXml, frameColours, renderSvg } from "./svg.js";

/** The most frames one walk lists on the page; deeper walks say how many were left out. */
export const HTML_MAX_FRAMES = 500;

/** The most reads a frame's table lists. */
const MAX_READS = 40;

const esc = escapeXml;

function address(e: ExplainedWalk, v: bigint): string {
  return machineInfo(e.machine) !== undefined ? formatAddress(e.machine, v) : hex(v);
}

/** The frame's STACKFRAME64 registers as the machine names them: EIP/ESP/EBP, RIP/RSP/RBP, StIIP/SP/RsBSP. */
function registersLine(e: ExplainedWalk, f: ExplainedFrame): string {
  const roles = machineInfo(e.machine)?.roles ?? [];
  const display = (role: string, fallback: string): string => roles.find((r) => r.role === role)?.display ?? fallback;
  const parts = [`${display("AddrPC", "PC")} ${address(e, f.frame.addrPC)}`, `${display("AddrStack", "SP")} ${address(e, f.frame.addrStack)}`];
  const hasRegister = (role: string): boolean => (roles.find((r) => r.role === role)?.register ?? null) !== null;
  if (hasRegister("AddrFrame")) parts.push(`${display("AddrFrame", "FP")} ${address(e, f.frame.addrFrame)}`);
  if (hasRegister("AddrBStore")) parts.push(`${display("AddrBStore", "BSP")} ${address(e, f.frame.addrBStore)}`);
  parts.push(`return ${address(e, f.frame.addrReturn)}`);
  return parts.join(" · ");
}

/** A thread in a few words: its id, whether it crashed, how many frames its walk found. */
function threadName(e: ExplainedWalk): string {
  return `thread ${e.threadId}${e.crashed === true ? " (crashed)" : ""} · ${e.frames.length} frame${e.frames.length === 1 ? "" : "s"}`;
}

function frameItem(e: ExplainedWalk, w: number, f: ExplainedFrame): string {
  const c = frameColours(f.index);
  const out: string[] = [];
  out.push(`<li class="frame" id="w${w}-frame-${f.index}" data-frame="${f.index}" style="border-left-color:${c.line}">`);
  const truth = f.truth !== undefined ? ` <span class="badge truth-${f.truth}" title="compared with the input's ground truth">${esc(f.truth)}</span>` : "";
  out.push(
    `<h3><span class="num" style="background:${c.band}">#${f.index}</span> <span class="loc">${esc(f.location)}</span> <span class="badge trust">${esc(f.frame.trust)}</span>${truth}</h3>`,
  );
  if (f.source !== undefined) out.push(`<p class="src" title="source file and line">${esc(`${f.source.file}:${f.source.line}`)}</p>`);
  if (f.inlines !== undefined) {
    // Inline frames have no stack of their own: they are listed inside the frame whose stack band they share.
    out.push(`<ol class="inlines" title="calls inlined at this PC, innermost first: they run in frame #${f.index}'s stack area">`);
    for (const inline of f.inlines) {
      const src = inline.source === undefined ? "" : ` <span class="src">${esc(`${inline.source.file}:${inline.source.line}`)}</span>`;
      out.push(`<li><span class="loc">${esc(inline.location)}</span> <span class="badge trust">inline</span>${src}</li>`);
    }
    out.push(`</ol>`);
  }
  out.push(`<p class="regs">${esc(registersLine(e, f))}</p>`);
  out.push(`<div class="detail">`);
  out.push(`<p class="rule">rule: <code>${esc(ruleText(f.frame.rule))}</code></p>`);
  if (f.how.length > 0) out.push(`<ul class="how">${f.how.map((l) => `<li>${esc(l)}</li>`).join("")}</ul>`);
  if (f.reads.length > 0) {
    // Three columns, each fact under the one it qualifies, so that the table fits a narrow pane:
    // the address over where it is relative to a register, the value, what it was over which stack
    // (said only where there are two, IA-64's memory stack and backing store).
    const twoStacks = e.backingStore !== undefined;
    out.push(`<table class="reads"><caption>memory this unwind read, in order</caption><thead><tr><th>address</th><th>value</th><th>what it was</th></tr></thead><tbody>`);
    for (const r of f.reads.slice(0, MAX_READS)) {
      const what = r.register !== undefined ? `${r.role} → ${r.register}` : r.role;
      const value = hexPadded(r.value, r.size * 2);
      const at = r.relative !== undefined ? `<br><span class="as">${esc(r.relative)}</span>` : "";
      const where = twoStacks ? `<br><span class="area">${esc(r.area)}</span>` : "";
      out.push(`<tr class="read-${esc(r.role)}"><td><code>${esc(address(e, r.address))}</code>${at}</td><td><code>${esc(value)}</code></td><td>${esc(what)}${where}</td></tr>`);
    }
    out.push(`</tbody></table>`);
    if (f.reads.length > MAX_READS) out.push(`<p class="cut">… and ${f.reads.length - MAX_READS} more reads.</p>`);
  }
  if (f.weaker !== undefined) out.push(`<p class="weaker"><strong>A weaker walker:</strong> ${esc(f.weaker)}</p>`);
  out.push(`</div></li>`);
  return out.join("");
}

function walkSection(e: ExplainedWalk, w: number, count: number): string {
  const early = e.stop.reason !== "end-of-stack";
  const out: string[] = [];
  out.push(`<section class="walk" id="walk-${w}" data-walk="${w}" data-thread="${e.threadId}" aria-label="thread ${e.threadId}">`);
  // With several threads the picker names the shown one; this heading does without script.
  if (count > 1) out.push(`<h2 class="thread-name">${esc(threadName(e))}</h2>`);
  out.push(`<div class="summary">`);
  if (count === 1) out.push(`<p class="meta">${esc(threadName(e))}</p>`);
  out.push(`<p class="stop ${early ? "stop-early" : "stop-end"}"><strong>${early ? "Stopped early:" : "Stop:"}</strong> ${esc(e.stopText)}</p>`);
  if (e.truth !== undefined) out.push(`<p class="truth ${e.truth.exact ? "truth-exact" : "truth-differs"}"><strong>Ground truth:</strong> ${esc(e.truth.text)}</p>`);
  if (e.notes.length > 0) out.push(`<ul class="notes">${e.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>`);
  out.push(`</div>`);
  const listed = e.frames.slice(0, HTML_MAX_FRAMES);
  out.push(
    `<div class="controls"><button type="button" class="prev">◀ Previous</button> <span class="position" aria-live="polite">${listed.length > 0 ? `frame 0 (1 of ${listed.length})` : "no frames"}</span> <button type="button" class="next">Next ▶</button> <span class="hint">or the ← → keys; click a frame to jump to it</span></div>`,
  );
  out.push(`<div class="panes">`);
  // Each pane scrolls on its own: it takes the focus, so that the keyboard can scroll it too.
  out.push(`<div class="diagram" tabindex="0" role="region" aria-label="stack diagram of thread ${e.threadId}">${renderSvg(e, { idPrefix: `w${w}-`, heading: false, frameList: false })}</div>`);
  out.push(`<div class="explanation" tabindex="0" role="region" aria-label="frames of thread ${e.threadId}">`);
  if (listed.length === 0) out.push(`<p class="empty">The walk found no frames. ${esc(e.stopText)}</p>`);
  else out.push(`<ol class="frames" start="0">${listed.map((f) => frameItem(e, w, f)).join("\n")}</ol>`);
  if (e.frames.length > listed.length) {
    out.push(
      `<p class="cut">✂ Frames #${listed.length}..#${e.frames.length - 1} (${(e.frames.length - listed.length).toLocaleString("en-US")} more) are not listed: this page lists at most ${HTML_MAX_FRAMES} frames per thread; <code>stackwalk walk</code> prints them all.</p>`,
    );
  }
  out.push(`</div></div></section>`);
  return out.join("\n");
}

/**
 * The page's style sheet, shared by every page that shows walks (`stackwalk view` and the
 * playground). The colours keep their meaning without hue: the current frame is outlined in
 * black, words an unwind read are filled and outlined thicker, early stops and differences are
 * said in words as well as in red. Text is never below 12 px at the diagram's own size, and the
 * diagram is given its own width beside the frames from 1200 px on, so that it is drawn unscaled.
 */
export const VIEW_STYLE = `
:root { color-scheme: light; font-family: system-ui, -apple-system, "Segoe UI", sans-serif; color: #111827; background: #f9fafb; }
body { margin: 0; padding: 12px; }
h1 { font-size: 1.35rem; margin: 0 0 4px; overflow-wrap: anywhere; }
h2 { font-size: 1.1rem; margin: 8px 0; }
h3 { font-size: 0.95rem; margin: 0; font-weight: 600; overflow-wrap: anywhere; }
code, .regs, .reads td { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.82rem; }
.reads td, .reads td code { font-size: 0.78rem; }
.page-head p { margin: 2px 0 8px; color: #4b5563; }
.picker { margin: 8px 0; }
.summary p { margin: 4px 0; }
.meta { color: #374151; }
.stop-early { color: #b91c1c; }
.truth-exact { color: #15803d; }
.truth-differs { color: #b91c1c; }
.notes { background: #fffbeb; border: 1px solid #f59e0b; border-radius: 6px; padding: 6px 6px 6px 28px; color: #92400e; }
.controls { position: sticky; top: 0; z-index: 2; background: #f9fafb; padding: 8px 0; border-bottom: 1px solid #e5e7eb; }
.controls button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid #6b7280; background: #fff; color: #111827; cursor: pointer; }
.controls button:disabled { color: #6b7280; border-color: #d1d5db; cursor: default; }
.position { display: inline-block; min-width: 9em; text-align: center; font-weight: 600; }
.hint { color: #4b5563; font-size: 0.85rem; margin-left: 8px; }
.panes { display: grid; grid-template-columns: minmax(0, max-content) minmax(320px, 1fr); gap: 12px; margin-top: 8px; }
@media (max-width: 1200px) { .panes { grid-template-columns: minmax(0, 1fr); } }
.diagram { overflow: auto; max-height: 85vh; background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; }
.diagram svg { display: block; max-width: 100%; height: auto; }
.src { margin: 2px 0; font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.82rem; color: #1f2937; overflow-wrap: anywhere; }
.explanation { overflow: auto; max-height: 85vh; }
.frames { list-style: none; margin: 0; padding: 0; }
.frame { background: #fff; border: 1px solid #e5e7eb; border-left: 6px solid #6b7280; border-radius: 6px; padding: 6px 8px; margin: 0 0 8px; cursor: pointer; }
.frame.current { outline: 3px solid #111827; }
.num { display: inline-block; padding: 0 6px; border-radius: 4px; }
.badge { display: inline-block; font-size: 0.75rem; font-weight: 500; padding: 0 6px; border-radius: 10px; background: #e5e7eb; }
.truth-exact.badge { background: #dcfce7; }
.truth-differs.badge, .truth-extra.badge { background: #fee2e2; color: #b91c1c; }
.regs { margin: 4px 0; color: #374151; overflow-wrap: anywhere; }
.rule code { overflow-wrap: anywhere; }
.how { margin: 4px 0; padding-left: 20px; }
.how li { margin: 2px 0; overflow-wrap: anywhere; }
.reads { border-collapse: collapse; margin: 6px 0; font-size: 0.85rem; max-width: 100%; }
.reads caption { text-align: left; color: #4b5563; font-size: 0.8rem; }
.reads th, .reads td { border: 1px solid #e5e7eb; padding: 1px 4px; text-align: left; vertical-align: top; }
.reads code { white-space: nowrap; }
.reads .as, .reads .area { color: #4b5563; font-size: 0.8rem; }
.read-return-address td { color: #b84200; }
.read-saved-frame-pointer td { color: #0066a6; }
.read-saved-register td { color: #a3407d; }
.weaker { background: #fef2f2; border-radius: 4px; padding: 4px 8px; }
.cut { color: #b91c1c; }
body.js .frame:not(.current) .detail { display: none; }
body.js .thread-name { display: none; }
body.js .walk .band rect { fill-opacity: 0.45; }
body.js .walk .band.current rect { fill-opacity: 1; }
`;

/**
 * The page's script, shared like {@link VIEW_STYLE}. `stackwalkView(root)` wires the walks under
 * `root`: Previous/Next and a click on a frame move the highlight (the frame's band, the words its
 * unwind read, its explanation); the picker shows one thread. One key handler serves the walks
 * wired last: ← and → step through the frames, [ and ] through the threads. A page written whole
 * (`stackwalk view`) is wired when it loads; a page that adds walks later (the playground) calls
 * `window.stackwalkView(container)` after each.
 */
export const VIEW_SCRIPT = `
(function () {
  "use strict";
  var sections = [];
  var current = [];
  var picker = null;
  function active() {
    for (var i = 0; i < sections.length; i++) if (!sections[i].hidden) return i;
    return 0;
  }
  function show(w, k) {
    var s = sections[w];
    if (!s) return;
    var items = s.querySelectorAll("li.frame");
    if (items.length === 0) return;
    k = Math.max(0, Math.min(items.length - 1, k));
    current[w] = k;
    s.querySelectorAll(".current").forEach(function (el) { el.classList.remove("current"); el.removeAttribute("aria-current"); });
    s.querySelectorAll(".read").forEach(function (el) { el.classList.remove("read"); });
    var item = items[k];
    item.classList.add("current");
    item.setAttribute("aria-current", "step");
    var frame = item.getAttribute("data-frame");
    s.querySelectorAll('.band[data-frame="' + frame + '"], .legend-frame[data-frame="' + frame + '"]').forEach(function (el) { el.classList.add("current"); });
    s.querySelectorAll('[data-reads~="' + frame + '"]').forEach(function (el) { el.classList.add("read"); });
    s.querySelector(".position").textContent = "frame " + frame + " (" + (k + 1) + " of " + items.length + ")";
    s.querySelector("button.prev").disabled = k === 0;
    s.querySelector("button.next").disabled = k === items.length - 1;
    item.scrollIntoView({ block: "nearest" });
    var band = s.querySelector('.band[data-frame="' + frame + '"]') || s.querySelector('.legend-frame[data-frame="' + frame + '"]');
    if (band) band.scrollIntoView({ block: "nearest", inline: "nearest" });
    var read = s.querySelector('.row[data-reads~="' + frame + '"]');
    if (read) read.scrollIntoView({ block: "nearest", inline: "nearest" });
  }
  function showThread(chosen) {
    if (chosen < 0 || chosen >= sections.length) return;
    sections.forEach(function (s, w) { s.hidden = w !== chosen; });
    if (picker) picker.value = String(chosen);
    show(chosen, current[chosen]);
  }
  function attach(root) {
    document.body.classList.add("js");
    sections = Array.prototype.slice.call(root.querySelectorAll("section.walk"));
    current = sections.map(function () { return 0; });
    sections.forEach(function (s, w) {
      s.hidden = w > 0;
      s.querySelector("button.prev").addEventListener("click", function () { show(w, current[w] - 1); });
      s.querySelector("button.next").addEventListener("click", function () { show(w, current[w] + 1); });
      s.querySelectorAll("li.frame").forEach(function (item, k) {
        item.addEventListener("click", function () { show(w, k); });
      });
      show(w, 0);
    });
    picker = root.querySelector("#thread-picker");
    if (picker) {
      picker.parentNode.hidden = false;
      picker.addEventListener("change", function () { showThread(Number(picker.value)); });
    }
  }
  document.addEventListener("keydown", function (ev) {
    if (ev.altKey || ev.ctrlKey || ev.metaKey || sections.length === 0) return;
    var t = ev.target;
    if (t && (t.tagName === "SELECT" || t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable)) return;
    var w = active();
    if (ev.key === "ArrowRight") show(w, current[w] + 1);
    else if (ev.key === "ArrowLeft") show(w, current[w] - 1);
    else if (ev.key === "]" && sections.length > 1) showThread(w + 1);
    else if (ev.key === "[" && sections.length > 1) showThread(w - 1);
    else return;
    ev.preventDefault();
  });
  window.stackwalkView = attach;
  attach(document);
})();
`;

/** The Content-Security-Policy of a page written whole: nothing may be fetched, the inline style and script run. */
const VIEW_CSP = "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:";

/** What {@link renderPage} puts around a page's body. */
export interface PageParts {
  /** The document's title. */
  title: string;
  /** The body's HTML. */
  body: string;
  /** Style added after {@link VIEW_STYLE}. */
  style?: string;
  /** Classic scripts, by relative URL, loaded after the view's script. */
  scripts?: readonly string[];
  /** The Content-Security-Policy (default: no request at all, inline style and script only). */
  csp?: string;
}

/**
 * One HTML document with the walk view's style sheet and script inline: `stackwalk view` writes
 * one around the walks it explains, the playground's page is one around its own controls.
 */
export function renderPage(parts: PageParts): string {
  const out: string[] = [];
  out.push(`<!DOCTYPE html>`);
  out.push(`<html lang="en"><head><meta charset="utf-8">`);
  out.push(`<meta http-equiv="Content-Security-Policy" content="${parts.csp ?? VIEW_CSP}">`);
  out.push(`<meta name="viewport" content="width=device-width, initial-scale=1">`);
  out.push(`<title>${esc(parts.title)}</title>`);
  out.push(`<style>${VIEW_STYLE}${parts.style ?? ""}</style></head><body>`);
  out.push(parts.body);
  out.push(`<script>${VIEW_SCRIPT}</script>`);
  for (const src of parts.scripts ?? []) out.push(`<script src="${esc(src)}"></script>`);
  out.push(`</body></html>`);
  return out.join("\n") + "\n";
}

/**
 * The walks' heading and sections (a thread picker when there are several): what a page shows of
 * explained walks. A page of its own (`stackwalk view`) has them as its banner and main content;
 * inside another page (`landmarks: false`, the playground) they are plain blocks under a
 * second-level heading.
 */
export function renderWalkView(walks: readonly ExplainedWalk[], options: { landmarks?: boolean } = {}): string {
  const landmarks = options.landmarks ?? true;
  const [head, main, h] = landmarks ? ["header", "main", "h1"] : ["div", "div", "h2"];
  const title = walks[0]?.title ?? "stack walk";
  const machines = [...new Set(walks.map((e) => machineInfo(e.machine).title))];
  const walkers = [...new Set(walks.map((e) => e.walker))];
  const out: string[] = [];
  out.push(`<${head} class="page-head"><${h}>${esc(title)}</${h}>`);
  out.push(
    `<p>${esc(`${machines.join(", ")} · walker ${walkers.join(", ")}`)}: the stack walk frame by frame. Each step highlights a frame's band in the diagram, the words its unwind read, and how it was found.</p>`,
  );
  if (walks.length > 1) {
    const options = walks.map((e, w) => `<option value="${w}">${esc(threadName(e))}</option>`);
    // Shown by the script, which is what makes it work.
    out.push(`<p class="picker" hidden><label for="thread-picker">Thread: </label><select id="thread-picker">${options.join("")}</select> <span class="hint">${walks.length} threads; the [ and ] keys move between them</span></p>`);
  }
  out.push(`</${head}><${main} class="walks">`);
  if (walks.length === 0) out.push(`<p class="empty stop-early">The input has no threads to walk.</p>`);
  walks.forEach((e, w) => out.push(walkSection(e, w, walks.length)));
  out.push(`</${main}>`);
  return out.join("\n");
}

/** Renders explained walks (one per thread) as one self-contained HTML page. */
export function renderHtml(walks: readonly ExplainedWalk[]): string {
  return renderPage({ title: `${walks[0]?.title ?? "stack walk"} — stack walk`, body: renderWalkView(walks) });
}
