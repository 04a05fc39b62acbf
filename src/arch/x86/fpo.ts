/**
 * The `fpo` strategy: unwinding with an old FPO_DATA record (x86-fpo.md §1.4). In the body the
 * return address is at esp + calleeParams + locals + savedRegs; in the prolog the bytes up to
 * the PC say what has been pushed; at an epilogue the context frame runs it. fUseBP functions
 * saved the caller's EBP in their register area; FRAME_NONFPO is an EBP frame; FRAME_TRAP and
 * FRAME_TSS end a user-mode walk with their own stop reasons.
 */
import { bigintOfU32 } from "../../memory/bigint-cache.js";
import { readU32, readU32n, type MemoryReader } from "../../memory/reader.js";
import { FRAME_NONFPO, FRAME_TRAP, FRAME_TSS, type FpoData } from "../../model/fpo-data.js";
import type { Registers } from "../../model/snapshot.js";
import type { FuncTableEntry } from "../../walk/frame.js";
import { lazyText } from "../../walk/lazy-text.js";
import type { FrameNumbers, FrameSite, UnwindResult, UnwindRule, UnwindStrategy } from "../../walk/strategy.js";
import { decodeProlog, scanned, scanSlots, type PrologState } from "./code.js";
import { acceptOrScan, EIP_ESP, EIP_ESP_EBP, epilogRule, hex, inherited, RA_SEARCH_WORDS, U32, x86Site, type X86Site } from "./site.js";
import { findFpo, findFrameData } from "./tables.js";

function entryOf(record: FpoData, base: bigint): FuncTableEntry {
  return { kind: "fpo", beginRva: BigInt(record.ulOffStart), endRva: BigInt(record.ulOffStart + record.cbProcSize), moduleBase: base };
}

function labelOf(record: FpoData): string {
  return `fpo rva=${hex(record.ulOffStart)} locals=${record.cdwLocals * 4} regs=${record.cbRegs} params=${record.cdwParams * 4}${record.fUseBP ? " useBP" : ""}`;
}

function nonFpoText(label: string, ebp: bigint): string {
  return `${label} ebp=${hex(ebp)}: eip=[ebp+4]`;
}

function prologText(label: string, pushed: number): string {
  return `${label} ra@esp+${pushed}`;
}

function bodyText(label: string, offset: number, moved: number, ebpSlot: number): string {
  return `${label} ra@esp+${offset}${moved === 0 ? "" : `, found ${moved} bytes above`}${ebpSlot < 0 ? "" : ` ebp@[${hex(ebpSlot)}]`}`;
}

/** A rule that ends the walk: the caller's context is in a kernel structure a user-mode walker cannot see. */
function kernelFrameRule(record: FpoData): UnwindRule {
  const trap = record.cbFrame === FRAME_TRAP;
  const detail = `${labelOf(record)} is a ${trap ? "FRAME_TRAP" : "FRAME_TSS"} record: the caller's context is in a ${trap ? "kernel trap frame (KTRAP_FRAME)" : "task-state segment"}, which a user-mode walk does not follow`;
  return {
    describe: () => detail,
    exec: () => ({ ok: false, final: true, stop: { reason: trap ? "trap-frame" : "tss-frame", detail } }),
  };
}

/** FRAME_NONFPO: a normal EBP frame. */
function nonFpoRule(found: X86Site, record: FpoData, extra: { paramsSize: number; entry: FuncTableEntry }): UnwindRule {
  const label = `${labelOf(record)} FRAME_NONFPO`;
  const stepExtra = { ...extra, recovered: EIP_ESP_EBP };
  return {
    describe: () => `${label}: eip=[ebp+4], esp=ebp+8, ebp=[ebp]`,
    exec(registers: Registers, stack: MemoryReader): UnwindResult {
      // 32-bit arithmetic on numbers: this runs once per frame.
      const ebpBig = registers["ebp"] ?? 0n;
      const ebp = Number(ebpBig);
      const eip = readU32n(stack, (ebp + 4) >>> 0);
      const saved = readU32n(stack, ebp);
      if (eip === undefined || saved === undefined) {
        const at = eip === undefined ? (ebp + 4) >>> 0 : ebp;
        return { ok: false, stop: { reason: "read-fault", address: BigInt(at), detail: `${label}: cannot read ${hex(at)}` } };
      }
      const out = inherited(registers);
      const esp = (ebp + 8) >>> 0;
      out["eip"] = bigintOfU32(eip);
      out["esp"] = esp === ebp + 8 ? ebpBig + 8n : BigInt(esp);
      out["ebp"] = bigintOfU32(saved);
      return acceptOrScan(found, stack, out, lazyText(nonFpoText, label, ebpBig), esp, undefined, stepExtra, undefined, eip, esp);
    },
  };
}

