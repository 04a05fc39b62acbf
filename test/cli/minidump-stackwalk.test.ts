/**
 * `stackwalk minidump-stackwalk`, Breakpad's command line: its reports of the 19 corpus dumps and
 * of minidump2 with its symbols are Breakpad's own, byte for byte (human and -m); -c is that
 * report with only the crashed thread; -b is its crashed thread's frame lines; -s adds, after
 * each frame but the last, the stack between the frame's stack pointer and its caller's (the last
 * row whole), whose bytes are checked against Breakpad's minidump_dump of the same dump
 * (minidump2.dump.out) and whose "possible instruction pointers" are the words there that name a
 * function, and which is Breakpad's own -s output byte for byte (test/fixtures/breakpad-corpus, test/fixtures/breakpad).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { fixtureDir, fixtureFile } from "../support/fixtures.js";

const CORPUS = "test/fixtures/breakpad-corpus";
const FIXTURES = "test/fixtures/breakpad";
const DUMP = join(FIXTURES, "minidump2.dmp");
const SYMBOLS = join(FIXTURES, "symbols");
const EXPECTED = readFileSync(join(FIXTURES, "minidump2.stackwalk.out"), "utf8");

/** A report cut into its header, its "Thread …" blocks and its module list. */
function blocks(report: string): { head: string; threads: string[]; modules: string } {
  const parts = report.split(/\n(?=Thread \d+|Loaded modules:)/);
  return { head: parts[0]!, threads: parts.filter((p) => p.startsWith("Thread ")), modules: parts.at(-1)! };
}

describe("minidump-stackwalk: Breakpad's output, byte for byte", () => {
  const dumps = readdirSync(CORPUS).filter((f) => f.endsWith(".dmp")).sort();
  it.each(dumps)("%s, human and -m", async (name) => {
    const dump = join(CORPUS, name);
    expect((await cli("minidump-stackwalk", dump)).out).toBe(readFileSync(dump.replace(/\.dmp$/, ".stackwalk.out"), "utf8"));
    expect((await cli("minidump-stackwalk", "-m", dump)).out).toBe(readFileSync(dump.replace(/\.dmp$/, ".stackwalk.machine_readable.out"), "utf8"));
  });

  it("minidump2.dmp with its symbol path after the dump, human and -m", async () => {
    const r = await cli("minidump-stackwalk", DUMP, SYMBOLS);
    expect(r.code).toBe(0);
    expect(r.out).toBe(EXPECTED);
    expect((await cli("minidump-stackwalk", "-m", DUMP, SYMBOLS)).out).toBe(readFileSync(join(FIXTURES, "minidump2.stackwalk.machine_readable.out"), "utf8"));
  });

  it("-c: the crashed thread only; walk --thread crashed --format breakpad prints the same", async () => {
    const dump = join(CORPUS, "tiny-exe-fastfail.dmp");
    const full = blocks(readFileSync(dump.replace(/\.dmp$/, ".stackwalk.out"), "utf8"));
    expect(full.threads).toHaveLength(4);
    const crashed = full.threads.filter((t) => / \(crashed\)\n/.test(t));
    expect(crashed).toHaveLength(1);
    const expected = `${full.head}\n${crashed[0]}\n${full.modules}`;
    expect((await cli("minidump-stackwalk", "-c", dump)).out).toBe(expected);
    expect((await cli("walk", dump, "--thread", "crashed", "--format", "breakpad")).out).toBe(expected);
  });

  it("-b: the crashed thread's frame lines", async () => {
    const frameLines = blocks(EXPECTED).threads[0]!.split("\n").filter((l) => /^ ?\d+ {2}/.test(l));
    expect((await cli("minidump-stackwalk", "-b", DUMP, SYMBOLS)).out).toBe(["Thread 0 (crashed)", ...frameLines].join("\n") + "\n");
  });

  it("takes options as getopt does: joined, after the dump, and refuses unknown ones", async () => {
    const joined = await cli("minidump-stackwalk", DUMP, "-cs", SYMBOLS);
    const apart = await cli("minidump-stackwalk", "-s", "-c", DUMP, SYMBOLS);
    expect(joined.out).toBe(apart.out);
    const bad = await cli("minidump-stackwalk", "-x", DUMP);
    expect([bad.code, bad.err]).toEqual([2, 'stackwalk minidump-stackwalk: unknown option "-x" (options: -m, -s, -c, -b)\n']);
    const help = await cli("minidump-stackwalk", "-h");
    expect(help.out).toContain("  -s         Output stack contents\n");
    expect((await cli("minidump-stackwalk")).code).toBe(2);
  });
});

