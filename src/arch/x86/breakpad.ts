/**
 * Breakpad's x86 stack walker (`stackwalker_x86.cc`, minidump.md §5.5, x86-fpo.md §5), as its
 * sources state it, for `--walker breakpad` and the Breakpad report. Per frame, in order:
 *
 * 1. **STACK WIN** (a FrameData record, else an FPO_DATA one): the record's program string, or the
 *    program Breakpad writes for a record without one (`allocates_base_pointer`: EIP, EBP and ESP
 *    from `.raSearchStart`; otherwise EIP and ESP, EBX carried over when the callee had it), run by
 *    Breakpad's postfix evaluator, which knows registers by name only (`$ebx`, never a CodeView
 *    number such as `$20`). `.raSearchStart` is first moved to the first word in the next four that
 *    passes Breakpad's scan test. A program that fails, or leaves EIP or ESP unset, gives way to a
 *    scan from ESP; an EIP outside every module is replaced by a scan from `.raSearchStart + 4`
 *    (Breakpad's "call frame info with scanning"); where the caller's EBP looks wrong, the
 *    saved-register area is searched for a word that points into the stack. A rule whose scan
 *    finds nothing leaves the frame to the next strategy.
 * 2. **STACK CFI** (`../cfi.ts`, the x86 register map; EIP, ESP and EBP must be recovered).
 * 3. **The EBP chain**: EIP = [EBP + 4], EBP = [EBP], ESP = EBP + 8 when both words read; else a
 *    scan from ESP, the caller's EBP the word below the return address when it points above
 *    itself by at most 128 KiB, else the callee's.
 *
 * Scans take a word when `word − 1` lies in a module and, when that module has symbols, in one of
 * its functions (../scan.ts `breakpadClassify`). A caller frame of these rules is then judged by
 * the walk's progress rules, which are Breakpad's `TerminateWalk`: a rejected frame ends the walk.
 */
import { readU32, type MemoryReader } from "../../memory/reader.js";
import type { Registers } from "../../model/snapshot.js";
import { moduleAt } from "../../model/snapshot.js";
import type { FrameData } from "../../model/frame-data.js";
import type { FpoData } from "../../model/fpo-data.js";
import type { FrameDataRule, SiteCheckRule } from "./rule.js";
import type { FramePointerRule, ScanRule } from "../../unwind/rule.js";
import { unwindStep, type ExecContext, type UnwindResult } from "../step.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { walkStop } from "../../unwind/frame.js";
import { symbolize } from "../../unwind/symbolize.js";
import { breakpadClassify, breakpadClassifyN, callSiteCheck, scanForReturn, type CallSiteCheck, type ScanMachine } from "../scan.js";
import { X86_SCAN } from "./scan.js";
import { X86_CHAIN } from "./frame-pointer.js";
import { SCAN_WORDS, SCAN_WORDS_CONTEXT, U32 } from "./site.js";
import { findFpo, findFrameData } from "./tables.js";
import { BREAKPAD_STACK_WIN, compilePostfix, isPostfixError, runPostfix, type PostfixCode } from "../../formats/postfix.js";
import { keyed, keyedSlot } from "../../unwind/cache.js";
import { work } from "../../unwind/work.js";

/** The x86 scan with Breakpad's test of a word and nothing else: its window alone, no call-site checks. */
export const X86_BREAKPAD_SCAN: ScanMachine = {
  ...X86_SCAN,
  extendedWords: 0,
  classify: (_cache, modules, _images, value) => breakpadClassify(modules, value),
  classifyN: (cache, modules, _images, value) => breakpadClassifyN(cache, modules, value),
};

/** A STACK WIN record as Breakpad's `WindowsFrameInfo` holds it. */
interface WinInfo {
  /** 4 (FrameData) or 0 (FPO_DATA). */
  type: 0 | 4;
  paramsSize: number;
  savedRegsSize: number;
  localsSize: number;
  program: string | undefined;
  allocatesBasePointer: boolean;
  /** The record, for the frame's rule. */
  frameData?: FrameData;
  fpo?: FpoData;
}

