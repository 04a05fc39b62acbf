/**
 * The package as a user gets it: `npm pack` (which builds it), then the tarball installed into a
 * new project with npm, offline, from an empty cache and without the optional packages; there,
 * the README's and docs' examples run with plain Node, as a strict TypeScript project (NodeNext, emitting
 * JS), through `npx stackwalk`, and bundled with esbuild in headless Chromium. Breakpad's own
 * report of minidump2.dmp is the expected output of each.
 */
import { isAscii } from "node:buffer";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { docFigures } from "../support/docs.js";

const ROOT = resolve(".");
const FIXTURES = resolve("test/fixtures/breakpad");
const SYMBOLS = join(FIXTURES, "symbols");
const TEST_APP_SYM = join(SYMBOLS, "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym");
const KERNEL32_SYM = join(SYMBOLS, "kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym");
const DUMP = join(FIXTURES, "minidump2.dmp");
const EXPECTED = readFileSync(join(FIXTURES, "minidump2.stackwalk.out"), "utf8");
const CHROMIUM = "/usr/bin/chromium";
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

const work = mkdtempSync(join(tmpdir(), "stackwalk-package-"));
const project = join(work, "consumer");
/** npm's environment: its own empty cache, never the network. */
const npmEnv = { ...process.env, npm_config_cache: join(work, "npm-cache"), npm_config_offline: "true", npm_config_audit: "false", npm_config_fund: "false", npm_config_update_notifier: "false" };

