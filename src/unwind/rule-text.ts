/**
 * The text of a rule: what `walk` prints after "rule:" and JSON carries under "rule". The one
 * place a rule becomes words; everything else reads the rule's fields (rule.ts).
 */
import { hex, hexPadded } from "../hex.js";
import type { FpoData } from "../model/fpo-data.js";
import type {
  Arm64OpStep,
  Arm64UnwindRule,
  EpilogSource,
  FpoRule,
  FrameDataRule,
  FramePointerRule,
  Ia64Locations,
  Ia64Rule,
  PspRule,
  Rule,
  SaveLocation,
  UnwindInfoRule,
  UnwindOpStep,
} from "./rule.js";

/** A rule in words, with the values it used, e.g. "ebp-chain ebp=0x0012ff70: eip=[0x0012ff74]=0x00401234 …". */
export function ruleText(rule: Rule): string {
  switch (rule.kind) {
    case "context":
      return "context";
    case "frame-pointer":
      return chainText(rule);
    case "fpo":
      return fpoText(rule);
    case "frame-data":
      return frameDataText(rule);
    case "site-check": {
      const inner = rule.rule.kind === "fpo" ? fpoText(rule.rule) : frameDataText(rule.rule);
      return rule.found === "other-call"
        ? `${inner}; eip ${hex(rule.eip)} returns from a call to ${hex(rule.target ?? 0n)}, not to this function: [${hex(rule.slot)}]=${hex(rule.value)} does`
        : `${inner}; eip ${hex(rule.eip)} is not a return address: scanned to [${hex(rule.slot)}]=${hex(rule.value)}`;
    }
    case "x86-epilog": {
      const text = `${epilogLabel(rule.source)} to return: ${rule.instructions.join("; ")}`;
      if (rule.switched !== undefined) {
        const s = rule.switched;
        return `${text}: the jump to ${hex(rule.tailCall ?? 0n)} switches stacks; scanned from esp=${hex(s.esp)} to [${hex(s.slot)}]=${hex(s.value)}`;
      }
      // Before it has run, the rule is its instructions alone.
      if (rule.raSlot === undefined) return text;
      const tail = rule.tailCall === undefined ? "" : ` (tail call to ${hex(rule.tailCall)})`;
      return `${text}${tail}, ra@[${hex(rule.raSlot)}]`;
    }
    case "unwind-info":
      return unwindInfoText(rule);
    case "arm64-unwind":
      return arm64Text(rule);
    case "link-register":
      return `lr=${hexPadded(rule.lr, 16)}: the return address is still in the link register; sp=${hexPadded(rule.sp, 16)} unchanged`;
    case "arm64-breakpad-fp":
      return rule.fp === 0n
        ? `pc=lr=${hexPadded(rule.lr, 16)}; fp=0: sp unchanged, fp=lr=0`
        : `pc=lr=${hexPadded(rule.lr, 16)}; [fp=${hexPadded(rule.fp, 16)}]=${hexPadded(rule.savedFp, 16)} [fp+8]=${hexPadded(rule.savedLr, 16)} sp=fp+0x10`;
    case "rescan":
      return `${rule.problem}; scanned from ${hex(rule.start)} to ra@[${hex(rule.slot)}]=${hex(rule.value)}`;
    case "cfi":
      return `cfi rva=${hex(rule.rva)}: ${rule.rules.map(([name, expression]) => `${name}: ${expression}`).join(" ")}`;
    case "scan": {
      const label = rule.noRecordRva === undefined ? "scan" : `scan (no record at rva ${hex(rule.noRecordRva)})`;
      const fp = rule.fp === undefined ? "" : ` ${rule.registers.fp}=${hex(rule.fp)}`;
      return `${label} from ${rule.registers.sp}=${hex(rule.sp)}: ra@[${hex(rule.slot)}]=${hex(rule.value)}${fp}`;
    }
    case "leaf":
      return `leaf: ra@[${hex(rule.slot)}]=${hex(rule.value)}`;
    case "ia64":
      return ia64Text(rule);
    case "custom":
      return rule.text;
  }
}

/** `ebp-chain ebp=…: eip=[…]=… ebp=[…]=… esp=…`. */
function chainText(r: FramePointerRule): string {
  const { pc, sp, fp, width } = r.chain;
  const mask = width === 4 ? 0xffff_ffffn : 0xffff_ffff_ffff_ffffn;
  const w = BigInt(width);
  const h = (v: bigint): string => hexPadded(v, width * 2);
  return `${fp}-chain ${fp}=${h(r.fp)}: ${pc}=[${h((r.fp + w) & mask)}]=${h(r.pc)} ${fp}=[${h(r.fp)}]=${h(r.savedFp)} ${sp}=${h((r.fp + 2n * w) & mask)}`;
}