/** Breakpad's STACK WIN rule for one frame. */
export interface X86BreakpadWinPlan {
  kind: "x86-breakpad-win";
  info: WinInfo;
  /** The frame being unwound is the context frame. */
  contextFrame: boolean;
  /** `.cbCalleeParams`: see {@link breakpadWindowsParams}. */
  calleeParams: number;
  check: CallSiteCheck;
}

/** Breakpad's EBP-chain rule, with its scan when the chain cannot be read. */
export interface X86BreakpadFramePointerPlan {
  kind: "x86-breakpad-fp";
  contextFrame: boolean;
  check: CallSiteCheck;
}


/**
 * Breakpad's `WindowsFrameInfo` for a site: a FrameData (type 4) record first, then FPO_DATA
 * (type 0), from the module's symbol file (never from its image, which Breakpad does not read).
 */
function winInfo(site: FrameSite): WinInfo | undefined {
  const module = moduleAt(site.modules, site.lookupPc);
  const unwind = module?.unwind;
  if (module === undefined || unwind === undefined) return undefined;
  const rva = Number(site.lookupPc - module.base);
  const fd = unwind.frameDataIndex !== undefined ? unwind.frameDataIndex.innermost(rva) : findFrameData(unwind.frameData, rva);
  if (fd !== undefined) {
    return { type: 4, paramsSize: fd.paramsSize, savedRegsSize: fd.savedRegsSize, localsSize: fd.localSize, program: fd.program, allocatesBasePointer: false, frameData: fd };
  }
  const fpo = findFpo(unwind.fpo, rva);
  if (fpo === undefined) return undefined;
  return { type: 0, paramsSize: fpo.cdwParams * 4, savedRegsSize: fpo.cbRegs * 4, localsSize: fpo.cdwLocals * 4, program: undefined, allocatesBasePointer: fpo.fUseBP, fpo };
}

/**
 * The parameter size of Breakpad's `WindowsFrameInfo` for a frame: its STACK WIN record's, else
 * that of the FUNC covering it (`VALID_PARAMETER_SIZE` alone); undefined when it has neither (a
 * PUBLIC gives none). Breakpad's `.cbCalleeParams` for every later frame is that of the innermost
 * frame that has one (its loop over the callees runs down to frame 0 and keeps the last it sees),
 * so the walk keeps the first it finds (walk.ts).
 */
export function breakpadWindowsParams(site: FrameSite): number | undefined {
  const info = winInfo(site);
  if (info !== undefined) return info.paramsSize;
  const module = moduleAt(site.modules, site.lookupPc);
  if (module === undefined) return undefined;
  const match = symbolize(module, site.lookupPc - module.base);
  const s = match?.symbol;
  return s !== undefined && s.kind === "func" ? (s.paramSize ?? 0) : undefined;
}

/** Breakpad's STACK WIN strategy (trust `frame-data`: "call frame info"). */
export const x86BreakpadWin: UnwindStrategy<X86BreakpadWinPlan> = {
  name: "breakpad-stack-win",
  trust: "frame-data",
  ruleFor(site: FrameSite): X86BreakpadWinPlan | undefined {
    const info = winInfo(site);
    return info === undefined ? undefined : { kind: "x86-breakpad-win", info, contextFrame: site.index === 0, calleeParams: site.calleeParams, check: callSiteCheck(site) };
  },
};

/** Breakpad's EBP chain with its scan (trust `frame-pointer`, or `scan` when it scanned). */
export const x86BreakpadFramePointer: UnwindStrategy<X86BreakpadFramePointerPlan> = {
  name: "breakpad-frame-pointer",
  trust: "frame-pointer",
  ruleFor: (site: FrameSite) => ({ kind: "x86-breakpad-fp", contextFrame: site.index === 0, check: callSiteCheck(site) }),
};

/** A value of a register the frame has valid (Breakpad's context validity). */
function valid(registers: Registers, ctx: ExecContext, name: string): bigint | undefined {
  return ctx.recovered === undefined || ctx.recovered.includes(name) ? registers[name] : undefined;
}

