/**
 * Maps a PE32/PE32+ image into an emulated CPU the way the Windows loader lays it out, for
 * freestanding images only: headers at ImageBase, each section at ImageBase + VirtualAddress
 * (raw bytes copied, the rest zero), page permissions from the section characteristics. There
 * is no import binding, no base relocation and no TLS: an image that would need any of the
 * first two is refused with an {@link InputError} of code "unsupported".
 */
import { InputError, type Module, type ModuleSymbol } from "../src/index.js";
import { IMAGE_DIRECTORY_ENTRY, type ModuleUnwind, type PeImage } from "../src/entry/formats.js";
import { IMAGE_FILE_MACHINE, machineFromImageFileMachine } from "../src/entry/arch.js";
import { UC_PROT, type Unicorn } from "./unicorn.js";
import { addressBits, cpuName, type CpuMode } from "./cpu-mode.js";

/** Unicorn maps and protects memory in whole 4 KiB pages. */
export const PAGE_SIZE = 0x1000n;

/** IMAGE_SCN_MEM_* section characteristics (PE Format, "Section Flags"). */
const IMAGE_SCN_MEM_EXECUTE = 0x2000_0000;
const IMAGE_SCN_MEM_READ = 0x4000_0000;
const IMAGE_SCN_MEM_WRITE = 0x8000_0000;

/** An image mapped into an engine. */
export interface LoadedImage {
  /** The module name, e.g. `app.exe`. */
  name: string;
  /** Where the image is mapped: its preferred ImageBase. */
  base: bigint;
  /** SizeOfImage in bytes (the mapping itself is rounded up to whole pages). */
  size: bigint;
  pe: PeImage;
  /** The image as a snapshot module, with its symbols. */
  module: Module;
}

/** What {@link mapPeImage} needs besides the parsed image. */
export interface MapPeOptions {
  /** The module name (normally the file name). */
  name: string;
  /** Function symbols sorted by RVA (see emulator/symbols.ts); none when absent. */
  symbols?: readonly ModuleSymbol[];
  /** Unwind records that travel with the module (from its PDB). */
  unwind?: ModuleUnwind;
}

/** The CPU an image's machine needs: I386 runs on the 32-bit CPU, AMD64 on the 64-bit one, ARM64 on AArch64, ARMNT on 32-bit ARM in Thumb state. */
function modeFor(machine: number): CpuMode | undefined {
  if (machine === IMAGE_FILE_MACHINE.I386) return 32;
  if (machine === IMAGE_FILE_MACHINE.AMD64) return 64;
  if (machine === IMAGE_FILE_MACHINE.ARM64) return "arm64";
  if (machine === IMAGE_FILE_MACHINE.ARMNT) return "arm";
  return undefined;
}

/** The machine's name in messages. */
const MODE_MACHINE: Readonly<Record<CpuMode, string>> = { 32: "x86", 64: "x64", arm64: "ARM64", arm: "ARM" };

/**
 * The CPU that runs `pe`; an {@link InputError} ("unsupported") names the machine of an image
 * no emulated CPU runs.
 */
export function cpuModeOfImage(pe: PeImage, name: string): CpuMode {
  const mode = modeFor(pe.machine);
  if (mode !== undefined) return mode;
  const known = machineFromImageFileMachine(pe.machine);
  throw new InputError("unsupported", `${name}: machine 0x${pe.machine.toString(16)}${known !== undefined ? ` (${known})` : ""} cannot run on the emulated x86/x64/ARM64/ARM CPU`);
}

/**
 * Maps `pe` at its ImageBase into `uc` and returns where it went. Throws an
 * {@link InputError} ("unsupported") for an image of another machine than the CPU's, one that
 * imports from other modules, or one whose preferred range is already taken (it would need
 * relocation, which this loader does not do).
 */