describe("minidump-stackwalk -s", () => {
  /** Thread 0's stack bytes from Breakpad's minidump_dump: the first "Stack" hex line and its start address. */
  function dumpedStack(): { start: bigint; bytes: Uint8Array } {
    const text = readFileSync(join(FIXTURES, "minidump2.dump.out"), "utf8");
    const start = BigInt(/stack\.start_of_memory_range = (0x[0-9a-f]+)/.exec(text)![1]!);
    const hex = /\nStack\n0x([0-9a-f]+)\n/.exec(text)![1]!;
    return { start, bytes: Uint8Array.from(hex.match(/../g)!.map((b) => parseInt(b, 16))) };
  }

  it("is the report with a stack-contents block after each frame but the last; the blocks hold the dump's bytes", async () => {
    const r = await cli("minidump-stackwalk", "-s", DUMP, SYMBOLS);
    expect(r.code).toBe(0);
    const blocksRe = /\n {4}Stack contents:(\n {5}[0-9a-f]{8}(?: [0-9a-f]{2}| {3}){16} {2}.{16})+\n {4}Possible instruction pointers:\n((?: {5}\*\(0x[0-9a-f]{8}\) = 0x[0-9a-f]{8} <[^>\n]+> \[[^\]\n]* : \d+ \+ 0x[0-9a-f]+\]\n)*)\n/g;
    const found = [...r.out.matchAll(blocksRe)];
    // Without the blocks, the report is Breakpad's.
    expect(r.out.replace(blocksRe, "")).toBe(EXPECTED);
    // Thread 0 (the only one Breakpad walks: the other wrote the dump) has 4 frames, so 3 blocks.
    expect(found).toHaveLength(3);

    const { start, bytes } = dumpedStack();
    const crashed = blocks(r.out).threads[0]!;
    const esps = [...crashed.matchAll(/esp = 0x([0-9a-f]{8})/g)].map((m) => BigInt(`0x${m[1]}`));
    const ownBlocks = [...crashed.matchAll(blocksRe)];
    expect(ownBlocks).toHaveLength(esps.length - 1);
    ownBlocks.forEach((block, k) => {
      const rows = block[0].split("\n").filter((l) => /^ {5}[0-9a-f]{8} /.test(l));
      expect(BigInt(`0x${rows[0]!.slice(5, 13)}`)).toBe(esps[k]);
      let address = esps[k]!;
      for (const row of rows) {
        expect(BigInt(`0x${row.slice(5, 13)}`)).toBe(address);
        const cells = row.slice(13, 13 + 48).match(/.../g)!;
        cells.forEach((cell, i) => {
          const a = address + BigInt(i);
          // The last row runs past the caller's stack pointer: whole, as far as the stack goes.
          const byte = bytes[Number(a - start)];
          expect(cell, `byte at ${a.toString(16)}`).toBe(byte === undefined ? "   " : ` ${byte.toString(16).padStart(2, "0")}`);
        });
        address += 16n;
      }
      expect(address).toBeGreaterThanOrEqual(esps[k + 1]!);
      // Each possible instruction pointer is the word stored at its address.
      for (const m of block[2]!.matchAll(/\*\(0x([0-9a-f]{8})\) = 0x([0-9a-f]{8})/g)) {
        const at = Number(BigInt(`0x${m[1]}`) - start);
        const word = (bytes[at]! | (bytes[at + 1]! << 8) | (bytes[at + 2]! << 16) | (bytes[at + 3]! << 24)) >>> 0;
        expect(word.toString(16).padStart(8, "0")).toBe(m[2]);
      }
    });
    // The return address into main, where frame 0's stack ends: main, line 66 of test_app.cc (looked up at the word itself).
    expect(ownBlocks[0]![2]).toBe("     *(0x0012fe8c) = 0x00404200 <main> [test_app.cc : 66 + 0x0]\n");
  });
});

describe("minidump-stackwalk -s: Breakpad's output, byte for byte", () => {
  const dir = fixtureDir("breakpad-corpus");
  const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort();

  it("has the 19 dumps of Breakpad's corpus", () => expect(dumps).toHaveLength(19));

  it.each(dumps)("%s", async (name) => {
    const dump = join(dir, name);
    expect((await cli("minidump-stackwalk", "-s", dump)).out).toBe(readFileSync(dump.replace(/\.dmp$/, ".stackwalk.s.out"), "utf8"));
  });

  it("minidump2.dmp with its symbols: each frame's last row of stack contents is printed whole", async () => {
    const r = await cli("minidump-stackwalk", "-s", fixtureFile("breakpad/minidump2.dmp"), fixtureDir("breakpad/symbols"));
    expect(r.out).toBe(readFileSync(fixtureFile("breakpad/minidump2.stackwalk.s.out"), "utf8"));
    expect(r.out).toContain("     0012fe84 45 00 00 00 70 ff 12 00 00 42 40 00 b8 27 87 00  E...p....B@..'..\n");
  });
});
