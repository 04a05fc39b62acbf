/**
 * A minimal PDB (MSF 7.00) reader: the parts an x86 stack walker and a symbolizer need
 * (x86-fpo.md §4). It reads the superblock and stream directory (§4.1-4.2), the PDB info stream
 * with its named-stream map (§4.3), the DBI header, module list and optional debug header (§4.4),
 * `/names` (§4.5), OMAP (§4.6), FPO_DATA (§1), FrameData (§2) and the function symbols
 * (S_PUB32 from the symbol record stream, S_GPROC32/S_LPROC32 from module streams).
 *
 * The container is pdb/msf.ts, the streams pdb/streams.ts, and parsePdb (pdb/parse.ts) puts
 * them together. Bytes in, values out. Every malformed structure throws an InputError whose
 * offset is a byte offset in the PDB file: offsets inside a stream are mapped through the
 * stream's block list, so they point at the real bytes even though streams are scattered over
 * the file. Every count and size is bounded by the file size, and no block may belong to two
 * streams, so hostile input can neither hang the reader nor make it allocate more than about the
 * file size again.
 */
export { MSF_MAGIC } from "./pdb/msf.js";
export { omapTranslate, parsePdb } from "./pdb/parse.js";
export type { OmapEntry, Pdb, PdbInfo, PdbSection, PdbSymbol, PdbSymbolIndex, SectionAddress } from "./pdb/types.js";
