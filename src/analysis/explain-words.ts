/**
 * The words of an explanation: where the context came from, what the rule that found a frame did
 * (read from the rule's fields: its record, its unwind operations, its save locations), what each
 * read became, how BSP moved, why the frame-pointer chain goes wrong at a frame, and why the walk
 * stopped.
 */
import { hex } from "../hex.js";
import type { FpoData } from "../model/fpo-data.js";
import { formatAddress, machineInfo, registerDisplay, type Machine, type MachineInfo } from "../model/machine.js";
import type { Snapshot } from "../model/snapshot.js";
import type { Arm64UnwindRule, ArmUnwindRule, FrameDataRule, Rule, UnwindOpStep } from "../arch/rule.js";
import { arm64OpInstruction, arm64OpText, armOpInstruction, armOpText, pspText, ruleText, saveLocationText } from "../arch/rule-text.js";
import type { Frame, Walk, WalkStop } from "../walk/frame.js";
import type { ExplainedFrame } from "./explain-model.js";
import { locate, locateAddress, locationText } from "./location.js";

/** A register as the documentation writes it: EIP, RSP, RsBSP, SP (r12). */
export function registerName(machine: Machine, name: string): string {
  return registerDisplay(machine, name);
}

/** Frame 0: where its registers came from. */
export function contextLines(machine: Machine, frame: Frame): string[] {
  const arch = machineInfo(machine);
  const a = (v: bigint): string => formatAddress(machine, v);
  const named = [arch.pc, arch.sp, arch.fp, arch.bstore].filter((n): n is string => n !== null);
  const values = named.map((n) => `${registerName(machine, n)} = ${frame.registers[n] !== undefined ? a(frame.registers[n]!) : "?"}`);
  return [`The context: the registers the thread stopped with (${values.join(", ")}). Nothing is unwound to find this frame.`];
}

/** The most characters of a rule quoted in an explanation. */
const QUOTED = 240;

/**
 * A rule's text as an explanation quotes it: whole, or its first {@link QUOTED} characters and
 * its length (a symbol file's rule may run to 512 tokens, and the explanation quotes it at every
 * frame it finds).
 */
function quoted(text: string): string {
  return text.length <= QUOTED ? text : `${text.slice(0, QUOTED)}… (${text.length} characters)`;
}

/** Plain-words lines for frame `e`, found by unwinding `callee`. */
export function howLines(machine: Machine, callee: ExplainedFrame, e: ExplainedFrame, wordSize: number): string[] {
  const a = (v: bigint): string => formatAddress(machine, v);
  const arch = machineInfo(machine);
  const fn = callee.functionName ?? callee.location;
  const lines = [...strategyLines(machine, e.frame, fn)];
  lines.push(`Rule: ${quoted(ruleText(e.frame.rule))}`);
  const scanned = e.reads.filter((r) => r.role === "scanned");
  for (const r of e.reads) {
    if (r.role === "scanned") continue;
    const where = r.relative !== undefined ? `[${r.relative}] = [${a(r.address)}]` : `[${a(r.address)}]`;
    const target = r.register !== undefined ? registerName(machine, r.register) : undefined;
    switch (r.role) {
      case "return-address":
        // An ARM64 return address may be signed: the frame's PC is the value without its pointer authentication code.
        if (r.value !== e.frame.addrPC && machineInfo(machine).pointerAuthentication) lines.push(`${where} = ${a(r.value)} → return address: ${target} ← ${a(e.frame.addrPC)}, its pointer authentication code stripped`);
        else lines.push(`${where} = ${a(r.value)} → return address: ${target} ← ${a(r.value)}`);
        break;
      case "saved-frame-pointer":
        lines.push(`${where} = ${a(r.value)} → the caller's saved frame pointer: ${target} ← ${a(r.value)}`);
        break;
      case "saved-register":
        lines.push(`${where} = ${a(r.value)} → ${target} ← ${a(r.value)}, saved by ${fn}`);
        break;
      default:
        lines.push(`${where} = ${a(r.value)} (read by the rule)`);
    }
  }
  if (scanned.length > 0) {
    const lo = scanned.reduce((m, r) => (r.address < m ? r.address : m), scanned[0]!.address);
    const hi = scanned.reduce((m, r) => (r.address > m ? r.address : m), scanned[0]!.address);
    lines.push(`Searched ${scanned.length} word${scanned.length === 1 ? "" : "s"} (${a(lo)}..${a(hi)}) that do not point just after a call instruction in a module.`);
  }
  const sp = registerName(machine, arch.sp);
  if (arch.bstore !== null) {
    lines.push(`${sp} ← ${a(e.frame.addrStack)}; ${bspNote(callee.frame, e.frame, a)}`);
  } else {
    const ra = e.reads.find((r) => r.role === "return-address");
    const why = ra !== undefined && ra.address + BigInt(wordSize) === e.frame.addrStack ? ", just above the return-address slot (what the return leaves)" : "";
    lines.push(`${sp} ← ${a(e.frame.addrStack)}${why}`);
  }
  return lines;
}

