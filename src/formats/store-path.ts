/**
 * Names in a symbol store, made from a module's identity (docs/spec/minidump.md §8,
 * docs/spec/cab.md §4). The names come from a dump, so they are untrusted: a name is used only
 * when it is one plain file name that means the same thing on every system, so that a path made
 * from it never leaves the store's root (no `..`, no separator, no drive letter or stream, no NUL
 * or other control character, nothing Windows strips or refuses, no device name) and fits any file system with
 * room for a temporary suffix. Anything else is an {@link InputError} ("bad-value") saying why.
 */
import { InputError } from "../errors.js";
import { fileNameOf } from "../path-name.js";

/** The longest file name taken, in UTF-8 bytes: a file system's 255, less room for a temporary file's suffix. */
export const STORE_NAME_MAX_BYTES = 200;

const clip = (text: string): string => (text.length > 80 ? `${text.slice(0, 80)}…` : text);
const shown = (text: string): string => JSON.stringify(clip(text));

/**
 * The file-name part of `path` (after its last `/` or `\`) when it can name a file in a store;
 * `what` names it in the error ("debug file", "module").
 */
export function storeFileName(path: string, what: string): string {
  const base = fileNameOf(path);
  const refused = refusal(base);
  if (refused !== undefined) throw new InputError("bad-value", `${what} ${shown(path)} has ${refused} for a symbol store`);
  return base;
}

const utf8 = new TextEncoder();

/** Why `base` cannot name a file in a store, or undefined when it can (checked in this order: a dump names hundreds of modules). */
function refusal(base: string): string | undefined {
  if (base === "" || base === "." || base === "..") return "no usable file name";
  if (/[\u0000-\u001f\u007f]/.test(base)) return "a control character (NUL, a line break, …) in its name";
  const reserved = /[:*?"<>|]/.exec(base);
  if (reserved !== null) return `a character no Windows file name has (${reserved[0]}), as in a drive letter or a stream name`;
  if (/[. ]$/.test(base)) return "a name ending in a dot or a space, which Windows strips";
  if (/^(con|prn|aux|nul|com[0-9\u00b9\u00b2\u00b3]|lpt[0-9\u00b9\u00b2\u00b3])(\.|$)/i.test(base)) return "the name of a Windows device (CON, NUL, COM1, …)";
  // A UTF-16 code unit is at most 3 bytes of UTF-8.
  if (base.length * 3 > STORE_NAME_MAX_BYTES && utf8.encode(base).length > STORE_NAME_MAX_BYTES) return `a name of more than ${STORE_NAME_MAX_BYTES} bytes`;
  return undefined;
}

/**
 * Where a symbol store keeps a module's image: `<name>/<key>/`, the key TimeDateStamp as `%08X`
 * then SizeOfImage as `%x` (the module's code id as Breakpad prints it). Returns the name and
 * the key; a code id of another form (an ELF build id) or a name that cannot name a file is an
 * {@link InputError}.
 */
export function imageStoreKey(moduleName: string, codeId: string): { name: string; key: string } {
  const name = storeFileName(moduleName, "module");
  if (!isPeCodeId(codeId)) throw new InputError("bad-value", `code id ${shown(codeId)} is not a PE TimeDateStamp and SizeOfImage`);
  return { name, key: codeId.slice(0, 8).toUpperCase() + codeId.slice(8).toLowerCase() };
}

/** Whether `codeId` has the PE form {@link imageStoreKey} takes: TimeDateStamp (8 hex digits) then SizeOfImage (1 to 8). */
export function isPeCodeId(codeId: string): boolean {
  return /^[0-9A-Fa-f]{8}[0-9A-Fa-f]{1,8}$/.test(codeId);
}

/** The name a store gives a file's compressed form: its last character replaced by `_` (`app.exe` → `app.ex_`). */
export function compressedName(name: string): string {
  return `${name.slice(0, -1)}_`;
}
