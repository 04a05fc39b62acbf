/**
 * The HTML view in a real browser: Debian's headless Chromium, driven by playwright-core, opens
 * pages written by `stackwalk view` from file:// URLs and steps through them, and lays each out
 * at 800, 1280 and 1920 px wide: nothing may run past the window or its box, the page may not
 * scroll sideways, every full name is in a title, and the stop reason is said once. Screenshots
 * go to a temporary folder, or to $STACKWALK_SCREENSHOTS when it is set, to be looked at.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const VECTOR = resolve("vectors/x86/synthetic/fpo-leaf.json");
const IA64 = resolve("vectors/ia64/synthetic/frame-63.json");
const DUMP = resolve("test/fixtures/breakpad/minidump2.dmp");
const SYMBOLS = resolve("test/fixtures/breakpad/symbols");

/** The few DOM types the checks that run in the page use: the test program is compiled without the DOM library. */
interface Box {
  left: number;
  right: number;
  top: number;
  bottom: number;
  width: number;
  height: number;
}
interface DomElement {
  tagName: string;
  id: string;
  className: unknown;
  textContent: string | null;
  clientWidth: number;
  scrollWidth: number;
  parentElement: DomElement | null;
  selectedOptions?: ArrayLike<{ text: string }>;
  getBoundingClientRect(): Box;
  getClientRects(): { length: number };
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  closest(selector: string): DomElement | null;
}
declare const document: {
  documentElement: DomElement;
  body: DomElement;
  querySelector(selector: string): DomElement | null;
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  createTreeWalker(root: DomElement, show: number): { nextNode(): { textContent: string | null; parentElement: DomElement | null } | null };
};
/** NodeFilter.SHOW_TEXT. */
const SHOW_TEXT = 4;

const dir = mkdtempSync(join(tmpdir(), "stackwalk-view-"));
const shots = process.env["STACKWALK_SCREENSHOTS"] ?? dir;

/** The width and height of a PNG file, from its IHDR chunk. */
function pngSize(path: string): [number, number] {
  const png = readFileSync(path);
  expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return [png.readUInt32BE(16), png.readUInt32BE(20)];
}

/**
 * What is wrong with the layout of the shown thread `w` of the page, in words: the page wider
 * than the window, an element past the window's sides, a box whose content is wider than the box
 * (text cut off or scrolled), the diagram wider than its pane, a text of the diagram outside it.
 */
function layoutProblems(page: Page, w: number): Promise<string[]> {
  return page.evaluate((w) => {
    const problems: string[] = [];
    const name = (el: DomElement): string => `${el.tagName.toLowerCase()}${el.id !== "" ? "#" + el.id : ""}${typeof el.className === "string" && el.className !== "" ? "." + el.className.split(" ").join(".") : ""} "${(el.textContent ?? "").trim().slice(0, 40)}"`;
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) problems.push(`the page scrolls sideways: ${root.scrollWidth} > ${root.clientWidth} px`);
    const vw = root.clientWidth;
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.left < -0.5 || r.right > vw + 0.5) problems.push(`${name(el)} spans ${Math.round(r.left)}..${Math.round(r.right)} in a ${vw} px window`);
      if (el.clientWidth > 0 && el.scrollWidth > el.clientWidth + 1) problems.push(`${name(el)} holds ${el.scrollWidth} px in ${el.clientWidth} px`);
    }
    const pane = document.querySelector(`#walk-${w} .diagram`);
    const svg = pane?.querySelector("svg") ?? null;
    if (pane === null || svg === null) return [...problems, `thread ${w} has no diagram`];
    const p = pane.getBoundingClientRect();
    const s = svg.getBoundingClientRect();
    if (s.width === 0) problems.push(`thread ${w}'s diagram is not shown`);
    if (s.left < p.left - 0.5 || s.right > p.right + 0.5) problems.push(`the diagram spans ${Math.round(s.left)}..${Math.round(s.right)} in a pane of ${Math.round(p.left)}..${Math.round(p.right)}`);
    for (const t of Array.from(svg.querySelectorAll("text"))) {
      const r = t.getBoundingClientRect();
      if (r.left < s.left - 0.5 || r.right > s.right + 0.5 || r.top < s.top - 0.5 || r.bottom > s.bottom + 0.5) problems.push(`the diagram's text "${t.textContent ?? ""}" runs outside it`);
    }
    return problems;
  }, w);
}

/** The words a reader sees on the page: displayed text, not titles, descriptions, styles, scripts or closed options. */
function shownText(page: Page): Promise<string> {
  return page.evaluate((show) => {
    const parts: string[] = [];
    const walker = document.createTreeWalker(document.body, show);
    for (let n = walker.nextNode(); n !== null; n = walker.nextNode()) {
      const el = n.parentElement;
      if (el === null || el.closest("title, desc, style, script, select") !== null || el.getClientRects().length === 0) continue;
      parts.push(n.textContent ?? "");
    }
    for (const select of Array.from(document.querySelectorAll("select"))) parts.push(select.selectedOptions?.[0]?.text ?? "");
    return parts.join(" ").replace(/\s+/g, " ");
  }, SHOW_TEXT);
}
let browser: Browser | undefined;