/** IA-64: how far BSP moved between two frames (the caller's sol), and the NaT collection slots it crossed. */
function bspNote(callee: Frame, caller: Frame, a: (v: bigint) => string): string {
  if (callee.addrBStore === 0n || caller.addrBStore === 0n || caller.addrBStore > callee.addrBStore) return `BSP ← ${a(caller.addrBStore)}`;
  const words = Number((callee.addrBStore - caller.addrBStore) / 8n);
  let nat = 0;
  for (let addr = caller.addrBStore; addr < callee.addrBStore; addr += 8n) if (((addr >> 3n) & 0x3fn) === 0x3fn) nat++;
  const sol = words - nat;
  const across = nat > 0 ? `, across ${nat} NaT collection slot${nat === 1 ? "" : "s"} (a word whose address has bits 8..3 all set holds NaT bits, not a register)` : "";
  return `BSP ← BSP − sol(${sol}) = ${a(caller.addrBStore)}: the caller's ${sol} input and local register${sol === 1 ? "" : "s"} lie just below on the backing store${across}`;
}

/** An unwind operation undone, in words. */
function unwindOpLine(o: UnwindOpStep): string {
  switch (o.op) {
    case "push":
      return `UWOP_PUSH_NONVOL ${o.register}: ${o.register.toUpperCase()} ← [RSP], RSP += 8`;
    case "alloc":
      return `${o.size <= 128 ? "UWOP_ALLOC_SMALL" : "UWOP_ALLOC_LARGE"} ${hex(o.size)}: RSP += ${hex(o.size)}`;
    case "set-frame":
      return `UWOP_SET_FPREG: RSP ← ${o.register.toUpperCase()} − ${hex(o.offset)} (the frame register marks the frame; the allocations below are undone from it)`;
    case "save-xmm":
      return `UWOP_SAVE_XMM128 xmm${o.register}: XMM${o.register} ← [frame base + ${hex(o.offset)}]`;
    case "save":
      return `UWOP_SAVE_NONVOL ${o.register}: ${o.register.toUpperCase()} ← [frame base + ${hex(o.offset)}] (relative to the establisher frame, not the live RSP)`;
    case "machframe":
      return `UWOP_PUSH_MACHFRAME${o.errorCode ? " (with an error code)" : ""}: RIP and RSP come from the machine frame the CPU pushed for an interrupt or exception`;
  }
}

/** The FPO_DATA record a frame's rule followed (its own, or its epilogue's), if any. */
function fpoRecordOf(rule: Rule): FpoData | undefined {
  if (rule.kind === "fpo") return rule.record;
  if (rule.kind === "x86-epilog" && "fpo" in rule.source) return rule.source.fpo;
  return undefined;
}

/** Where a FrameData rule found the return address, as a register offset, when it says. */
function frameDataReturn(rule: FrameDataRule): string | undefined {
  const ra = rule.ra;
  if (ra.at === "esp") return `ESP+${ra.offset}`;
  if (ra.at === "ebp+4") return "EBP+4";
  if (ra.base === "esp" && ra.offset !== undefined && ra.offset > 0) return `ESP+${ra.offset}`;
  if (ra.base === "ebp" && ra.offset === 4) return "EBP+4";
  return undefined;
}

/** A chain pushed by `push fp; mov fp, sp`: the caller's frame pointer at [fp], the return address a word above. */
function pushedChainLines(info: MachineInfo, _rule: Rule, fn: string): string[] {
  const fp = (info.fp ?? "").toUpperCase();
  return [`The frame-pointer chain: ${fn} began with push ${fp.toLowerCase()}; mov ${fp.toLowerCase()}, ${info.sp}, so the caller's ${fp} is at [${fp}] and the return address just above it, at [${fp}+${info.pointerSize}].`];
}

