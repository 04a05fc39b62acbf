/**
 * The unwind data of one ARM64 function (arm64.md §1.2, §1.3, §1.6): an `.xdata` record as the
 * image stores it, or a packed `.pdata` word expanded into the record the Windows unwinder builds
 * from it (`RtlpExpandCompactToFull`). Both become one value, {@link Arm64UnwindData}, so that one
 * algorithm (plan.ts, `RtlpUnwindFunctionFull`) unwinds either.
 *
 * `.xdata` header, word 0: FunctionLength (bits 0-17, instructions), Vers (18-19, must be 0), X
 * (20, an exception handler follows), E (21, one epilog described in the header), EpilogCount
 * (22-26: the scope count, or with E the code index of the epilog), CodeWords (27-31). When
 * EpilogCount and CodeWords are both 0 an extension word follows: extended epilog count (0-15)
 * and code words (16-23). Then, unless E, one word per epilog scope: start (0-17, instructions
 * from the function's start), reserved (18-21), start index (22-31). Then the code bytes.
 */
import { hex } from "../../hex.js";
import { isProblem, problemAt, type DataProblem } from "./problem.js";
import { MAX_XDATA_LENGTH, readXdataHeader } from "./xdata-header.js";

/** An epilog scope: where the epilog starts (in instructions) and the index of its first code. */
export interface EpilogScope {
  start: number;
  index: number;
}

/** Where a function's unwind data came from. */
export type Arm64UnwindSource =
  | { form: "xdata"; rva: number }
  /** A packed word: Flag 1 (one prolog at the start, one epilog at the end) or Flag 2 (a fragment with neither). */
  | { form: "packed"; word: number };

/** One function's unwind data, from `.xdata` or expanded from a packed word. */
export interface Arm64UnwindData {
  source: Arm64UnwindSource;
  /** FunctionLength: the function's (or fragment's) length in instructions. */
  functionLength: number;
  /** E: a single epilog at the function's end, whose codes start at {@link epilogIndex}. */
  epilogInHeader: boolean;
  /** With E, the byte index of the epilog's first code. */
  epilogIndex: number;
  /** Without E, the epilog scopes in order of their start. */
  scopes: readonly EpilogScope[];
  /** The code bytes: 4 × CodeWords of them, prolog codes first. */
  codes: Uint8Array;
  /** X: an exception handler's RVA follows the codes. */
  handler: boolean;
}

/** ARM64's header: Epilog Count from bit 22, Code Words from bit 27. */
const ARM64_XDATA = { epilogCountShift: 22, codeWordsShift: 27 };

/**
 * Decodes the `.xdata` record at `rva`, reading the image through `read`; a problem says what
 * cannot be read or used (a version other than 0, a record that runs past the image).
 */
export function decodeXdata(read: (rva: number, size: number) => Uint8Array | undefined, rva: number): Arm64UnwindData | DataProblem {
  const h = readXdataHeader(read, rva, ARM64_XDATA);
  if (isProblem(h)) return h;
  const scopes: EpilogScope[] = h.scopeWords.map((w) => ({ start: w & MAX_XDATA_LENGTH, index: w >>> 22 }));
  const data: Arm64UnwindData = { source: { form: "xdata", rva }, functionLength: h.functionLength, epilogInHeader: h.epilogInHeader, epilogIndex: h.epilogInHeader ? h.epilogCount : 0, scopes, codes: h.codes, handler: h.handler };
  const bad = checkIndexes(data);
  return bad === undefined ? data : problemAt(rva, `the .xdata record at RVA ${hex(rva)}: ${bad}`);
}

/** Why an epilog's code index cannot be used (it lies past the code bytes), or undefined. */
function checkIndexes(data: Arm64UnwindData): string | undefined {
  const n = data.codes.length;
  if (data.epilogInHeader && data.epilogIndex > n) return `the epilog's first code (index ${data.epilogIndex}) is past the ${n} code bytes`;
  for (const s of data.scopes) if (s.index > n) return `the epilog scope at +${hex(4 * s.start)} starts at code index ${s.index}, past the ${n} code bytes`;
  return undefined;
}

