/**
 * Windows CONTEXT records: the register snapshot StackWalk64 reads (and on x64 and IA-64 may
 * rewrite) for each frame. x86 is 716 bytes, AMD64 1232 and ARM64 912 (minidump.md §3.1, §3.2;
 * arm64.md §2.1); IA-64 is 0xA70 bytes, of which the model names the control, integer and
 * register-stack fields the walker uses (ia64.md §4.1). The layouts are in context-layout.ts; each machine's descriptor
 * (machine.ts) names its own.
 *
 * The model exposes registers by lower-case name as bigints. Everything it does not name — the
 * x87/XMM save areas, vector registers (ARM64's beyond d8-d15), debug registers, IA-64 floating-point and scratch registers, padding —
 * is carried through by encoding into a copy of the original bytes.
 */
import { InputError } from "../errors.js";
import { isMachine, machineInfo, MACHINES, type Machine } from "./machine.js";
import { encodeFields, fieldOf, requireRecord, viewOf } from "./record.js";
import type { FieldSpec, RecordLayout } from "./record.js";

export * from "./context-layout.js";

/** The machines a CONTEXT is modelled for: every machine the walker models. */
export type ContextMachine = Machine;

/** A CONTEXT record as plain values: ContextFlags plus the named registers as bigints. */
export interface CpuContext {
  machine: ContextMachine;
  contextFlags: number;
  registers: Record<string, bigint>;
}

/** The ContextFlags CPU bit per machine. */
export const CONTEXT_CPU_BIT: Readonly<Record<ContextMachine, number>> = Object.freeze(
  Object.fromEntries(MACHINES.map((m) => [m, machineInfo(m).context.cpuBit])) as Record<ContextMachine, number>,
);

interface ContextModel {
  layout: RecordLayout;
  registers: Readonly<Record<string, string>>;
}

function modelOf(machine: ContextMachine): ContextModel {
  if (!isMachine(machine)) throw new InputError("unknown-machine", `no CONTEXT layout for machine ${String(machine)}`);
  const { layout, fields } = machineInfo(machine).context;
  return { layout, registers: fields };
}

/** The CONTEXT field table for a machine. */
export function contextLayout(machine: ContextMachine): RecordLayout {
  return modelOf(machine).layout;
}

/** sizeof(CONTEXT) for a machine. */
export function contextSize(machine: ContextMachine): number {
  return modelOf(machine).layout.size;
}

/** The register names a decoded context of this machine carries, in display order. */
export function contextRegisterNames(machine: ContextMachine): readonly string[] {
  return Object.keys(modelOf(machine).registers);
}

/** The CONTEXT field that holds `register`; an unknown name throws a RangeError. */
export function contextRegisterField(machine: ContextMachine, register: string): FieldSpec {
  const model = modelOf(machine);
  const field = Object.hasOwn(model.registers, register) ? model.registers[register] : undefined;
  if (field === undefined) throw new RangeError(`${model.layout.name} has no register ${register}`);
  return fieldOf(model.layout, field);
}

/** Reads a CONTEXT of `machine` at `offset`; a short input throws InputError("truncated") at the first cut field. */
export function decodeContext(machine: ContextMachine, bytes: Uint8Array, offset = 0): CpuContext {
  const { layout } = modelOf(machine);
  requireRecord(layout, bytes, offset);
  // Only the fields that hold registers are read (not the save areas a thread's CONTEXT also holds).
  const view = viewOf(bytes);
  const regs: Record<string, bigint> = {};
  for (const { register, at, kind } of registerFieldsOf(machine)) {
    const p = offset + at;
    if (kind === "u64") regs[register] = view.getBigUint64(p, true);
    else regs[register] = BigInt(kind === "u32" ? view.getUint32(p, true) : kind === "u16" ? view.getUint16(p, true) : view.getUint8(p));
  }
  return { machine, contextFlags: view.getUint32(offset + fieldOf(layout, "ContextFlags").offset, true), registers: regs };
}

/** Where each register of a machine's CONTEXT is (its numeric fields, in the model's order), worked out once per machine from its layout. */
function registerFieldsOf(machine: ContextMachine): readonly { register: string; at: number; kind: "u8" | "u16" | "u32" | "u64" }[] {
  let fields = REGISTER_FIELDS.get(machine);
  if (fields === undefined) {
    const { layout, registers } = modelOf(machine);
    fields = [];
    for (const [register, name] of Object.entries(registers)) {
      const f = fieldOf(layout, name);
      if (f.kind === "u8" || f.kind === "u16" || f.kind === "u32" || f.kind === "u64") fields.push({ register, at: f.offset, kind: f.kind });
    }
    REGISTER_FIELDS.set(machine, fields);
  }
  return fields;
}
const REGISTER_FIELDS = new Map<ContextMachine, { register: string; at: number; kind: "u8" | "u16" | "u32" | "u64" }[]>();

/**
 * Encodes a CONTEXT. With `base`, writes into a copy of all of `base` (which must hold at least
 * one whole record), so unnamed areas and any XSAVE bytes past the record survive; without it,
 * starts from zeros. Registers absent from `ctx.registers` keep the base value. An unknown
 * register name or a value too wide for its field throws a RangeError.
 */
export function encodeContext(ctx: CpuContext, base?: Uint8Array): Uint8Array {
  const { layout, registers } = modelOf(ctx.machine);
  let out: Uint8Array;
  if (base === undefined) {
    out = new Uint8Array(layout.size);
  } else {
    requireRecord(layout, base, 0);
    out = base.slice();
  }
  const values: Record<string, number | bigint> = { ContextFlags: ctx.contextFlags };
  for (const [reg, value] of Object.entries(ctx.registers)) {
    const field = Object.hasOwn(registers, reg) ? registers[reg] : undefined;
    if (field === undefined) throw new RangeError(`${layout.name} has no register ${reg}`);
    values[field] = value;
  }
  return encodeFields(layout, values, out, 0);
}