/** In the prolog: the return address is above what the decoded instructions pushed. */
function prologRule(found: X86Site, record: FpoData, state: PrologState, extra: { paramsSize: number; entry: FuncTableEntry }): UnwindRule {
  const label = `${labelOf(record)} prolog [${state.text.join("; ")}]`;
  const stepExtra = { ...extra, recovered: [...EIP_ESP, ...state.saves.map((s) => s.reg).filter((r) => r !== "esp")] };
  return {
    describe: () => label,
    exec(registers: Registers, stack: MemoryReader): UnwindResult {
      const esp = registers["esp"] ?? 0n;
      const raSlot = (esp + BigInt(state.pushed)) & U32;
      const eip = readU32(stack, raSlot);
      if (eip === undefined) return { ok: false, stop: { reason: "read-fault", address: raSlot, detail: `${label}: cannot read the return address at ${hex(raSlot)}` } };
      const out = inherited(registers);
      for (const s of state.saves) {
        if (s.reg === "esp") continue;
        const slot = (esp + BigInt(state.pushed - s.total)) & U32;
        const v = readU32(stack, slot);
        if (v === undefined) return { ok: false, stop: { reason: "read-fault", address: slot, detail: `${label}: cannot read the saved ${s.reg} at ${hex(slot)}` } };
        out[s.reg] = v;
      }
      out["eip"] = eip;
      out["esp"] = (raSlot + 4n) & U32;
      return acceptOrScan(found, stack, out, lazyText(prologText, label, state.pushed), Number((raSlot + 4n) & U32), Number(raSlot), stepExtra);
    },
  };
}

/** In the body: ra = esp + calleeParams + locals + savedRegs, validated by a short scan. */
function bodyRule(site: FrameSite, found: X86Site, record: FpoData, extra: { paramsSize: number; entry: FuncTableEntry }): UnwindRule {
  const label = labelOf(record);
  const locals = record.cdwLocals * 4;
  const saved = record.cbRegs * 4;
  const calleeParams = site.calleeParams;
  const offset = calleeParams + locals + saved;
  const stepExtra = { ...extra, recovered: record.fUseBP ? EIP_ESP_EBP : EIP_ESP };
  // The caller's ESP when nothing moved, as a bigint to add (cheaper than making one per frame).
  const callerEsp = BigInt(offset + 4);
  let plainText: string | undefined;
  return {
    describe: () => `${label}: ra=[esp+${calleeParams}+${locals}+${saved}]`,
    exec(registers: Registers, stack: MemoryReader, numbers?: FrameNumbers): UnwindResult {
      // 32-bit arithmetic on numbers: this runs once per frame.
      const espBig = registers["esp"] ?? 0n;
      const esp = numbers !== undefined && numbers.sp >= 0 ? numbers.sp : Number(espBig);
      const expected = (esp + offset) >>> 0;
      let raSlot = scanSlots(stack, found.modules, found.images, expected, RA_SEARCH_WORDS, found.calleeStart, found.calleeEnd);
      // The scan has read the slot it chose; without one, the slot is read here.
      let eip: number | undefined = scanned.value;
      if (raSlot < 0) {
        raSlot = expected;
        eip = readU32n(stack, raSlot);
      }
      if (eip === undefined) return { ok: false, stop: { reason: "read-fault", address: BigInt(raSlot), detail: `${label}: cannot read the return address at ${hex(raSlot)}` } };
      const out = inherited(registers);
      const after = (raSlot + 4) >>> 0;
      out["eip"] = bigintOfU32(eip);
      out["esp"] = raSlot === expected && esp + offset + 4 <= 0xffff_ffff ? espBig + callerEsp : BigInt(after);
      let ebpSlot = -1;
      if (record.fUseBP) {
        // MSVC saves EBP second (sub esp,L; push ebx; push ebp; ...): x86-fpo.md §1.4 step 3.
        // With one saved register, EBP is that register.
        ebpSlot = (esp + (raSlot - expected) + calleeParams + Math.max(saved - 8, 0)) >>> 0;
        // An unreadable slot leaves the caller's EBP unknown rather than losing the caller.
        const v = readU32n(stack, ebpSlot);
        if (v === undefined) delete out["ebp"];
        else out["ebp"] = BigInt(v);
      }
      // The usual text (nothing moved, no EBP slot) is the same for every frame: made once.
      const moved = raSlot - expected;
      const text = moved === 0 && ebpSlot < 0 ? (plainText ??= bodyText(label, offset, 0, -1)) : lazyText(bodyText, label, offset, moved, ebpSlot);
      return acceptOrScan(found, stack, out, text, after, expected, stepExtra, undefined, eip, after);
    },
  };
}

/** The x86 FPO_DATA strategy (trust `fpo`). At an epilogue with no record at all, it runs the epilogue too. */
export const x86Fpo: UnwindStrategy = {
  name: "fpo",
  trust: "fpo",
  ruleFor(site: FrameSite): UnwindRule | undefined {
    const found = x86Site(site);
    if (found === undefined) return undefined;
    const record = findFpo(found.tables.fpo, found.rva);
    if (record === undefined) {
      // No record of either kind covers the PC: an epilogue is still exact.
      return findFrameData(found.tables.frameData, found.rva) === undefined ? epilogRule(site, found, "no record,") : undefined;
    }
    const extra = { paramsSize: record.cdwParams * 4, entry: entryOf(record, found.module.base) };
    if (record.cbFrame === FRAME_TRAP || record.cbFrame === FRAME_TSS) return kernelFrameRule(record);
    const rule = recordRule(site, found, record, extra);
    return epilogRule(site, found, labelOf(record), extra, rule) ?? rule;
  },
};

function recordRule(site: FrameSite, found: X86Site, record: FpoData, extra: { paramsSize: number; entry: FuncTableEntry }): UnwindRule {
    const offset = found.rva - record.ulOffStart;
    if (offset < record.cbProlog) {
      const state = decodeProlog(site.images, found.module.base + BigInt(record.ulOffStart), site.index === 0 ? site.lookupPc : site.lookupPc + 1n);
      if (state !== undefined) return prologRule(found, record, state, extra);
    }
    if (record.cbFrame === FRAME_NONFPO) return nonFpoRule(found, record, extra);
    return bodyRule(site, found, record, extra);
}