export function mapPeImage(uc: Unicorn, pe: PeImage, options: MapPeOptions): LoadedImage {
  const { name } = options;
  const machineText = `0x${pe.machine.toString(16)}`;
  const mode = cpuModeOfImage(pe, name);
  if (mode !== uc.mode) {
    throw new InputError("unsupported", `${name}: an ${MODE_MACHINE[mode]} image (machine ${machineText}) cannot run on the ${cpuName(uc.mode)} CPU`);
  }
  for (const [index, what] of [
    [IMAGE_DIRECTORY_ENTRY.IMPORT, "import"],
    [IMAGE_DIRECTORY_ENTRY.DELAY_IMPORT, "delay-import"],
  ] as const) {
    const dir = pe.dataDirectories[index]!;
    if (dir.size !== 0) {
      throw new InputError(
        "unsupported",
        `${name}: has an ${what} directory (RVA 0x${dir.rva.toString(16)}, ${dir.size} bytes); the emulator binds no imports, so only freestanding images run`,
      );
    }
  }
  const base = pe.imageBase;
  const size = BigInt(pe.sizeOfImage);
  const mapped = alignUp(size);
  if (base % PAGE_SIZE !== 0n) {
    throw new InputError("unsupported", `${name}: ImageBase 0x${base.toString(16)} is not page-aligned`);
  }
  if (base + mapped > 1n << BigInt(addressBits(uc.mode))) {
    throw new InputError("unsupported", `${name}: 0x${mapped.toString(16)} bytes at ImageBase 0x${base.toString(16)} run past the end of the ${cpuName(uc.mode)} address space`);
  }
  for (const region of uc.memRegions()) {
    if (region.begin < base + mapped && base <= region.end) {
      throw new InputError(
        "unsupported",
        `${name}: needs relocation: its preferred range 0x${base.toString(16)}..0x${(base + mapped).toString(16)} overlaps memory already mapped at ` +
          `0x${region.begin.toString(16)}..0x${(region.end + 1n).toString(16)}, and the emulator does not apply base relocations`,
      );
    }
  }
  uc.memMap(base, mapped, UC_PROT.ALL);
  uc.memWrite(base, pe.mapped());
  for (const run of permissionRuns(pe, mapped)) uc.memProtect(base + run.offset, run.size, run.perms);
  const module: Module = { name, base, size, symbols: [...(options.symbols ?? [])] };
  if (options.unwind !== undefined) module.unwind = options.unwind;
  return { name, base, size, pe, module };
}

/**
 * Page permissions as the section table asks for them, grouped into runs of equal pages. The
 * headers and any page outside every section are read-only; a page shared by two sections
 * (section alignment below a page) gets the union of their permissions.
 */
function permissionRuns(pe: PeImage, mapped: bigint): { offset: bigint; size: bigint; perms: number }[] {
  const pages = Number(mapped / PAGE_SIZE);
  const perms = new Array<number>(pages).fill(UC_PROT.READ);
  const claimed = new Array<boolean>(pages).fill(false);
  for (const s of pe.sections) {
    const extent = BigInt(s.virtualSize !== 0 ? s.virtualSize : s.rawSize);
    if (extent === 0n) continue;
    const first = Number(BigInt(s.virtualAddress) / PAGE_SIZE);
    const last = Number((BigInt(s.virtualAddress) + extent - 1n) / PAGE_SIZE);
    let p = 0;
    if (s.characteristics & IMAGE_SCN_MEM_READ) p |= UC_PROT.READ;
    if (s.characteristics & IMAGE_SCN_MEM_WRITE) p |= UC_PROT.WRITE;
    if (s.characteristics & IMAGE_SCN_MEM_EXECUTE) p |= UC_PROT.EXEC;
    for (let page = first; page <= last && page < pages; page++) {
      perms[page] = claimed[page] ? perms[page]! | p : p;
      claimed[page] = true;
    }
  }
  const runs: { offset: bigint; size: bigint; perms: number }[] = [];
  for (let page = 0; page < pages; page++) {
    const last = runs[runs.length - 1];
    if (last !== undefined && last.perms === perms[page]) last.size += PAGE_SIZE;
    else runs.push({ offset: BigInt(page) * PAGE_SIZE, size: PAGE_SIZE, perms: perms[page]! });
  }
  return runs;
}

/** Rounds a size up to whole pages. */
export function alignUp(size: bigint): bigint {
  return ((size + PAGE_SIZE - 1n) / PAGE_SIZE) * PAGE_SIZE;
}
