import { copyFileSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mapPeImage } from "../../emulator/pe-loader.js";
import { runImageFile } from "../../emulator/run.js";
import { functionNameAt, loadModuleSymbols, undecorate } from "../../emulator/symbols.js";
import { UC_PROT, Unicorn } from "../../emulator/unicorn.js";
import { InputError } from "../../src/errors.js";
import { parsePe } from "../../src/formats/pe.js";
import { IMAGE_FILE_MACHINE } from "../../src/model/machine.js";

const BUILD = "vectors/programs/c/build";
const X86 = `${BUILD}/x86-fpo/recursion-callbacks.exe`;
const X64 = `${BUILD}/x64/recursion-callbacks.exe`;

const engines: Unicorn[] = [];
afterEach(() => {
  for (const uc of engines.splice(0)) uc.close();
});
function engine<M extends 32 | 64>(mode: M): Unicorn<M> {
  const uc = Unicorn.open(mode);
  engines.push(uc);
  return uc;
}

/** The error `f` throws. */
function thrown(f: () => unknown): InputError {
  try {
    f();
  } catch (e) {
    if (e instanceof InputError) return e;
    throw e;
  }
  throw new Error("nothing was thrown");
}

describe("mapping a PE image", () => {
  it("maps headers and sections at ImageBase with the sections' permissions", () => {
    const pe = parsePe(readFileSync(X86));
    const uc = engine(32);
    const image = mapPeImage(uc, pe, { name: "recursion-callbacks.exe" });
    expect(image.base).toBe(0x400000n);
    expect(image.size).toBe(0x4000n);
    expect(image.module).toEqual({ name: "recursion-callbacks.exe", base: 0x400000n, size: 0x4000n, symbols: [] });
    expect(uc.memRead(0x400000n, 0x4000)).toEqual(pe.mapped());
    expect(uc.memRegions().map((r) => [r.begin, r.end, r.perms])).toEqual([
      [0x400000n, 0x400fffn, UC_PROT.READ], // headers
      [0x401000n, 0x401fffn, UC_PROT.READ | UC_PROT.EXEC], // .text
      [0x402000n, 0x402fffn, UC_PROT.READ], // .rdata
      [0x403000n, 0x403fffn, UC_PROT.READ | UC_PROT.WRITE], // .data
    ]);
  });

  it("refuses an image of the other width", () => {
    const e = thrown(() => mapPeImage(engine(32), parsePe(readFileSync(X64)), { name: "x.exe" }));
    expect(e.code).toBe("unsupported");
    expect(e.message).toBe("x.exe: an x64 image (machine 0x8664) cannot run on the 32-bit CPU");
    expect(() => mapPeImage(engine(64), parsePe(readFileSync(X86)), { name: "y.exe" })).toThrow("y.exe: an x86 image (machine 0x14c) cannot run on the 64-bit CPU");
  });

  it("refuses an image with imports", () => {
    const bytes = Uint8Array.from(readFileSync(X86));
    const view = new DataView(bytes.buffer);
    // The import directory is data directory 1: after the signature, the file header and the
    // 96-byte fixed part of the PE32 optional header.
    const importDirectory = view.getUint32(0x3c, true) + 4 + 20 + 96 + 8;
    view.setUint32(importDirectory, 0x2000, true);
    view.setUint32(importDirectory + 4, 40, true);
    const e = thrown(() => mapPeImage(engine(32), parsePe(bytes), { name: "imports.exe" }));
    expect(e.code).toBe("unsupported");
    expect(e.message).toBe("imports.exe: has an import directory (RVA 0x2000, 40 bytes); the emulator binds no imports, so only freestanding images run");
  });

  it("refuses an image whose preferred range is taken (it would need relocation)", () => {
    const pe = parsePe(readFileSync(X86));
    const uc = engine(32);
    mapPeImage(uc, pe, { name: "first.exe" });
    const e = thrown(() => mapPeImage(uc, pe, { name: "second.exe" }));
    expect(e.code).toBe("unsupported");
    expect(e.message).toBe(
      "second.exe: needs relocation: its preferred range 0x400000..0x404000 overlaps memory already mapped at 0x400000..0x401000, and the emulator does not apply base relocations",
    );
  });

  it("runImageFile names the file in load errors", async () => {
    await expect(runImageFile(`${BUILD}/x86-fpo/missing.exe`)).rejects.toThrow(`${BUILD}/x86-fpo/missing.exe: cannot read: no such file`);
    await expect(runImageFile(`${BUILD}/x86-fpo/recursion-callbacks.pdb`)).rejects.toThrow(/recursion-callbacks\.pdb: offset 0x0: not a PE image/);
  });
});

describe("module symbols from the PDB beside the image", () => {
  it("undecorates x86 public names and leaves x64 names alone", () => {
    const x86 = IMAGE_FILE_MACHINE.I386;
    expect(undecorate("_f", x86)).toBe("f");
    expect(undecorate("_f@12", x86)).toBe("f");
    expect(undecorate("@f@12", x86)).toBe("f");
    expect(undecorate("__chkstk", x86)).toBe("_chkstk");
    expect(undecorate("f", x86)).toBe("f");
    expect(undecorate("__chkstk", IMAGE_FILE_MACHINE.AMD64)).toBe("__chkstk");
  });

  it("prefers procedures (with sizes), keeps one name per address, sorted by RVA", () => {
    const symbols = loadModuleSymbols(X86, parsePe(readFileSync(X86)));
    expect(symbols.map((s) => s.name)).toEqual([
      "combine", "op_add", "op_sub", "op_xor", "op_mix", "tree_sum", "ping", "pong", "dispatch", "run_table", "fold",
      "std_weigh", "fast_weigh", "node_scaled", "call_conventions", "entry", "_chkstk",
    ]);
    expect(symbols.find((s) => s.name === "entry")).toMatchObject({ name: "entry", rva: 0x1240n, size: 150n });
    expect(symbols.find((s) => s.name === "entry")!.lines![0]).toMatchObject({ rva: 0x1240n, line: 143 });
    // __chkstk and __alloca_probe are one routine; the shorter name is kept, without a size.
    expect(symbols.at(-1)).toEqual({ name: "_chkstk", rva: 0x12e0n });
    const module = { name: "r.exe", base: 0x400000n, size: 0x4000n, symbols };
    expect(functionNameAt([module], 0x401241n)).toBe("entry");
    expect(functionNameAt([module], 0x4012e5n)).toBe("_chkstk");
    expect(functionNameAt([module], 0x500000n)).toBeUndefined();
  });

  it("has no symbols without a PDB, and refuses a PDB of another build", () => {
    const dir = mkdtempSync(join(tmpdir(), "pe-loader-"));
    copyFileSync(X86, join(dir, "app.exe"));
    const pe = parsePe(readFileSync(X86));
    expect(loadModuleSymbols(join(dir, "app.exe"), pe)).toEqual([]);
    copyFileSync(`${BUILD}/x86-fpo/noreturn-longjmp.pdb`, join(dir, "app.pdb"));
    expect(() => loadModuleSymbols(join(dir, "app.exe"), pe)).toThrow(/app\.pdb: does not belong to app\.exe: the PDB's debug id is [0-9A-F]+1, the image's [0-9A-F]+1/);
  });
});
