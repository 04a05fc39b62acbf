/**
 * `stackwalk emulate <arm64 image> --break F --dmp` end to end: ARM64 minidumps (the 912-byte
 * ARM64_NT_CONTEXT, SystemInfo 12) and the module's .sym in a symbol store beside them, with
 * STACK CFI from the image's .pdata/.xdata; `stackwalk walk X.dmp` then walks each dump to the
 * vector's ground truth.
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

const PE = "vectors/programs/c/build/arm64/recursion-callbacks.exe";

type Io = { code: number; out: string; err: string };
const io = (): { out: string; err: string; sink: { out: (t: string) => void; err: (t: string) => void } } => {
  const r = { out: "", err: "", sink: { out: (t: string) => void (r.out += t), err: (t: string) => void (r.err += t) } };
  return r;
};

async function emulate(...argv: string[]): Promise<Io> {
  const r = io();
  const code = await emulateCommand(argv, r.sink);
  return { code, out: r.out, err: r.err };
}

async function cli(...argv: string[]): Promise<Io> {
  const r = io();
  const code = await run(argv, r.sink);
  return { code, out: r.out, err: r.err };
}

describe("stackwalk emulate --dmp on ARM64", () => {
  it("writes ARM64 dumps and a .sym with STACK CFI, and the dumps walk to the truth", async () => {
    const dir = mkdtempSync(join(tmpdir(), "emulate-dmp-arm64-"));
    const r = await emulate(PE, "--break", "op_mix", "--break", "combine", "--dmp", "-o", `${dir}/`);
    expect(r.code, r.err).toBe(0);
    const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort();
    expect(dumps.length).toBeGreaterThan(4);
    const symDir = join(dir, "recursion-callbacks.pdb");
    const [id] = readdirSync(symDir);
    const sym = parseBreakpadSym(readFileSync(join(symDir, id!, "recursion-callbacks.sym"), "utf8"));
    expect(sym.module.arch).toBe("arm64");
    expect(sym.stackCfi.length).toBeGreaterThan(10);
    for (const dump of dumps) {
      const path = join(dir, dump);
      const snapshot = minidumpSnapshot(readMinidump(bytesSource(readFileSync(path))));
      expect(snapshot.machine).toBe("arm64");
      const w = await cli("walk", path, "--format", "json");
      expect(w.code, w.err).toBe(0);
      const doc = JSON.parse(w.out) as { threads: { frames: { addrPC: string; addrStack: string }[] }[] };
      const truth = parseVector(readFileSync(path.replace(/\.dmp$/, ".json"), "utf8")).threads[0]!.truth!;
      const hex = (v: bigint): string => `0x${v.toString(16).padStart(16, "0")}`;
      expect(doc.threads[0]!.frames.map((f) => [f.addrPC, f.addrStack]), dump).toEqual(truth.map((t) => [hex(t.pc), hex(t.sp)]));
    }
  });
});
