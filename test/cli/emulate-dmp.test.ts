/**
 * `stackwalk emulate ... --dmp` end to end: the emulator writes vectors, a minidump per snapshot
 * and the modules' .sym files in a symbol store beside them; `stackwalk walk X.dmp --symbols DIR`
 * then walks each dump to the vector's ground truth, with the unwind records from the .sym.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EMULATE_USAGE, emulateCommand } from "../../src/cli/emulate.js";
import { UsageError } from "../../src/cli/common.js";
import { run } from "../../src/cli/main.js";
import { parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { parseVector } from "../../src/formats/vector.js";
import { parseWalkJson } from "../support/walk-schema.js";

const FPO_PE = "vectors/programs/c/build/x86-fpo/big-frames-varargs.exe";
const ASM = "vectors/programs/x86/fpo-leaf.asm";

type Io = { code: number; out: string; err: string };

async function emulate(...argv: string[]): Promise<Io> {
  let out = "";
  let err = "";
  const code = await emulateCommand(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

async function cli(...argv: string[]): Promise<Io> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const scratch = (): string => mkdtempSync(join(tmpdir(), "emulate-dmp-"));

interface JsonWalk {
  machine: string;
  threads: { thread_id: number; crashed: boolean; frames: { addrPC: string; addrStack: string; foundBy: string; function: string | null }[]; stop: { reason: string } }[];
}

const hex32 = (v: bigint): string => `0x${v.toString(16).padStart(8, "0")}`;

/** Walks `dump` with the CLI and compares each frame's PC and stack pointer with the vector's truth. */
async function walkAgainstTruth(dump: string, vectorFile: string, symbols: string, symFile: string): Promise<JsonWalk["threads"][number]> {
  const r = await cli("walk", dump, "--symbols", symbols, "--format", "json");
  expect(r.code, r.err).toBe(0);
  expect(r.err).toContain(`unwind records from ${symFile}`);
  const doc = parseWalkJson(r.out) as JsonWalk;
  expect(doc.machine).toBe("x86");
  expect(doc.threads).toHaveLength(1);
  const thread = doc.threads[0]!;
  expect(thread.crashed).toBe(true);
  const truth = parseVector(readFileSync(vectorFile, "utf8")).threads[0]!.truth!;
  expect(thread.frames.map((f) => [f.addrPC, f.addrStack]), dump).toEqual(truth.map((t) => [hex32(t.pc), hex32(t.sp)]));
  return thread;
}

