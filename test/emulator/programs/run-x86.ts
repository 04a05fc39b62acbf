/**
 * Test driver for generated x86 programs: maps the image at its base under Unicorn, maps a
 * 1 MiB stack, pushes the 0 sentinel return address and runs from the entry point until EIP is
 * 0. A code hook over .text keeps a shadow call stack (push on E8, pop on C3/C2) and, at every
 * capture label, records the registers, the shadow stack (the ground truth) and what a minimal
 * FPO_DATA walker (x86-fpo.md §1.2, §1.4 step 3) and an EBP-chain walker (§6) make of the stack.
 */
import { parsePe } from "../../../src/formats/pe.js";
import type { FpoData } from "../../../src/model/fpo-data.js";
import { decodeFpoTable, FRAME_NONFPO } from "../../../src/model/fpo-data.js";
import { Unicorn } from "../../../emulator/unicorn.js";
import type { X86Program } from "../../../emulator/programs/x86-chain.js";

/** The lowest stack address: the tests' stack is 1 MiB ending at 2 MiB, well below the image at 4 MiB. */
export const STACK_BASE = 0x0010_0000n;
/** The stack's size: the images' SizeOfStackReserve. */
export const STACK_SIZE = 0x10_0000;
/** One past the highest stack address; ESP is back here once main has returned to the sentinel. */
export const STACK_TOP = STACK_BASE + BigInt(STACK_SIZE);

/** Callee-saved registers get these values before the run; a clean run gives them back. */
export const INITIAL = { ebx: 0x1111_1111n, esi: 0x2222_2222n, edi: 0x3333_3333n, ebp: 0x4444_4444n } as const;

/** One frame of ground truth, as DESIGN.md defines it: pc, and sp just past the return-address slot. */
export interface TruthFrame {
  pc: bigint;
  sp: bigint;
}

/** What the run saw at one capture label. */
export interface Capture {
  label: string;
  eip: bigint;
  esp: bigint;
  ebp: bigint;
  /** Innermost first: the context, then each return address with the sp past its slot. */
  truth: TruthFrame[];
  /** The same frames as the FPO_DATA walker finds them. */
  fpoWalk: TruthFrame[];
  /** Return addresses an EBP-chain capture records, innermost first (it never records the context PC). */
  ebpChain: bigint[];
}

/** How a run ended. */
export interface RunResult {
  captures: Capture[];
  finalEip: bigint;
  finalEsp: bigint;
  finalRegs: Record<keyof typeof INITIAL, bigint>;
  deepestCalls: number;
}

/** Runs a program to completion under Unicorn; throws if it faults or runs away. */
export function runX86(program: X86Program): RunResult {
  const pe = parsePe(program.image);
  const image = pe.mapped();
  const records = decodeFpoTable(pe.fpoData() ?? new Uint8Array());
  const base = program.base;
  const text = pe.sections.find((s) => s.name === ".text");
  if (text === undefined) throw new Error("no .text section");
  const byteAt = (address: bigint): number => image[Number(address - base)] ?? -1;
  const captureAt = new Map<bigint, string>();
  for (const label of program.captures) captureAt.set(program.labels[label]!, label);

  const uc = Unicorn.open(32);
  try {
    uc.memMap(base, pe.sizeOfImage);
    uc.memWrite(base, image);
    uc.memMap(STACK_BASE, STACK_SIZE, 3);
    for (const [name, value] of Object.entries(INITIAL)) uc.regWrite(name as keyof typeof INITIAL, value);
    uc.regWrite("esp", STACK_TOP - 4n);
    uc.memWrite(STACK_TOP - 4n, new Uint8Array(4));

    const shadow: TruthFrame[] = [];
    const captures: Capture[] = [];
    let deepestCalls = 0;
    const u32 = (address: bigint): bigint | undefined => {
      if (address < STACK_BASE || address + 4n > STACK_TOP) return undefined;
      return BigInt(new DataView(uc.memRead(address, 4).buffer).getUint32(0, true));
    };
    uc.hookCode(
      (address) => {
        const label = captureAt.get(address);
        if (label !== undefined) {
          const eip = address;
          const esp = uc.regRead("esp");
          const ebp = uc.regRead("ebp");
          captures.push({
            label,
            eip,
            esp,
            ebp,
            truth: [{ pc: eip, sp: esp }, ...[...shadow].reverse()],
            fpoWalk: fpoWalk(records, base, { eip, esp, ebp }, u32),
            ebpChain: ebpChain(ebp, u32),
          });
        }
        // The hook runs before the instruction: a call's return slot will be just below ESP.
        const op = byteAt(address);
        if (op === 0xe8) {
          shadow.push({ pc: address + 5n, sp: uc.regRead("esp") });
          deepestCalls = Math.max(deepestCalls, shadow.length);
        } else if (op === 0xc3 || op === 0xc2) {
          shadow.pop();
        }
      },
      { begin: base + BigInt(text.virtualAddress), end: base + BigInt(text.virtualAddress + text.virtualSize - 1) },
    );

    const stop = uc.start(base + BigInt(program.entryRva), 0n, { count: 1_000_000 });
    if (stop.reason !== "until") throw new Error(`the run ended with ${stop.reason} at 0x${stop.pc.toString(16)}`);
    return {
      captures,
      finalEip: uc.regRead("eip"),
      finalEsp: uc.regRead("esp"),
      finalRegs: { ebx: uc.regRead("ebx"), esi: uc.regRead("esi"), edi: uc.regRead("edi"), ebp: uc.regRead("ebp") },
      deepestCalls,
    };
  } finally {
    uc.close();
  }
}

