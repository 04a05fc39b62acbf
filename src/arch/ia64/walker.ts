/**
 * The IA-64 walker (trust `ia64-unwind`): one step of ia64.md §2 per frame, driven by the
 * IMAGE_IA64_RUNTIME_FUNCTION_ENTRY table and unwind descriptors of the images mapped in the
 * snapshot.
 *
 * A frame is the pair (sp, bsp): r12 on the memory stack and the address of its r32 on the
 * register backing store. Working out the rule ({@link ia64Unwind}.ruleFor) reads only the image:
 * the entry covering the PC, its descriptors, and the state at `when_target`. Running it reads
 * the two stacks (exec.ts).
 *
 * Modelling choices [M] (ia64.md §4.3, §5.3): AddrPC is `bundle | slot·4` (StIIP with
 * StIPSR.ri); a caller frame's entry is looked up at its return address − 1, inside the call
 * bundle (the walk's lookup address), while when_target is taken at the return address (slot 0
 * of the next bundle), so a call in a function's last bundle still finds its function; Params
 * are r32-r35 of the frame, read from the backing store.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import type { MemoryReader } from "../../memory/reader.js";
import { moduleAt, type Module, type Registers, type Snapshot } from "../../model/snapshot.js";
import { walkStop, type FuncTableEntry, type StopReason } from "../../unwind/frame.js";
import type { PspRule, SaveLocation } from "./rule.js";
import type { FrameSite, UnwindStrategy } from "../../unwind/step.js";
import { stopRule, type StopPlan } from "../stop.js";
import type { Ia64Plan } from "./exec.js";
import { IFS_VALID, isValidPc, pcBundle, pcSlot, readWord, skipRegs } from "./rse.js";
import { frameStateAt, type FrameState } from "./state.js";
import { entryAt, findEntryIndex, ia64Tables, unwindInfoAt } from "./tables.js";

/** A save location of the state in exec form. */
function execLoc(l: SaveLocation): Ia64Plan["rp"] & Ia64Plan["pfs"] {
  if (l.kind === "gr") return { kind: "gr", reg: l.reg };
  return l.kind === "psprel" ? { kind: "psprel", offset: l.offset, offsetBig: BigInt(l.offset) } : { kind: "sprel", offset: l.offset, offsetBig: BigInt(l.offset) };
}

/** The psp rule of the state in exec form. */
function execPsp(p: PspRule): Ia64Plan["psp"] {
  switch (p.kind) {
    case "sp": return { kind: "sp" };
    case "fixed": return { kind: "fixed", size: p.size, sizeBig: BigInt(p.size) };
    case "gr": return { kind: "gr", reg: p.reg };
    case "sprel": return { kind: "sprel", offset: p.offset, offsetBig: BigInt(p.offset) };
  }
}

/** A rule that stops the frame. */
function stopAt(reason: StopReason, detail: string, address?: bigint): StopPlan {
  return stopRule(walkStop(reason, detail, address));
}

/** The leaf rule for a context frame without an unwind entry (§2 step 1): rp in b0, nothing saved, psp = sp. */
function leafPlan(why: string): Ia64Plan {
  return {
    kind: "ia64",
    function: { leaf: why },
    locations: { rp: { kind: "br", reg: 0 }, pfs: { kind: "live" }, psp: { kind: "sp" } },
    contextFrame: true,
    rp: { kind: "br", reg: 0 },
    pfs: { kind: "live" },
    psp: { kind: "sp" },
  };
}

/**
 * The plan for a frame whose IP is `ip` (`bundle | slot·4`), its entry looked up at `lookup`;
 * a rule that stops when there is none.
 */
