/**
 * Docs that cannot drift: every transcript in the README and docs/ (a block whose first line is
 * `$ stackwalk …` or `$ npx stackwalk …`) is run here, and what it prints must be what the block
 * shows, stderr first, then stdout. Only what must be is normalised: trailing white space, a `...`
 * line for lines an example leaves out, and the places that differ per run (the symbol server's
 * port and the cache folder). The commands run in a workspace that holds what the examples name:
 * the vectors, minidump2.dmp with its symbol store (`symbols`), `crashes/` (minidump2.dmp and a
 * copy cut short at 3,000 bytes), `broken.json` and `rc.dmp` (an x64 dump whose image the server
 * holds, compressed, in the symbol-store layout for binaries). After a deliberate change to what a command
 * prints, `UPDATE_DOCS=1 npx vitest run test/docs/transcripts.test.ts` writes the new output into
 * every transcript that leaves nothing out (one with a `...` line is edited by hand).
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, normalize } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { ROOT } from "../support/corpus.js";
import { docBlocks, docFiles, matchesShown, rewriteBlocks, transcripts } from "../support/docs.js";
import { parsePdb } from "../../src/formats/pdb.js";
import { writeCab } from "../support/cab-writer.js";
import { STACK_ONLY_IMAGE, stackOnlyDump } from "../support/image-server.js";

const FIXTURES = join(ROOT, "test/fixtures/breakpad");
/** What the symbol-server example names, and what stands for it here. */
const SHOWN_SERVER = "127.0.0.1:8000";
const SHOWN_CACHE = "/tmp/symcache";

const blocks = transcripts();
let workspace = "";
let server: Server | undefined;
let port = 0;
const home = process.cwd();
const UPDATE = process.env["UPDATE_DOCS"] === "1";
/** With UPDATE_DOCS=1: file → opening fence line → the block's new lines. */
const updates = new Map<string, Map<number, string[]>>();

beforeAll(async () => {
  workspace = mkdtempSync(join(tmpdir(), "stackwalk-docs-"));
  symlinkSync(join(ROOT, "vectors"), join(workspace, "vectors"));
  symlinkSync(join(FIXTURES, "symbols"), join(workspace, "symbols"));
  copyFileSync(join(FIXTURES, "minidump2.dmp"), join(workspace, "minidump2.dmp"));
  mkdirSync(join(workspace, "crashes"));
  copyFileSync(join(FIXTURES, "minidump2.dmp"), join(workspace, "crashes/minidump2.dmp"));
  writeFileSync(join(workspace, "crashes/cut.dmp"), readFileSync(join(FIXTURES, "minidump2.dmp")).subarray(0, 3000));
  writeFileSync(join(workspace, "broken.json"), '{ "format": "stackwalk-vector/1", "machine": "x86", }');
  // rc.dmp: the x64 recursion-callbacks dump with its image withheld; the server holds the image
  // (compressed, in the store layout for binaries) and its PDB.
  stackOnlyDump(workspace);
  const images = join(workspace, "image-store");
  const id = parsePdb(readFileSync(join(ROOT, "vectors/programs/c/build/x64/recursion-callbacks.pdb"))).info.debugId;
  mkdirSync(join(images, "recursion-callbacks.exe/B295B9675000"), { recursive: true });
  writeFileSync(join(images, "recursion-callbacks.exe/B295B9675000/recursion-callbacks.ex_"), writeCab([{ name: "recursion-callbacks.exe", bytes: readFileSync(join(ROOT, STACK_ONLY_IMAGE)) }]));
  mkdirSync(join(images, "recursion-callbacks.pdb", id), { recursive: true });
  copyFileSync(join(ROOT, "vectors/programs/c/build/x64/recursion-callbacks.pdb"), join(images, "recursion-callbacks.pdb", id, "recursion-callbacks.pdb"));
  // A symbol server: the fixture's symbol store over HTTP (Breakpad's layout), then the images' store.
  server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url ?? "/", "http://x").pathname));
    for (const root of [join(FIXTURES, "symbols"), images]) {
      try {
        const body = readFileSync(join(root, path));
        res.writeHead(200).end(body);
        return;
      } catch {}
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((done) => server!.listen(0, "127.0.0.1", done));
  port = (server.address() as AddressInfo).port;
  process.chdir(workspace);
});

afterAll(async () => {
  process.chdir(home);
  for (const [file, blocks] of updates) rewriteBlocks(file, blocks);
  await new Promise((done) => server?.close(done));
});