/** Breakpad's `ScanForReturnAddress` over `words + 1` words from `start`: the slot and the word, or undefined. */
function scan(plan: { check: CallSiteCheck }, memory: MemoryReader, ctx: ExecContext, start: bigint, words: number): { slot: bigint; value: bigint } | undefined {
  return scanForReturn(X86_BREAKPAD_SCAN, ctx.cache, memory, { check: plan.check, start: start & U32, words });
}

/**
 * Breakpad's postfix evaluator (`PostfixEvaluator<uint32_t>::Evaluate`), the
 * {@link BREAKPAD_STACK_WIN} dialect of formats/postfix.ts: runs a program over `dictionary`,
 * assigning into it and adding each assigned name to `assigned` (also what a failing program
 * assigned before it failed, as Breakpad's dictionary keeps it). False when the program is past the
 * postfix limits, a name is unknown, a read fails, a division is by 0 or values are left over.
 */
export function breakpadEvaluate(program: string | PostfixCode<number>, dictionary: Map<string, number>, assigned: Set<string>, memory: MemoryReader): boolean {
  let code: PostfixCode<number>;
  if (typeof program === "string") {
    const compiled = compilePostfix(program, BREAKPAD_STACK_WIN);
    if (!compiled.ok) return false;
    code = compiled.code;
  } else code = program;
  const variables = code.variables;
  const slots: (number | undefined)[] = new Array<number | undefined>(variables.length);
  for (let i = 0; i < variables.length; i++) slots[i] = dictionary.get(variables[i]!);
  const flags = code.assigns ? new Uint8Array(variables.length) : undefined;
  work.units += code.ops.length;
  const answer = runPostfix(code, slots, memory, flags);
  if (flags !== undefined) {
    for (let i = 0; i < variables.length; i++) {
      if (flags[i] === 1) {
        dictionary.set(variables[i]!, slots[i]!);
        assigned.add(variables[i]!);
      }
    }
  }
  return !isPostfixError(answer);
}

/** The programs Breakpad writes for a record without one (`allocates_base_pointer`, or not, with EBX carried over or not). */
const SYNTHESIZED = {
  basePointer: compileWin("$eip .raSearchStart ^ = $ebp $esp .cbCalleeParams + .cbSavedRegs + 8 - ^ = $esp .raSearchStart 4 + ="),
  plain: compileWin("$eip .raSearchStart ^ = $esp .raSearchStart 4 + ="),
  plainEbx: compileWin("$eip .raSearchStart ^ = $esp .raSearchStart 4 + = $ebx $ebx ="),
};

function compileWin(text: string): PostfixCode<number> {
  const compiled = compilePostfix(text, BREAKPAD_STACK_WIN);
  if (!compiled.ok) throw new Error(`${text}: ${compiled.error.reason}`);
  return compiled.code;
}

/** A record's program, read once per record and cache (undefined past the postfix limits). */
const WIN_PROGRAMS = keyedSlot<FrameData, PostfixCode<number> | undefined>("Breakpad STACK WIN programs");

/** The registers of a caller frame: the callee's, with those Breakpad sets. */
function callerOf(registers: Registers, eip: number, esp: number, ebp: number): Registers {
  return { ...registers, eip: BigInt(eip), esp: BigInt(esp), ebp: BigInt(ebp) };
}