/** An FPO_DATA record as a rule names it: `fpo rva=0x1010 locals=8 regs=2 params=4 useBP`. */
export function fpoLabel(record: FpoData): string {
  return `fpo rva=${hex(record.ulOffStart)} locals=${record.cdwLocals * 4} regs=${record.cbRegs} params=${record.cdwParams * 4}${record.fUseBP ? " useBP" : ""}`;
}

function fpoText(r: FpoRule): string {
  const label = fpoLabel(r.record);
  switch (r.form) {
    case "non-fpo":
      return `${label} FRAME_NONFPO ebp=${hex(r.ebp)}: eip=[ebp+4]`;
    case "prolog":
      return `${label} prolog [${r.instructions.join("; ")}] ra@esp+${r.pushed}`;
    case "body":
      return `${label} ra@esp+${r.raOffset}${r.moved === 0 ? "" : `, found ${r.moved} bytes above`}${r.ebpSlot < 0 ? "" : ` ebp@[${hex(r.ebpSlot)}]`}`;
  }
}

function frameDataText(r: FrameDataRule): string {
  const d = r.record;
  const label = `frame-data rva=${hex(d.rvaStart)} locals=${d.localSize} saved=${d.savedRegsSize} params=${d.paramsSize}`;
  const ra = r.ra;
  let where: string;
  if (ra.at === "esp") where = `ra@esp+${ra.offset}${ra.moved === 0 ? "" : `, found ${ra.moved} bytes above`}`;
  else if (ra.at === "ebp+4") where = "ra@ebp+4 (realigned)";
  else if (ra.base === undefined) where = "by its program";
  else {
    const offset = ra.offset ?? 0;
    where = `ra@${ra.base}${offset === 0 ? "" : `${offset > 0 ? "+" : "-"}${Math.abs(offset | 0)}`}`;
  }
  return `${label} ${where}${r.atReturn === true ? " (the record that starts at the return address)" : ""}`;
}

function epilogLabel(source: EpilogSource): string {
  if ("fpo" in source) return fpoLabel(source.fpo);
  if ("frameData" in source) return `frame-data rva=${hex(source.frameData.rvaStart)}`;
  return "no record,";
}

/** An unwind operation as prolog text: `push rbx`, `alloc 0x28`, `save rsi@0x20`, `machframe+errcode`. */
export function unwindOpText(o: UnwindOpStep): string {
  switch (o.op) {
    case "push":
      return `push ${o.register}`;
    case "alloc":
      return `alloc ${hex(o.size)}`;
    case "set-frame":
      return `lea ${o.register},[rsp+${hex(o.offset)}]`;
    case "save":
      return `save ${o.register}@${hex(o.offset)}`;
    case "save-xmm":
      return `save xmm${o.register}@${hex(o.offset)}`;
    case "machframe":
      return o.errorCode ? "machframe+errcode" : "machframe";
  }
}

function unwindInfoText(r: UnwindInfoRule): string {
  const jumped = r.jumped === undefined ? "" : `jmp ${r.jumped.register}=${hex(r.jumped.target)} leaves the function: as at ${hex(r.jumped.target)}, `;
  let core: string;
  if ("leafRva" in r.function) core = `leaf (no RUNTIME_FUNCTION at rva ${hex(r.function.leafRva)})`;
  else {
    core = `unwind-info rva=${hex(r.function.begin)}`;
    const e = r.epilog;
    if (e !== undefined) core += e.version === 1 ? ` epilog=[${e.instructions.join("; ")}]` : ` v2 epilog+${hex(e.offset)}=[${e.instructions.join("; ")}]`;
    else {
      if (r.body) core += " (called at the end of the function)";
      for (const p of r.parts) {
        const chained = p.chained === undefined ? "" : ` chained rva=${hex(p.chained)}`;
        const prolog = p.prologOffset === undefined ? "" : ` prolog+${hex(p.prologOffset)}`;
        core += `${chained}${prolog} ops=[${p.ops.map(unwindOpText).join("; ")}]`;
      }
    }
  }
  const ignored = r.frameRegisterIgnored ? ", its frame register ignored" : "";
  const machineFrame = r.machineFrameSlot === undefined ? "" : `: rip@[${hex(r.machineFrameSlot)}]`;
  return `${jumped}${core}${ignored} ${r.callerRsp}${machineFrame}`;
}

/** An ARM64 unwind code as the rule lists it: `save_fplr_x(fp,lr,16)`, `alloc_s(0x20)`, `set_fp`. */
export function arm64OpText(o: Arm64OpStep): string {
  switch (o.op) {
    case "alloc":
      return `${o.code}(${hex(o.size)})`;
    case "save":
      return `${o.code}(${o.registers.join(",")},${hex(o.offset)}${o.writeback ? "!" : ""})`;
    case "set-fp":
      return o.offset === 0 ? o.code : `${o.code}(${hex(o.offset)})`;
    case "nop":
    case "custom":
      return o.code;
    case "pac":
      return "pac_sign_lr";
    case "end-c":
      return "end_c";
  }
}

