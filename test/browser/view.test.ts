/**
 * The HTML view in a real browser: Debian's headless Chromium, driven by playwright-core, opens
 * pages written by `stackwalk view` from file:// URLs and steps through them.
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
const DUMP = resolve("../shared/fixtures/breakpad/minidump2.dmp");
const SYMBOLS = resolve("../shared/fixtures/breakpad/symbols");

const dir = mkdtempSync(join(tmpdir(), "stackwalk-view-"));
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
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: FLAGS, timeout: 30_000 });
  }, 40_000);

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
      expect(await page.locator(`#walk-0 svg .legend-frame[data-frame="${k}"]`).count()).toBe(1);
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
  }, 60_000);

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
  }, 60_000);

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
  }, 60_000);
});
