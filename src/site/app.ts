/**
 * The playground page's script (site.js): it takes the files dropped or picked (or an example),
 * hands them to the Web Worker that reads and walks them (walker.js, src/site/worker.ts), shows
 * its progress, puts the walk's sections it draws into the page and wires them with the view's
 * own script (`window.stackwalkView`), and shows each output in its tab, to copy or download.
 * The files are handed over as `File`s, which the worker reads a slice at a time; nothing leaves
 * the page. Compiled with the DOM's types (src/site/tsconfig.json).
 */
import type { FileLike, Reply, Request } from "./protocol.js";
import type { CompareExample, OutputFormat, SessionSummary, WalkChoice } from "./session.js";

declare global {
  interface Window {
    /** Wires walk sections added to the page (render/html.ts's VIEW_SCRIPT). */
    stackwalkView?: (root: ParentNode) => void;
    /** The worker's code (walker.js). */
    stackwalkWorker?: string;
    /** The examples (examples.js): each chain, and its snapshots by file name. */
    stackwalkExamples?: { examples: CompareExample[]; files: Record<string, string> };
  }
}

type Question = Request extends infer R ? (R extends { id: number } ? Omit<R, "id"> : never) : never;
type Answer = Exclude<Reply, { type: "progress" } | { type: "error" }>;

const byId = <T extends HTMLElement>(id: string): T => {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`the page has no #${id}`);
  return el as T;
};

const drop = byId<HTMLDivElement>("drop");
const pick = byId<HTMLInputElement>("pick");
const choices = byId<HTMLElement>("choices");
const loaded = byId<HTMLParagraphElement>("loaded");
const threadSelect = byId<HTMLSelectElement>("thread");
const walkerSelect = byId<HTMLSelectElement>("walker");
const stepLabel = byId<HTMLLabelElement>("step-label");
const stepSelect = byId<HTMLSelectElement>("step");
const notes = byId<HTMLUListElement>("notes");
const bar = byId<HTMLProgressElement>("bar");
const phase = byId<HTMLSpanElement>("phase");
const error = byId<HTMLParagraphElement>("error");
const tabs = byId<HTMLDivElement>("tabs");
const viewPanel = byId<HTMLElement>("panel-view");
const outputPanel = byId<HTMLElement>("panel-output");
const comparePanel = byId<HTMLElement>("panel-compare");
const output = byId<HTMLPreElement>("output");
const outputNote = byId<HTMLSpanElement>("output-note");
const compare = byId<HTMLPreElement>("compare");

/** Loads a script file beside the page once (the worker's code, the examples). */
const scripts = new Map<string, Promise<void>>();
function loadScript(src: string): Promise<void> {
  let loading = scripts.get(src);
  if (loading === undefined) {
    loading = new Promise<void>((resolve, reject) => {
      const el = document.createElement("script");
      el.src = src;
      el.onload = () => resolve();
      el.onerror = () => reject(new Error(`${src} could not be loaded: keep it beside index.html`));
      document.body.append(el);
    });
    scripts.set(src, loading);
  }
  return loading;
}

// The worker, made from walker.js's text: a page opened from file:// may not start a worker from a file.
let worker: Worker | undefined;
let nextId = 1;
const pending = new Map<number, { resolve: (a: Answer) => void; reject: (e: Error) => void }>();

async function ask(question: Question): Promise<Answer> {
  if (worker === undefined) {
    await loadScript("walker.js");
    const url = URL.createObjectURL(new Blob([window.stackwalkWorker ?? ""], { type: "text/javascript" }));
    worker = new Worker(url);
    worker.onmessage = (event: MessageEvent<Reply>) => answer(event.data);
    worker.onerror = (event) => {
      for (const p of pending.values()) p.reject(new Error(`the worker stopped: ${event.message}`));
      pending.clear();
    };
  }
  const id = nextId++;
  return new Promise<Answer>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    worker!.postMessage({ ...question, id } as Request);
  });
}

function answer(reply: Reply): void {
  if (reply.type === "progress") {
    bar.hidden = false;
    if (reply.total !== undefined && reply.total > 0) {
      bar.max = reply.total;
      bar.value = reply.done ?? 0;
    } else bar.removeAttribute("value");
    phase.textContent = `${reply.phase}…`;
    return;
  }
  const p = pending.get(reply.id);
  if (p === undefined) return;
  pending.delete(reply.id);
  if (reply.type === "error") p.reject(new Error(reply.message));
  else p.resolve(reply);
}

