import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { fixtureFile } from "../../support/fixtures.js";
import { evaluateProgram, parseProgram } from "../../../src/formats/frame-data.js";
import { parseBreakpadSym } from "../../../src/formats/breakpad-sym.js";
import { RegionMemory } from "../../../src/memory/region-memory.js";

// Every distinct program string of the type-4 STACK WIN records in Breakpad's minidump2 symbol
// files (MSVC output through DIA), parsed and run on a synthetic stack whose every word points
// back into the stack, so any chain of `^` reads stays readable.

const SYMBOLS = fixtureFile("breakpad/symbols/");
const FILES = [
  "test_app.pdb/5A9832E5287241C1838ED98914E9B7FF1/test_app.sym",
  "kernel32.pdb/BCE8785C57B44245A669896B6A19B9542/kernel32.sym",
];

/** One program and the sizes of the first record that carries it. */
interface Sample {
  program: string;
  localsSize: number;
  savedRegsSize: number;
  paramsSize: number;
}

/** Distinct programs of `STACK WIN 4 … 1 <program>` lines, read from the text without the parser. */
function programsInText(): Map<string, Sample> {
  const out = new Map<string, Sample>();
  for (const file of FILES) {
    const text = readFileSync(`${SYMBOLS}${file}`, "utf8");
    for (const m of text.matchAll(/^STACK WIN 4 (?:[0-9a-f]+ ){4}([0-9a-f]+) ([0-9a-f]+) ([0-9a-f]+) [0-9a-f]+ 1 (.*?)\r?$/gm)) {
      const program = m[4]!;
      if (!out.has(program)) {
        out.set(program, { program, paramsSize: parseInt(m[1]!, 16), savedRegsSize: parseInt(m[2]!, 16), localsSize: parseInt(m[3]!, 16) });
      }
    }
  }
  return out;
}

const BASE = 0x1200_0000n;
const SIZE = 0x1_0000;

/** 64 KiB at BASE whose every word points into the middle half of the region. */
function selfPointingStack(): RegionMemory {
  const bytes = new Uint8Array(SIZE);
  const view = new DataView(bytes.buffer);
  for (let at = 0; at < SIZE; at += 4) {
    const target = 0x4000 + ((at * 7919) % 0x8000);
    view.setUint32(at, Number(BASE) + (target & ~3), true);
  }
  return new RegionMemory([{ base: BASE, bytes }]);
}

describe("MSVC program strings from Breakpad's test_app.sym and kernel32.sym", () => {
  const samples = programsInText();

  it("finds 162 distinct programs, and the parser keeps the same strings", () => {
    console.log(`distinct type-4 programs in the two .sym files: ${samples.size}`);
    expect(samples.size).toBe(162);
    const parsed = new Set<string>();
    for (const file of FILES) {
      for (const r of parseBreakpadSym(new Uint8Array(readFileSync(`${SYMBOLS}${file}`))).stackWin) {
        if (r.type === 4 && r.program !== undefined) parsed.add(r.program);
      }
    }
    // Records dropped by the contained-range rule may take a program with them, never add one.
    for (const p of parsed) expect(samples.has(p)).toBe(true);
  });

  it("parses and evaluates every one of them, assigning $eip and $esp", () => {
    const memory = selfPointingStack();
    const esp = BASE + 0x8000n;
    const ebp = BASE + 0x8100n;
    const failures: string[] = [];
    for (const s of samples.values()) {
      const parsed = parseProgram(s.program);
      if (!parsed.ok) {
        failures.push(`parse: ${s.program}: token ${parsed.error.token}: ${parsed.error.reason}`);
        continue;
      }
      const raSearch = esp + BigInt(s.localsSize + s.savedRegsSize);
      const inputs = {
        $eip: 0x0040_429en,
        $esp: esp,
        $ebp: ebp,
        $ebx: 0x1111n,
        $esi: 0x2222n,
        $edi: 0x3333n,
        ".raSearch": raSearch,
        ".raSearchStart": raSearch,
        ".cbLocals": BigInt(s.localsSize),
        ".cbSavedRegs": BigInt(s.savedRegsSize),
        ".cbParams": BigInt(s.paramsSize),
        ".cbCalleeParams": 0n,
      };
      const r = evaluateProgram(parsed.program, inputs, memory);
      if (!r.ok) {
        failures.push(`evaluate: ${s.program}: token ${r.error.token}: ${r.error.reason}`);
        continue;
      }
      // Breakpad's dictionary has no $eip, $esi or $edi (x86-fpo.md §5.2 step 1): none of these programs reads them.
      const { $eip: _eip, $esi: _esi, $edi: _edi, ...breakpadInputs } = inputs;
      const b = evaluateProgram(parsed.program, breakpadInputs, memory);
      if (!b.ok) failures.push(`evaluate without $eip/$esi/$edi: ${s.program}: token ${b.error.token}: ${b.error.reason}`);
      if (!r.assigned.has("$eip") || !r.assigned.has("$esp")) failures.push(`no $eip/$esp: ${s.program}`);
      // The caller's ESP is above the callee's: every MSVC program moves it up past a return address.
      else if (r.values.get("$esp")! <= esp) failures.push(`$esp did not move up: ${s.program}`);
    }
    expect(failures).toEqual([]);
  });
});