/** Runs Breakpad's STACK WIN rule (`GetCallerByWindowsFrameInfo`). */
export function execBreakpadWin(plan: X86BreakpadWinPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const { info } = plan;
  const esp = Number(registers["esp"] ?? 0n);
  const ebpValid = valid(registers, ctx, "ebp");
  const ebxValid = valid(registers, ctx, "ebx");
  const dictionary = new Map<string, number>([
    ["$ebp", Number(registers["ebp"] ?? 0n)],
    ["$esp", esp],
  ]);
  if (ebxValid !== undefined) dictionary.set("$ebx", Number(ebxValid));
  dictionary.set(".cbCalleeParams", plan.calleeParams);
  dictionary.set(".cbSavedRegs", info.savedRegsSize);
  dictionary.set(".cbLocals", info.localsSize);
  let raSearchStart = (esp + plan.calleeParams + info.localsSize + info.savedRegsSize) >>> 0;
  // Up to three words above, in case the stack was aligned; an FPO system call at the context
  // frame leaves its own EIP on top of the stack, which is skipped.
  const before = raSearchStart;
  const near = scan(plan, memory, ctx, BigInt(raSearchStart), 3);
  if (near !== undefined) {
    raSearchStart = Number(near.slot);
    if (plan.contextFrame && info.type === 0 && raSearchStart === before && near.value === registers["eip"]) {
      raSearchStart = (raSearchStart + 4) >>> 0;
      const again = scan(plan, memory, ctx, BigInt(raSearchStart), 3);
      if (again !== undefined) raSearchStart = Number(again.slot);
    }
  }
  dictionary.set(".cbParams", info.paramsSize);
  let program: string | PostfixCode<number> | undefined;
  let recoverEbp = true;
  if (info.program !== undefined && info.program !== "") {
    const text = info.program;
    program = info.frameData === undefined ? text : keyed(ctx.cache, WIN_PROGRAMS, info.frameData, () => {
      const compiled = compilePostfix(text, BREAKPAD_STACK_WIN);
      return compiled.ok ? compiled.code : undefined;
    });
  } else if (info.allocatesBasePointer) program = SYNTHESIZED.basePointer;
  else {
    program = ebxValid !== undefined ? SYNTHESIZED.plainEbx : SYNTHESIZED.plain;
    recoverEbp = false;
  }
  // An aligning program: EBP is the only reliable anchor, and the return address is above it.
  const text = typeof program === "object" ? program.text : (program ?? info.program!);
  if (ebpValid !== undefined && text.includes("@")) raSearchStart = (Number(ebpValid) + 4) >>> 0;
  dictionary.set(".raSearchStart", raSearchStart);
  dictionary.set(".raSearch", raSearchStart);
  const assigned = new Set<string>();
  let trust: "frame-data" | "scan" | "cfi-scan" = "frame-data";
  let found: { slot: bigint; value: bigint } | undefined;
  if (program === undefined || !breakpadEvaluate(program, dictionary, assigned, memory) || !assigned.has("$eip") || !assigned.has("$esp")) {
    found = ctx.scanAllowed === false ? undefined : scan(plan, memory, ctx, BigInt(esp), plan.contextFrame ? SCAN_WORDS_CONTEXT : SCAN_WORDS);
    if (found === undefined) return { ok: false, stop: walkStop("end-of-stack", "STACK WIN: the program failed and no return address was found above ESP"), final: false };
    dictionary.set("$eip", Number(found.value));
    dictionary.set("$esp", Number(found.slot) + 4);
    trust = "scan";
  }
  const eipNow = dictionary.get("$eip") ?? 0;
  if (eipNow !== 0 || (dictionary.get("$ebp") ?? 0) !== 0) {
    let offset = 0;
    if (moduleAt(plan.check.modules, BigInt(eipNow)) === undefined && ctx.scanAllowed !== false) {
      // The EIP the program found is in no module: scan on from just above .raSearchStart.
      const start = ((dictionary.get(".raSearchStart") ?? 0) + 4) >>> 0;
      const better = scan(plan, memory, ctx, BigInt(start), plan.contextFrame ? SCAN_WORDS_CONTEXT : SCAN_WORDS);
      if (better !== undefined) {
        found = better;
        dictionary.set("$eip", Number(better.value));
        dictionary.set("$esp", Number(better.slot) + 4);
        offset = Number(better.slot) - start;
        trust = "cfi-scan";
      }
    }
    if (recoverEbp) {
      const ebp = dictionary.get("$ebp") ?? 0;
      const skipped = trust !== "frame-data" && ebp <= raSearchStart + offset;
      if (skipped || readU32(memory, BigInt(ebp)) === undefined) {
        const end = (esp + plan.calleeParams) >>> 0;
        for (let at = end + info.savedRegsSize + offset; at >= end; at -= 4) {
          const candidate = readU32(memory, BigInt(at >>> 0));
          if (candidate === undefined) break;
          if (readU32(memory, candidate) !== undefined) {
            dictionary.set("$ebp", Number(candidate));
            break;
          }
        }
      }
    }
  }
  const eip = dictionary.get("$eip") ?? 0;
  const out = callerOf(registers, eip, dictionary.get("$esp") ?? 0, dictionary.get("$ebp") ?? 0);
  const recovered = ["eip", "esp", "ebp"];
  for (const r of ["ebx", "esi", "edi"]) {
    const v = dictionary.get(`$${r}`);
    if (assigned.has(`$${r}`) && v !== undefined) {
      out[r] = BigInt(v);
      recovered.push(r);
    }
  }
  const record: FrameDataRule["record"] = info.frameData ?? frameDataOfFpo(info);
  const own: FrameDataRule = { kind: "frame-data", record, ra: { at: "program" } };
  const fields = { recovered, paramsSize: info.paramsSize };
  if (found === undefined) return unwindStep(out, own, fields);
  if (trust === "cfi-scan") {
    const rule: SiteCheckRule = { kind: "site-check", rule: own, found: "scan", eip: BigInt(eipNow), slot: found.slot, value: found.value };
    return unwindStep(out, rule, { ...fields, trust: "scan" });
  }
  const rule: ScanRule = { kind: "scan", registers: { sp: "esp", fp: "ebp" }, sp: BigInt(esp), slot: found.slot, value: found.value };
  return unwindStep(out, rule, { ...fields, trust: "scan" });
}

