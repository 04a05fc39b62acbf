/**
 * Symbols from bytes, in the core: Breakpad .sym files, PDBs and PE images parsed from bytes and
 * attached to a snapshot by module identity, before or after a walk. The report of Breakpad's own
 * minidump_stackwalk for minidump2.dmp is the truth for the dump; the emulator's truth for the
 * stack-only x64 dump.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { attachSymbolFile, attachSymbolFiles, breakpadReport, bytesSource, minidumpSnapshot, parseSymbolFile, readMinidump, renderBreakpad, walkSnapshot, type Snapshot } from "../../src/index.js";
import { parseSweep, replaySweep } from "../../src/formats/sweep.js";
import { inputError } from "../support/input-error.js";
import { stackOnlyDump } from "../support/stack-only-dump.js";

const FIXTURES = "test/fixtures/breakpad";
const TEST_APP_SYM = `${FIXTURES}/symbols/test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym`;
const KERNEL32_SYM = `${FIXTURES}/symbols/kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym`;
const EXPECTED = readFileSync(`${FIXTURES}/minidump2.stackwalk.out`, "utf8");

const bytes = (path: string): Uint8Array => new Uint8Array(readFileSync(path));

function openDump(): { dump: ReturnType<typeof readMinidump>; snapshot: Snapshot } {
  const dump = readMinidump(bytesSource(bytes(`${FIXTURES}/minidump2.dmp`)));
  return { dump, snapshot: minidumpSnapshot(dump) };
}

const report = (d: ReturnType<typeof openDump>): string => renderBreakpad(breakpadReport(d.dump, d.snapshot, { symbolPathGiven: true }));

/** Each thread's frames as (pc, sp, trust). */
const frames = (snapshot: Snapshot): string[][] => walkSnapshot(snapshot).map(({ walk }) => walk.frames.map((f) => `${f.addrPC.toString(16)} ${f.addrStack.toString(16)} ${f.trust}`));

describe("symbols from bytes", () => {
  it("minidump2.dmp with its two .sym files, all from bytes: Breakpad's report, byte for byte", () => {
    const d = openDump();
    const attached = attachSymbolFiles(d.snapshot, [parseSymbolFile(bytes(TEST_APP_SYM)), parseSymbolFile(bytes(KERNEL32_SYM))]);
    expect(attached.map((a) => [a.module.name, a.detail])).toEqual([
      ["test_app.exe", "unwind records from test_app.pdb"],
      ["kernel32.dll", "unwind records from kernel32.pdb"],
    ]);
    expect(report(d)).toBe(EXPECTED);
  });

  it("attached after a walk, the records are used by the next walk: the same frames as attached before", () => {
    const before = openDump();
    for (const file of [TEST_APP_SYM, KERNEL32_SYM]) attachSymbolFile(before.snapshot, parseSymbolFile(bytes(file)));
    const after = openDump();
    const bare = frames(after.snapshot);
    const oldModules = after.snapshot.modules;
    expect(report(after)).not.toBe(EXPECTED);
    for (const file of [TEST_APP_SYM, KERNEL32_SYM]) attachSymbolFile(after.snapshot, parseSymbolFile(bytes(file), { name: file }));
    expect(frames(after.snapshot)).toEqual(frames(before.snapshot));
    expect(frames(after.snapshot)).not.toEqual(bare);
    expect(report(after)).toBe(EXPECTED);
    // The modules are replaced, not edited: what a caller held before is as it was.
    expect(after.snapshot.modules).not.toBe(oldModules);
    expect(oldModules.every((m) => m.unwind === undefined)).toBe(true);
    expect(after.snapshot.modules.find((m) => m.name === "test_app.exe")!.unwind!.origin).toBe(`Breakpad ${TEST_APP_SYM}`);
  });

  it("a file of another build is refused by its identity, naming it", () => {
    const d = openDump();
    const other = `MODULE windows x86 0123456789ABCDEF0123456789ABCDEF1 test_app.pdb\nFUNC 1000 10 0 f\n`;
    const e = inputError(() => attachSymbolFile(d.snapshot, parseSymbolFile(new TextEncoder().encode(other), { name: "other.sym" })));
    expect(e.code).toBe("bad-value");
    expect(e.message).toBe("other.sym carries debug id 0123456789ABCDEF0123456789ABCDEF1 (test_app.pdb): no module of the snapshot has it");
  });

  it("a .sym file with records FPO_DATA cannot hold, or malformed lines, is used without them and warns once", () => {
    const d = openDump();
    const good = readFileSync(TEST_APP_SYM, "utf8").split("\n");
    // A STACK WIN 0 record whose saved-register size is not a multiple of 4, and a malformed line.
    good.splice(1, 0, "STACK WIN 0 ff000 10 0 0 0 3 0 0 0 0", "FUNC not-hex");
    const file = parseSymbolFile(new TextEncoder().encode(good.join("\n")), { name: "test_app.sym", skipMalformed: true });
    const [a] = attachSymbolFile(d.snapshot, file);
    expect(a!.warnings).toEqual(["test_app.sym: corrupt symbols: 1 malformed line(s) and 1 unusable STACK WIN record(s) left out (first: line 3: FUNC address \"not-hex\" is not a hex number (hex digits only, no 0x))"]);
    expect(a!.module.unwind!.fpo.some((r) => r.ulOffStart === 0xff000)).toBe(false);
    attachSymbolFile(d.snapshot, parseSymbolFile(bytes(KERNEL32_SYM)));
    expect(report(d)).toBe(EXPECTED);
  });

  it("tells the formats apart by their first bytes and names the file in errors", () => {
    expect(parseSymbolFile(bytes(TEST_APP_SYM)).kind).toBe("breakpad");
    expect(parseSymbolFile(bytes("vectors/programs/c/build/x86-fpo/recursion-callbacks.pdb")).kind).toBe("pdb");
    const image = parseSymbolFile(bytes("vectors/programs/c/build/x64/recursion-callbacks.exe"));
    expect(image.kind).toBe("image");
    const bad = inputError(() => parseSymbolFile(new TextEncoder().encode("hello"), { name: "notes.txt" }));
    expect([bad.code, bad.file, bad.offset]).toEqual(["bad-magic", "notes.txt", 0]);
    const damaged = bytes("vectors/programs/c/build/x86-fpo/recursion-callbacks.pdb").slice(0, 100);
    expect(inputError(() => parseSymbolFile(damaged, { name: "x.pdb" })).file).toBe("x.pdb");
    expect(() => parseSymbolFile(new TextEncoder().encode("MODULE windows x86 ABC x.pdb\nFUNC zz\n"))).toThrow(InputError);
    expect(parseSymbolFile(new TextEncoder().encode("MODULE windows x86 ABC x.pdb\nFUNC zz\n"), { skipMalformed: true }).kind).toBe("breakpad");
  });
});

