/**
 * Writes the unwind data of the model's synthetic IA-64 images (ia64.md §3), independently of
 * the walker's decoder: the descriptor records a compiler would emit for a function (R1/R2/R3
 * region headers, P3/P7/P8 for rp, ar.pfs and psp, B2 for the epilogue), the unwind info block
 * (u64 header + descriptors padded to whole words), the 12-byte IMAGE_IA64_RUNTIME_FUNCTION_ENTRY
 * table, and the mapped image that holds them: PE headers for IMAGE_FILE_MACHINE_IA64 whose
 * exception directory points at the table, as a loader would map it. That Windows IA-64 images
 * use the Intel descriptor format is the project's modelling choice [M] (§3.2).
 */

/** One descriptor record, in the units of its encoding. */
export type Record =
  | { r: "R1"; body: boolean; rlen: number }
  | { r: "R2"; mask: number; grsave: number; rlen: number }
  | { r: "R3"; body: boolean; rlen: number }
  /** P3: r = 0 psp_gr, 1 rp_gr, 2 pfs_gr, 6 rp_br. */
  | { r: "P3"; which: 0 | 1 | 2 | 6; reg: number }
  /** P7: r = 0 mem_stack_f (t, size), 1 mem_stack_v (t), 3 psp_sprel (spoff), 4 rp_when, 5 rp_psprel, 6 pfs_when, 7 pfs_psprel. */
  | { r: "P7"; which: 0 | 1 | 3 | 4 | 5 | 6 | 7; value: number; size?: number }
  /** P8: r = 1 rp_sprel, 2 pfs_sprel (spoff). */
  | { r: "P8"; which: 1 | 2; value: number }
  | { r: "B2"; ecount: number; t: number };

function uleb(out: number[], value: number): void {
  let v = value;
  do {
    const byte = v & 0x7f;
    v = Math.floor(v / 128);
    out.push(v === 0 ? byte : byte | 0x80);
  } while (v !== 0);
}

/** The bytes of a list of records (§3.4). */
export function encodeRecords(records: readonly Record[]): number[] {
  const out: number[] = [];
  for (const rec of records) {
    switch (rec.r) {
      case "R1":
        if (rec.rlen > 31) throw new RangeError(`R1 rlen ${rec.rlen} needs R3`);
        out.push((rec.body ? 0x20 : 0) | rec.rlen);
        break;
      case "R2":
        out.push(0x40 | (rec.mask >> 1), ((rec.mask & 1) << 7) | rec.grsave);
        uleb(out, rec.rlen);
        break;
      case "R3":
        out.push(rec.body ? 0x61 : 0x60);
        uleb(out, rec.rlen);
        break;
      case "P3":
        out.push(0xb0 | (rec.which >> 1), ((rec.which & 1) << 7) | rec.reg);
        break;
      case "P7":
        out.push(0xe0 | rec.which);
        uleb(out, rec.value);
        if (rec.which === 0) uleb(out, rec.size ?? 0);
        break;
      case "P8":
        out.push(0xf0, rec.which);
        uleb(out, rec.value);
        break;
      case "B2":
        out.push(0xc0 | rec.ecount);
        uleb(out, rec.t);
        break;
    }
  }
  return out;
}

/** An unwind info block: header (version 1, no flags, length in words), then the padded descriptors. */
export function unwindInfoBlock(records: readonly Record[]): Uint8Array {
  const body = encodeRecords(records);
  const words = Math.ceil(body.length / 8);
  const out = new Uint8Array(8 + 8 * words);
  const v = new DataView(out.buffer);
  v.setUint32(0, words, true);
  v.setUint32(4, 1 << 16, true);
  out.set(body, 8);
  return out;
}

/** A function of the image: where its code is and its unwind records. */
export interface ImageFunction {
  name: string;
  /** RVA of the first bundle. */
  rva: number;
  /** Size in bytes (whole bundles). */
  size: number;
  records: readonly Record[];
}

/** Memory of a mapped image: its header bytes, code range and table bytes, by RVA. */
export interface MappedImage {
  sizeOfImage: number;
  regions: { rva: number; bytes: Uint8Array }[];
}

const PAGE = 0x1000;
const up = (n: number, a: number): number => Math.ceil(n / a) * a;

