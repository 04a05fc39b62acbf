/**
 * The logging modules that programs call to log an ETW event with a stack: small images written
 * in assembly, mapped at their own bases beside a program, whose machine code captures the stack
 * the way Windows does, so that the address arrays in the emulator's vectors come from executed
 * code and never from this project's walkers.
 *
 * - `etwlog.dll` (x86, at 0x77000000, where the 32-bit ntdll usually sits) is the user-mode
 *   event-write path: `EtwEventWrite` → `EtwpLogStack` → `RtlWalkFrameChain`, all with EBP
 *   frames, so the logging path's own frames come first in the array (etw.md §3). It also holds
 *   `RtlUserThreadStart`, the frameless thunk every thread starts in, which calls the program's
 *   entry point.
 * - `etwkrnl.sys` (x86, at 0x80400000: kernel space, where ETW's kernel test for 4-byte pointers
 *   is ≥ 0x80000000, etw.md §2.3) is a kernel the program enters by calling its system-service
 *   entry `KiSystemService`. It logs the kernel part of the stack at once and the user part on
 *   the way back to user mode, as two records that share one nonzero MatchId. That the two
 *   events of a split stack carry the same MatchId is how the documentation reads; it is
 *   unverified, since every stack item in the public samples has MatchId 0 (etw.md §2.3). There
 *   are no privilege levels in the emulator: the kernel runs on the thread's stack, below the
 *   user frames, so its own walk is bounded by the same StackLimit..StackBase and ends at the
 *   first user-mode return address, where a real kernel's walk would leave the kernel stack.
 * - `etwlog64.dll` (x64, at 0x7FF800000000) is the 64-bit event-write path `EtwEventWrite` →
 *   `EtwpEventWriteFull` → `NtTraceEvent`. On x64, ETW's capture unwinds with unwind data; the
 *   runner takes that result from the shadow stack at the point where the stub would execute
 *   `syscall` (emulator/etw-capture.ts), so this module only has to put the logging path's
 *   frames on the stack.
 *
 * `RtlWalkFrameChain` follows x86-fpo.md §6 in machine code:
 * 1. Start at its own EBP (the user module, and the kernel walk with Flags 0), or at the trap
 *    frame's Ebp (the kernel's user walk, Flags 1). The bounds are NT_TIB.StackLimit..StackBase
 *    of the thread's TEB. Windows reaches the TEB through FS (fs:[0x18] is NT_TIB.Self), but
 *    Unicorn gives 32-bit code no FS base (emulator/unicorn.ts), so each module holds the TEB's
 *    address in a global (`ETW_TEB`, the usual address of a first thread's TEB) and the runner
 *    maps and fills the TEB there.
 * 2. Each step reads next = [fp] and ra = [fp+4], and stops when fp is outside the bounds or
 *    fewer than 8 bytes remain, when ra lies inside the stack, or, in the kernel walk, when ra
 *    is a user-mode address (< 0x80000000).
 * 3. It records ra, and goes on only when next > fp and next is below StackBase.
 * 4. It never consults FPO data.
 * Windows guards the walk with SEH and returns 0 frames when a read faults. Here every read of
 * the stack is bounds-checked first, and the runner maps the whole StackLimit..StackBase range,
 * so no read can fault and the 0-frames path is never needed: the bounds checks are the guard.
 *
 * The logging code writes each stack into a record in its module's .data: MatchId (u64), the
 * number of addresses (u32), 4 bytes of padding, then the addresses, innermost first, as in
 * EVENT_EXTENDED_ITEM_STACK_TRACE32 (etw.md §1.5). The instruction after the record is complete
 * is the module's log site; the runner reads the record there and turns it into an extended
 * data item.
 */
import { createHash } from "node:crypto";
import type { ModuleSymbol } from "../src/index.js";
import { type FpoData, FRAME_FPO, FRAME_NONFPO } from "../src/entry/dbghelp.js";
import { loadAssembler } from "./assemble.js";
import { DIRECTORY_INDEX, FIRST_SECTION_RVA, SECTION_CHARACTERISTICS, debugSection, writePeImage, type SectionSpec } from "./image-writer.js";