/** What the last walk found, said again (with the bytes read by then) when an output is written. */
let walked = { threads: 0, frames: 0 };
function walkedText(read: number): string {
  const { threads, frames } = walked;
  return `${summary?.file ?? ""}: ${threads} thread${threads === 1 ? "" : "s"}, ${frames} frame${frames === 1 ? "" : "s"} walked; ${kib(read)} read of the files${inputSize > 0 ? ` (the input is ${kib(inputSize)})` : ""}.`;
}

/** Says what is going on, or what went wrong. */
function status(text: string): void {
  bar.hidden = true;
  phase.textContent = text;
}
function fail(e: unknown): void {
  bar.hidden = true;
  phase.textContent = "";
  error.hidden = false;
  error.textContent = e instanceof Error ? e.message : String(e);
}

const kib = (n: number): string => (n < 1024 ? `${n} bytes` : n < 1 << 20 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / (1 << 20)).toFixed(1)} MiB`);

let summary: SessionSummary | undefined;
let inputSize = 0;
let example: { example: CompareExample; files: Record<string, string> } | undefined;
let tab = "view";
/** Each output of the current choice, once written. */
const outputs = new Map<string, string>();
/** Bumped by each new input or choice: answers to older questions are dropped. */
let generation = 0;

function option(select: HTMLSelectElement, value: string, text: string): void {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = text;
  select.append(o);
}

/** Opens files (an input with its symbol files and images), or an example's snapshot. */
async function open(files: File[], from?: typeof example): Promise<void> {
  generation++;
  error.hidden = true;
  outputs.clear();
  example = from;
  summary = undefined;
  try {
    const opened = await ask({ type: "open", files: files as FileLike[] });
    if (opened.type !== "opened") return;
    summary = opened.summary;
    inputSize = files.find((f) => f.name === opened.summary.file)?.size ?? 0;
    const s = opened.summary;
    loaded.textContent = `${s.file}: ${s.machine}${s.description !== undefined ? ` - ${s.description}` : ""}`;
    threadSelect.replaceChildren();
    option(threadSelect, "all", `all threads (${s.threads.length})`);
    for (const t of s.threads) option(threadSelect, String(t.id), t.label);
    walkerSelect.replaceChildren();
    const tableWalker = from?.example.targets.find((t) => t.vector === s.file)?.walker;
    option(walkerSelect, "", tableWalker !== undefined ? `${tableWalker} (this machine's table walker)` : "auto (Breakpad's own for its report)");
    for (const w of s.walkers) option(walkerSelect, w, w);
    stepSelect.replaceChildren();
    stepLabel.hidden = s.steps === undefined;
    for (const step of s.steps ?? []) option(stepSelect, String(step), `after ${step} instructions`);
    notes.replaceChildren(...s.notes.map((n) => Object.assign(document.createElement("li"), { textContent: n })));
    notes.hidden = s.notes.length === 0;
    choices.hidden = false;
    tabs.hidden = false;
    byId("tab-breakpad").hidden = s.breakpadRefusal !== undefined;
    byId("tab-compare").hidden = from === undefined;
    if ((tab === "breakpad" && s.breakpadRefusal !== undefined) || (tab === "compare" && from === undefined)) tab = "view";
    await walk();
  } catch (e) {
    fail(e);
  }
}

function choice(): WalkChoice {
  const thread = threadSelect.value === "all" ? "all" : Number(threadSelect.value);
  const walker = walkerSelect.value !== "" ? (walkerSelect.value as WalkChoice["walker"]) : example !== undefined ? example.example.targets.find((t) => t.vector === summary?.file)?.walker : undefined;
  return { thread, ...(walker !== undefined ? { walker } : {}), ...(summary?.steps !== undefined ? { step: Number(stepSelect.value) } : {}) };
}

/** Walks the current choice and shows it in the current tab. */
async function walk(): Promise<void> {
  const mine = ++generation;
  outputs.clear();
  error.hidden = true;
  try {
    const view = await ask({ type: "view", choice: choice() });
    if (mine !== generation || view.type !== "view") return;
    viewPanel.innerHTML = view.html;
    window.stackwalkView?.(viewPanel);
    walked = { threads: view.threads, frames: view.frames };
    status(walkedText(view.read));
    await show(tab);
  } catch (e) {
    if (mine === generation) fail(e);
  }
}

