/**
 * The HandleData stream (type 12): MINIDUMP_HANDLE_DATA_STREAM, a header (SizeOfHeader,
 * SizeOfDescriptor, NumberOfDescriptors, Reserved) and descriptors of SizeOfDescriptor bytes
 * (MINIDUMP_HANDLE_DESCRIPTOR, 32 bytes, or _2, 40): Handle u64, TypeNameRva, ObjectNameRva,
 * Attributes, GrantedAccess, HandleCount, PointerCount. A name RVA of 0 names nothing; a name
 * that cannot be read is passed over with a note. At most {@link MINIDUMP_LIMITS}' `maxHandles`
 * descriptors are read; the rest are passed over with a note.
 */
import { MINIDUMP_LIMITS, MINIDUMP_STREAM } from "./constants.js";
import { sizedListEntries, type MinidumpInput, type SizedListShape } from "./input.js";
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

/** sizeof(MINIDUMP_HANDLE_DESCRIPTOR). */
const DESCRIPTOR_SIZE = 32;
/** MINIDUMP_HANDLE_DATA_STREAM's header (16 bytes) and descriptors. */
const HANDLE_DATA: SizedListShape = { stream: "HandleData", headerSize: 16, entrySize: DESCRIPTOR_SIZE, entry: "a descriptor", sizeField: "SizeOfDescriptor", countField: "NumberOfDescriptors", most: { count: MINIDUMP_LIMITS.maxHandles, of: "handles", entries: "descriptors" } };

function readHandles(input: MinidumpInput, s: MinidumpStreamEntry, held: MinidumpLocation): MinidumpHandle[] {
  const { first, entrySize, count } = sizedListEntries(input, s, held, HANDLE_DATA);
  const handles: MinidumpHandle[] = [];
  for (let i = 0; i < count; i++) {
    const at = first + i * entrySize;
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