/** The most return addresses one capture records (the StackWalk event's MOF declares up to 192, etw.md §2.1). */
export const ETW_MAX_FRAMES = 192;
/** Where the runner maps the thread's TEB (NT_TIB at offset 0), the usual address of a 32-bit process's first TEB. */
export const ETW_TEB = 0x7ffd_f000n;
/** NT_TIB offsets (x86): StackBase is one past the highest stack address, StackLimit its lowest. */
export const NT_TIB32 = { exceptionList: 0x00, stackBase: 0x04, stackLimit: 0x08, self: 0x18 } as const;

/** ImageBase of `etwlog.dll`. */
export const ETW_USER_BASE = 0x7700_0000n;
/** ImageBase of `etwkrnl.sys`: in kernel space (≥ 0x80000000). */
export const ETW_KERNEL_BASE = 0x8040_0000n;
/** ImageBase of `etwlog64.dll`. */
export const ETW_USER64_BASE = 0x0000_7ff8_0000_0000n;
/** The user-mode address limit of 32-bit Windows: ETW classifies a 4-byte address at or above it as kernel (etw.md §2.3). */
export const X86_KERNEL_SPACE = 0x8000_0000n;

/** `etwlog.dll!EtwEventWrite`, the first function of the module's .text: what an x86 program calls to log. */
export const ETW_EVENT_WRITE = ETW_USER_BASE + BigInt(FIRST_SECTION_RVA);
/** `etwkrnl.sys!KiSystemService`, the kernel's system-service entry: what an x86 program calls to log from the kernel. */
export const ETW_SYSTEM_SERVICE = ETW_KERNEL_BASE + BigInt(FIRST_SECTION_RVA);
/** `etwlog64.dll!EtwEventWrite`: what an x64 program calls to log. */
export const ETW_EVENT_WRITE64 = ETW_USER64_BASE + BigInt(FIRST_SECTION_RVA);

/** Module names. */
export const ETW_MODULE_NAMES = { user: "etwlog.dll", kernel: "etwkrnl.sys", user64: "etwlog64.dll" } as const;

/** The RVA of the x86 modules' .data, right after a .text of at most one page. */
const DATA_RVA = 0x2000;

/** Offsets in a stack record: MatchId, count, then the addresses (EVENT_EXTENDED_ITEM_STACK_TRACE32 order). */
export const ETW_STACK_RECORD = { matchId: 0, count: 8, addresses: 16, size: 16 + 4 * ETW_MAX_FRAMES } as const;

/** Globals of `etwlog.dll`'s .data. */
export const ETW_USER_DATA = {
  /** The TEB's address (stands for fs:[0x18]); initialised to {@link ETW_TEB}. */
  teb: ETW_USER_BASE + BigInt(DATA_RVA),
  /** The thread's start address, which `RtlUserThreadStart` calls; the runner stores it before the run. */
  startAddress: ETW_USER_BASE + BigInt(DATA_RVA) + 0x04n,
  /** Events logged so far. */
  eventCount: ETW_USER_BASE + BigInt(DATA_RVA) + 0x08n,
  /** The stack record of the last event. */
  record: ETW_USER_BASE + BigInt(DATA_RVA) + 0x10n,
} as const;

/** Globals of `etwkrnl.sys`'s .data. */
export const ETW_KERNEL_DATA = {
  /** The TEB's address (stands for KTHREAD.Teb); initialised to {@link ETW_TEB}. */
  teb: ETW_KERNEL_BASE + BigInt(DATA_RVA),
  /** The last MatchId handed out; each kernel/user pair takes the next one, so the first is 1. */
  matchId: ETW_KERNEL_BASE + BigInt(DATA_RVA) + 0x04n,
  /** Nonzero while a user part is owed: set by the kernel part, cleared once the user part is logged. */
  userPending: ETW_KERNEL_BASE + BigInt(DATA_RVA) + 0x08n,
  /** The trap frame of the current system call: KTRAP_FRAME's Ebp, Eip and HardwareEsp, in this order. */
  trapFrame: ETW_KERNEL_BASE + BigInt(DATA_RVA) + 0x10n,
  /** The kernel part's stack record. */
  kernelRecord: ETW_KERNEL_BASE + BigInt(DATA_RVA) + 0x20n,
  /** The user part's stack record. */
  userRecord: ETW_KERNEL_BASE + BigInt(DATA_RVA) + 0x20n + BigInt(ETW_STACK_RECORD.size),
} as const;

