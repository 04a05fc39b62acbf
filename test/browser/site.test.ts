/**
 * The playground in a real browser: the site is built (site.config.ts, what `npm run site` runs)
 * into a temporary folder and opened from file:// in Debian's headless Chromium, driven by
 * playwright-core, at 800, 1280 and 1920 px wide. Files are dropped on it (a drop event carrying
 * the files) or picked; what it shows is held to outside truths: Breakpad's own report of
 * minidump2.dmp in the Breakpad tab, byte for byte, and the command line's output of the same
 * files in the text tab. The page may request nothing but its own files and the worker it makes
 * from one (every other request is intercepted, aborted and reported); it may not scroll
 * sideways; at 1280 px its diagram's smallest text is 12 px or more; axe-core finds no serious or
 * critical accessibility violation. Screenshots go to a temporary folder, or to
 * $STACKWALK_SCREENSHOTS when it is set, to be looked at.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { basename, dirname, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildSite, type SiteFileSize } from "../../site.config.js";
import { fixtureDir, fixtureFile } from "../support/fixtures.js";
import { run } from "../../src/cli/main.js";

// The page has no disassembler: the command line it is compared with has none either.
vi.mock("../../src/node/disassembler.js", () => ({ loadInstructionDecoder: async () => ({ missing: "no disassembler in this test" }) }));

const CHROMIUM = "/usr/bin/chromium";
const FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"];
const BREAKPAD = resolve("test/fixtures/breakpad");
const BREAKPAD_SYMS = [
  join(BREAKPAD, "symbols/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym"),
  join(BREAKPAD, "symbols/kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym"),
];
const AXE = readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");

/** The few DOM types the code run in the page uses: the test program is compiled without the DOM library. */
interface DomElement {
  textContent: string | null;
  getBoundingClientRect(): { width: number; height: number };
  querySelectorAll(selector: string): ArrayLike<DomElement>;
  viewBox: { baseVal: { width: number } };
}
declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelectorAll(selector: string): ArrayLike<DomElement>;
};
declare const getComputedStyle: (el: DomElement) => { fontSize: string };
declare const DataTransfer: new () => { items: { add(file: unknown): void } };
declare const File: new (parts: unknown[], name: string) => unknown;
declare const atob: (text: string) => string;
declare const axe: { run(context: unknown, options: unknown): Promise<{ violations: { id: string; impact: string; help: string; nodes: { target: string[] }[] }[] }> };

const dir = mkdtempSync(join(tmpdir(), "stackwalk-site-"));
const shots = process.env["STACKWALK_SCREENSHOTS"] ?? dir;
const siteDir = join(dir, "site");
let sizes: SiteFileSize[] = [];
let browser: Browser | undefined;

/** Every file under a folder (a symbol store), recursively. */
function filesUnder(folder: string): string[] {
  return readdirSync(folder).flatMap((name) => {
    const p = join(folder, name);
    return statSync(p).isDirectory() ? filesUnder(p) : [p];
  });
}

/** Opens the built site at `width`; what it requests besides its own files is collected, and any request that would leave the machine is aborted. */
async function openSite(width: number): Promise<{ page: Page; problems: string[] }> {
  const page = await browser!.newPage({ viewport: { width, height: 900 } });
  const problems: string[] = [];
  const own = new Set(sizes.map((f) => pathToFileURL(join(siteDir, f.name)).href));
  await page.route(/^(?!file:|blob:)/, async (route) => {
    problems.push(`intercepted: ${route.request().url()}`);
    await route.abort();
  });
  page.on("request", (r) => {
    const url = r.url();
    if (!own.has(url) && !url.startsWith("blob:null/")) problems.push(`request: ${url}`);
  });
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console error: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  await page.goto(pathToFileURL(join(siteDir, "index.html")).href, { waitUntil: "load" });
  return { page, problems };
}

/**
 * Drops files on the drop zone, as a drag from the desktop does: one drop event whose
 * DataTransfer holds them (the first with `padding` zero bytes after its own, made in the page).
 */
async function dropFiles(page: Page, paths: readonly string[], padding = 0): Promise<void> {
  const files = paths.map((p) => ({ name: basename(p), base64: readFileSync(p).toString("base64") }));
  const transfer = await page.evaluateHandle(
    ({ list, padding }) => {
      const dt = new DataTransfer();
      list.forEach((f, i) => {
        const text = atob(f.base64);
        const bytes = new Uint8Array(text.length);
        for (let k = 0; k < text.length; k++) bytes[k] = text.charCodeAt(k);
        dt.items.add(new File(i === 0 && padding > 0 ? [bytes, new Uint8Array(padding)] : [bytes], f.name));
      });
      return dt;
    },
    { list: files, padding },
  );
  await page.dispatchEvent("#drop", "drop", { dataTransfer: transfer });
}

