/**
 * The header of an `.xdata` record as ARM64 and ARM (Thumb-2) lay it out: the same fields, one
 * bit apart (ARM keeps F, the fragment bit, where ARM64's Epilog Count begins), then the
 * extension word when Epilog Count and Code Words are both 0, the epilog scope words unless E
 * says the one epilog is in the header, and 4 × Code Words bytes of unwind codes. Each machine
 * reads its scope words and checks its code indexes itself.
 */
import { hex } from "../../hex.js";
import { problemAt, type DataProblem } from "./problem.js";

/** Where a machine's header keeps Epilog Count and Code Words, and its fragment bit if it has one. */
export interface XdataLayout {
  epilogCountShift: number;
  codeWordsShift: number;
  fragmentBit?: number;
}

/** A header's fields, its epilog scope words (none when E is set) and its code bytes. */
export interface XdataHeader {
  /** Function Length as the field holds it (ARM64: words, ARM: halfwords). */
  functionLength: number;
  /** X: an exception handler's RVA follows the codes. */
  handler: boolean;
  /** E: the one epilog's first code index is Epilog Count. */
  epilogInHeader: boolean;
  fragment: boolean;
  epilogCount: number;
  scopeWords: number[];
  codes: Uint8Array;
}

/** The largest Function Length of an `.xdata` header (18 bits). */
export const MAX_XDATA_LENGTH = 0x3ffff;

/** Reads the header, scope words and code bytes of the `.xdata` record at `rva`; a problem says what cannot be read or used. */
export function readXdataHeader(read: (rva: number, size: number) => Uint8Array | undefined, rva: number, layout: XdataLayout): XdataHeader | DataProblem {
  const word = (at: number): number | undefined => {
    const b = read(at, 4);
    return b === undefined ? undefined : (b[0]! | (b[1]! << 8) | (b[2]! << 16) | (b[3]! << 24)) >>> 0;
  };
  const header = word(rva);
  if (header === undefined) return problemAt(rva, `the .xdata record at RVA ${hex(rva)} is not in the image`);
  const version = (header >>> 18) & 3;
  if (version !== 0) return problemAt(rva, `the .xdata record at RVA ${hex(rva)} has version ${version}; only version 0 is defined`);
  const epilogInHeader = (header & (1 << 21)) !== 0;
  let epilogCount = (header >>> layout.epilogCountShift) & 31;
  let codeWords = header >>> layout.codeWordsShift;
  let at = rva + 4;
  if (epilogCount === 0 && codeWords === 0) {
    const extension = word(at);
    if (extension === undefined) return problemAt(at, `the extension word of the .xdata record at RVA ${hex(rva)} is not in the image`);
    epilogCount = extension & 0xffff;
    codeWords = (extension >>> 16) & 0xff;
    at += 4;
  }
  const scopeWords: number[] = [];
  if (!epilogInHeader) {
    const words = read(at, 4 * epilogCount);
    if (words === undefined) return problemAt(at, `the ${epilogCount} epilog scopes of the .xdata record at RVA ${hex(rva)} are not in the image`);
    for (let i = 0; i < epilogCount; i++) scopeWords.push((words[4 * i]! | (words[4 * i + 1]! << 8) | (words[4 * i + 2]! << 16) | (words[4 * i + 3]! << 24)) >>> 0);
    at += 4 * epilogCount;
  }
  const codes = read(at, 4 * codeWords);
  if (codes === undefined) return problemAt(at, `the ${4 * codeWords} unwind code bytes of the .xdata record at RVA ${hex(rva)} are not in the image`);
  return {
    functionLength: header & MAX_XDATA_LENGTH,
    handler: (header & (1 << 20)) !== 0,
    epilogInHeader,
    fragment: layout.fragmentBit !== undefined && (header & (1 << layout.fragmentBit)) !== 0,
    epilogCount,
    scopeWords,
    codes: codes.slice(),
  };
}