function planAt(site: FrameSite, lookup: bigint, ip: bigint, contextFrame: boolean): Ia64Plan | StopPlan {
  if (contextFrame ? !isValidPc(ip) : (ip & 0xfn) !== 0n) {
    return stopAt("bad-pc", `the IP ${hex(ip)} is not a bundle address with a slot of 0, 4 or 8`, ip);
  }
  const none = (why: string): Ia64Plan | StopPlan =>
    contextFrame ? leafPlan(why) : stopAt("unsupported", `the return address ${hex(ip)}: ${why}, and only the context frame may be a leaf (ia64.md §2 step 1)`, ip);
  const module: Module | undefined = moduleAt(site.modules, lookup);
  if (module === undefined) return none("no module contains it");
  const tables = ia64Tables(module, site.images, site.cache);
  if (tables === undefined) return none(`${module.name} has no readable IA-64 image in the snapshot`);
  if (tables.problem !== undefined) return stopAt("unsupported", tables.problem);
  const index = findEntryIndex(tables, Number(lookup - module.base));
  if (index < 0) return none(`no IMAGE_IA64_RUNTIME_FUNCTION_ENTRY of ${module.name} covers it`);
  const e = entryAt(tables, index);
  const info = unwindInfoAt(tables, e.unwindInfo);
  if ("problem" in info) return stopAt("unsupported", info.problem, info.address);
  const start = module.base + BigInt(e.begin);
  const whenTarget = 3 * Number((pcBundle(ip) - start) / 16n) + pcSlot(ip);
  let state: FrameState;
  try {
    state = frameStateAt(info.records, whenTarget);
  } catch (err) {
    if (!(err instanceof InputError)) throw err;
    const at = module.base + BigInt(err.offset ?? e.unwindInfo);
    return stopAt("unsupported", `${module.name}: the unwind descriptors at ${hex(at)}: ${err.reason}`, at);
  }
  const entry: FuncTableEntry = { kind: "ia64-function", beginRva: BigInt(e.begin), endRva: BigInt(e.end), moduleBase: module.base };
  if (state.unwabi !== undefined) {
    return stopAt("unsupported", `an OS-specific frame (unwabi abi ${state.unwabi.abi}, context ${hex(state.unwabi.context)}) is not modelled`, ip);
  }
  if (state.bspSaved) return stopAt("unsupported", "the function saves ar.bsp (a backing-store switch), which is not modelled", ip);
  if (!contextFrame) {
    if (state.rp.kind === "br") return stopAt("unsupported", `at return address ${hex(ip)} rp is still in b${state.rp.reg}, which only the context frame has`, ip);
    if (state.pfs.kind === "live") return stopAt("unsupported", `at return address ${hex(ip)} ar.pfs is not saved yet, and only the context frame has it live`, ip);
  }
  return {
    kind: "ia64",
    function: { module: module.name, begin: e.begin, whenTarget },
    locations: { rp: state.rp, pfs: state.pfs, psp: state.psp },
    contextFrame,
    rp: state.rp.kind === "br" ? state.rp : execLoc(state.rp),
    pfs: state.pfs.kind === "live" ? state.pfs : execLoc(state.pfs),
    psp: execPsp(state.psp),
    entry,
  };
}

/** The IA-64 table-driven unwinder (trust `ia64-unwind`). */
export const ia64Unwind: UnwindStrategy<Ia64Plan | StopPlan> = {
  name: "ia64-unwind",
  trust: "ia64-unwind",
  ruleFor(site: FrameSite) {
    const contextFrame = site.index === 0 || site.interrupted;
    // A caller frame's lookup address is its return address − 1: inside the call bundle.
    return planAt(site, site.lookupPc, site.pc, contextFrame);
  },
};

/**
 * STACKFRAME Params on IA-64 (a modelling choice [M], ia64.md §4.2): r32-r35 of the frame, read
 * from the backing store at skip(bsp, 0..3). Registers past the frame's sof (when StIFS is
 * valid) and unreadable words are 0.
 */
export function ia64Params(registers: Registers, memory: MemoryReader): [bigint, bigint, bigint, bigint] {
  const bsp = registers["rsbsp"];
  const out: [bigint, bigint, bigint, bigint] = [0n, 0n, 0n, 0n];
  if (bsp === undefined || (bsp & 7n) !== 0n) return out;
  const ifs = registers["stifs"];
  const n = ifs !== undefined && ifs >= IFS_VALID ? Math.min(4, Number(ifs & 0x7fn)) : 4;
  for (let i = 0; i < n; i++) out[i] = readWord(memory, skipRegs(bsp, i)) ?? 0n;
  return out;
}

/**
 * What SymFunctionTableAccess64 returns on IA-64: the address, in the target, of the
 * IMAGE_IA64_RUNTIME_FUNCTION_ENTRY covering `address`, or 0 (NULL) when there is none.
 */
export function ia64FunctionTableAccess(target: Snapshot, address: bigint): bigint {
  const module = moduleAt(target.modules, address);
  if (module === undefined) return 0n;
  const tables = ia64Tables(module, target.memory);
  if (tables === undefined || tables.problem !== undefined || tables.directoryRva === 0) return 0n;
  const index = findEntryIndex(tables, Number(address - module.base));
  return index < 0 ? 0n : module.base + BigInt(tables.directoryRva + index * 12);
}