/** Waits until the walk of the current choice is shown: the status names the frames walked. */
async function walked(page: Page): Promise<void> {
  await expect.poll(() => page.locator("#phase").textContent(), { timeout: 60_000 }).toMatch(/ walked; /);
  expect(await page.locator("#error").isHidden(), (await page.locator("#error").textContent()) ?? "").toBe(true);
}

/** Chooses the crashed thread, and waits for its walk. */
async function chooseCrashed(page: Page): Promise<void> {
  const value = await page.locator("#thread option", { hasText: "(crashed)" }).getAttribute("value");
  await page.selectOption("#thread", value!);
  await expect.poll(() => page.locator("#panel-view section.walk").count()).toBe(1);
  await walked(page);
}

/** Opens an output tab and returns its text once written. */
async function tab(page: Page, name: string): Promise<string> {
  await page.locator(`#tab-${name}`).click();
  await expect.poll(() => page.locator("#output-note").textContent(), { timeout: 60_000 }).toMatch(new RegExp(`--format ${name}`));
  return (await page.locator("#output").textContent()) ?? "";
}

const sideways = (page: Page): Promise<number> => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);

/** The size of the smallest text of the shown diagram, as drawn: its font size times the diagram's scale. */
const smallestDiagramText = (page: Page): Promise<number> =>
  page.evaluate(() => {
    let smallest = Number.POSITIVE_INFINITY;
    for (const svg of Array.from(document.querySelectorAll("#panel-view section.walk:not([hidden]) svg"))) {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      for (const t of Array.from(svg.querySelectorAll("text"))) smallest = Math.min(smallest, Number.parseFloat(getComputedStyle(t).fontSize) * scale);
    }
    return smallest;
  });

/**
 * The command line's text output of `file`, named as the page names it (its base name), without a
 * disassembler, as the page has none (the command line without its optional packages).
 */
async function cliText(file: string, ...argv: string[]): Promise<string> {
  let out = "";
  let err = "";
  const code = await run(["walk", file, ...argv], { out: (t) => (out += t), err: (t) => (err += t) });
  expect(code, err).toBe(0);
  return out.replaceAll(`${dirname(file)}/`, "");
}