/**
 * The FPO_DATA body rule: an FPO frame's return address is at esp + calleeParams + locals +
 * savedRegs, and fUseBP recovers EBP from [esp + calleeParams + savedRegs − 8] (x86-fpo.md
 * §1.4 step 3); a FRAME_NONFPO frame unwinds through EBP (§1.2). Caller frames are looked up
 * with pc − 1 (§1.4 step 1). The walk ends at the 0 sentinel.
 */
export function fpoWalk(
  records: readonly FpoData[],
  base: bigint,
  context: { eip: bigint; esp: bigint; ebp: bigint },
  read: (address: bigint) => bigint | undefined,
): TruthFrame[] {
  const frames: TruthFrame[] = [{ pc: context.eip, sp: context.esp }];
  let { eip, esp, ebp } = context;
  let calleeParams = 0n;
  for (let depth = 0; depth < 5000; depth++) {
    const rva = Number(eip - base) - (depth === 0 ? 0 : 1);
    const r = records.find((x) => x.ulOffStart <= rva && rva < x.ulOffStart + x.cbProcSize);
    if (r === undefined) throw new Error(`no FPO_DATA for rva 0x${rva.toString(16)}`);
    let ra: bigint;
    let nextEbp = ebp;
    if (r.cbFrame === FRAME_NONFPO) {
      ra = ebp + 4n;
      nextEbp = must(read(ebp), ebp);
    } else {
      ra = esp + calleeParams + 4n * BigInt(r.cdwLocals) + 4n * BigInt(r.cbRegs);
      if (r.fUseBP) {
        const slot = esp + calleeParams + 4n * BigInt(r.cbRegs) - 8n;
        nextEbp = must(read(slot), slot);
      }
    }
    eip = must(read(ra), ra);
    esp = ra + 4n;
    ebp = nextEbp;
    calleeParams = 4n * BigInt(r.cdwParams);
    if (eip === 0n) return frames;
    frames.push({ pc: eip, sp: esp });
  }
  throw new Error("the FPO walk did not end");
}

/**
 * An EBP-chain capture in the manner of RtlWalkFrameChain (x86-fpo.md §6): bounded by the stack,
 * monotonic. A return address of 0 is the runner's sentinel and ends the chain unrecorded.
 */
export function ebpChain(ebp: bigint, read: (address: bigint) => bigint | undefined): bigint[] {
  const out: bigint[] = [];
  let fp = ebp;
  for (;;) {
    const next = read(fp);
    const ra = read(fp + 4n);
    if (next === undefined || ra === undefined || ra === 0n) return out;
    if (ra >= STACK_BASE && ra < STACK_TOP) return out;
    out.push(ra);
    if (!(next > fp && next < STACK_TOP)) return out;
    fp = next;
  }
}

function must(value: bigint | undefined, address: bigint): bigint {
  if (value === undefined) throw new Error(`unreadable stack at 0x${address.toString(16)}`);
  return value;
}
