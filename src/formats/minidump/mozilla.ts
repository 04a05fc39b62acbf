/**
 * Two of Mozilla's minidump streams ("Mz", 0x4d7a....) that rust-minidump's JSON gives:
 * MozMacosBootargsStream (0x4d7a0002), the macOS kernel's boot arguments (stream_type u32, then an
 * RVA64 of a MINIDUMP_STRING), the JSON's `mac_boot_args`; and MozSoftErrors (0x4d7a0004), the
 * errors the dump writer met and went on from, as JSON text, the JSON's `soft_errors`. A string
 * or text that cannot be read is passed over with a note.
 */
import { MINIDUMP_STREAM } from "./constants.js";
import type { MinidumpStream } from "./stream.js";
import { InputError } from "../../errors.js";

/** MINIDUMP_MAC_BOOTARGS: the stream type it repeats and the RVA64 of the boot arguments. */
const BOOTARGS_SIZE = 12;

/** The MozMacosBootargsStream's reader: the boot arguments, or undefined when the string is not in the file. */
export const macBootArgsStream: MinidumpStream<string | undefined> = {
  type: MINIDUMP_STREAM.MozMacosBootargs,
  read(input, s, held) {
    if (held.dataSize < BOOTARGS_SIZE) throw new InputError("truncated", `MozMacosBootargs stream holds ${held.dataSize} bytes, fewer than its ${BOOTARGS_SIZE}`, { offset: s.offset + 4 });
    const c = input.cursor(held.rva, BOOTARGS_SIZE, "MozMacosBootargs stream");
    c.u32();
    const rva = c.u64();
    if (rva >= 1n << 32n) {
      input.note(held.rva + 4, `MozMacosBootargs RVA ${rva} lies outside the file: the boot arguments are passed over`);
      return undefined;
    }
    return input.optionalString(Number(rva), held.rva + 4, "MozMacosBootargs bootargs", "the boot arguments");
  },
  store(dump, text) {
    if (text !== undefined) dump.macBootArgs = text;
  },
};

/** The MozSoftErrors stream's reader: its list of errors, or undefined when the text is not a JSON list. */
export const softErrorsStream: MinidumpStream<unknown[] | undefined> = {
  type: MINIDUMP_STREAM.MozSoftErrors,
  read(input, _s, held) {
    const text = new TextDecoder("utf-8").decode(input.cursor(held.rva, held.dataSize, "MozSoftErrors stream").bytes);
    let value: unknown;
    try {
      value = JSON.parse(text.replace(/\0+$/, "")) as unknown;
    } catch (e) {
      input.note(held.rva, `MozSoftErrors stream is not JSON (${e instanceof Error ? e.message : String(e)}): passed over`);
      return undefined;
    }
    if (Array.isArray(value)) return value;
    input.note(held.rva, "MozSoftErrors stream is JSON but not a list of errors: passed over");
    return undefined;
  },
  store(dump, value) {
    if (value !== undefined) dump.softErrors = value;
  },
};
