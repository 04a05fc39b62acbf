/**
 * The ARM target of `stackwalk compare`: the chain's functions assembled by Keystone in Thumb
 * state into a PE32 image for machine 0x1C4 whose packed `.pdata` words stand for exactly the code
 * that was assembled. Each word is expanded with the canonical prolog and epilog of Microsoft's
 * "ARM exception handling" (emulator/arm/thumb-model.ts), and Capstone, which decodes the bytes
 * independently of both, must find those instructions, sizes included, at the function's start
 * and end.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { canonicalPacked, insnSize, type Insn } from "../../emulator/arm/thumb-model.js";
import { armChainFunctions, parseChainSpec } from "../../emulator/compare.js";
import { loadDisassembler } from "../../emulator/disassemble.js";
import { ARM_IMAGE_BASE, buildArmProgram } from "../../emulator/programs/arm-chain.js";
import { packedFields } from "../../src/formats/unwind-data/arm.js";
import { parsePe } from "../../src/formats/pe.js";
import { ROOT } from "../support/corpus.js";

/** The mnemonic Capstone gives each modelled instruction. */
const MNEMONIC: Partial<Record<Insn["op"], RegExp>> = { push: /^push/, "set-fp": /^(add|mov)/, "sub-sp": /^sub/, "add-sp": /^add/, pop: /^pop/, ret: /^bx$/ };

describe("the ARM compare target", () => {
  for (const name of ["config-parser", "deep-leaf"]) {
    it(`${name}: a PE32 image for ARMNT whose packed .pdata words describe the Thumb-2 code Keystone assembled`, async () => {
      const file = `vectors/programs/chains/${name}.json`;
      const spec = parseChainSpec(readFileSync(`${ROOT}${file}`, "utf8"), file);
      const program = await buildArmProgram({ name, description: spec.description, functions: armChainFunctions(spec) });
      const pe = parsePe(program.image);
      expect(pe.machine).toBe(0x1c4);
      const exception = pe.dataDirectories[3]!;
      const pdata = new DataView(pe.readRva(exception.rva, exception.size)!.slice().buffer);
      const entries = Array.from({ length: exception.size / 8 }, (_, k) => ({ begin: pdata.getUint32(8 * k, true), word: pdata.getUint32(8 * k + 4, true) }));
      const cs = await loadDisassembler();
      expect(entries.length).toBeGreaterThanOrEqual(program.symbols.length - 1);
      program.symbols.forEach((symbol, i) => {
        const code = pe.readRva(Number(symbol.rva), Number(symbol.size))!;
        const decoded = cs.disassemble(code, ARM_IMAGE_BASE + symbol.rva, "arm");
        expect(decoded.reduce((n, d) => n + d.size, 0)).toBe(code.length);
        // The Thumb bit is set in a function start; the word is packed (Flag 1).
        const entry = entries.find((e) => e.begin === (Number(symbol.rva) | 1));
        if (entry === undefined) {
          // Only a leaf that saves and allocates nothing has no entry: it touches neither sp nor lr.
          expect(i, symbol.name).toBe(program.symbols.length - 1);
          expect(decoded.map((d) => d.mnemonic).filter((m) => /^(push|pop|sub|add|str|ldr)/.test(m))).toEqual([]);
          expect(decoded.at(-1)!.text).toBe("bx lr");
          return;
        }
        const fields = packedFields(entry.word);
        expect(fields.flag).toBe(1);
        expect(BigInt(fields.functionLength)).toBe(symbol.size);
        const last = i === program.symbols.length - 1;
        // Callers save lr with r11 (L, C) and return by popping pc; the leaf keeps lr and returns with bx lr.
        expect([fields.l, fields.c, fields.ret]).toEqual(last ? [false, false, 1] : [true, true, 0]);
        const { prolog, epilog } = canonicalPacked({ ...fields, flag: 1 });
        const check = (modelled: readonly Insn[], found: typeof decoded): void => {
          expect(found.map((d) => d.size), found.map((d) => d.text).join("; ")).toEqual(modelled.map(insnSize));
          modelled.forEach((m, k) => expect(found[k]!.mnemonic).toMatch(MNEMONIC[m.op]!));
        };
        check(prolog, decoded.slice(0, prolog.length));
        check(epilog!, decoded.slice(decoded.length - epilog!.length));
      });
    });
  }
});