function run(command: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = process.env): SpawnSyncReturns<string> {
  const r = spawnSync(command, args, { cwd, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (r.error !== undefined) throw r.error;
  return r;
}

function ok(r: SpawnSyncReturns<string>, what: string): string {
  if (r.status !== 0) throw new Error(`${what} exited with ${r.status}:\n${r.stderr}${r.stdout}`);
  return r.stdout;
}

/** The example of the README or docs/library.md whose first line is `// <name>...`. */
function example(name: string): string {
  const text = ["README.md", "docs/library.md"].map((f) => readFileSync(join(ROOT, f), "utf8")).join("\n");
  const blocks = [...text.matchAll(/```(?:js|ts)\n(\/\/ ([\w.-]+)[^\n]*\n[\s\S]*?)```/g)];
  const block = blocks.find((b) => b[2] === name);
  if (block === undefined) throw new Error(`neither README.md nor docs/library.md has the example ${name}`);
  return block[1]!;
}

let packed: { filename: string; entryCount: number; unpackedSize: number; size: number; files: { path: string }[] };
let installWarnings = "";
/** The entries with declarations, from package.json: ".", "./formats", … */
const TYPED_ENTRIES = Object.entries(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).exports as Record<string, string | { types?: string }>)
  .filter(([, target]) => typeof target !== "string" && target.types !== undefined)
  .map(([subpath]) => subpath);

beforeAll(() => {
  const json = ok(run("npm", ["pack", "--json", "--pack-destination", work], ROOT, { ...process.env, npm_config_update_notifier: "false" }), "npm pack");
  // npm prints the prepare script's output first, then the JSON array.
  packed = JSON.parse(json.slice(json.search(/^\[/m)))[0];
  mkdirSync(project);
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }, null, 2));
  const install = run("npm", ["install", "--omit=optional", join(work, packed.filename)], project, npmEnv);
  ok(install, "npm install of the tarball");
  installWarnings = install.stderr;
  for (const file of [DUMP, TEST_APP_SYM, KERNEL32_SYM]) copyFileSync(file, join(project, file.split("/").at(-1)!));
  for (const name of ["walk.mjs", "walk-store.mjs", "load.mjs", "main.ts", "truth.ts", "rules.ts", "page.js"]) writeFileSync(join(project, name), example(name));
  for (const vector of ["x86/ebp-chain-4.json", "x86/etw/fpo-leaf-etw.json"]) copyFileSync(join(ROOT, "vectors", vector), join(project, vector.split("/").at(-1)!));
}, 900_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe("npm pack", () => {
  it("holds the compiled package, its README and LICENSE: no sources, tests or vectors", () => {
    const paths = packed.files.map((f) => f.path);
    console.log(`npm pack: ${packed.filename}, ${packed.entryCount} files, ${(packed.unpackedSize / 1e6).toFixed(2)} MB unpacked, ${(packed.size / 1e6).toFixed(2)} MB packed`);
    expect(paths.filter((p) => !p.startsWith("dist/")).sort()).toEqual(["LICENSE", "README.md", "package.json"]);
    expect(paths.filter((p) => /\.ts$/.test(p) && !p.endsWith(".d.ts"))).toEqual([]);
    expect(paths.filter((p) => /vectors|\btest\b|fixtures/.test(p))).toEqual([]);
    expect(paths.filter((p) => p.endsWith(".map"))).toEqual([]);
    expect(packed.unpackedSize).toBeLessThanOrEqual(4_000_000);
    // docs/performance.md quotes the figures, to within 10%.
    const [files, unpacked, size] = docFigures("docs/performance.md", /The package \(`npm pack`\): (\d+) files, ([\d.]+) MB unpacked .*?, ([\d.]+) MB packed/).map(Number);
    const near = (quoted: number, actual: number): boolean => Math.abs(quoted - actual) <= 0.1 * actual;
    expect([near(files!, packed.entryCount), near(unpacked!, packed.unpackedSize / 1e6), near(size!, packed.size / 1e6)], "update docs/performance.md").toEqual([true, true, true]);
    for (const entry of ["dist/src/index.js", "dist/src/index.d.ts", "dist/src/node/index.js", "dist/src/testing/index.js", "dist/src/testing/index.d.ts", "dist/src/render/walk.schema.json", "dist/emulator/index.js", "dist/bin/stackwalk.cjs", "dist/bin/walk-worker.cjs"]) expect(paths).toContain(entry);
  });

  it("installs without a word about this package: no install script (the build runs in prepack, before packing)", () => {
    expect(installWarnings).not.toContain("stackwalk-emu");
    const scripts = JSON.parse(readFileSync(join(project, "node_modules/stackwalk-emu/package.json"), "utf8")).scripts as Record<string, string>;
    for (const hook of ["preinstall", "install", "postinstall", "prepare", "preprepare", "postprepare"]) expect(scripts[hook], hook).toBeUndefined();
  });

  it("installs with no other package: the optional emulator packages are left out", () => {
    expect(existsSync(join(project, "node_modules/stackwalk-emu/package.json"))).toBe(true);
    for (const name of ["koffi", "@alexaltea/capstone-js", "@alexaltea/keystone-js", "tsx", "esbuild"]) expect(existsSync(join(project, "node_modules", name)), name).toBe(false);
  });

  it("the bin's file for walk and the other reading commands, and its worker, hold nothing of the emulator; the worker is no second copy of the walker", () => {
    const bin = join(project, "node_modules/stackwalk-emu/dist/bin");
    for (const file of ["commands.cjs", "walk-worker.cjs"]) {
      // Capstone is named only as the optional disassembler of the crash analysis, loaded when installed.
      const code = readFileSync(join(bin, file), "utf8").replaceAll('"@alexaltea/capstone-js"', '""');
      for (const word of ["koffi", "capstone", "keystone", "uc_open", "emulator-commands"]) expect(code, `${file}: ${word}`).not.toContain(word);
    }
    expect(readFileSync(join(bin, "emulator-commands.cjs"), "utf8")).toContain("uc_open");
    // The worker is the loader of the command files (bundle-loader.ts) and one call: commands.cjs's worker loop.
    expect(readFileSync(join(bin, "walk-worker.cjs"), "utf8")).toContain('"commands.cjs").serveBatch()');
    expect(readFileSync(join(bin, "walk-worker.cjs")).length).toBeLessThan(2048);
    // ASCII, which the bin's loader reads as Latin-1 (sooner than UTF-8).
    for (const file of ["stackwalk.cjs", "commands.cjs", "emulator-commands.cjs", "walk-worker.cjs"]) expect(isAscii(readFileSync(join(bin, file))), file).toBe(true);
  });
});