/** A point in a logging module where one logged stack is complete. */
export interface EtwLogSite {
  /** Its label in the module's source, e.g. `EtwpLogStack_logged`. */
  readonly label: string;
  readonly address: bigint;
  /** The same point as a break spec the runner resolves (`module!function+0xN`). */
  readonly breakSpec: string;
  /** x86: the stack record the code has just filled. Absent on x64, whose stack comes from the shadow stack. */
  readonly record?: bigint;
  /** What the logged stack is, in words (the event's description). */
  readonly description: string;
}

/** A built logging module. */
export interface EtwModule {
  /** The module name, e.g. `etwlog.dll`. */
  readonly name: string;
  readonly machine: "x86" | "x64";
  /** The PE file bytes. */
  readonly image: Uint8Array;
  /** ImageBase: the module is mapped there (it has no relocations). */
  readonly base: bigint;
  /** One symbol per function, in address order, with sizes. */
  readonly symbols: readonly ModuleSymbol[];
  /** Every label of the source at its address. */
  readonly labels: Readonly<Record<string, bigint>>;
  /** The assembled source, comments included. */
  readonly asm: string;
  /** x86: one FPO_DATA record per function (also in the image's debug directory). */
  readonly fpo: readonly FpoData[];
  /** Where logged stacks are complete, in the order the code reaches them. */
  readonly logSites: readonly EtwLogSite[];
}

/** One function of a module: its frame kind (for FPO_DATA or unwind data) and its lines. */
interface FunctionSource {
  readonly name: string;
  /** x86 "ebp": push ebp; mov ebp, esp (FRAME_NONFPO). "fpo": no frame (FRAME_FPO). x64 "alloc40": sub rsp, 40. "leaf": no prolog. */
  readonly frame: "ebp" | "fpo" | "alloc40" | "leaf";
  /** x86: registers pushed after the frame is set up (cbRegs). */
  readonly regs?: number;
  /** x86: parameters in DWORDs (cdwParams). */
  readonly params?: number;
  /** The lines from the function's label to its last instruction; `<name>_body` marks the end of the prolog. */
  readonly lines: readonly string[];
}

/** What a module is made of. */
interface ModuleDefinition {
  readonly name: string;
  readonly machine: "x86" | "x64";
  readonly base: bigint;
  readonly header: readonly string[];
  readonly functions: readonly FunctionSource[];
  /** x86: .data, whose initialised start is `bytes` and the rest, up to `size`, zero. */
  readonly data?: { readonly bytes: Uint8Array; readonly size: number };
  /** Labels that are log sites, with their records and descriptions. */
  readonly logSites: readonly { label: string; record?: bigint; description: string }[];
}

const pad = (instruction: string, comment = ""): string => (comment === "" ? `    ${instruction}` : `    ${instruction.padEnd(40)} # ${comment}`);
const hex = (n: bigint | number): string => `0x${n.toString(16).toUpperCase()}`;
const at = (address: bigint, offset = 0): string => `dword ptr [${hex(address + BigInt(offset))}]`;

/**
 * `RtlWalkFrameChain(Callers, Count, Flags)`, stdcall, returning the number of addresses stored
 * (x86-fpo.md §6). `kernel` adds the Flags handling of the kernel's copy: Flags 1 starts at the
 * trap frame's Ebp, and Flags 0 stops at the first user-mode return address.
 */