/** How each machine's frame-pointer chain is told: pushed by a call and a push, or a frame record stored by stp (ARM64). */
const FRAME_CHAIN_LINES: Readonly<Record<Machine, (info: MachineInfo, rule: Rule, fn: string) => string[]>> = {
  x86: pushedChainLines,
  x64: pushedChainLines,
  ia64: pushedChainLines,
  arm64: (_info, rule, fn) => arm64ChainLines(rule, fn),
  arm: (info, rule, fn) => armChainLines(info, rule, fn),
};

/** Where an IA-64 value is, in words. */
function ia64Where(s: string): string {
  return /^r\d+$/.test(s) ? `in stacked register ${s} (read from its backing-store slot)` : s.startsWith("[") ? `in memory at ${s}` : s === "b0" ? "still in b0" : `in ${s}`;
}

/** What the strategy that found `frame` does, in words, with the values its rule names. */
function strategyLines(machine: Machine, frame: Frame, fn: string): string[] {
  const rule = frame.rule;
  const info = machineInfo(machine);
  switch (frame.trust) {
    case "frame-pointer": {
      return FRAME_CHAIN_LINES[machine](info, rule, fn);
    }
    case "fpo": {
      const r = fpoRecordOf(rule);
      if (r === undefined) return [`FPO_DATA for ${fn}.`];
      const first = `FPO_DATA for ${fn} (rva ${hex(r.ulOffStart)}): ${r.cdwLocals * 4} bytes of locals, ${r.cbRegs} saved register${r.cbRegs === 1 ? "" : "s"}, ${r.cdwParams * 4} bytes of parameters`;
      if (rule.kind === "fpo" && rule.form === "non-fpo") return [`${first}; FRAME_NONFPO: an ordinary EBP frame, so the return address is at [EBP+4].`];
      const parts = [first];
      if (rule.kind === "fpo" && rule.form === "prolog") parts.push(`the PC is in its prolog, so only what the prolog has pushed so far lies above ESP`);
      if (rule.kind === "fpo") parts.push(`→ return address at ESP+${rule.form === "prolog" ? rule.pushed : rule.raOffset}`);
      if (r.fUseBP) parts.push(`(fUseBP: the function uses EBP as a general register after saving the caller's EBP among its saved registers)`);
      else parts.push(`(no frame pointer: EBP still holds whatever its caller left there)`);
      return [parts.join(" ") + "."];
    }
    case "frame-data": {
      if (rule.kind !== "frame-data") return [`FrameData for ${fn}.`];
      const d = rule.record;
      const ra = frameDataReturn(rule);
      return [`FrameData for ${fn} (rva ${hex(d.rvaStart)}, a PDB or Breakpad STACK WIN record): ${d.localSize} bytes of locals, ${d.savedRegsSize} bytes of saved registers, ${d.paramsSize} bytes of parameters; its program string computes the caller's registers${ra !== undefined ? `, with the return address at ${ra}` : ""}.`];
    }
    case "unwind-info": {
      if (rule.kind === "arm64-unwind") return arm64UnwindLines(rule, frame, fn);
      if (rule.kind === "arm-unwind") return armUnwindLines(rule, frame, fn);
      if (rule.kind !== "unwind-info") return [];
      const lines = [`UNWIND_INFO for ${fn} (its RUNTIME_FUNCTION in .pdata): the prolog's operations are undone, the last one first${rule.epilog !== undefined ? "; the PC is in an epilogue, so the rest of the epilogue is run instead" : ""}:`];
      // The rule lists the operations in prolog order; they are undone from the last.
      const ops = rule.epilog === undefined ? (rule.parts[0]?.ops ?? []) : [];
      for (const op of [...ops].reverse()) lines.push(unwindOpLine(op));
      if (!rule.parts.some((p) => p.ops.some((o) => o.op === "machframe"))) lines.push("then the return: RIP ← [RSP], RSP += 8");
      return lines;
    }
    case "ia64-unwind": {
      const lines = [`IA-64 unwind descriptors for ${fn}: its prologue region says when and where rp (the return link, b0) and ar.pfs (the caller's frame marker) were saved and how large the memory-stack frame is; the caller's IP is rp, and the caller's stacked registers lie just below on the backing store.`];
      if (rule.kind === "ia64") {
        const rp = rule.rp.kind === "br" ? `b${rule.rp.reg}` : saveLocationText(rule.rp);
        const pfs = rule.pfs.kind === "live" ? "ar.pfs" : saveLocationText(rule.pfs);
        lines.push(`At this IP, rp is ${ia64Where(rp)}, ar.pfs ${ia64Where(pfs)}, and the previous SP (psp) is ${pspText(rule.psp).slice("psp=".length)}.`);
      }
      return lines;
    }
    case "cfi": {
      if (rule.kind !== "cfi") return [];
      return [
        `STACK CFI for ${fn} (a symbol file's call frame information, the range at rva ${hex(rule.rva)}): .cfa, the caller's stack pointer, and .ra, the return address, are computed from this frame's registers, and each saved register from .cfa.`,
        `Rules in effect here: ${quoted(rule.rules.map(([name, expression]) => `${name}: ${expression}`).join(" "))}`,
      ];
    }
    case "scan":
      if (rule.kind === "leaf") {
        return [`Found by simulating a return from a leaf function: the return address is at RSP or one word above, and every register is carried over unchanged (Breakpad's rule for a Windows context frame).`];
      }
      return [`Found by scanning the stack: the first word above that points just after a call instruction in a module is taken as the return address (the least trusted way).`];
    default:
      return [];
  }
}