describe("the installed package", () => {
  it("plain Node imports it and walks minidump2.dmp with its .sym files from bytes: Breakpad's report, byte for byte", () => {
    expect(ok(run(process.execPath, ["walk.mjs", "minidump2.dmp", "test_app.sym", "kernel32.sym"], project), "walk.mjs")).toBe(EXPECTED);
  });

  it("stackwalk-emu/node walks it from the file with the symbol store directory: the same report", () => {
    const r = run(process.execPath, ["walk-store.mjs", "minidump2.dmp", SYMBOLS], project);
    expect(ok(r, "walk-store.mjs")).toBe(EXPECTED);
    expect(r.stderr).toContain("unwind records from");
  });

  it("stackwalk-emu/node's loadSnapshot loads it by path with the symbol path, and the output table's breakpad entry writes it: the same report", () => {
    const r = run(process.execPath, ["load.mjs", "minidump2.dmp", SYMBOLS], project);
    expect(ok(r, "load.mjs")).toBe(EXPECTED);
    expect(r.stderr).toContain("symbols: test_app.exe:");
  });

  it("a strict TypeScript project (module NodeNext, emitting JS) compiles the README's and docs' TypeScript examples against its types and runs them", () => {
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, exactOptionalPropertyTypes: true, noUncheckedIndexedAccess: true, outDir: "out", types: ["node"], typeRoots: [join(ROOT, "node_modules/@types")] },
        files: ["main.ts", "truth.ts", "rules.ts"],
      }),
    );
    ok(run(process.execPath, [TSC, "-p", "."], project), "tsc");
    expect(ok(run(process.execPath, ["out/main.js", "minidump2.dmp", SYMBOLS], project), "out/main.js")).toBe(EXPECTED);
    // docs/library.md's examples check what they claim with node:assert.
    ok(run(process.execPath, ["out/truth.js", "fpo-leaf-etw.json"], project), "out/truth.js");
    ok(run(process.execPath, ["out/rules.js", "ebp-chain-4.json"], project), "out/rules.js");
  });

  it("the declarations of every entry but node and emulator need no Node types: they type-check with the DOM library alone", () => {
    const browser = TYPED_ENTRIES.filter((e) => e !== "./node" && e !== "./emulator");
    expect(browser).toEqual([".", "./formats", "./dbghelp", "./arch", "./etw", "./render", "./testing"]);
    writeFileSync(join(project, "browser-types.ts"), browser.map((e, i) => `import * as e${i} from "stackwalk-emu${e.slice(1)}";\nexport const entry${i}: typeof e${i} = e${i};\n`).join(""));
    writeFileSync(
      join(project, "tsconfig.browser.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, noEmit: true, skipLibCheck: false, lib: ["ES2022", "DOM"], types: [] }, files: ["browser-types.ts"] }),
    );
    const r = run(process.execPath, [TSC, "-p", "tsconfig.browser.json"], project);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("a project with moduleResolution node10 (which ignores exports) finds every entry's types through typesVersions", () => {
    writeFileSync(join(project, "node10.ts"), TYPED_ENTRIES.map((e, i) => `import * as e${i} from "stackwalk-emu${e.slice(1)}";\nexport const entry${i}: typeof e${i} = e${i};\n`).join(""));
    writeFileSync(
      join(project, "tsconfig.node10.json"),
      JSON.stringify({ compilerOptions: { target: "ES2022", module: "CommonJS", moduleResolution: "node10", strict: true, noEmit: true, skipLibCheck: false, types: ["node"], typeRoots: [join(ROOT, "node_modules/@types")] }, files: ["node10.ts"] }),
    );
    const r = run(process.execPath, [TSC, "-p", "tsconfig.node10.json"], project);
    expect(r.stdout + r.stderr).toBe("");
    expect(r.status).toBe(0);
  });

  it("npx stackwalk walks the dump with --symbols, knows its version, and says what emulate needs", () => {
    const npx = (...args: string[]): SpawnSyncReturns<string> => run("npx", ["--no", "--", "stackwalk", ...args], project, npmEnv);
    expect(ok(npx("walk", "minidump2.dmp", "--symbols", SYMBOLS, "--format", "breakpad"), "npx stackwalk walk")).toBe(EXPECTED);
    expect(ok(npx("--version"), "npx stackwalk --version")).toBe(`stackwalk-emu ${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
    writeFileSync(join(project, "loop.asm"), "main:\nret\n");
    for (const command of [["emulate", "loop.asm"], ["compare", "chain.json"]]) {
      const r = npx(...command);
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(`stackwalk ${command[0]}: needs the emulator's packages, which are not installed: npm install koffi @alexaltea/capstone-js @alexaltea/keystone-js\n`);
    }
    const bad = npx("walk", "minidump2.dmp", "--max-frames", "-1");
    expect([bad.status, bad.stderr]).toEqual([2, 'stackwalk walk: --max-frames takes a whole number ≥ 1, not "-1"\n']);
  });
});

describe("the installed package's other entries and commands", () => {
  const npx = (...args: string[]): SpawnSyncReturns<string> => run("npx", ["--no", "--", "stackwalk", ...args], project, npmEnv);

  it("stackwalk-emu/testing walks the dump from bytes and its matcher passes and fails; the schema is stackwalk-emu/walk.schema.json", () => {
    const script = [
      'import { readFileSync } from "node:fs";',
      'import { createRequire } from "node:module";',
      'import { stackMatchers, walkDump } from "stackwalk-emu/testing";',
      'const stacks = await walkDump(readFileSync("minidump2.dmp"), { symbols: [readFileSync("test_app.sym"), readFileSync("kernel32.sym")] });',
      'const ok = stackMatchers.toHaveStack.call({}, stacks, ["CrashFunction", "main", "__tmainCRTStartup", "BaseProcessStart"], { exact: true });',
      'const bad = stackMatchers.toHaveStack.call({}, stacks, ["main"]);',
      'const schema = createRequire(import.meta.url)("stackwalk-emu/walk.schema.json");',
      'console.log(JSON.stringify([ok.pass, bad.pass, bad.message().split("\\n")[0], Object.keys(schema.$defs).includes("frame")]));',
    ].join("\n");
    writeFileSync(join(project, "testing.mjs"), script);
    expect(JSON.parse(ok(run(process.execPath, ["testing.mjs"], project), "testing.mjs"))).toEqual([true, false, "expected thread 3060 (crashed) to have the stack [main]; frame 0 differs:", true]);
  });

  it("npx stackwalk minidump-stackwalk gives Breakpad's report; walk of a folder on two workers gives a JSON line per dump", () => {
    expect(ok(npx("minidump-stackwalk", "minidump2.dmp", SYMBOLS), "npx stackwalk minidump-stackwalk")).toBe(EXPECTED);
    const dumps = join(project, "dumps");
    mkdirSync(dumps);
    for (const name of ["a.dmp", "b.dmp", "c.dmp"]) copyFileSync(DUMP, join(dumps, name));
    const lines = ok(npx("walk", "dumps", "--symbols", SYMBOLS, "--format", "jsonl", "--jobs", "2"), "npx stackwalk walk dumps").trim().split("\n").map((l) => JSON.parse(l) as { file: string; crash_info: { type: string } });
    expect(lines.map((l) => [l.file, l.crash_info.type])).toEqual(["a", "b", "c"].map((n) => [join("dumps", `${n}.dmp`), "EXCEPTION_ACCESS_VIOLATION_WRITE"]));
  });
});

describe("in a browser", () => {
  it("the core bundled with esbuild walks minidump2.dmp from ArrayBuffers in headless Chromium: Breakpad's report, byte for byte", async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: the browser test needs Debian's chromium package; install it with \`npm run system-deps\``);
    const bundle = await build({ entryPoints: [join(project, "page.js")], absWorkingDir: project, bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent" });
    const files: Record<string, { body: Buffer | string; type: string }> = {
      "index.html": { body: '<!DOCTYPE html><meta charset="utf-8"><pre></pre><script type="module" src="page.bundle.js"></script>', type: "text/html" },
      "page.bundle.js": { body: Buffer.from(bundle.outputFiles[0]!.contents), type: "text/javascript" },
      "minidump2.dmp": { body: readFileSync(DUMP), type: "application/octet-stream" },
      "test_app.sym": { body: readFileSync(TEST_APP_SYM), type: "text/plain" },
      "kernel32.sym": { body: readFileSync(KERNEL32_SYM), type: "text/plain" },
    };
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"], timeout: 120_000 });
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on("pageerror", (e) => problems.push(e.message));
      await page.route("**/*", (route) => {
        const file = files[new URL(route.request().url()).pathname.slice(1)];
        return file === undefined ? route.fulfill({ status: 404 }) : route.fulfill({ status: 200, body: file.body, contentType: file.type });
      });
      await page.goto("http://stackwalk.test/index.html");
      await page.waitForFunction('document.querySelector("pre").textContent !== ""', undefined, { timeout: 120_000 }).catch(() => undefined);
      expect(problems).toEqual([]);
      expect(await page.locator("pre").textContent()).toBe(EXPECTED);
    } finally {
      await browser.close();
    }
  });
});