/**
 * Maps an IA-64 image: headers at RVA 0, `.text` from 0x1000 (the bundles are not modelled: the
 * section is zero), `.pdata` and `.xdata` on the next pages. Functions must be sorted and
 * bundle-aligned, as the table requires (§3.1).
 */
export function mapImage(imageBase: bigint, functions: readonly ImageFunction[], entryRva: number): MappedImage {
  const textEnd = Math.max(...functions.map((f) => f.rva + f.size));
  const textSize = up(textEnd - PAGE, PAGE);
  const pdataRva = PAGE + textSize;
  const xdataRva = pdataRva + up(functions.length * 12, PAGE);
  const infos: Uint8Array[] = [];
  const pdata = new Uint8Array(functions.length * 12);
  const pv = new DataView(pdata.buffer);
  let at = 0;
  functions.forEach((f, i) => {
    const info = unwindInfoBlock(f.records);
    pv.setUint32(i * 12, f.rva, true);
    pv.setUint32(i * 12 + 4, f.rva + f.size, true);
    pv.setUint32(i * 12 + 8, xdataRva + at, true);
    infos.push(info);
    at += info.length;
  });
  const xdata = new Uint8Array(at);
  at = 0;
  for (const info of infos) {
    xdata.set(info, at);
    at += info.length;
  }
  const sizeOfImage = xdataRva + up(xdata.length, PAGE);
  const sections = [
    { name: ".text", rva: PAGE, size: textSize, flags: 0x6000_0020 },
    { name: ".pdata", rva: pdataRva, size: pdata.length, flags: 0x4000_0040 },
    { name: ".xdata", rva: xdataRva, size: xdata.length, flags: 0x4000_0040 },
  ];
  const headers = new Uint8Array(0x200);
  const h = new DataView(headers.buffer);
  h.setUint16(0, 0x5a4d, true); // "MZ"
  h.setUint32(0x3c, 0x40, true); // e_lfanew
  h.setUint32(0x40, 0x4550, true); // "PE\0\0"
  const fh = 0x44;
  h.setUint16(fh, 0x0200, true); // IMAGE_FILE_MACHINE_IA64
  h.setUint16(fh + 2, sections.length, true);
  h.setUint16(fh + 16, 240, true); // SizeOfOptionalHeader (PE32+ with 16 directories)
  h.setUint16(fh + 18, 0x0023, true); // RELOCS_STRIPPED | EXECUTABLE_IMAGE | LARGE_ADDRESS_AWARE
  const oh = fh + 20;
  h.setUint16(oh, 0x20b, true); // PE32+
  h.setUint32(oh + 4, textSize, true); // SizeOfCode
  h.setUint32(oh + 16, entryRva, true);
  h.setUint32(oh + 20, PAGE, true); // BaseOfCode
  h.setBigUint64(oh + 24, imageBase, true);
  h.setUint32(oh + 32, PAGE, true); // SectionAlignment
  h.setUint32(oh + 36, 0x200, true); // FileAlignment
  h.setUint16(oh + 40, 5, true); // MajorOperatingSystemVersion (Windows Server 2003 ran on IA-64)
  h.setUint16(oh + 48, 5, true); // MajorSubsystemVersion
  h.setUint32(oh + 56, sizeOfImage, true);
  h.setUint32(oh + 60, 0x200, true); // SizeOfHeaders
  h.setUint16(oh + 68, 3, true); // IMAGE_SUBSYSTEM_WINDOWS_CUI
  h.setUint32(oh + 108, 16, true); // NumberOfRvaAndSizes
  h.setUint32(oh + 112 + 3 * 8, pdataRva, true); // the exception directory: the .pdata table
  h.setUint32(oh + 112 + 3 * 8 + 4, pdata.length, true);
  const st = oh + 240;
  sections.forEach((s, i) => {
    const at = st + 40 * i;
    for (let k = 0; k < s.name.length; k++) h.setUint8(at + k, s.name.charCodeAt(k));
    h.setUint32(at + 8, s.size, true);
    h.setUint32(at + 12, s.rva, true);
    h.setUint32(at + 36, s.flags >>> 0, true);
  });
  return {
    sizeOfImage,
    regions: [
      { rva: 0, bytes: headers },
      { rva: PAGE, bytes: new Uint8Array(textSize) },
      { rva: pdataRva, bytes: pdata },
      { rva: xdataRva, bytes: xdata },
    ],
  };
}
