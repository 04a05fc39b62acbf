/**
 * A hostile minidump for the bench and the tests: one x86 stack holding an EBP chain `depth`
 * frames deep, listed by `threads` thread entries that all point at the same stack bytes (and
 * share one CONTEXT), so that a dump of under a megabyte asks for `threads × depth` frames. The
 * bytes are laid out here field by field (minidump.md §1-§4), not by the project's writer, which
 * gives every thread its own stack.
 */

/** Where the stack lies in the address space, and the return address every frame holds. */
export const CRAFTED_STACK = 0x0010_0000;
/** The one module, and its code: a `call` just before the return address every frame holds. */
const MODULE_BASE = 0x0040_0000;
const CODE = 0x0040_1000;
const CODE_BYTES = 0x400;
const RETURN_ADDRESS = 0x0040_1234;

export interface CraftedDumpOptions {
  threads: number;
  depth: number;
  /** Stack bytes (at least 8 × depth). */
  stackBytes?: number;
}

/** The dump's bytes. */
export function craftedDump({ threads, depth, stackBytes = Math.max(8 * depth + 64, 4096) }: CraftedDumpOptions): Uint8Array {
  const HEADER = 32;
  const STREAMS = 4;
  const directory = HEADER;
  const systemInfo = directory + 12 * STREAMS;
  const SYSTEM_INFO = 56;
  const csd = systemInfo + SYSTEM_INFO; // an empty MINIDUMP_STRING
  const threadList = csd + 8;
  const THREAD = 48;
  const context = threadList + 4 + THREAD * threads;
  const CONTEXT_X86 = 716;
  const moduleList = context + CONTEXT_X86;
  const MODULE = 108;
  const moduleName = moduleList + 4 + MODULE;
  const NAME = "app.exe";
  const memoryList = moduleName + 4 + 2 * NAME.length + 2;
  const code = memoryList + 4 + 16 * 2;
  const stack = code + CODE_BYTES;
  const size = stack + stackBytes;
  const bytes = new Uint8Array(size);
  const v = new DataView(bytes.buffer);
  const u16 = (at: number, x: number): void => v.setUint16(at, x, true);
  const u32 = (at: number, x: number): void => v.setUint32(at, x >>> 0, true);
  const u64 = (at: number, x: number): void => v.setBigUint64(at, BigInt(x), true);

  u32(0, 0x504d444d); // "MDMP"
  u32(4, 0xa793);
  u32(8, STREAMS);
  u32(12, directory);
  // The directory: SystemInfo (7), ThreadList (3), MemoryList (5), ModuleList (4).
  const entry = (i: number, type: number, dataSize: number, rva: number): void => {
    u32(directory + 12 * i, type);
    u32(directory + 12 * i + 4, dataSize);
    u32(directory + 12 * i + 8, rva);
  };
  entry(0, 7, SYSTEM_INFO, systemInfo);
  entry(1, 3, 4 + THREAD * threads, threadList);
  entry(2, 5, 4 + 16 * 2, memoryList);
  entry(3, 4, 4 + MODULE, moduleList);

  u16(systemInfo, 0); // PROCESSOR_ARCHITECTURE_INTEL
  u16(systemInfo + 2, 6);
  bytes[systemInfo + 6] = 1; // NumberOfProcessors
  u32(systemInfo + 8, 10); // MajorVersion
  u32(systemInfo + 20, 2); // PlatformId: VER_PLATFORM_WIN32_NT
  u32(systemInfo + 24, csd); // CSDVersionRva

  u32(threadList, threads);
  for (let i = 0; i < threads; i++) {
    const t = threadList + 4 + THREAD * i;
    u32(t, 1000 + i); // ThreadId
    u64(t + 24, CRAFTED_STACK); // Stack.StartOfMemoryRange
    u32(t + 32, stackBytes); // Stack.DataSize
    u32(t + 36, stack); // Stack.Rva: every thread the same bytes
    u32(t + 40, CONTEXT_X86); // ThreadContext.DataSize
    u32(t + 44, context); // ThreadContext.Rva: one context for all
  }
  // CONTEXT (x86): ContextFlags = CONTEXT_i386 | CONTROL | INTEGER | SEGMENTS; EBP and ESP at the
  // chain's first frame, EIP in code.
  u32(context, 0x0001_0007);
  u32(context + 0xb4, CRAFTED_STACK); // Ebp
  u32(context + 0xb8, RETURN_ADDRESS); // Eip
  u32(context + 0xc4, CRAFTED_STACK); // Esp

  u32(moduleList, 1);
  u64(moduleList + 4, MODULE_BASE);
  u32(moduleList + 12, 0x2000); // SizeOfImage
  u32(moduleList + 24, moduleName);
  u32(moduleName, 2 * NAME.length);
  for (let i = 0; i < NAME.length; i++) u16(moduleName + 4 + 2 * i, NAME.charCodeAt(i));

  u32(memoryList, 2);
  u64(memoryList + 4, CODE);
  u32(memoryList + 12, CODE_BYTES);
  u32(memoryList + 16, code);
  u64(memoryList + 20, CRAFTED_STACK);
  u32(memoryList + 28, stackBytes);
  u32(memoryList + 32, stack);
  // call rel32 ending at the return address (to the start of the code).
  const call = code + (RETURN_ADDRESS - 5 - CODE);
  bytes[call] = 0xe8;
  u32(call + 1, CODE - RETURN_ADDRESS);

  // The chain: frame k at CRAFTED_STACK + 8k holds the next frame's EBP and a return address;
  // the last holds EBP 0, the end of the stack.
  for (let k = 0; k < depth; k++) {
    const at = stack + 8 * k;
    u32(at, k + 1 < depth ? CRAFTED_STACK + 8 * (k + 1) : 0);
    u32(at + 4, RETURN_ADDRESS);
  }
  return bytes;
}
