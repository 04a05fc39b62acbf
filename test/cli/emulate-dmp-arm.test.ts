/**
 * `stackwalk emulate <ARM image> --break ADDR --dmp` end to end, on a clang-16 thumbv7 program
 * (test/fixtures/arm-clang): ARM minidumps (Breakpad's 368-byte ARM context, SystemInfo 5) and the
 * module's .sym in a symbol store beside them (the image has no CodeView record, so the module gets
 * a made-up `<name>.pdb` identity), with STACK CFI from the image's .pdata/.xdata and the leaf
 * rule for the code outside it; `stackwalk walk X.dmp` then walks each dump to the vector's
 * ground truth.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { emulateCommand } from "../../src/cli/emulate.js";
import { run } from "../../src/cli/main.js";
import { parseBreakpadSym } from "../../src/formats/breakpad-sym.js";
import { bytesSource, minidumpSnapshot, readMinidump } from "../../src/formats/minidump.js";
import { parseVector } from "../../src/formats/vector.js";

const PE = "test/fixtures/arm-clang/aligned-callee-saved.exe";
/** An instruction of __chkstk, which has no .pdata entry: a leaf to the unwinder. */
const IN_CHKSTK = "0x401008";

async function call(f: (argv: string[], io: { out: (t: string) => void; err: (t: string) => void }) => Promise<number>, ...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const r = { out: "", err: "" };
  const code = await f(argv, { out: (t) => void (r.out += t), err: (t) => void (r.err += t) });
  return { code, ...r };
}

describe("stackwalk emulate --dmp on ARM", () => {
  it("writes ARM dumps and a .sym with STACK CFI, and the dumps walk to the truth", async () => {
    const dir = mkdtempSync(join(tmpdir(), "emulate-dmp-arm-"));
    const r = await call(emulateCommand, PE, "--break", IN_CHKSTK, "--dmp", "-o", `${dir}/`);
    expect(r.code, r.err).toBe(0);
    expect(r.out.trim().split("\n").at(-1)).toBe("7 vectors, 7 minidumps (322 instructions)");
    const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort();
    expect(dumps).toHaveLength(7);
    const symDir = join(dir, "aligned-callee-saved.pdb");
    const [id] = readdirSync(symDir);
    const text = readFileSync(join(symDir, id!, "aligned-callee-saved.sym"), "utf8");
    const sym = parseBreakpadSym(text);
    expect(sym.module.arch).toBe("arm");
    expect(sym.stackCfi.length).toBeGreaterThan(5);
    // __chkstk, from the start of .text to the first .pdata function, is a leaf.
    expect(text).toContain("STACK CFI INIT 1000 14 .cfa: sp .ra: lr\n");
    for (const dump of dumps) {
      const path = join(dir, dump);
      const snapshot = minidumpSnapshot(readMinidump(bytesSource(readFileSync(path))));
      expect(snapshot.machine).toBe("arm");
      const w = await call(run, "walk", path, "--format", "json");
      expect(w.code, w.err).toBe(0);
      const doc = JSON.parse(w.out) as { threads: { frames: { addrPC: string; addrStack: string }[] }[] };
      const truth = parseVector(readFileSync(path.replace(/\.dmp$/, ".json"), "utf8")).threads[0]!.truth!;
      expect(truth.length).toBeGreaterThan(2);
      expect(doc.threads[0]!.frames.map((f) => [BigInt(f.addrPC), BigInt(f.addrStack)]), dump).toEqual(truth.map((t) => [t.pc, t.sp]));
    }
  });
});