/** The fields of a packed `.pdata` word (arm64.md §1.2). */
export interface PackedFields {
  /** 1: one prolog and one epilog; 2: a fragment without either. */
  flag: 1 | 2;
  /** Instructions (the 11-bit field: bytes / 4). */
  functionLength: number;
  /** 0, or n + 1 FP registers d8… saved (n = RegF). */
  regF: number;
  /** Integer registers x19… saved (0-10). */
  regI: number;
  /** x0-x7 homed. */
  h: boolean;
  /** 0 unchained; 1 unchained with lr saved; 2 chained with a signed return address; 3 chained. */
  cr: 0 | 1 | 2 | 3;
  /** The frame in 16-byte units (bytes / 16), excluding alloca. */
  frameSize: number;
}

/** Splits a packed word (Flag 1 or 2) into its fields. */
export function packedFields(word: number): PackedFields {
  return {
    flag: (word & 3) as 1 | 2,
    functionLength: (word >>> 2) & 0x7ff,
    regF: (word >>> 13) & 7,
    regI: (word >>> 16) & 0xf,
    h: ((word >>> 20) & 1) === 1,
    cr: ((word >>> 21) & 3) as 0 | 1 | 2 | 3,
    frameSize: word >>> 23,
  };
}

/** A code's canonical bytes (most significant first). */
type Code = number[];

const allocCode = (bytes: number): Code => {
  const x = bytes / 16;
  if (bytes >= 16384) return [0xe0, (x >>> 16) & 0xff, (x >>> 8) & 0xff, x & 0xff];
  if (bytes >= 512) return [0xc0 | ((x >>> 8) & 7), x & 0xff];
  return [x & 0x1f];
};
/** A code whose first byte holds `prefix` and the top bits of X, the second the low bits of X and Z (scaled offsets). */
const twoByte = (prefix: number, xBits: number, x: number, zBits: number, z: number): Code => {
  const v = (prefix << (xBits + zBits)) | (x << zBits) | z;
  return [(v >>> 8) & 0xff, v & 0xff];
};
const saveRegp = (x: number, offset: number): Code => twoByte(0b110010, 4, x, 6, offset / 8);
const saveRegpX = (x: number, offset: number): Code => twoByte(0b110011, 4, x, 6, offset / 8 - 1);
const saveReg = (x: number, offset: number): Code => twoByte(0b110100, 4, x, 6, offset / 8);
const saveRegX = (x: number, offset: number): Code => twoByte(0b1101010, 4, x, 5, offset / 8 - 1);
const saveLrpair = (x: number, offset: number): Code => twoByte(0b1101011, 3, x / 2, 6, offset / 8);
const saveFregp = (x: number, offset: number): Code => twoByte(0b1101100, 3, x, 6, offset / 8);
const saveFregpX = (x: number, offset: number): Code => twoByte(0b1101101, 3, x, 6, offset / 8 - 1);
const saveFreg = (x: number, offset: number): Code => twoByte(0b1101110, 3, x, 6, offset / 8);
const saveFregX = (x: number, offset: number): Code => twoByte(0b11011110, 3, x, 5, offset / 8 - 1);
const SAVE_FPLR = (offset: number): Code => [0x40 | (offset / 8)];
const SAVE_FPLR_X = (offset: number): Code => [0x80 | (offset / 8 - 1)];
const SET_FP: Code = [0xe1];
const NOP: Code = [0xe3];
const END: Code = [0xe4];
const END_C: Code = [0xe5];
const PAC_SIGN_LR: Code = [0xfc];

/**
 * The `.xdata` record the Windows unwinder makes of a packed word (arm64.md §1.6, following
 * `RtlpExpandCompactToFull`): the prolog's codes in the order its instructions run, then stored
 * reversed (the codes nearest the body first) and ended by `end`. Sizes are in 8-byte units:
 * famsz = 2·FrameSize, intsz = RegI (+1 for lr when CR = 1), fpsz = RegF + 1 when RegF, savsz =
 * intsz + fpsz (+ 8 homes when anything is saved) rounded up to even, locsz = famsz − savsz.
 *
 * Flag 1 has one epilog at the end (E = 1) sharing the codes, from index 1 when the prolog set the
 * frame pointer (the epilog has no `mov sp, x29`); with homed registers, the epilog's codes are a
 * copy without the four homing nops. Flag 2 ends with `end_c` and has no epilog: every code runs.
 */