/** The ARM64 frame-record chain's step, or its step through lr for a frame whose record is not stored yet (arm64.md Part 4). */
function arm64ChainLines(rule: Rule, fn: string): string[] {
  if (rule.kind === "link-register") {
    return [`${fn} has not stored a frame record of its own (a leaf, or a prolog before its stp x29, lr): bl left the return address in the link register, so Pc ← Lr and Sp stays as it is.`];
  }
  return [`The frame-record chain: x29 points at the 16-byte frame record {the caller's x29, the return address saved from lr} that ${fn}'s prolog stored with stp x29, lr, so the caller's Pc is [x29+8] (with any pointer authentication code stripped) and its x29 is [x29]; its Sp is a guess, x29+16, right when the record is at the top of the frame.`];
}

/** How an ARM frame chain is told: lr still holding the return address, or the pair {frame pointer, lr} a prolog pushed. */
function armChainLines(_info: MachineInfo, rule: Rule, fn: string): string[] {
  if (rule.kind === "arm-link-register") {
    return [`${fn} has not pushed lr (a leaf, or a prolog before its push {…, lr}): bl left the return address in the link register, so Pc ← Lr and Sp stays as it is.`];
  }
  if (rule.kind === "arm-breakpad-fp") {
    return [`Breakpad's frame-pointer step (iOS): the caller's Pc is ${fn}'s Lr, and its r7 and Lr are the pair at r7, [r7] and [r7+4]; its Sp is r7+8.`];
  }
  const fp = rule.kind === "frame-pointer" ? rule.chain.fp : "r11";
  return [`The frame chain: ${fn}'s prolog pushed {${fp}, lr} and pointed ${fp} at the pair (r11 on Windows and in ARM code, r7 in Thumb code elsewhere), so the caller's Pc is [${fp}+4], its ${fp} is [${fp}] and its Sp is ${fp}+8.`];
}

/** What the ARM table unwinder did for a frame: the .pdata entry, the codes undone. */
function armUnwindLines(rule: ArmUnwindRule, frame: Frame, fn: string): string[] {
  const f = rule.function;
  if ("leafRva" in f) {
    return [`No .pdata entry covers ${fn} (rva ${hex(f.leafRva)}): on ARM that is a function that allocates no stack and saves no register, so bl's return address is still in the link register: Pc ← Lr = ${formatAddress("arm", frame.addrPC)}, Sp unchanged.`];
  }
  const form = f.form === "xdata" ? "an .xdata record" : f.form === "fragment" ? "a packed word for a fragment without a prolog (Flag 2)" : "a packed word (Flag 1: a canonical prolog and epilog)";
  const p = rule.position;
  const where =
    p.at === "prolog"
      ? `; the Pc is ${p.offset} bytes into the prolog, so the codes of the ${p.skipped} instructions not yet run are skipped`
      : p.at === "epilog"
        ? `; the Pc is ${p.offset} bytes into an epilog, so the ${p.skipped} code${p.skipped === 1 ? "" : "s"} it has already run ${p.skipped === 1 ? "is" : "are"} skipped and the rest run`
        : "";
  const lines = [`The .pdata entry for ${fn} (rva ${hex(f.begin)}, ${form}): its unwind codes are undone in order${where}:`];
  for (const op of rule.ops) lines.push(`${armOpText(op)}: ${armOpInstruction(op)}`);
  lines.push("then the return: Pc ← Lr.");
  return lines;
}