/** An FPO_DATA record as the FrameData its frame's rule names (the sizes Breakpad used). */
function frameDataOfFpo(info: WinInfo): FrameData {
  const start = info.fpo?.ulOffStart ?? 0;
  return {
    rvaStart: start, codeSize: info.fpo?.cbProcSize ?? 0, localSize: info.localsSize, paramsSize: info.paramsSize, maxStackSize: 0, frameFunc: 0,
    prologSize: info.fpo?.cbProlog ?? 0, savedRegsSize: info.savedRegsSize, flags: 0, hasSEH: false, hasEH: false, isFunctionStart: false,
  };
}

/** Runs Breakpad's EBP-chain rule (`GetCallerByEBPAtBase`). */
export function execBreakpadX86FramePointer(plan: X86BreakpadFramePointerPlan, registers: Registers, memory: MemoryReader, ctx: ExecContext): UnwindResult {
  const ebp = (registers["ebp"] ?? 0n) & U32;
  const esp = registers["esp"] ?? 0n;
  const eip = readU32(memory, (ebp + 4n) & U32);
  const saved = eip === undefined ? undefined : readU32(memory, ebp);
  const base = { ...registers };
  if (eip !== undefined && saved !== undefined) {
    const out = { ...base, eip, esp: (ebp + 8n) & U32, ebp: saved };
    const rule: FramePointerRule = { kind: "frame-pointer", chain: X86_CHAIN, fp: ebp, pc: eip, savedFp: saved };
    return unwindStep(out, rule, { recovered: X86_CHAIN.recovered });
  }
  // EBP points nowhere readable: scan from ESP, while the walk may still scan.
  const found = ctx.scanAllowed === false ? undefined : scan(plan, memory, ctx, esp, plan.contextFrame ? SCAN_WORDS_CONTEXT : SCAN_WORDS);
  if (found === undefined) return { ok: false, stop: walkStop("end-of-stack", `no return address in the ${(plan.contextFrame ? SCAN_WORDS_CONTEXT : SCAN_WORDS) + 1} words from esp=0x${esp.toString(16)}, and EBP=0x${ebp.toString(16)} cannot be read`) };
  const callerEsp = (found.slot + 4n) & U32;
  // Breakpad's guess of the caller's EBP after a scan, the one the scanning policy's x86 table makes.
  const callerEbp = X86_SCAN.framePointer(registers, undefined, found.slot, memory, ctx.cache)?.value ?? ebp;
  const rule: ScanRule = { kind: "scan", registers: { sp: "esp", fp: "ebp" }, sp: esp, slot: found.slot, value: found.value };
  if (callerEbp !== ebp) rule.fp = callerEbp;
  return unwindStep({ ...base, eip: found.value, esp: callerEsp, ebp: callerEbp }, rule, { recovered: X86_CHAIN.recovered, trust: "scan" });
}
