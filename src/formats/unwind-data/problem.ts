/**
 * Why unwind data cannot be used, as a value: what is wrong and where (x64 UNWIND_INFO and
 * RUNTIME_FUNCTION tables, IA-64 unwind info blocks). Decoders return it instead of throwing; the
 * rule for a frame whose data it describes stops the walk with its words.
 */

/** A problem with unwind data: the words, and the image RVA or address of the bad bytes. */
export interface DataProblem {
  problem: string;
  /** The image-relative address of the bad data, when the decoder reads an image by RVA. */
  rva?: number;
  /** The target address of the bad data, when known. */
  address?: bigint;
}

/** A problem at an image RVA. */
export function problemAt(rva: number, problem: string): DataProblem {
  return { problem, rva };
}

/** Whether a decoder's answer is a problem rather than data. */
export function isProblem<T extends object>(value: T | DataProblem): value is DataProblem {
  return "problem" in value;
}
