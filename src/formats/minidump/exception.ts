/**
 * The Exception stream (type 6, minidump.md §2.5): the crashing thread, the exception record and
 * the context at the fault, which stands in for that thread's own context when it is accepted
 * (minidump.md §3.3).
 */
import { InputError } from "../../errors.js";
import { MINIDUMP_STREAM } from "./constants.js";
import { attempt, readContext } from "./context.js";
import type { MinidumpInput } from "./input.js";
import type { MinidumpStream } from "./stream.js";
import type { MinidumpContext, MinidumpLocation, MinidumpStreamEntry } from "./types.js";

/** The Exception stream (type 6). */
export interface MinidumpException {
  threadId: number;
  code: number;
  flags: number;
  /** ExceptionRecord: the address of a nested record. */
  record: bigint;
  address: bigint;
  numberParameters: number;
  /** The first min(NumberParameters, 15) ExceptionInformation values. */
  parameters: bigint[];
  contextLocation: MinidumpLocation;
  /** The faulting context; absent when it was rejected, and then the thread's own is used (minidump.md §3.3). */
  context?: MinidumpContext;
  contextError?: InputError;
}

/** sizeof(MINIDUMP_EXCEPTION_STREAM). */
export const EXCEPTION_STREAM_SIZE = 168;
/** ExceptionInformation entries a MINIDUMP_EXCEPTION holds. */
export const EXCEPTION_MAXIMUM_PARAMETERS = 15;

function readException(input: MinidumpInput, s: MinidumpStreamEntry, systemArch: number | undefined): MinidumpException {
  if (s.location.dataSize < EXCEPTION_STREAM_SIZE) {
    throw new InputError("truncated", `Exception stream is ${s.location.dataSize} bytes, not ${EXCEPTION_STREAM_SIZE}`, { offset: s.offset + 4 });
  }
  const c = input.cursor(s.location.rva, EXCEPTION_STREAM_SIZE, "Exception stream");
  const threadId = c.u32();
  c.skip(4);
  const code = c.u32();
  const flags = c.u32();
  const record = c.u64();
  const address = c.u64();
  const numberParameters = c.u32();
  c.skip(4);
  const parameters: bigint[] = [];
  for (let i = 0; i < EXCEPTION_MAXIMUM_PARAMETERS; i++) {
    const v = c.u64();
    if (i < numberParameters) parameters.push(v);
  }
  const contextAt = c.offset;
  const contextLocation: MinidumpLocation = { dataSize: c.u32(), rva: c.u32() };
  const exception: MinidumpException = { threadId, code, flags, record, address, numberParameters, parameters, contextLocation };
  const ctx = attempt(() => readContext(input, contextLocation, contextAt, systemArch, "Exception ThreadContext"));
  if ("value" in ctx) exception.context = ctx.value;
  else exception.contextError = ctx.error;
  return exception;
}

/** The Exception stream's reader; a rejected exception context is noted, and the thread's own is used. */
export const exceptionStream: MinidumpStream<MinidumpException> = {
  type: MINIDUMP_STREAM.Exception,
  read: (input, entry, held, dump) => readException(input, { ...entry, location: held }, dump.systemInfo?.processorArchitecture),
  store(dump, exception) {
    dump.exception = exception;
    if (exception.contextError !== undefined) {
      dump.notes.push(`the exception context is not used (${exception.contextError.message}); the crashed thread's own context is`);
    }
  },
};