/** What the ARM64 table unwinder did for a frame (arm64.md §1.7, §1.10): the .pdata entry, the codes undone, where the return address came from. */
function arm64UnwindLines(rule: Arm64UnwindRule, frame: Frame, fn: string): string[] {
  const a = (v: bigint): string => formatAddress("arm64", v);
  const f = rule.function;
  if ("leafRva" in f) {
    return [`No .pdata entry covers ${fn} (rva ${hex(f.leafRva)}): on ARM64 that is a function that allocates no stack and saves no register, so bl's return address is still in the link register: Pc ← Lr = ${a(frame.addrPC)}, Sp unchanged.`];
  }
  const form = f.form === "xdata" ? "an .xdata record" : f.form === "fragment" ? "a packed word for a fragment without prolog or epilog (Flag 2)" : "a packed word (Flag 1: one prolog at the start, one epilog at the end)";
  const parent = f.parent === undefined ? "" : `, unwound as its parent at rva ${hex(f.parent)} (Flag 3)`;
  const p = rule.position;
  const where =
    p.at === "prolog"
      ? `; the Pc is in the prolog with ${p.offset} of its instructions run, so the codes of the ${p.skipped} not yet run are skipped`
      : p.at === "epilog"
        ? `; the Pc is ${p.offset} instruction${p.offset === 1 ? "" : "s"} into an epilog, so the ${p.skipped} code${p.skipped === 1 ? "" : "s"} it has already run ${p.skipped === 1 ? "is" : "are"} skipped and the rest run`
        : "";
  const lines = [`The .pdata entry for ${fn} (rva ${hex(f.begin)}, ${form}${parent}): its unwind codes are undone, the one nearest the body first${where}:`];
  for (const op of rule.ops) lines.push(`${arm64OpText(op)}: ${arm64OpInstruction(op)}`);
  if (rule.pcFrom !== "lr") {
    lines.push(`The caller's Pc comes from the ${rule.pcFrom.replace("-", " ")}: an interrupted instruction, not a return address, so its function is looked up at the Pc itself.`);
    return lines;
  }
  const savedLr = rule.ops.some((o) => o.op === "save" && o.registers.includes("lr"));
  const lr = frame.registers["lr"];
  lines.push(
    savedLr
      ? "then the return: Pc ← Lr, the return address the prolog saved"
      : `then the return: Pc ← Lr; ${fn} never saved lr, so the return address is still in the link register where bl left it`,
  );
  if (lr !== undefined && lr !== frame.addrPC) lines.push(`Lr = ${a(lr)} carries a pointer authentication code in its top bits; stripped (bits 48-63 copied from bit 55): Pc = ${a(frame.addrPC)}.`);
  return lines;
}

/** Why the frame-pointer chain goes wrong at frame `i`, when it does. */
/** The frame-pointer walk, indexed for the per-frame questions {@link weakerText} asks. */
export interface WeakerIndex {
  weak: Walk;
  /** `pc:sp` of every frame of the walk being explained, and of the frame-pointer walk. */
  walked: Set<string>;
  chain: Set<string>;
}

const frameKey = (f: Frame): string => `${f.addrPC}:${f.addrStack}`;

export function indexWeaker(walk: Walk, weak: Walk): WeakerIndex {
  return { weak, walked: new Set(walk.frames.map(frameKey)), chain: new Set(weak.frames.map(frameKey)) };
}

