/**
 * The FunctionTable stream (type 13, minidump.md §2.8): the dynamic function tables a process
 * registered (on x64, RUNTIME_FUNCTIONs for generated code), with every size taken from the
 * stream's header.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import { ByteCursor } from "../../memory/cursor.js";
import type { RuntimeFunction } from "../pe.js";
import { MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpStreamEntry } from "./types.js";

/** One dynamic function table of the FunctionTable stream. */
export interface MinidumpFunctionTable {
  minimumAddress: bigint;
  maximumAddress: bigint;
  baseAddress: bigint;
  entryCount: number;
  sizeOfAlignPad: number;
  /** The OS's native descriptor (DYNAMIC_FUNCTION_TABLE on x64), raw. */
  nativeDescriptor: Uint8Array;
  /** EntryCount × SizeOfFunctionEntry bytes, raw. */
  entries: Uint8Array;
  /** The entries as RUNTIME_FUNCTIONs (RVAs relative to `baseAddress`) when the entry size is 12. */
  functions?: RuntimeFunction[];
  /** File offset of the table's descriptor. */
  offset: number;
}

/** The FunctionTable stream (type 13, minidump.md §2.8). */
export interface MinidumpFunctionTableStream {
  sizeOfHeader: number;
  sizeOfDescriptor: number;
  sizeOfNativeDescriptor: number;
  sizeOfFunctionEntry: number;
  sizeOfAlignPad: number;
  tables: MinidumpFunctionTable[];
}

const FUNCTION_TABLE_HEADER_SIZE = 24;
const FUNCTION_TABLE_DESCRIPTOR_SIZE = 32;
const RUNTIME_FUNCTION_SIZE = 12;

/** FunctionTable (minidump.md §2.8): sizes come from the header, never hard-coded. */
function readFunctionTable(input: MinidumpInput, s: MinidumpStreamEntry): MinidumpFunctionTableStream {
  const { rva, dataSize } = s.location;
  if (dataSize < FUNCTION_TABLE_HEADER_SIZE) {
    throw new InputError("truncated", `FunctionTable stream is ${dataSize} bytes, too small for its ${FUNCTION_TABLE_HEADER_SIZE}-byte header`, { offset: s.offset + 4 });
  }
  const all = input.cursor(rva, dataSize, "FunctionTable stream");
  const sizeOfHeader = all.u32();
  const sizeOfDescriptor = all.u32();
  const sizeOfNativeDescriptor = all.u32();
  const sizeOfFunctionEntry = all.u32();
  const numberOfDescriptors = all.u32();
  const sizeOfAlignPad = all.u32();
  if (sizeOfHeader < FUNCTION_TABLE_HEADER_SIZE || sizeOfHeader > dataSize) {
    throw new InputError("bad-value", `FunctionTable SizeOfHeader ${sizeOfHeader} is not between ${FUNCTION_TABLE_HEADER_SIZE} and the stream's ${dataSize} bytes`, { offset: rva });
  }
  if (sizeOfDescriptor < FUNCTION_TABLE_DESCRIPTOR_SIZE) {
    throw new InputError("bad-value", `FunctionTable SizeOfDescriptor ${sizeOfDescriptor} is smaller than ${FUNCTION_TABLE_DESCRIPTOR_SIZE}`, { offset: rva + 4 });
  }
  if (numberOfDescriptors * sizeOfDescriptor > dataSize) {
    throw new InputError("bad-value", `FunctionTable NumberOfDescriptors ${numberOfDescriptors} × ${sizeOfDescriptor} bytes do not fit in the stream's ${dataSize} bytes`, {
      offset: rva + 16,
    });
  }
  const tables: MinidumpFunctionTable[] = [];
  let pos = sizeOfHeader + sizeOfAlignPad;
  /** The field that placed the next descriptor: a SizeOfAlignPad when it is not 0, else NumberOfDescriptors. */
  let placedBy = sizeOfAlignPad !== 0 ? rva + 20 : rva + 16;
  for (let i = 0; i < numberOfDescriptors; i++) {
    if (pos > dataSize || sizeOfDescriptor > dataSize - pos) {
      throw new InputError("bad-value", `function table ${i}: its ${sizeOfDescriptor}-byte descriptor at stream offset ${hex(pos)} runs past the stream's ${dataSize} bytes`, {
        offset: placedBy,
      });
    }
    const d = new ByteCursor(all.bytes.subarray(pos, pos + sizeOfDescriptor), rva + pos);
    const offset = d.offset;
    const minimumAddress = d.u64();
    const maximumAddress = d.u64();
    const baseAddress = d.u64();
    const entryCount = d.u32();
    const pad = d.u32();
    pos += sizeOfDescriptor;
    if (sizeOfNativeDescriptor > dataSize - pos || entryCount * sizeOfFunctionEntry > dataSize - pos - sizeOfNativeDescriptor) {
      throw new InputError(
        "bad-value",
        `function table ${i}: a ${sizeOfNativeDescriptor}-byte native descriptor and ${entryCount} × ${sizeOfFunctionEntry}-byte entries run past the end of the stream`,
        { offset: offset + 24 },
      );
    }
    const nativeDescriptor = all.bytes.slice(pos, pos + sizeOfNativeDescriptor);
    pos += sizeOfNativeDescriptor;
    const entries = all.bytes.slice(pos, pos + entryCount * sizeOfFunctionEntry);
    pos += entryCount * sizeOfFunctionEntry + pad;
    placedBy = pad !== 0 ? offset + 28 : rva + 16;
    const table: MinidumpFunctionTable = { minimumAddress, maximumAddress, baseAddress, entryCount, sizeOfAlignPad: pad, nativeDescriptor, entries, offset };
    if (sizeOfFunctionEntry === RUNTIME_FUNCTION_SIZE) {
      const e = new ByteCursor(entries);
      table.functions = Array.from({ length: entryCount }, () => ({ beginRva: e.u32(), endRva: e.u32(), unwindData: e.u32() }));
    }
    tables.push(table);
  }
  return { sizeOfHeader, sizeOfDescriptor, sizeOfNativeDescriptor, sizeOfFunctionEntry, sizeOfAlignPad, tables };
}

/** The FunctionTable stream's reader. */
export const functionTableStream: MinidumpStream<MinidumpFunctionTableStream> = {
  type: MINIDUMP_STREAM.FunctionTable,
  read: (input, entry, held) => readFunctionTable(input, { ...entry, location: held }),
  store(dump, table) {
    dump.functionTable = table;
  },
};