describe("the playground in headless Chromium", () => {
  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) {
      throw new Error(`${CHROMIUM} is missing: the browser test needs Debian's chromium package; install it with \`npm run system-deps\``);
    }
    sizes = await buildSite(siteDir);
    mkdirSync(shots, { recursive: true });
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 120_000 });
  });

  afterAll(async () => {
    await browser?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("is four plain files, under 200 KB gzipped: the page, its script, the worker's code and the examples", () => {
    expect(sizes.map((f) => f.name)).toEqual(["index.html", "site.js", "walker.js", "examples.js"]);
    expect(sizes.reduce((n, f) => n + f.gzipped, 0)).toBeLessThan(200_000);
    const page = readFileSync(join(siteDir, "index.html"), "utf8");
    expect(page).toContain(`connect-src 'none'`);
    expect(page).not.toMatch(/https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  });

  it.each([800, 1280, 1920])("%i px: minidump2.dmp and its .sym files dropped, the crashed thread chosen: Breakpad's report byte for byte, the diagram read, no sideways scroll, no request", async (width) => {
    const { page, problems } = await openSite(width);
    await dropFiles(page, [join(BREAKPAD, "minidump2.dmp"), ...BREAKPAD_SYMS]);
    await walked(page);
    expect(await page.locator("#panel-view section.walk").count()).toBe(2);
    expect(await page.locator("#notes li").allTextContents()).toEqual(["test_app.exe: unwind records from test_app.sym", "kernel32.dll: unwind records from kernel32.sym"]);
    await chooseCrashed(page);
    expect(await page.locator("#w0-frame-0 .loc").textContent()).toContain("CrashFunction");
    // The view's keys step through the frames.
    await page.locator("body").press("ArrowRight");
    expect(await page.locator("#panel-view li.frame.current").getAttribute("data-frame")).toBe("1");
    expect(await sideways(page)).toBe(0);
    if (width === 1280) expect(await smallestDiagramText(page)).toBeGreaterThanOrEqual(12);
    await page.evaluate("window.scrollTo(0, 0)");
    await page.screenshot({ path: join(shots, `site-minidump2-${width}.png`), fullPage: true });

    const report = await tab(page, "breakpad");
    expect(report).toBe(readFileSync(join(BREAKPAD, "minidump2.stackwalk.out"), "utf8"));
    expect(await sideways(page)).toBe(0);
    await page.screenshot({ path: join(shots, `site-minidump2-breakpad-${width}.png`) });
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a 64 MiB dump is read a slice at a time in the worker: opening it, walking every thread and writing Breakpad's report read one 64 KiB block", async () => {
    const { page, problems } = await openSite(1280);
    await dropFiles(page, [join(BREAKPAD, "minidump2.dmp")], 64 << 20);
    await walked(page);
    expect(await page.locator("#phase").textContent()).toMatch(/walked; 64\.0 KiB read of the files \(the input is 64\.0 MiB\)/);
    // The report is written from the same blocks: the status, said again, counts no more.
    expect(await tab(page, "breakpad")).toMatch(/^Operating system: Windows NT\n/);
    expect(await page.locator("#phase").textContent()).toMatch(/walked; 64\.0 KiB read/);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("a 1 GiB dump, picked from disk: the page reads 64 KiB of it, and its memory does not grow with the file", async () => {
    // minidump2.dmp and 1 GiB of zeros after it, a sparse file: no stream points into the zeros.
    const dir = mkdtempSync(join(tmpdir(), "site-1g-"));
    try {
      const big = join(dir, "minidump2-1g.dmp");
      copyFileSync(join(BREAKPAD, "minidump2.dmp"), big);
      truncateSync(big, statSync(big).size + (1 << 30));
      const { page, problems } = await openSite(1280);
      const cdp = await page.context().newCDPSession(page);
      await cdp.send("Performance.enable");
      const heap = async (): Promise<number> => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "JSHeapTotalSize")!.value;
      const before = await heap();
      await page.setInputFiles("#pick", [big]);
      await walked(page);
      expect(await page.locator("#phase").textContent()).toMatch(/walked; 64\.0 KiB read of the files \(the input is 1024\.0 MiB\)/);
      expect(await tab(page, "breakpad")).toMatch(/^Operating system: Windows NT\n/);
      // The page's heap grows by what the walk and its report hold, far below the file's size.
      expect(await heap() - before).toBeLessThan(64 << 20);
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it.each([
    ["an x64 dump", "real-dumps/symbolicator-linux/linux.dmp", "real-dumps/symbolicator-linux/symbols"],
    ["an ARM64 dump", "real-dumps/moz-android-aarch64/android-aarch64.dmp", "real-dumps/moz-android-aarch64/symbols"],
  ])("%s with its .sym files, picked: the text tab is the command line's output", async (_what, dump, symbols) => {
    const file = fixtureFile(dump);
    const store = fixtureDir(symbols);
    const { page, problems } = await openSite(1280);
    await page.setInputFiles("#pick", [file, ...filesUnder(store)]);
    await walked(page);
    await chooseCrashed(page);
    // A 64-bit diagram is the widest: at 1280 px it is still drawn at its own size.
    expect(await smallestDiagramText(page)).toBeGreaterThanOrEqual(12);
    expect(await tab(page, "text")).toBe(await cliText(file, "--symbols", store, "--thread", "crashed"));
    expect(await sideways(page)).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  });

  it("an IA-64 vector: the text tab is the command line's output; its examples open with one click and compare side by side as stackwalk compare does", async () => {
    const { page, problems } = await openSite(1280);
    // A file of no kind it reads is said in one line naming it.
    await page.setInputFiles("#pick", [resolve("README.md")]);
    await expect.poll(() => page.locator("#error").textContent()).toMatch(/^README\.md: .*not a minidump \(MDMP\)/);
    const vector = resolve("vectors/ia64/synthetic/frame-63.json");
    await page.setInputFiles("#pick", [vector]);
    await walked(page);
    expect(await tab(page, "text")).toBe(await cliText(vector));
    expect(await page.locator("#tab-breakpad").isHidden()).toBe(true);

    await page.locator(".examples button", { hasText: "all side by side" }).click();
    await expect.poll(() => page.locator("#compare").textContent(), { timeout: 60_000 }).toBe(readFileSync("test/render/compare/config-parser.txt", "utf8"));
    await walked(page);
    await page.locator(".examples button", { hasText: "IA-64" }).click();
    await expect.poll(() => page.locator("#loaded").textContent()).toMatch(/^config-parser-ia64\.json: Itanium/);
    await walked(page);
    expect(await page.locator("#panel-view .page-head p").first().textContent()).toContain("walker ia64");
    expect(problems).toEqual([]);
    await page.close();
  });

  it("axe-core finds no serious or critical accessibility violation, before and after a walk, in the walk and an output", async () => {
    const { page, problems } = await openSite(1280);
    await page.evaluate(AXE);
    const check = async (when: string): Promise<void> => {
      const result = await page.evaluate(() => axe.run(document, { resultTypes: ["violations"] }));
      const bad = result.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => `${when}: ${v.id} (${v.impact}): ${v.help}: ${v.nodes.map((n) => n.target.join(" ")).slice(0, 3).join(", ")}`);
      expect(bad).toEqual([]);
    };
    await check("empty");
    await dropFiles(page, [join(BREAKPAD, "minidump2.dmp"), ...BREAKPAD_SYMS]);
    await walked(page);
    await check("walk");
    await tab(page, "text");
    await check("text");
    expect(problems).toEqual([]);
    await page.close();
  });
});
