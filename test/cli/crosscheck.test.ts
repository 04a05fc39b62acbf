import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { decodeDiskItems, encodeApiItems } from "../../src/formats/etw/extended-data.js";
import { formatSweep, type Sweep } from "../../src/formats/sweep.js";
import { parseVector } from "../../src/formats/vector.js";
import { spawnStackwalk } from "../support/spawn-cli.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const ETW = "vectors/x86/etw";

/** The vector's JSON without its "etw" events, and its events' item chains. */
function splitVector(file: string): { json: string; chains: Uint8Array[] } {
  const doc = JSON.parse(readFileSync(file, "utf8")) as { etw: { hex: string }[] };
  const chains = doc.etw.map((e) => Uint8Array.from(e.hex.match(/../g)!.map((b) => parseInt(b, 16))));
  const { etw: _etw, ...rest } = doc;
  return { json: JSON.stringify(rest), chains };
}

describe("stackwalk crosscheck", () => {
  it.each([
    ["ebp-chain-etw", 0, "6 matched, 0 etw-only, 0 walk-only, 0 unexplained: agree"],
    ["fpo-leaf-etw", 1, "3 matched, 0 etw-only, 1 walk-only, 0 unexplained: differ, all explained"],
    ["fpo-usebp-etw-capture", 1, "2 matched, 0 etw-only, 3 walk-only, 0 unexplained: differ, all explained"],
    ["fpo-usebp-etw-capture_worker", 1, "1 matched, 0 etw-only, 3 walk-only, 0 unexplained: differ, all explained"],
    ["kernel-user", 0, "4 matched, 0 etw-only, 0 walk-only, 0 unexplained: agree"],
  ] as const)("%s: exit %i, %s", async (name, code, summary) => {
    const r = await cli("crosscheck", `${ETW}/${name}.json`);
    expect([r.code, r.err]).toEqual([code, ""]);
    expect(r.out.trimEnd().split("\n").at(-1)).toBe(`${ETW}/${name}.json: 1 of 1 ETW stack compared: ${summary}`);
  });

  it("prints the alignment and a diagnosis for every difference", async () => {
    const { out } = await cli("crosscheck", `${ETW}/fpo-leaf-etw.json`);
    expect(out).toContain(`${ETW}/fpo-leaf-etw.json: x86 (I386), walker auto\n  walk vs truth: exact (4 frames)`);
    expect(out).toMatch(/ {2}0 {4}0x77001038 {2}- {4}- {11}prefix {8}etwlog\.dll!EtwpLogStack\+0x28/);
    expect(out).toMatch(/ {2}2 {4}0x00401077 {2}0 {4}0x00401072 {2}capture site {2}fpo-leaf-etw\.exe!leaf\+0x12/);
    expect(out).toMatch(/ {2}- {4}- {11}1 {4}0x00401053 {2}walk-only {5}fpo-leaf-etw\.exe!caller\+0x23/);
    expect(out).toContain(
      "  walk-only 0x00401053 (fpo-leaf-etw.exe!caller+0x23, the caller of leaf) missing from ETW: leaf does not set up EBP (FPO_DATA: frame pointer omitted, EBP left as its caller set it), so EBP still held caller's frame pointer 0x0012ffd4 and the EBP-chain capture went from leaf straight to its caller's caller, main (x86-fpo.md §6, effect 1)",
    );
  });

  it("with the frame-pointer walker, which follows the same EBP chain as ETW, the FPO vectors agree (exit 0)", async () => {
    for (const name of ["fpo-leaf-etw", "fpo-usebp-etw-capture", "fpo-usebp-etw-capture_worker"]) {
      const r = await cli("crosscheck", `${ETW}/${name}.json`, "--walker", "frame-pointer");
      expect(r.code, r.out).toBe(0);
      expect(r.out).toMatch(/walk vs truth: frame \d+/);
    }
  });

  it("checks a directory, one summary line per vector; exit 1 when any differs", async () => {
    const r = await cli("crosscheck", ETW);
    expect(r.code).toBe(1);
    const summary = r.out.trimEnd().split("\n").slice(-5);
    expect(summary.map((l) => l.replace(/:.*/, ""))).toEqual([
      `${ETW}/ebp-chain-etw.json`,
      `${ETW}/fpo-leaf-etw.json`,
      `${ETW}/fpo-usebp-etw-capture.json`,
      `${ETW}/fpo-usebp-etw-capture_worker.json`,
      `${ETW}/kernel-user.json`,
    ]);
  });

  it("prints JSON with every row, its cause and its diagnosis", async () => {
    const r = await cli("crosscheck", `${ETW}/fpo-usebp-etw-capture.json`, "--json");
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.out);
    expect(Object.keys(doc)).toEqual(["walker", "agrees", "unexplained", "inputs"]);
    expect([doc.walker, doc.agrees, doc.unexplained]).toEqual(["auto", false, 0]);
    const [input] = doc.inputs;
    expect(input.file).toBe(`${ETW}/fpo-usebp-etw-capture.json`);
    expect(input.truth.exact).toBe(true);
    const [stack] = input.stacks;
    expect(stack).toMatchObject({ matchId: "0", status: "complete", method: "ebp-chain", prefix: 2, matched: 2, etwOnly: 0, walkOnly: 3, unexplained: 0, agrees: false });
    expect(stack.addresses).toEqual(["0x77001038", "0x77001008", "0x004010b2", "0x0040108a"]);
    expect(stack.rows.map((row: { kind: string; cause: string | null }) => [row.kind, row.cause])).toEqual([
      ["prefix", "logging-path"],
      ["prefix", "logging-path"],
      ["matched", "capture-site"],
      ["matched", null],
      ["walk-only", "truncated"],
      ["walk-only", "truncated"],
      ["walk-only", "truncated"],
    ]);
    expect(stack.truncation).toMatchObject({ side: "etw", afterEtw: 3, afterWalk: 1, missing: 3, diagnosis: { cause: "truncated" } });
  });

  it("takes ETW stacks from --etw files in either item form", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-crosscheck-"));
    const { json, chains } = splitVector(`${ETW}/kernel-user.json`);
    const vector = join(dir, "kernel-user.json");
    writeFileSync(vector, json);
    // The kernel part on disk, the user part in the API form (16-byte header, DataPtr a file offset).
    const disk = join(dir, "kernel.bin");
    writeFileSync(disk, chains[0]!);
    const { headers, data } = encodeApiItems(decodeDiskItems(chains[1]!), 16n);
    const api = join(dir, "user.bin");
    writeFileSync(api, new Uint8Array([...headers, ...data]));
    const r = await cli("crosscheck", vector, "--etw", disk, "--etw", api);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out).toContain("ETW stack 1 of 1: MatchId 0x1, 7 addresses, complete (kernel kernel.bin event 0 item 0 (offset 0x0) + user user.bin event 0 item 0 (offset 0x0))");
    expect(r.out.trimEnd().split("\n").at(-1)).toMatch(/4 matched, 0 etw-only, 0 walk-only, 0 unexplained: agree$/);
    // Only the kernel half: listed, not compared.
    const half = await cli("crosscheck", vector, "--etw", disk);
    expect(half.code).toBe(0);
    expect(half.out).toContain("note: kernel part with MatchId 0x1: its user part never came");
    expect(half.out).toContain("not compared");
  });

  it.each([
    [["vectors/x86/ebp-chain-4.json"], /ebp-chain-4\.json: no ETW stack to compare: the input has no "etw" events with STACK_TRACE items; give --etw FILE/],
    [["test/fixtures/breakpad/minidump2.dmp"], /minidump2\.dmp: no ETW stack to compare: a minidump carries none/],
    [[`${ETW}/fpo-leaf-etw.json`, "--walker", "magic"], /--walker must be one of/],
    [[`${ETW}/fpo-leaf-etw.json`, "--etw", "missing.bin"], /missing\.bin: cannot read/],
    [[`${ETW}/fpo-leaf-etw.json`, `${ETW}/kernel-user.json`, "--etw", "README.md"], /--etw applies to one input/],
    [[], /crosscheck needs a vector/],
  ])("exit 2 on bad input or usage: %j", async (argv, message) => {
    const r = await cli("crosscheck", ...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
    expect(r.err.trimEnd().split("\n")[0]).toMatch(/^stackwalk crosscheck: /);
  });

  it("a bad --etw item is bad input naming the file and the byte offset", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-crosscheck-"));
    const bad = join(dir, "bad.bin");
    // A STACK_TRACE32 item with DataSize 10: MatchId and half an address.
    writeFileSync(bad, Uint8Array.of(0x18, 0, 5, 0, 0, 0, 10, 0, ...new Uint8Array(16)));
    const r = await cli("crosscheck", `${ETW}/fpo-leaf-etw.json`, "--etw", bad);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`stackwalk crosscheck: ${bad}: offset 0x0: DataSize 10 leaves 2 byte(s) after MatchId that are not a whole 4-byte address\n`);
  });

  it("checks every snapshot of a sweep that carries ETW events", async () => {
    const v = parseVector(readFileSync(`${ETW}/fpo-leaf-etw.json`, "utf8"));
    const t = v.threads[0]!;
    const { etw: _etw, ...plain } = t;
    const sweep: Sweep = {
      machine: v.machine,
      modules: v.modules,
      memory: [...v.memory.regions],
      steps: [
        { ...plain, step: 17, writes: [] },
        { ...t, step: 18, writes: [] },
      ],
    };
    const dir = mkdtempSync(join(tmpdir(), "sw-crosscheck-"));
    const path = join(dir, "sweep.json");
    writeFileSync(path, formatSweep(sweep));
    const r = await cli("crosscheck", path);
    expect(r.code).toBe(1);
    expect(r.out.trimEnd().split("\n").at(-1)).toBe(`${path} (step 18): 1 of 1 ETW stack compared: 3 matched, 0 etw-only, 1 walk-only, 0 unexplained: differ, all explained`);
  });

  it("a stack item whose DataSize is no whole number of addresses, inside a vector, is bad input", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sw-crosscheck-"));
    const path = join(dir, "bad-size.json");
    const text = readFileSync(`${ETW}/fpo-leaf-etw.json`, "utf8");
    expect(text).toContain('"hex": "2800050000001c00');
    writeFileSync(path, text.replace('"hex": "2800050000001c00', '"hex": "2800050000001b00'));
    const r = await cli("crosscheck", path);
    expect(r.code).toBe(2);
    expect(r.err).toBe(`stackwalk crosscheck: ${path}: offset 0x0: ETW items: DataSize 27 leaves 3 byte(s) after MatchId that are not a whole 4-byte address\n`);
  });

  it("the bin exits with the contract's codes", () => {
    const ok = spawnStackwalk(["crosscheck", `${ETW}/ebp-chain-etw.json`]);
    expect(ok.status).toBe(0);
    const differs = spawnStackwalk(["crosscheck", `${ETW}/fpo-leaf-etw.json`]);
    expect(differs.status).toBe(1);
  });
});
