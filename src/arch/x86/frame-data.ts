/**
 * The `frame-data` strategy: unwinding with a FrameData record's program string (x86-fpo.md §2,
 * §3, §8). `.raSearch` is a search start: computed from the record's sizes and the callee's
 * parameter bytes, moved to the first of the next 8 words that holds a return address, or taken
 * from EBP + 4 when the program realigns the stack. A result whose EIP is not a return address
 * is repaired by scanning (trust `scan`). At an epilogue the context frame runs the epilogue.
 */
import type { FrameData } from "../../formats/frame-data.js";
import type { MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import type { FuncTableEntry } from "../../walk/frame.js";
import type { FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../../walk/strategy.js";
import { scanForReturnAddress } from "./code.js";
import { evaluateProgram, PROGRAM_REGISTERS, type ProgramInputs } from "./program.js";
import { acceptOrScan, epilogRule, hex, inherited, RA_SEARCH_WORDS, U32, x86Site, type X86Site } from "./site.js";
import { findFrameData, outermostFrameData, recordProgram } from "./tables.js";

/** The program Breakpad runs for a type-4 record without a program string (x86-fpo.md §5.2 step 4). */
const NO_PROGRAM = "$T0 .raSearchStart = $eip $T0 ^ = $esp $T0 4 + =";
const NO_PROGRAM_PARSED = recordProgram({
  rvaStart: 0, codeSize: 0, localSize: 0, paramsSize: 0, maxStackSize: 0, frameFunc: 0, prologSize: 0, savedRegsSize: 0,
  flags: 0, hasSEH: false, hasEH: false, isFunctionStart: false, program: NO_PROGRAM,
});

function entryOf(record: FrameData, base: bigint): FuncTableEntry {
  return { kind: "frame-data", beginRva: BigInt(record.rvaStart), endRva: BigInt(record.rvaStart + record.codeSize), moduleBase: base };
}

function frameDataRule(site: FrameSite, found: X86Site, record: FrameData): UnwindRule {
  const base = found.module.base;
  const parsed = recordProgram(record) ?? NO_PROGRAM_PARSED;
  const label = `frame-data rva=${hex(record.rvaStart)} locals=${record.localSize} saved=${record.savedRegsSize} params=${record.paramsSize}`;
  const calleeParams = site.calleeParams;
  const entry = entryOf(record, base);
  return {
    describe: () => `${label}: ${record.program ?? NO_PROGRAM}`,
    exec(registers: Registers, stack: MemoryReader): UnwindResult {
      if (parsed === undefined || !parsed.ok) {
        const why = parsed === undefined ? "no program" : `token ${parsed.error.token}: ${parsed.error.reason}`;
        return { ok: false, stop: { reason: "unsupported", detail: `${label}: the program string does not parse (${why})` } };
      }
      const esp = registers["esp"] ?? 0n;
      const ebp = registers["ebp"];
      const expected = (esp + BigInt(calleeParams + record.localSize + record.savedRegsSize)) & U32;
      let start = expected;
      let where = `ra@esp+${calleeParams + record.localSize + record.savedRegsSize}`;
      if (parsed.usesRaSearch) {
        if (parsed.program.realigns && ebp !== undefined) {
          start = (ebp + 4n) & U32;
          where = "ra@ebp+4 (realigned)";
        } else {
          const hit = scanForReturnAddress(stack, site.modules, site.images, start, RA_SEARCH_WORDS, found.callee);
          if (hit !== undefined && hit.slot !== start) {
            where += `, found ${Number(hit.slot - start)} bytes above`;
            start = hit.slot;
          }
        }
      }
      const inputs: ProgramInputs = {
        ".raSearch": start,
        ".raSearchStart": start,
        ".cbLocals": BigInt(record.localSize),
        ".cbSavedRegs": BigInt(record.savedRegsSize),
        ".cbParams": BigInt(record.paramsSize),
        ".cbCalleeParams": BigInt(calleeParams),
      };
      for (const r of PROGRAM_REGISTERS) {
        const v = registers[r];
        if (v !== undefined) inputs[`$${r}`] = v;
      }
      const result = evaluateProgram(parsed.program, inputs, stack);
      const registersOf = (r: { values: Map<string, bigint>; assigned: Set<string> }): Registers => {
        const out = inherited(registers);
        for (const name of CALLER_REGISTERS) {
          if (r.assigned.has(`$${name}`)) out[name] = r.values.get(`$${name}`)!;
        }
        return out;
      };
      // An EBP-based program run on a wrong EBP (one the function already reloaded) is run again
      // with the EBP that a standard frame has for a return-address slot found from ESP.
      const reevaluate = parsed.usesRaSearch
        ? undefined
        : (raSlot: bigint): Registers | undefined => {
            const again = evaluateProgram(parsed.program, { ...inputs, $ebp: (raSlot - 4n) & U32 }, stack);
            return again.ok && again.assigned.has("$eip") && again.assigned.has("$esp") ? registersOf(again) : undefined;
          };
      if (!result.ok) {
        const e = result.error;
        const stop = e.address !== undefined
          ? { reason: "read-fault" as const, address: e.address, detail: `${label}: ${e.reason}` }
          : { reason: "unsupported" as const, detail: `${label}: the program fails at token ${e.token}: ${e.reason}` };
        return { ok: false, stop };
      }
      if (!result.assigned.has("$eip") || !result.assigned.has("$esp")) {
        return { ok: false, stop: { reason: "unsupported", detail: `${label}: the program does not assign ${result.assigned.has("$eip") ? "$esp" : "$eip"}` } };
      }
      return acceptOrScan(site, found, stack, registersOf(result), `${label} ${where}`, (start + 4n) & U32, expected, { paramsSize: record.paramsSize, entry }, reevaluate);
    },
  };
}

/** Registers a program's result sets in the caller frame. */
const CALLER_REGISTERS = ["eip", "esp", "ebp", "ebx", "esi", "edi"] as const;

/** A step that found a return address without scanning. */
function exact(result: UnwindResult): boolean {
  return result.ok && result.step.trust === undefined && (result.step.registers["eip"] ?? 0n) !== 0n;
}

/**
 * For a caller frame, the record at ra − 1 describes the call; a record of the same function
 * that starts exactly at the return address describes the state the call leaves (a stack
 * probe's call performs the allocation). The first is tried first; when its answer needs a scan
 * or ends the stack, the second is tried, and used when it finds a return address directly.
 */
function withRecordAtReturn(primary: UnwindRule, alternative: UnwindRule): UnwindRule {
  return {
    describe: () => `${primary.describe()}; else ${alternative.describe()}`,
    exec(registers, stack) {
      const first = primary.exec(registers, stack);
      if (exact(first)) return first;
      const second = alternative.exec(registers, stack);
      if (!exact(second) || !second.ok) return first;
      return { ok: true, step: { ...second.step, rule: `${second.step.rule} (the record that starts at the return address)` } };
    },
  };
}

/** The x86 FrameData strategy (trust `frame-data`). */
export const x86FrameData: UnwindStrategy = {
  name: "frame-data",
  trust: "frame-data",
  ruleFor(site: FrameSite): UnwindRule | undefined {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    const record = findFrameData(found.tables.frameData, found.rva);
    if (record === undefined) return undefined;
    let rule = frameDataRule(site, found, record);
    if (site.index > 0) {
      const atReturn = findFrameData(found.tables.frameData, found.rva + 1);
      if (atReturn !== undefined && atReturn !== record && atReturn.rvaStart === found.rva + 1 && outermostFrameData(found.tables.frameData, found.rva + 1) === outermostFrameData(found.tables.frameData, found.rva)) {
        rule = withRecordAtReturn(rule, frameDataRule(site, found, atReturn));
      }
    }
    return epilogRule(site, found, `frame-data rva=${hex(record.rvaStart)}`, { paramsSize: record.paramsSize, entry: entryOf(record, found.module.base) }, rule) ?? rule;
  },
};