describe("a PDB from bytes", () => {
  it("gives a stripped FPO sweep snapshot its records, before or after a walk", () => {
    const sweep = parseSweep(readFileSync("vectors/x86/c-fpo/recursion-callbacks.sweep.json", "utf8"));
    let v: Snapshot & { threads: { truth?: { pc: bigint }[] }[] } = undefined!;
    // Replaying a sweep updates one memory in place: take the snapshot while it is current.
    for (const step of replaySweep(sweep)) if (step.step >= 200 && (v = step)) break;
    const stripped = (): Snapshot => ({ ...v, modules: v.modules.map(({ unwind: _unwind, ...m }) => m) });
    const pdb = parseSymbolFile(bytes("vectors/programs/c/build/x86-fpo/recursion-callbacks.pdb"));
    const truth = v.threads[0]!.truth!.map((t) => t.pc);
    const pcs = (s: Snapshot): bigint[] => walkSnapshot(s, { walker: "fpo" })[0]!.walk.frames.map((f) => f.addrPC);
    const late = stripped();
    const without = pcs(late);
    attachSymbolFile(late, pdb, { names: "keep" });
    expect(pcs(late)).toEqual(truth);
    expect(without).not.toEqual(truth);
    const early = stripped();
    attachSymbolFile(early, pdb);
    expect(pcs(early)).toEqual(truth);
  });
});

describe("a PE image from bytes", () => {
  it("matched by code id, lays its unwind tables under a stack-only x64 dump, before or after a walk", () => {
    // The deepest snapshot, as a dump of its stack only.
    const { bytes: dumpBytes, truth: frames } = stackOnlyDump("vectors/x64/c/recursion-callbacks.sweep.json");
    const truth = frames.map((t) => `${t.pc.toString(16)} ${t.sp.toString(16)}`);
    const exe = parseSymbolFile(bytes("vectors/programs/c/build/x64/recursion-callbacks.exe"));
    const walked = (s: Snapshot): string[] => walkSnapshot(s)[0]!.walk.frames.map((f) => `${f.addrPC.toString(16)} ${f.addrStack.toString(16)}`);

    const late = minidumpSnapshot(readMinidump(bytesSource(dumpBytes)));
    expect(walked(late)).not.toEqual(truth);
    const memory = late.memory;
    const [a] = attachSymbolFile(late, exe);
    expect(a!.detail).toBe("image from image");
    expect(late.memory).not.toBe(memory);
    expect(walked(late)).toEqual(truth);

    const early = minidumpSnapshot(readMinidump(bytesSource(dumpBytes)));
    attachSymbolFile(early, exe);
    expect(walked(early)).toEqual(truth);
  });
});