function walkFrameChain(teb: bigint, kernel: boolean): FunctionSource {
  const done = "RtlWalkFrameChain_done";
  const lines = [
    "RtlWalkFrameChain:",
    pad("push ebp", "an EBP frame like every function on the logging path"),
    pad("mov ebp, esp", "[ebp+8] Callers, [ebp+12] Count, [ebp+16] Flags"),
    "    push ebx",
    "    push esi",
    "    push edi",
    "RtlWalkFrameChain_body:",
    pad(`mov eax, ${at(teb)}`, "the TEB (Windows: fs:[0x18], NT_TIB.Self)"),
    pad(`mov ebx, dword ptr [eax + ${NT_TIB32.stackLimit}]`, "NT_TIB.StackLimit: the lowest stack address"),
    pad(`mov edx, dword ptr [eax + ${NT_TIB32.stackBase}]`, "NT_TIB.StackBase: one past the highest"),
    pad("mov esi, ebp", "fp: start at the current EBP, this function's own frame"),
  ];
  if (kernel) {
    lines.push(
      pad("cmp dword ptr [ebp + 16], 1", "Flags 1: the user part of the stack"),
      "    jne RtlWalkFrameChain_start",
      pad(`mov esi, ${at(ETW_KERNEL_DATA.trapFrame)}`, "starts at the trap frame's Ebp"),
      "RtlWalkFrameChain_start:",
    );
  }
  lines.push(
    pad("mov edi, dword ptr [ebp + 8]", "Callers"),
    pad("xor ecx, ecx", "addresses stored"),
  );
  if (kernel) {
    // The user part begins where user mode left off: the trap frame's Eip, the return into the
    // system-call stub (etw.md §3: user frames start at the ntdll syscall stub). It is on no EBP
    // chain, so it is recorded before the walk from the trap frame's Ebp.
    lines.push(
      pad("cmp dword ptr [ebp + 16], 1", "Flags 1: the user part"),
      "    jne RtlWalkFrameChain_loop",
      pad(`mov eax, ${at(ETW_KERNEL_DATA.trapFrame, 4)}`, "KTRAP_FRAME.Eip"),
      pad("mov dword ptr [edi], eax", "recorded first"),
      "    inc ecx",
    );
  }
  lines.push(
    "RtlWalkFrameChain_loop:",
    pad("cmp ecx, dword ptr [ebp + 12]", "Count addresses stored: the buffer is full"),
    `    jae ${done}`,
    pad("cmp esi, ebx", "fp below StackLimit: out of bounds"),
    `    jb ${done}`,
    pad("cmp esi, edx", "fp at or above StackBase: out of bounds"),
    `    jae ${done}`,
    "    mov eax, edx",
    "    sub eax, esi",
    pad("cmp eax, 8", "fewer than 8 bytes left for [fp] and [fp+4]"),
    `    jb ${done}`,
    pad("mov eax, dword ptr [esi + 4]", "ra = [fp+4]: in bounds, so the read cannot fault"),
    pad("cmp eax, ebx", "ra at or below StackLimit: not a stack address"),
    "    jbe RtlWalkFrameChain_code",
    pad("cmp eax, edx", "StackLimit < ra < StackBase: ra lies inside the stack"),
    `    jb ${done}`,
    "RtlWalkFrameChain_code:",
  );
  if (kernel) {
    lines.push(
      pad("cmp dword ptr [ebp + 16], 0", "Flags 0: the kernel part"),
      "    jne RtlWalkFrameChain_record",
      pad(`cmp eax, ${hex(X86_KERNEL_SPACE)}`, "a user-mode ra ends the kernel part"),
      `    jb ${done}`,
      "RtlWalkFrameChain_record:",
    );
  }
  lines.push(
    pad("mov dword ptr [edi + ecx*4], eax", "record ra"),
    "    inc ecx",
    pad("mov eax, dword ptr [esi]", "next = [fp]"),
    pad("cmp eax, esi", "go on only if next > fp"),
    `    jbe ${done}`,
    pad("cmp eax, edx", "and next lies below StackBase"),
    `    jae ${done}`,
    "    mov esi, eax",
    "    jmp RtlWalkFrameChain_loop",
    `${done}:`,
    pad("mov eax, ecx", "the number of addresses stored"),
    "    pop edi",
    "    pop esi",
    "    pop ebx",
    "    pop ebp",
    pad("ret 12", "stdcall: three arguments"),
  );
  return { name: "RtlWalkFrameChain", frame: "ebp", regs: 3, params: 3, lines };
}

