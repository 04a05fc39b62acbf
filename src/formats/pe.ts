/**
 * A PE32 / PE32+ image parser over plain bytes (no Node APIs: it runs in a browser). It reads the
 * headers and the section table (pe/headers.ts, one reader per header), validates every pointer
 * against the file and the image, and exposes what the PE loader and the walkers need
 * (pe/image.ts): the mapped view, the x64/IA64 exception directory (x64-unwind.md §1.1), the
 * old-FPO debug payload (x86-fpo.md §1.3) and the CodeView record that names the PDB
 * (pe/debug.ts; minidump.md §2.3, §8).
 *
 * Layout facts come from Microsoft's "PE Format" specification (section names in the modules
 * refer to it). Every malformed input throws an {@link InputError} naming the absolute file
 * offset of the field that is wrong (or, for a read that runs off the end, where that read began).
 */
export { IMAGE_DEBUG_TYPE, IMAGE_DIRECTORY_ENTRY, PE_LIMITS, type CodeViewInfo, type PeDebugEntry, type PeImage, type PeSection, type RuntimeFunction } from "./pe/types.js";
export { parseCodeView, peCodeId } from "./pe/debug.js";
export { parsePe } from "./pe/image.js";