export function expandPacked(word: number): Arm64UnwindData {
  const p = packedFields(word);
  const famsz = 2 * p.frameSize;
  const intsz = p.regI + (p.cr === 1 ? 1 : 0);
  const fpsz = p.regF === 0 ? 0 : p.regF + 1;
  let savsz = intsz + fpsz;
  if (savsz > 0 && p.h) savsz += 8;
  savsz = (savsz + 1) & ~1;
  const locsz = famsz - savsz;
  const run: Code[] = [];
  let pre = false;
  let slot = 0;
  if (p.cr === 2) run.push(PAC_SIGN_LR);
  if (intsz !== 0) {
    // x19 and lr alone: a pre-indexed stp of a register with lr has no code, so sp moves first.
    if (p.regI === 1 && p.cr === 1) {
      run.push(allocCode(savsz * 8));
      pre = true;
    }
    let reg = 0;
    for (; reg < (p.regI & ~1); reg += 2) {
      run.push(pre ? saveRegp(reg, slot * 8) : saveRegpX(reg, savsz * 8));
      slot += 2;
      pre = true;
    }
    if (p.regI % 2 === 1) {
      if (p.cr === 1) {
        run.push(saveLrpair(reg, slot * 8));
        slot += 2;
      } else {
        run.push(pre ? saveReg(reg, slot * 8) : saveRegX(reg, savsz * 8));
        slot += 1;
        pre = true;
      }
    } else if (p.cr === 1) {
      // lr is x(19 + 11) to save_reg.
      run.push(pre ? saveReg(11, slot * 8) : saveRegX(11, savsz * 8));
      slot += 1;
      pre = true;
    }
  }
  if (fpsz !== 0) {
    let reg = 0;
    for (; reg < (fpsz & ~1); reg += 2) {
      run.push(pre ? saveFregp(reg, slot * 8) : saveFregpX(reg, savsz * 8));
      slot += 2;
      pre = true;
    }
    if (fpsz % 2 === 1) {
      run.push(pre ? saveFreg(reg, slot * 8) : saveFregX(reg, savsz * 8));
      slot += 1;
      pre = true;
    }
  }
  // Homing stores are described only when they go into the save area, inside the prolog.
  const homes = p.h && pre ? run.length : -1;
  if (homes >= 0) run.push(NOP, NOP, NOP, NOP);
  let fpSet = false;
  if (locsz > 0) {
    if (p.cr === 2 || p.cr === 3) {
      if (locsz <= 512 / 8) run.push(SAVE_FPLR_X(locsz * 8));
      else run.push(allocCode(locsz * 8), SAVE_FPLR(0));
      run.push(SET_FP);
      fpSet = true;
    } else run.push(allocCode(locsz * 8));
  }
  if (p.flag === 2) run.push(END_C);
  const stored = [...run].reverse().flat().concat(END);
  let epilogIndex = 0;
  let bytes = stored;
  if (p.flag === 1) {
    epilogIndex = fpSet ? 1 : 0;
    if (homes >= 0) {
      // The epilog: the same codes without the four homing nops (which lie just before the save codes).
      const withoutHomes = [...run.slice(0, homes), ...run.slice(homes + 4)].reverse().flat().concat(END);
      epilogIndex += stored.length;
      bytes = stored.concat(withoutHomes);
    }
  }
  const codes = new Uint8Array((bytes.length + 3) & ~3);
  codes.set(bytes);
  return {
    source: { form: "packed", word },
    functionLength: p.functionLength,
    epilogInHeader: p.flag === 1,
    epilogIndex,
    scopes: [],
    codes,
    handler: false,
  };
}