/** Pushes RtlWalkFrameChain's arguments for `record` and calls it; the count goes into the record. */
function walkInto(record: bigint, flags: 0 | 1, what: string): string[] {
  return [
    pad(`push ${flags}`, `Flags ${flags}: ${what}`),
    pad(`push ${ETW_MAX_FRAMES}`, "Count"),
    pad(`push ${hex(record + BigInt(ETW_STACK_RECORD.addresses))}`, "Callers: the record's address array"),
    "    call RtlWalkFrameChain",
    pad(`mov ${at(record, ETW_STACK_RECORD.count)}, eax`, "the record's address count"),
  ];
}

/** An x86 EBP-frame function whose body is `body`. */
function ebpFunction(name: string, body: readonly string[]): FunctionSource {
  return {
    name,
    frame: "ebp",
    lines: [`${name}:`, "    push ebp", "    mov ebp, esp", `${name}_body:`, ...body, "    pop ebp", "    ret"],
  };
}

/** The thread-start thunk: frameless (EBP stays 0, which ends every EBP chain), it calls the start address. */
function userThreadStart(): FunctionSource {
  return {
    name: "RtlUserThreadStart",
    frame: "fpo",
    lines: [
      "RtlUserThreadStart:",
      "RtlUserThreadStart_body:",
      pad(`call ${at(ETW_USER_DATA.startAddress)}`, "the thread's start address: the program's entry point"),
      pad("ret", "back to the 0 the thread was started with: the run ends"),
    ],
  };
}

/** Little-endian u32s. */
function u32s(values: readonly bigint[]): Uint8Array {
  const out = new Uint8Array(4 * values.length);
  const view = new DataView(out.buffer);
  values.forEach((v, i) => view.setUint32(4 * i, Number(v), true));
  return out;
}

const USER_DEFINITION = (): ModuleDefinition => ({
  name: ETW_MODULE_NAMES.user,
  machine: "x86",
  base: ETW_USER_BASE,
  header: [
    `# ${ETW_MODULE_NAMES.user}: the user-mode ETW event-write path (x86). A program calls EtwEventWrite to log an`,
    "# event with a stack; RtlWalkFrameChain follows the EBP chain from its own frame (x86-fpo.md §6),",
    "# so the array starts with the logging path: EtwpLogStack, EtwEventWrite, then the caller.",
    `# .data at ${hex(ETW_USER_BASE + BigInt(DATA_RVA))}: TEB pointer, start address, event count, stack record.`,
  ],
  functions: [
    ebpFunction("EtwEventWrite", [pad("call EtwpLogStack", "log the event's stack"), pad("xor eax, eax", "ERROR_SUCCESS")]),
    ebpFunction("EtwpLogStack", [
      pad(`mov ${at(ETW_USER_DATA.record, ETW_STACK_RECORD.matchId)}, 0`, "MatchId 0: the whole stack in one item"),
      pad(`mov ${at(ETW_USER_DATA.record, ETW_STACK_RECORD.matchId + 4)}, 0`),
      ...walkInto(ETW_USER_DATA.record, 0, "walk from the current EBP"),
      pad(`inc ${at(ETW_USER_DATA.eventCount)}`, "one more event logged"),
      "EtwpLogStack_logged:",
    ]),
    walkFrameChain(ETW_USER_DATA.teb, false),
    userThreadStart(),
  ],
  data: { bytes: u32s([ETW_TEB]), size: Number(ETW_USER_DATA.record - ETW_USER_BASE) - DATA_RVA + ETW_STACK_RECORD.size },
  logSites: [{ label: "EtwpLogStack_logged", record: ETW_USER_DATA.record, description: "user-mode event: the logging path's frames first (etw.md §3)" }],
});

