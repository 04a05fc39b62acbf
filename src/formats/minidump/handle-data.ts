/**
 * The HandleData stream (type 12): MINIDUMP_HANDLE_DATA_STREAM, a header (SizeOfHeader,
 * SizeOfDescriptor, NumberOfDescriptors, Reserved) and descriptors of SizeOfDescriptor bytes
 * (MINIDUMP_HANDLE_DESCRIPTOR, 32 bytes, or _2, 40): Handle u64, TypeNameRva, ObjectNameRva,
 * Attributes, GrantedAccess, HandleCount, PointerCount. A name RVA of 0 names nothing; a name
 * that cannot be read is passed over with a note.
 */
import { InputError } from "../../errors.js";
import { MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/** One open handle of the process. */
export interface MinidumpHandle {
  handle: bigint;
  typeName?: string;
  objectName?: string;
  attributes: number;
  grantedAccess: number;
  handleCount: number;
  pointerCount: number;
}

/** sizeof(MINIDUMP_HANDLE_DATA_STREAM). */
const HEADER_SIZE = 16;
/** sizeof(MINIDUMP_HANDLE_DESCRIPTOR). */
const DESCRIPTOR_SIZE = 32;

function readHandles(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpHandle[] {
  if (held.dataSize < HEADER_SIZE) {
    throw new InputError("truncated", `HandleData stream holds ${held.dataSize} bytes, fewer than its ${HEADER_SIZE}-byte header`, { offset: s.offset + 4 });
  }
  const h = input.cursor(held.rva, HEADER_SIZE, "HandleData header");
  const headerSize = h.u32();
  const descriptorSize = h.u32();
  const declared = h.u32();
  if (headerSize < HEADER_SIZE || headerSize > held.dataSize) {
    throw new InputError("bad-value", `HandleData SizeOfHeader ${headerSize} is not between ${HEADER_SIZE} and the stream's ${held.dataSize} bytes`, { offset: held.rva });
  }
  if (descriptorSize < DESCRIPTOR_SIZE) {
    throw new InputError("bad-value", `HandleData SizeOfDescriptor ${descriptorSize} is less than the ${DESCRIPTOR_SIZE} bytes of a descriptor`, { offset: held.rva + 4 });
  }
  const fit = Math.floor((held.dataSize - headerSize) / descriptorSize);
  const count = Math.min(declared, fit);
  if (count < declared) input.note(held.rva + 8, `HandleData NumberOfDescriptors ${declared} needs ${declared * descriptorSize} bytes after the header but the stream holds ${held.dataSize - headerSize}: the first ${count} are read`);
  const handles: MinidumpHandle[] = [];
  for (let i = 0; i < count; i++) {
    const at = held.rva + headerSize + i * descriptorSize;
    const c = input.cursor(at, DESCRIPTOR_SIZE, `handle ${i}`);
    const handle = c.u64();
    const typeRva = c.u32();
    const objectRva = c.u32();
    const entry: MinidumpHandle = { handle, attributes: c.u32(), grantedAccess: c.u32(), handleCount: c.u32(), pointerCount: c.u32() };
    const typeName = typeRva === 0 ? undefined : input.optionalString(typeRva, at + 8, `handle ${i} TypeNameRva`, `handle ${i} type name`);
    const objectName = objectRva === 0 ? undefined : input.optionalString(objectRva, at + 12, `handle ${i} ObjectNameRva`, `handle ${i} object name`);
    if (typeName !== undefined) entry.typeName = typeName;
    if (objectName !== undefined) entry.objectName = objectName;
    handles.push(entry);
  }
  return handles;
}

/** The HandleData stream's reader. */
export const handleDataStream: MinidumpStream<MinidumpHandle[]> = {
  type: MINIDUMP_STREAM.HandleData,
  read: (input, entry, held) => readHandles(input, entry, held),
  store(dump, handles) {
    dump.handles = handles;
  },
};
