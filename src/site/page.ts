/**
 * The playground's one page (index.html): `stackwalk view`'s page (render/html.ts: its style
 * sheet, its script, and later the walks' sections it draws) around the playground's controls —
 * the drop zone and file picker, the examples, the thread, walker and step choosers, the progress
 * bar, and the tabs of the walk and of each output. Its script (site.js, src/site/app.ts) and the
 * worker it starts (walker.js) are files beside it; the Content-Security-Policy lets the page load
 * its own files and start its worker from them, and fetch nothing (connect-src 'none').
 */
import { renderPage } from "../render/html.js";
import { escapeXml as esc } from "../render/svg.js";
import type { CompareExample } from "./session.js";

/** What the page may load: its own scripts, its worker made from one of them, inline style. */
export const SITE_CSP = "default-src 'none'; script-src 'self' 'unsafe-inline'; worker-src blob:; style-src 'unsafe-inline'; img-src data:; connect-src 'none'";

/** The tabs: the walk as `view` shows it, each output of `walk --format`, and a chain's comparison. */
export const TABS = [
  ["view", "Walk"],
  ["text", "Text"],
  ["json", "JSON"],
  ["windbg", "WinDbg"],
  ["breakpad", "Breakpad"],
  ["compare", "Compare"],
] as const;

/** The playground's own style, after the view's. */
export const SITE_STYLE = `
[hidden] { display: none !important; }
.site-head { display: flex; flex-wrap: wrap; align-items: baseline; gap: 4px 16px; margin-bottom: 8px; }
.site-head h1 { margin: 0; }
.site-head p { margin: 0; color: #374151; }
.inputs { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; align-items: start; }
@media (max-width: 900px) { .inputs { grid-template-columns: minmax(0, 1fr); } }
.drop { border: 2px dashed #4b5563; border-radius: 8px; padding: 10px 14px; background: #fff; }
.drop.over { border-color: #0066a6; background: #eff6ff; }
.drop p { margin: 4px 0; }
.button, .examples button, .choices button, .output-bar button, .tabs button { font: inherit; padding: 4px 12px; border-radius: 6px; border: 1px solid #4b5563; background: #fff; color: #111827; cursor: pointer; }
.button:focus-within, button:focus-visible, select:focus-visible, .drop:focus-visible, pre:focus-visible, [tabindex]:focus-visible { outline: 3px solid #0066a6; outline-offset: 2px; }
.picker-input { position: absolute; width: 1px; height: 1px; opacity: 0; overflow: hidden; }
.examples { background: #fff; border: 1px solid #e5e7eb; border-radius: 8px; padding: 10px 14px; }
.examples p { margin: 4px 0; }
.examples button { margin: 2px 2px 2px 0; }
.choices { display: flex; flex-wrap: wrap; align-items: center; gap: 8px 16px; margin: 12px 0 4px; }
.choices label { white-space: nowrap; }
.choices select { font: inherit; max-width: 100%; }
.loaded { flex-basis: 100%; margin: 0; font-weight: 600; overflow-wrap: anywhere; }
.site-notes { margin: 4px 0; padding-left: 20px; color: #374151; overflow-wrap: anywhere; }
.status { margin: 8px 0; display: flex; align-items: center; gap: 8px; }
.status progress { width: 200px; }
.error { color: #b91c1c; font-weight: 600; overflow-wrap: anywhere; }
.tabs { display: flex; flex-wrap: wrap; gap: 4px; border-bottom: 2px solid #4b5563; margin-top: 12px; }
.tabs button { border-radius: 6px 6px 0 0; border-bottom: none; }
.tabs button[aria-selected="true"] { background: #111827; color: #fff; }
.panel { padding-top: 8px; }
.output-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 8px; margin-bottom: 8px; }
.output { margin: 0; background: #fff; border: 1px solid #e5e7eb; border-radius: 6px; padding: 8px; overflow: auto; max-height: 80vh; font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 0.82rem; }
.walk-view .page-head h2 { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
`;

/** The page's controls; the examples offered are the chains given. */
export function siteBody(examples: readonly CompareExample[]): string {
  const exampleRows = examples.map((ex) => {
    const buttons = ex.targets.map((t) => `<button type="button" data-example="${esc(ex.name)}" data-target="${esc(t.target)}">${esc(t.title)}</button>`);
    return `<p><strong>${esc(ex.name)}</strong> (${esc(ex.chain.join(" → "))}): ${buttons.join(" ")} <button type="button" data-example="${esc(ex.name)}" data-compare="">all side by side</button></p>`;
  });
  const tabs = TABS.map(([id, label], i) => `<button type="button" role="tab" id="tab-${id}" data-tab="${id}" aria-controls="panel-${id === "view" || id === "compare" ? id : "output"}" aria-selected="${i === 0}"${id === "compare" ? " hidden" : ""}>${label}</button>`);
  return [
    `<header class="site-head"><h1>stackwalk playground</h1><p>Walk a stack the way dbghelp's StackWalk64 does, and see why each frame was found. Your files stay on this machine: nothing is uploaded.</p></header>`,
    `<main>`,
    `<section class="inputs" aria-label="Inputs">`,
    `<div class="drop" id="drop"><p><strong>Drop files here</strong> or <label class="button" for="pick">choose files<input type="file" id="pick" class="picker-input" multiple></label></p>`,
    `<p>One minidump (.dmp), vector or sweep (.json), with any Breakpad .sym files, PDBs and module images it needs.</p></div>`,
    `<div class="examples"><p>Or open an example: one call chain built for each machine, walked with its table walker.</p>${exampleRows.join("")}</div>`,
    `</section>`,
    `<section class="choices" id="choices" aria-label="What to walk" hidden>`,
    `<p class="loaded" id="loaded"></p>`,
    `<label>Thread <select id="thread"></select></label>`,
    `<label>Walker <select id="walker"></select></label>`,
    `<label id="step-label" hidden>Step <select id="step"></select></label>`,
    `</section>`,
    `<ul class="site-notes" id="notes" hidden></ul>`,
    `<div class="status" id="status" role="status" aria-live="polite"><progress id="bar" hidden></progress><span id="phase">Drop a file, choose one, or open an example.</span></div>`,
    `<p class="error" id="error" role="alert" hidden></p>`,
    `<div class="tabs" role="tablist" aria-label="Outputs" id="tabs" hidden>${tabs.join("")}</div>`,
    `<section class="panel walk-view" id="panel-view" role="tabpanel" aria-labelledby="tab-view"></section>`,
    `<section class="panel" id="panel-output" role="tabpanel" aria-labelledby="tab-text" hidden><div class="output-bar"><button type="button" id="copy">Copy</button> <button type="button" id="download">Download</button> <span id="output-note"></span></div><pre class="output" id="output" tabindex="0" aria-label="output"></pre></section>`,
    `<section class="panel" id="panel-compare" role="tabpanel" aria-labelledby="tab-compare" hidden><div class="output-bar"><span>What <code>stackwalk compare</code> prints for the chain: each machine's registers, where each return address lives, which walkers find which frames.</span></div><pre class="output" id="compare" tabindex="0" aria-label="comparison"></pre></section>`,
    `</main>`,
  ].join("\n");
}

/** The whole page. */
export function sitePage(examples: readonly CompareExample[]): string {
  return renderPage({ title: "stackwalk playground", body: siteBody(examples), style: SITE_STYLE, scripts: ["site.js"], csp: SITE_CSP });
}