const KERNEL_DEFINITION = (): ModuleDefinition => {
  const trap = ETW_KERNEL_DATA.trapFrame;
  return {
    name: ETW_MODULE_NAMES.kernel,
    machine: "x86",
    base: ETW_KERNEL_BASE,
    header: [
      `# ${ETW_MODULE_NAMES.kernel}: a kernel that logs an event with a split stack (x86). A program enters it by calling`,
      "# KiSystemService (a near call: the emulator has no privilege levels, and the kernel runs on",
      "# the thread's stack). The kernel part is walked at once and ends at the first user-mode return",
      "# address; the user part is walked from the trap frame's Ebp on the way back to user mode. Both",
      "# records carry one nonzero MatchId (etw.md §2.3).",
      `# .data at ${hex(ETW_KERNEL_BASE + BigInt(DATA_RVA))}: TEB pointer, last MatchId, user-part flag, trap frame,`,
      "# two stack records.",
    ],
    functions: [
      ebpFunction("KiSystemService", [
        pad("mov eax, dword ptr [ebp]", "the caller's EBP, as the push saved it"),
        pad(`mov ${at(trap)}, eax`, "KTRAP_FRAME.Ebp"),
        pad("mov eax, dword ptr [ebp + 4]", "where the thread returns to user mode"),
        pad(`mov ${at(trap, 4)}, eax`, "KTRAP_FRAME.Eip"),
        pad("lea eax, [ebp + 8]", "the user stack pointer after that return"),
        pad(`mov ${at(trap, 8)}, eax`, "KTRAP_FRAME.HardwareEsp"),
        pad("call NtTraceEvent", "the system service"),
        pad(`cmp ${at(ETW_KERNEL_DATA.userPending)}, 0`, "about to return to user mode: a user part owed?"),
        "    je KiSystemService_exit",
        pad("call EtwpLogUserStack", "the deferred user part (etw.md §2.3)"),
        "KiSystemService_exit:",
        pad("xor eax, eax", "STATUS_SUCCESS"),
      ]),
      ebpFunction("NtTraceEvent", [pad("call EtwpLogKernelStack", "log the event with its stack")]),
      ebpFunction("EtwpLogKernelStack", [
        pad(`inc ${at(ETW_KERNEL_DATA.matchId)}`, "a fresh MatchId for this kernel/user pair"),
        pad(`mov eax, ${at(ETW_KERNEL_DATA.matchId)}`),
        pad(`mov ${at(ETW_KERNEL_DATA.kernelRecord, ETW_STACK_RECORD.matchId)}, eax`, "the kernel part's MatchId"),
        pad(`mov ${at(ETW_KERNEL_DATA.kernelRecord, ETW_STACK_RECORD.matchId + 4)}, 0`),
        pad(`mov ${at(ETW_KERNEL_DATA.userRecord, ETW_STACK_RECORD.matchId)}, eax`, "the same MatchId for the user part"),
        pad(`mov ${at(ETW_KERNEL_DATA.userRecord, ETW_STACK_RECORD.matchId + 4)}, 0`),
        ...walkInto(ETW_KERNEL_DATA.kernelRecord, 0, "the kernel part, from the current EBP"),
        pad(`mov ${at(ETW_KERNEL_DATA.userPending)}, 1`, "the user part is owed"),
        "EtwpLogKernelStack_logged:",
      ]),
      ebpFunction("EtwpLogUserStack", [
        ...walkInto(ETW_KERNEL_DATA.userRecord, 1, "the user part, from the trap frame"),
        pad(`mov ${at(ETW_KERNEL_DATA.userPending)}, 0`, "the user part is logged"),
        "EtwpLogUserStack_logged:",
      ]),
      walkFrameChain(ETW_KERNEL_DATA.teb, true),
    ],
    data: { bytes: u32s([ETW_TEB]), size: Number(ETW_KERNEL_DATA.userRecord - ETW_KERNEL_BASE) - DATA_RVA + ETW_STACK_RECORD.size },
    logSites: [
      { label: "EtwpLogKernelStack_logged", record: ETW_KERNEL_DATA.kernelRecord, description: "kernel part: the kernel frames up to the user/kernel boundary (etw.md §2.3)" },
      {
        label: "EtwpLogUserStack_logged",
        record: ETW_KERNEL_DATA.userRecord,
        description: "user part, logged on the way back to user mode with the kernel part's MatchId (etw.md §2.3)",
      },
    ],
  };
};