/** The instruction an ARM64 unwind code's undoing amounts to, epilog-style: `ldp fp,lr,[sp],#0x10`, `add sp,sp,#0x20`. */
export function arm64OpInstruction(o: Arm64OpStep): string {
  switch (o.op) {
    case "alloc":
      return `add sp,sp,#${hex(o.size)}`;
    case "save": {
      const load = o.registers.length === 1 ? "ldr" : "ldp";
      // save_lrpair and long save_next ranges restore more than a pair: listed as one load.
      const regs = o.registers.length <= 2 ? o.registers.join(",") : `{${o.registers.join(",")}}`;
      return o.writeback ? `${load} ${regs},[sp],#${hex(o.offset)}` : `${load} ${regs},[sp,#${hex(o.offset)}]`;
    }
    case "set-fp":
      return o.offset === 0 ? "mov sp,fp" : `sub sp,fp,#${hex(o.offset)}`;
    case "nop":
      return "nop";
    case "pac":
      return "autibsp";
    case "custom":
      return o.code === "machine_frame" ? "sp,pc = [sp],[sp+8]" : o.code === "context" ? "restore the CONTEXT at sp" : o.code === "trap_frame" ? "restore the trap frame at sp" : "pc = lr";
    case "end-c":
      return "(the parent region's codes)";
  }
}

function arm64Text(r: Arm64UnwindRule): string {
  const f = r.function;
  if ("leafRva" in f) return `leaf (no .pdata entry at rva ${hex(f.leafRva)}): pc=lr, ${r.callerSp === "sp" ? "sp unchanged" : `sp=${r.callerSp}`}`;
  const parent = f.parent === undefined ? "" : ` (Flag 3: as its parent at rva ${hex(f.parent)})`;
  const p = r.position;
  const where = p.at === "body" ? "" : p.at === "prolog" ? ` prolog+${p.offset} (${p.skipped} skipped)` : ` epilog@+${hex(4 * p.start)}+${p.offset} (${p.skipped} skipped)`;
  const pc = r.pcFrom === "lr" ? "pc=lr" : `pc from the ${r.pcFrom}${r.pcSlot === undefined ? "" : `@[${hex(r.pcSlot)}]`}`;
  return `arm64 rva=${hex(f.begin)}${parent} ${f.form}${where} ops=[${r.ops.map(arm64OpText).join("; ")}] sp=${r.callerSp} ${pc}`;
}

/** An IA-64 save location as text: "r33", "[psp-0x10]", "[sp+0x20]". */
export function saveLocationText(l: SaveLocation): string {
  const off = (base: string, o: number): string => `[${base}${o < 0 ? "-" : "+"}${hex(Math.abs(o))}]`;
  return l.kind === "gr" ? `r${l.reg}` : l.kind === "psprel" ? off("psp", l.offset) : off("sp", l.offset);
}

/** An IA-64 psp rule as text: "psp=sp+0x20". */
export function pspText(p: PspRule): string {
  switch (p.kind) {
    case "sp":
      return "psp=sp";
    case "fixed":
      return `psp=sp+${hex(p.size)}`;
    case "gr":
      return `psp=r${p.reg}`;
    case "sprel":
      return `psp=[sp+${hex(p.offset)}]`;
  }
}

/** Where rp, ar.pfs and psp are, as one line: "rp=r33 pfs=r34 psp=sp+0x20". */
export function stateText(s: Ia64Locations): string {
  const rp = s.rp.kind === "br" ? `rp=b${s.rp.reg}` : `rp=${saveLocationText(s.rp)}`;
  const pfs = s.pfs.kind === "live" ? "pfs=ar.pfs" : `pfs=${saveLocationText(s.pfs)}`;
  return `${rp} ${pfs} ${pspText(s.psp)}`;
}

/** The IA-64 rule's own part: `ia64 app.exe+0x1000 t=5 rp=r33 pfs=r34 psp=sp`, or the leaf rule. */
export function ia64Label(r: Pick<Ia64Rule, "function" | "rp" | "pfs" | "psp">): string {
  const f = r.function;
  return "leaf" in f ? `ia64 leaf (${f.leaf}): ${stateText(r)}` : `ia64 ${f.module}+${hex(f.begin)} t=${f.whenTarget} ${stateText(r)}`;
}

function ia64Text(r: Ia64Rule): string {
  const label = ia64Label(r);
  if (r.outermost === true) return `${label}; rp = 0: the outermost frame`;
  const rp = r.rpAt === undefined ? "" : ` rp@[${hex(r.rpAt)}]`;
  return `${label};${rp} bsp=skip(${hex(r.bsp)}, -${r.sol})=${hex(r.callerBsp)}`;
}