/** The index of the last frame whose SP is below `sp` (frames' SPs only grow), −1 when none is. */
function lastBelow(frames: readonly Frame[], sp: bigint): number {
  let lo = 0;
  let hi = frames.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (frames[mid]!.addrStack < sp) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

export function weakerText(machine: Machine, walk: Walk, index: WeakerIndex | undefined, i: number, frames: readonly ExplainedFrame[], snapshot: Snapshot): string | undefined {
  const info = machineInfo(machine);
  if (info.fp === null) {
    const fn = frames[i - 1]!.functionName ?? frames[i - 1]!.location;
    return `A walker without ${fn}'s unwind descriptors is lost here: IA-64 has no frame-pointer chain, and rp and ar.pfs may sit in any stacked register or memory slot the prologue chose.`;
  }
  if (index === undefined) return undefined;
  const weak = index.weak;
  const a = (v: bigint): string => formatAddress(machine, v);
  const f = walk.frames[i]!;
  const prev = walk.frames[i - 1]!;
  const fp = info.fp.toUpperCase();
  if (index.chain.has(frameKey(f))) {
    // Found by the chain too; mention frames it invents between this one and the one below.
    const invented: Frame[] = [];
    for (let k = lastBelow(weak.frames, f.addrStack); k >= 0 && weak.frames[k]!.addrStack > prev.addrStack; k--) {
      if (!index.walked.has(frameKey(weak.frames[k]!))) invented.unshift(weak.frames[k]!);
    }
    if (invented.length === 0) return undefined;
    return `The frame-pointer chain invents ${invented.length === 1 ? "a frame" : `${invented.length} frames`} below this one: ${invented.map((g) => `${locationText(locateAddress(snapshot.modules, g.addrPC, true), a(g.addrPC))} (SP ${a(g.addrStack)})`).join(", ")}, from a ${fp} that was not a frame pointer.`;
  }
  // The last chain frame below this one: the unwind from it went past (or stopped before) this frame.
  const j = lastBelow(weak.frames, f.addrStack);
  if (j < 0) return `The frame-pointer chain does not find this frame.`;
  const from = weak.frames[j]!;
  const fromLoc = locationText(locate(snapshot.modules, from), a(from.addrPC));
  const fpValue = from.addrFrame;
  const next = weak.frames[j + 1];
  const calleeFn = frames[i - 1]!.functionName ?? frames[i - 1]!.location;
  // The callee was unwound from a record that says it keeps no frame pointer.
  const omitted = (f.trust === "fpo" || f.trust === "frame-data" || f.trust === "unwind-info" || f.trust === "cfi") && !(f.rule.kind === "fpo" && f.rule.form === "non-fpo");
  const why = omitted
    ? `${calleeFn} does not set up ${fp} as a frame pointer (${machineInfo(machine).noFramePointer}), so ${fp} there still belonged to an outer frame`
    : `${fp} at ${fromLoc} was not this frame's frame pointer`;
  if (next === undefined) {
    return `The frame-pointer chain never reaches this frame: from ${fromLoc} with ${fp} = ${a(fpValue)} it stopped (${weak.stop.reason}: ${weak.stop.detail}); ${why}.`;
  }
  const nextLoc = locationText(locate(snapshot.modules, next), a(next.addrPC));
  const skipped = walk.frames[i + 1] !== undefined && walk.frames[i + 1]!.addrPC === next.addrPC && walk.frames[i + 1]!.addrStack === next.addrStack;
  const landing = skipped ? `, straight to ${calleeFn}'s caller's caller` : "";
  return `The frame-pointer chain misses this frame: from ${fromLoc} it followed ${fp} = ${a(fpValue)} to [${fp}+${info.pointerSize}] = ${a(next.addrPC)} (${nextLoc}, SP ${a(next.addrStack)})${landing}; ${why}.`;
}

/** A stop reason in words for readers who do not know the codes. */
export function stopInWords(stop: WalkStop, a: (v: bigint) => string): string {
  const at = stop.address !== undefined ? ` at ${a(stop.address)}` : "";
  const lead: Record<WalkStop["reason"], string> = {
    "end-of-stack": "The walk reached the outermost frame",
    "read-fault": `The walk stopped: memory it needed${at} is not in the snapshot`,
    "no-progress": "The walk stopped: the next frame's stack pointer would not move up the stack, so it would loop",
    "bad-pc": `The walk stopped: the next program counter${at} is not code`,
    "max-frames": "The walk stopped at its frame limit",
    "frame-budget": "The walk stopped: the snapshot's walks had used up their shared frame budget",
    "work-budget": "The walk stopped: the snapshot's walks had used up their shared work budget (rules evaluated, stack words scanned, instructions decoded)",
    unsupported: "The walk stopped: no rule applies to the next frame",
    "trap-frame": "The walk stopped at a kernel trap frame, which a user-mode walk does not follow",
    "tss-frame": "The walk stopped at a task-state segment, which a user-mode walk does not follow",
  };
  return `${lead[stop.reason]} (${stop.reason}: ${stop.detail}).`;
}