/** Writes the page for `argv` with `stackwalk view` and returns its path. */
async function view(name: string, ...argv: string[]): Promise<string> {
  const out = join(dir, name);
  let err = "";
  const code = await run(["view", ...argv, "-o", out], { out: () => {}, err: (t) => (err += t) });
  expect(code, err).toBe(0);
  return out;
}

/** Opens a page and collects console errors, page errors and requests other than the page itself. */
async function open(path: string): Promise<{ page: Page; problems: string[] }> {
  const page = await browser!.newPage({ viewport: { width: 1600, height: 1000 } });
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  const url = pathToFileURL(path).href;
  page.on("request", (r) => {
    if (r.url() !== url) problems.push(`request: ${r.url()}`);
  });
  await page.goto(url, { waitUntil: "load" });
  return { page, problems };
}

const current = (page: Page, section: string): Promise<string[]> =>
  page.locator(`${section} li.frame.current`).evaluateAll((els) => els.map((el) => el.getAttribute("data-frame") ?? ""));
const currentBands = (page: Page, section: string): Promise<string[]> =>
  page.locator(`${section} svg .band.current`).evaluateAll((els) => els.map((el) => el.getAttribute("data-frame") ?? ""));

describe("stackwalk view in headless Chromium", () => {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: the browser test needs Debian's chromium package; install it with \`npm run system-deps\``);
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 120_000 });
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("loads without errors, shows every frame, steps with Next, Previous and the arrow keys, and takes a screenshot", async () => {
    const file = await view("fpo-leaf.html", VECTOR);
    const { page, problems } = await open(file);
    const frames = page.locator("#walk-0 li.frame");
    expect(await frames.count()).toBe(3);
    for (let k = 0; k < 3; k++) {
      await expect.poll(() => page.locator(`#w0-frame-${k}`).isVisible()).toBe(true);
      expect(await page.locator(`#walk-0 svg .band[data-frame="${k}"]`).count()).toBe(1);
    }
    expect(await page.locator("#walk-0 svg").count()).toBe(1);
    expect(await page.locator("#walk-0 .position").textContent()).toBe("frame 0 (1 of 3)");
    expect(await current(page, "#walk-0")).toEqual(["0"]);
    expect(await currentBands(page, "#walk-0")).toEqual(["0"]);
    expect(await page.locator("#walk-0 button.prev").isDisabled()).toBe(true);
    // Only the current frame's explanation is open.
    expect(await page.locator("#w0-frame-0 .detail").isVisible()).toBe(true);
    expect(await page.locator("#w0-frame-1 .detail").isVisible()).toBe(false);

    await page.locator("#walk-0 button.next").click();
    expect(await current(page, "#walk-0")).toEqual(["1"]);
    expect(await currentBands(page, "#walk-0")).toEqual(["1"]);
    expect(await page.locator("#w0-frame-1 .detail").isVisible()).toBe(true);
    expect(await page.locator("#w0-frame-0 .detail").isVisible()).toBe(false);
    // Frame 1 was found by FPO_DATA reading the return address: that word is highlighted.
    const reads = await page.locator('#walk-0 svg .row.read').evaluateAll((els) => els.map((el) => el.getAttribute("data-address")));
    expect(reads).toContain("0x0012ffc4");
    expect(await page.locator("#walk-0 .position").textContent()).toBe("frame 1 (2 of 3)");

    await page.keyboard.press("ArrowRight");
    expect(await current(page, "#walk-0")).toEqual(["2"]);
    expect(await page.locator("#walk-0 button.next").isDisabled()).toBe(true);
    await page.keyboard.press("ArrowRight");
    expect(await current(page, "#walk-0")).toEqual(["2"]);
    await page.keyboard.press("ArrowLeft");
    expect(await current(page, "#walk-0")).toEqual(["1"]);
    await page.locator("#walk-0 button.prev").click();
    expect(await current(page, "#walk-0")).toEqual(["0"]);
    await page.locator("#w0-frame-2").click();
    expect(await current(page, "#walk-0")).toEqual(["2"]);

    const shot = join(dir, "fpo-leaf.png");
    await page.screenshot({ path: shot, fullPage: true });
    expect(statSync(shot).size).toBeGreaterThan(1000);
    expect([...readFileSync(shot).subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("IA-64: both stacks drawn, every frame present", async () => {
    const { page, problems } = await open(await view("frame-63.html", IA64));
    expect(await page.locator("#walk-0 li.frame").count()).toBe(4);
    expect(await page.locator("#walk-0 svg .nat").count()).toBeGreaterThan(0);
    await page.keyboard.press("ArrowRight");
    expect(await current(page, "#walk-0")).toEqual(["1"]);
    expect(await currentBands(page, "#walk-0")).toEqual(["1", "1"]);
    await page.screenshot({ path: join(dir, "frame-63.png") });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a minidump with two threads: the picker switches threads, and stepping follows the shown one", async () => {
    const { page, problems } = await open(await view("minidump2.html", DUMP, "--symbols", SYMBOLS));
    expect(await page.locator("section.walk").count()).toBe(2);
    expect(await page.locator("#walk-0").isVisible()).toBe(true);
    expect(await page.locator("#walk-1").isVisible()).toBe(false);
    expect(await page.locator("#walk-0 li.frame").count()).toBe(4);
    expect(await page.locator("#w0-frame-0 .loc").textContent()).toContain("CrashFunction");
    await page.locator("#thread-picker").selectOption("1");
    expect(await page.locator("#walk-0").isVisible()).toBe(false);
    expect(await page.locator("#walk-1").isVisible()).toBe(true);
    const count = await page.locator("#walk-1 li.frame").count();
    expect(count).toBeGreaterThan(0);
    await page.locator("body").focus();
    await page.locator("#walk-1 button.next").click();
    expect(await current(page, "#walk-1")).toEqual([count > 1 ? "1" : "0"]);
    expect(await current(page, "#walk-0")).toEqual(["0"]);
    const shot = join(dir, "minidump2.png");
    await page.screenshot({ path: shot });
    expect(statSync(shot).size).toBeGreaterThan(1000);
    expect(problems).toEqual([]);
    await page.close();
  });

  describe.each([
    ["an x86 FPO vector", "fpo-leaf-etw", [resolve("vectors/x86/etw/fpo-leaf-etw.json")]],
    ["an x64 vector", "push-nonvol", [resolve("vectors/x64/synthetic/push-nonvol-capture.json")]],
    ["an IA-64 vector", "frame-63", [IA64]],
    ["minidump2 with symbols", "minidump2", [DUMP, "--symbols", SYMBOLS]],
  ])("%s fits the window at every width", (_what, name, argv) => {
    it.each([800, 1280, 1920])("%i px: nothing cut off, no sideways scroll, full names in titles, the stop said once", async (width) => {
      const file = await view(`${name}-${width}.html`, ...argv);
      const page = await browser!.newPage({ viewport: { width, height: 900 } });
      await page.goto(pathToFileURL(file).href, { waitUntil: "load" });
      const threads = await page.locator("section.walk").count();
      for (let w = 0; w < threads; w++) {
        if (w > 0) await page.locator("#thread-picker").selectOption(String(w));
        expect(await page.locator(`#walk-${w}`).isVisible()).toBe(true);
        expect(await layoutProblems(page, w), `${width} px`).toEqual([]);
        // Stepping opens each frame's explanation in turn: each still fits.
        const frames = await page.locator(`#walk-${w} li.frame`).count();
        for (let k = 1; k < frames; k++) {
          await page.locator(`#walk-${w} button.next`).click();
          expect(await layoutProblems(page, w), `frame ${k}`).toEqual([]);
        }
        // The full name of every band's frame is in the band's title, shown on hover.
        const names = await page.locator(`#walk-${w} li.frame .loc`).allTextContents();
        const bands = await page.locator(`#walk-${w} svg .band`).evaluateAll((els) => els.map((el) => [Number(el.getAttribute("data-frame")), el.querySelector("title")?.textContent ?? ""] as const));
        expect(bands.length).toBeGreaterThan(0);
        for (const [k, title] of bands) if (k >= 0) expect(title).toContain(`frame ${k}: ${names[k]}`);
        // The stop reason is said once, in plain words.
        const stop = (await page.locator(`#walk-${w} p.stop`).textContent())!.replace(/^(Stop|Stopped early):\s*/, "");
        expect(stop.length).toBeGreaterThan(20);
        const shown = await shownText(page);
        expect(shown.split(stop).length - 1, stop).toBe(1);
        expect(shown).not.toMatch(/↓|\boff\b/);
        // Stepping scrolled the page, and the controls stick to the window's top: a full-page
        // screenshot is taken from the top, as the page is first seen.
        await page.evaluate("window.scrollTo(0, 0)");
        const shot = join(shots, `${name}-${width}${threads > 1 ? `-thread-${w}` : ""}.png`);
        await page.screenshot({ path: shot, fullPage: true });
        const [shotWidth, shotHeight] = pngSize(shot);
        expect(shotWidth).toBe(width);
        expect(shotHeight).toBeGreaterThanOrEqual(900);
      }
      await page.close();
    });
  });

  it("minidump2: the source lines of the .sym file's line records are in the frame list", async () => {
    const { page } = await open(await view("minidump2-source.html", DUMP, "--symbols", SYMBOLS));
    expect(await page.locator("#w0-frame-0 .src").textContent()).toBe("c:\\test_app.cc:58");
    expect(await page.locator("#w0-frame-1 .src").textContent()).toBe("c:\\test_app.cc:65");
    expect(await page.locator("#w0-frame-3 .src").count()).toBe(0);
    await page.close();
  });
});