const USER64_DEFINITION = (): ModuleDefinition => {
  const alloc = (name: string, callee: string): FunctionSource => ({
    name,
    frame: "alloc40",
    lines: [
      `${name}:`,
      pad("sub rsp, 40", "the callee's home area, and RSP 16-aligned at the call"),
      `${name}_body:`,
      `    call ${callee}`,
      ...(name === "EtwEventWrite" ? [pad("xor eax, eax", "ERROR_SUCCESS")] : []),
      "    add rsp, 40",
      "    ret",
    ],
  });
  return {
    name: ETW_MODULE_NAMES.user64,
    machine: "x64",
    base: ETW_USER64_BASE,
    header: [
      `# ${ETW_MODULE_NAMES.user64}: the user-mode ETW event-write path (x64). A program calls EtwEventWrite; the`,
      "# stack is captured where NtTraceEvent would execute `syscall`, so the array starts with the",
      "# syscall return in NtTraceEvent, then EtwpEventWriteFull and EtwEventWrite (etw.md §3).",
    ],
    functions: [
      alloc("EtwEventWrite", "EtwpEventWriteFull"),
      alloc("EtwpEventWriteFull", "NtTraceEvent"),
      {
        name: "NtTraceEvent",
        frame: "leaf",
        lines: [
          "NtTraceEvent:",
          "NtTraceEvent_body:",
          pad("mov r10, rcx", "the system-call convention: syscall overwrites RCX"),
          pad("xchg ax, ax", "a two-byte no-op where `syscall` (0F 05) would be"),
          "NtTraceEvent_return:",
          pad("ret", "the syscall returns here: frame 0 of the logged stack"),
        ],
      },
    ],
    logSites: [{ label: "NtTraceEvent_return", description: "user-mode event: the syscall return and the logging path's frames first (etw.md §3)" }],
  };
};

const built = new Map<string, Promise<EtwModule>>();

/** `etwlog.dll`: the x86 user-mode logging module (built once per process). */
export function buildEtwUserModule(): Promise<EtwModule> {
  return cached(USER_DEFINITION);
}

/** `etwkrnl.sys`: the x86 kernel that logs a split stack (built once per process). */
export function buildEtwKernelModule(): Promise<EtwModule> {
  return cached(KERNEL_DEFINITION);
}

/** `etwlog64.dll`: the x64 user-mode logging module (built once per process). */
export function buildEtwUser64Module(): Promise<EtwModule> {
  return cached(USER64_DEFINITION);
}

function cached(definition: () => ModuleDefinition): Promise<EtwModule> {
  const def = definition();
  let module = built.get(def.name);
  if (module === undefined) {
    module = buildModule(def);
    built.set(def.name, module);
  }
  return module;
}