describe("the transcripts in the README and docs/ are what the commands print", () => {
  it("the README is short (at most 200 lines) and shows the two set-up commands", () => {
    const readme = readFileSync(join(ROOT, "README.md"), "utf8");
    expect(readme.split("\n").length).toBeLessThanOrEqual(200);
    expect(readme).toContain("```sh\nnpm install && npm start\n```");
    expect(readme).toContain("```sh\nnpm install && npm run system-deps && npm test\n```");
  });

  it("there are transcripts in the README and in docs/", () => {
    expect(blocks.some((b) => b.file === "README.md")).toBe(true);
    expect(new Set(blocks.map((b) => b.file)).size).toBeGreaterThan(3);
  });

  it.each(blocks.map((b) => [`${b.file}:${b.line}`, b] as const))("%s", async (_, block) => {
    const rewritten: string[] = [];
    for (const { argv, shown } of block.commands) {
      const args = argv[0] === "npx" ? argv.slice(1) : argv;
      expect(args[0], `${block.file}:${block.line}: a transcript runs stackwalk`).toBe("stackwalk");
      const real = args.slice(1).map((a) => a.replaceAll(SHOWN_SERVER, `127.0.0.1:${port}`).replaceAll(SHOWN_CACHE, join(workspace, "symcache")));
      const r = await cli(...real);
      const printed = (r.err + r.out).replaceAll(`127.0.0.1:${port}`, SHOWN_SERVER).replaceAll(join(workspace, "symcache"), SHOWN_CACHE);
      const lines = printed.replace(/\n$/, "").split("\n");
      rewritten.push(`$ ${argv.map((a) => (/[*;'"\s]/.test(a) ? `'${a}'` : a)).join(" ")}`, ...lines.map((l) => l.trimEnd()));
      if (UPDATE && !shown.some((l) => l.trim() === "...")) continue;
      if (!matchesShown(shown, lines)) expect(lines.join("\n"), `${block.file}:${block.line}: $ ${argv.join(" ")}`).toBe(shown.join("\n"));
    }
    if (UPDATE && !block.lines.some((l) => l.trim() === "...")) {
      if (!updates.has(block.file)) updates.set(block.file, new Map());
      updates.get(block.file)!.set(block.line, rewritten);
    }
  });
});

describe("every code example in the README and docs/ is compiled or run as written", () => {
  /** Each example by its first line's name, and the test that compiles or runs it. */
  const RUN_BY: Record<string, string> = {
    "walk.mjs": "test/package/package.test.ts",
    "walk-store.mjs": "test/package/package.test.ts",
    "load.mjs": "test/package/package.test.ts",
    "main.ts": "test/package/package.test.ts",
    "truth.ts": "test/package/package.test.ts",
    "rules.ts": "test/package/package.test.ts",
    "page.js": "test/package/package.test.ts",
    "stack.test.ts": "test/testing/readme/stack.test.ts",
    "stack.jest.test.mjs": "test/testing/readme/stack.jest.test.mjs",
  };

  it("names itself on its first line (`// name.ts: …`), and a test compiles or runs it; an excerpt of a source file is in that file as shown", () => {
    const examples = docFiles().flatMap((file) => docBlocks(file).filter((b) => /^(ts|js|typescript|javascript|mjs)$/.test(b.info)).map((b) => ({ where: `${b.file}:${b.line}`, name: /^\/\/ ([\w./-]+)/.exec(b.lines[0] ?? "")?.[1] })));
    expect(examples.length).toBeGreaterThan(5);
    for (const { where, name } of examples) {
      expect(name, `${where}: a code example starts with // <file name>`).toBeDefined();
      if (/^(src|emulator|test)\//.test(name!)) {
        const block = docBlocks(where.split(":")[0]!).find((b) => `${b.file}:${b.line}` === where)!;
        const source = readFileSync(join(ROOT, name!), "utf8").split("\n").map((l) => l.trim());
        let at = 0;
        for (const line of block.lines.slice(1).map((l) => l.trim()).filter((l) => l !== "")) {
          at = source.indexOf(line, at);
          expect(at, `${where}: "${line}" is not in ${name} (in this order)`).toBeGreaterThanOrEqual(0);
        }
        continue;
      }
      expect(RUN_BY[name!], `${where}: ${name} is run by no test`).toBeDefined();
      expect(readFileSync(join(ROOT, RUN_BY[name!]!), "utf8"), `${where}: ${RUN_BY[name!]} does not run ${name}`).toContain(name!.replace(/^stack(\.jest)?\.test\.m?[jt]s$/, "//"));
    }
  });
});