describe("stackwalk emulate --dmp", () => {
  it("is documented in --help and needs --break or --sweep", async () => {
    expect(EMULATE_USAGE).toContain("--dmp");
    expect(EMULATE_USAGE).toContain("minidump_stackwalk X.dmp DIR");
    await expect(emulate(FPO_PE, "--dmp")).rejects.toThrow(UsageError);
  });

  it("a PE built with FPO: a dump per break hit and the .sym from its PDB; walking each dump with --symbols gives the truth", async () => {
    const dir = scratch();
    const r = await emulate(FPO_PE, "--break", "one_page", "--break", "aligned_big", "--break", "sum_ints", "--dmp", "-o", `${dir}/`);
    expect(r.code, r.err).toBe(0);
    const vectors = readdirSync(dir).filter((f) => f.endsWith(".json")).sort();
    const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort();
    expect(vectors.length).toBeGreaterThanOrEqual(2);
    expect(dumps).toEqual(vectors.map((f) => f.replace(/\.json$/, ".dmp")));
    expect(r.out.trim().split("\n").at(-1)).toMatch(new RegExp(`^${vectors.length} vectors?, ${dumps.length} minidumps? \\(\\d+ instructions\\)$`));

    // The store: <dir>/<pdb>/<debug id>/<name>.sym, once for all dumps.
    const dump = readMinidump(bytesSource(readFileSync(join(dir, dumps[0]!))));
    const m = dump.modules[0]!;
    expect(m.debugFile).toBe("big-frames-varargs.pdb");
    const symPath = join(dir, "big-frames-varargs.pdb", m.debugId!, "big-frames-varargs.sym");
    expect(r.out).toContain(`wrote ${symPath}\n`);
    const sym = parseBreakpadSym(readFileSync(symPath));
    expect(sym.module).toMatchObject({ os: "windows", arch: "x86", debugId: m.debugId, debugFile: "big-frames-varargs.pdb" });
    expect(sym.stackWin.filter((w) => w.type === 4).length).toBeGreaterThan(10);
    expect(dump.exception).toMatchObject({ code: 0x80000003, threadId: 0 });

    let viaSym = 0;
    for (const d of dumps) {
      const thread = await walkAgainstTruth(join(dir, d), join(dir, d.replace(/\.dmp$/, ".json")), dir, symPath);
      viaSym += thread.frames.filter((f) => f.foundBy === "frame-data").length;
      expect(thread.stop.reason).toBe("end-of-stack");
    }
    // The caller frames came from the FrameData records of the .sym (the image has no unwind data of its own).
    expect(viaSym).toBeGreaterThan(0);
  });

  it("an x64 PE: the .sym holds STACK CFI derived from the image's unwind tables, with which the dump walks to the truth", async () => {
    const dir = scratch();
    const r = await emulate("vectors/programs/c/build/x64/recursion-callbacks.exe", "--break", "combine", "--dmp", "-o", `${dir}/`);
    expect(r.code, r.err).toBe(0);
    const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort();
    expect(dumps.length).toBeGreaterThan(0);
    const m = readMinidump(bytesSource(readFileSync(join(dir, dumps[0]!)))).modules[0]!;
    const sym = parseBreakpadSym(readFileSync(join(dir, "recursion-callbacks.pdb", m.debugId!, "recursion-callbacks.sym")));
    expect(sym.module.arch).toBe("x86_64");
    expect(sym.stackCfi.length).toBeGreaterThan(5);
    expect(sym.stackCfi.every((c) => c.init === ".cfa: $rsp 8 + .ra: .cfa 8 - ^")).toBe(true);
    const w = await cli("walk", join(dir, dumps.at(-1)!), "--format", "json");
    expect(w.code, w.err).toBe(0);
    const thread = (parseWalkJson(w.out) as JsonWalk).threads[0]!;
    const truth = parseVector(readFileSync(join(dir, dumps.at(-1)!.replace(/\.dmp$/, ".json")), "utf8")).threads[0]!.truth!;
    const hex64 = (v: bigint): string => `0x${v.toString(16).padStart(16, "0")}`;
    expect(thread.frames.map((f) => [f.addrPC, f.addrStack])).toEqual(truth.map((t) => [hex64(t.pc), hex64(t.sp)]));
  });

  it("an assembly source: its module gets a made-up identity, and the dump walks as the vector does", async () => {
    const dir = scratch();
    const r = await emulate(ASM, "--break", "capture", "--dmp", "-o", join(dir, "leaf.json"));
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(dir, "leaf.dmp"))).toBe(true);
    const back = minidumpSnapshot(readMinidump(bytesSource(readFileSync(join(dir, "leaf.dmp")))));
    const m = back.modules[0]!;
    expect(m.debugFile).toBe("fpo-leaf.pdb");
    expect(m.debugId).toMatch(/^[0-9A-F]{32}1$/);
    const sym = parseBreakpadSym(readFileSync(join(dir, "fpo-leaf.pdb", m.debugId!, "fpo-leaf.sym")));
    expect(sym.functions.map((f) => f.name)).toContain("leaf");
    // No unwind data (an assembly source): the EBP chain skips the FPO leaf's caller, on the
    // vector and on the dump alike.
    const walks: JsonWalk["threads"][number][] = [];
    for (const input of ["leaf.dmp", "leaf.json"]) {
      const w = await cli("walk", join(dir, input), "--symbols", dir, "--format", "json");
      expect(w.code, w.err).toBe(0);
      walks.push((parseWalkJson(w.out) as JsonWalk).threads[0]!);
    }
    const rows = (t: JsonWalk["threads"][number]) => t.frames.map((f) => [f.addrPC, f.addrStack, f.foundBy, f.function]);
    expect(rows(walks[0]!)).toEqual(rows(walks[1]!));
    expect(walks[0]!.frames.map((f) => f.function)).toEqual(["capture", "main_body"]);
    // The same identity every time: it is hashed from the image.
    const again = scratch();
    await emulate(ASM, "--break", "capture", "--dmp", "-o", join(again, "leaf.json"));
    expect(readMinidump(bytesSource(readFileSync(join(again, "leaf.dmp")))).modules[0]!.debugId).toBe(m.debugId);
    // Without --symbols the dump's own directory is searched, which holds the store.
    const plain = await cli("walk", join(dir, "leaf.dmp"), "--format", "json");
    expect(plain.code).toBe(0);
  });

  it("--sweep --dmp: one dump per snapshot beside the sweep, each walkable", async () => {
    const dir = scratch();
    const out = join(dir, "fpo-leaf.sweep.json");
    const r = await emulate(ASM, "--sweep", "--dmp", "-o", out);
    expect(r.code, r.err).toBe(0);
    const lines = r.out.trim().split("\n");
    expect(lines[0]).toMatch(/^wrote .*fpo-leaf\.sweep\.json: 30 snapshots \(30 instructions\)$/);
    expect(lines[1]).toBe(`wrote 30 minidumps: ${join(dir, "fpo-leaf.0.dmp")} ... ${join(dir, "fpo-leaf.29.dmp")}`);
    const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp"));
    expect(dumps).toHaveLength(30);
    const w = await cli("walk", join(dir, "fpo-leaf.17.dmp"), "--format", "json");
    expect(w.code).toBe(0);
    expect((parseWalkJson(w.out) as JsonWalk).threads[0]!.frames.length).toBe(3 - 1); // at capture: leaf's caller is skipped by the EBP chain, as in the vector
  });
});