/** Assembles a module's functions at its .text, lays out .data, FPO_DATA or unwind data, and writes the PE image. */
async function buildModule(def: ModuleDefinition): Promise<EtwModule> {
  const assembler = await loadAssembler();
  const mode = def.machine === "x64" ? 64 : 32;
  const textAddress = def.base + BigInt(FIRST_SECTION_RVA);
  const source = [
    ...def.header,
    "",
    def.functions.map((f, i) => [...f.lines, `${f.name}_end:`, ...(i < def.functions.length - 1 ? [`    .align 16, 0xcc`] : [])].join("\n")).join("\n\n"),
  ].join("\n");
  const program = assembler.assembleProgram(source, { mode, address: textAddress });
  if (program.bytes.length > DATA_RVA - FIRST_SECTION_RVA) throw new Error(`${def.name}: .text is ${program.bytes.length} bytes, more than the page before .data`);
  const label = (name: string): bigint => {
    const address = program.labels.get(name);
    if (address === undefined) throw new Error(`${def.name}: label ${name} was not assembled`);
    return address;
  };
  const rva = (name: string): number => Number(label(name) - def.base);
  const entry = def.functions[0]!.name;
  if (label(entry) !== textAddress) throw new Error(`${def.name}: ${entry} is not at the start of .text`);

  const fpo: FpoData[] =
    def.machine === "x86"
      ? def.functions.map((f) => ({
          ulOffStart: rva(f.name),
          cbProcSize: rva(`${f.name}_end`) - rva(f.name),
          cdwLocals: 0,
          cdwParams: f.params ?? 0,
          cbProlog: rva(`${f.name}_body`) - rva(f.name),
          cbRegs: f.regs ?? 0,
          fHasSEH: false,
          fUseBP: false,
          reserved: 0,
          cbFrame: f.frame === "ebp" ? FRAME_NONFPO : FRAME_FPO,
        }))
      : [];
  const digest = createHash("sha256").update(def.name).update(program.bytes).digest();
  const timeDateStamp = digest.readUInt32LE(16);
  const sections: SectionSpec[] = [{ name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: program.bytes } }];
  if (def.data !== undefined) {
    sections.push({ name: ".data", characteristics: SECTION_CHARACTERISTICS.data, content: { bytes: def.data.bytes, virtualSize: def.data.size } });
  }
  if (def.machine === "x64") sections.push(...unwindSections(def.functions.filter((f) => f.frame === "alloc40").map((f) => ({ begin: rva(f.name), end: rva(`${f.name}_end`) }))));
  sections.push(
    debugSection({
      codeView: { guid: new Uint8Array(digest.subarray(0, 16)), age: 1, pdbName: def.name.replace(/\.[a-z]+$/, ".pdb") },
      ...(fpo.length > 0 ? { fpo } : {}),
      timeDateStamp,
    }),
  );
  const written = writePeImage({ machine: def.machine, imageBase: def.base, entryRva: FIRST_SECTION_RVA, timeDateStamp, sections });
  const dataSection = written.sections.find((s) => s.name === ".data");
  if (dataSection !== undefined && dataSection.rva !== DATA_RVA) throw new Error(`${def.name}: .data landed at RVA 0x${dataSection.rva.toString(16)}`);

  const labels: Record<string, bigint> = {};
  for (const [name, address] of [...program.labels].sort((a, b) => (a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0))) labels[name] = address;
  const symbols: ModuleSymbol[] = def.functions
    .map((f) => ({ name: f.name, rva: BigInt(rva(f.name)), size: BigInt(rva(`${f.name}_end`) - rva(f.name)) }))
    .sort((a, b) => (a.rva < b.rva ? -1 : 1));
  const logSites: EtwLogSite[] = def.logSites.map((s) => {
    const address = label(s.label);
    const owner = [...symbols].reverse().find((f) => def.base + f.rva <= address)!;
    const site: EtwLogSite = {
      label: s.label,
      address,
      breakSpec: `${def.name}!${owner.name}+0x${(address - def.base - owner.rva).toString(16)}`,
      description: s.description,
    };
    return s.record === undefined ? site : { ...site, record: s.record };
  });
  return { name: def.name, machine: def.machine, image: written.bytes, base: def.base, symbols, labels, asm: `${source}\n`, fpo, logSites };
}

/**
 * `.xdata` and `.pdata` for x64 functions whose whole prolog is `sub rsp, 40` (x64-unwind.md
 * §1.1-§1.3): one UNWIND_INFO (version 1, prolog 4 bytes, one UWOP_ALLOC_SMALL of 40 = 4·8 + 8
 * at offset 4) shared by every such function, and one RUNTIME_FUNCTION each. Functions without
 * an entry are leaves: their return address is at [RSP].
 */
function unwindSections(functions: readonly { begin: number; end: number }[]): SectionSpec[] {
  const UWOP_ALLOC_SMALL = 2;
  const info = Uint8Array.of(0x01, 4, 1, 0, 4, UWOP_ALLOC_SMALL | (((40 - 8) / 8) << 4), 0, 0);
  return [
    { name: ".xdata", characteristics: SECTION_CHARACTERISTICS.rdata, content: { bytes: info } },
    {
      name: ".pdata",
      characteristics: SECTION_CHARACTERISTICS.rdata,
      content: (placed, earlier) => {
        const xdata = earlier.get(".xdata")!.rva;
        const bytes = new Uint8Array(12 * functions.length);
        const view = new DataView(bytes.buffer);
        functions.forEach((f, i) => {
          view.setUint32(12 * i, f.begin, true);
          view.setUint32(12 * i + 4, f.end, true);
          view.setUint32(12 * i + 8, xdata, true);
        });
        return { bytes, directories: [{ index: DIRECTORY_INDEX.EXCEPTION, rva: placed.rva, size: bytes.length }] };
      },
    },
  ];
}