/** Shows a tab, writing its output first when it is not written yet. */
async function show(name: string): Promise<void> {
  tab = name;
  for (const b of tabs.querySelectorAll<HTMLButtonElement>("button[role=tab]")) b.setAttribute("aria-selected", String(b.dataset["tab"] === name));
  viewPanel.hidden = name !== "view";
  comparePanel.hidden = name !== "compare";
  outputPanel.hidden = name === "view" || name === "compare";
  if (name === "view") return;
  const mine = generation;
  if (name === "compare") {
    if (example === undefined || compare.dataset["chain"] === example.example.name) return;
    const reply = await ask({ type: "compare", example: example.example, files: Object.entries(example.files) });
    if (reply.type === "text") {
      compare.textContent = reply.text;
      compare.dataset["chain"] = example.example.name;
    }
    return;
  }
  outputPanel.setAttribute("aria-labelledby", `tab-${name}`);
  output.setAttribute("aria-label", `${name} output`);
  let text = outputs.get(name);
  if (text === undefined) {
    output.textContent = "";
    outputNote.textContent = "writing…";
    try {
      const reply = await ask({ type: "output", format: name as OutputFormat, choice: choice() });
      if (mine !== generation || reply.type !== "text") return;
      text = reply.text;
      outputs.set(name, text);
      status(walkedText(reply.read));
    } catch (e) {
      if (mine === generation) fail(e);
      return;
    }
  }
  if (tab !== name) return;
  output.textContent = text;
  outputNote.textContent = `${text.split("\n").length - 1} lines, as stackwalk walk --format ${name} writes them`;
}

/** The output's file name: the input's stem, then the format. */
function downloadName(): string {
  const stem = (summary?.file ?? "stackwalk").replace(/\.[^.]*$/, "");
  return `${stem}.${tab === "json" ? "json" : `${tab}.txt`}`;
}

byId<HTMLButtonElement>("copy").addEventListener("click", () => {
  const text = outputs.get(tab) ?? "";
  const copied = (): void => {
    outputNote.textContent = `copied ${text.length.toLocaleString("en-US")} characters`;
  };
  navigator.clipboard?.writeText(text).then(copied, () => {
    // Without clipboard access: select the text, for the reader's own copy.
    const range = document.createRange();
    range.selectNodeContents(output);
    getSelection()?.removeAllRanges();
    getSelection()?.addRange(range);
    outputNote.textContent = "selected: copy it with the keyboard";
  });
});

byId<HTMLButtonElement>("download").addEventListener("click", () => {
  const url = URL.createObjectURL(new Blob([outputs.get(tab) ?? ""], { type: tab === "json" ? "application/json" : "text/plain" }));
  const a = Object.assign(document.createElement("a"), { href: url, download: downloadName() });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 1000);
});

for (const b of tabs.querySelectorAll<HTMLButtonElement>("button[role=tab]")) b.addEventListener("click", () => void show(b.dataset["tab"] ?? "view"));
for (const s of [threadSelect, walkerSelect, stepSelect]) s.addEventListener("change", () => void walk());

pick.addEventListener("change", () => {
  if (pick.files !== null && pick.files.length > 0) void open([...pick.files]);
  pick.value = "";
});
drop.addEventListener("dragover", (ev) => {
  ev.preventDefault();
  drop.classList.add("over");
});
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (ev) => {
  ev.preventDefault();
  drop.classList.remove("over");
  const files = ev.dataTransfer?.files;
  if (files !== undefined && files.length > 0) void open([...files]);
});
// A file dropped beside the zone is not opened by the browser in place of the page.
document.addEventListener("dragover", (ev) => ev.preventDefault());
document.addEventListener("drop", (ev) => ev.preventDefault());

for (const b of document.querySelectorAll<HTMLButtonElement>(".examples button")) {
  b.addEventListener("click", async () => {
    try {
      await loadScript("examples.js");
      const all = window.stackwalkExamples!;
      const ex = all.examples.find((e) => e.name === b.dataset["example"])!;
      const files = Object.fromEntries(ex.targets.map((t) => [t.vector, all.files[t.vector] ?? ""]));
      const target = ex.targets.find((t) => t.target === b.dataset["target"]) ?? ex.targets[0]!;
      if (b.dataset["compare"] !== undefined) tab = "compare";
      await open([new File([files[target.vector] ?? ""], target.vector, { type: "application/json" })], { example: ex, files });
    } catch (e) {
      fail(e);
    }
  });
}

// [ and ] move between threads when one is shown (the view's script moves within "all threads").
document.addEventListener("keydown", (ev) => {
  if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey || choices.hidden) return;
  const t = ev.target as HTMLElement | null;
  if (t !== null && (t.tagName === "SELECT" || t.tagName === "INPUT" || t.tagName === "TEXTAREA")) return;
  if (ev.key !== "[" && ev.key !== "]") return;
  const next = threadSelect.selectedIndex + (ev.key === "]" ? 1 : -1);
  if (next < 0 || next >= threadSelect.options.length) return;
  threadSelect.selectedIndex = next;
  ev.preventDefault();
  void walk();
});
