/**
 * What Breakpad's Linux text streams say, as rust-minidump's JSON gives it
 * (minidump-processor/json-schema.md): `lsb_release` (DISTRIB_ID or ID, DISTRIB_RELEASE or
 * VERSION_ID, DISTRIB_CODENAME or VERSION_CODENAME, DISTRIB_DESCRIPTION or PRETTY_NAME, each
 * value unquoted), `linux_memory_map_count` (the mappings /proc/self/maps lists) and
 * `system_info.cpu_microcode_version` (/proc/cpuinfo's `microcode`).
 */

/** rust-minidump's `lsb_release` object. */
export interface LsbRelease {
  id: string | null;
  release: string | null;
  codename: string | null;
  description: string | null;
}

/** The `KEY=value` (or `key : value`) pairs of a text, keys and values trimmed and values unquoted. */
function pairs(text: string, separator: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const at = line.indexOf(separator);
    if (at < 0) continue;
    const key = line.slice(0, at).trim();
    let value = line.slice(at + 1).trim();
    if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
    if (!out.has(key)) out.set(key, value);
  }
  return out;
}

/** /etc/lsb-release (or os-release) as rust-minidump's `lsb_release`. */
export function lsbRelease(text: string): LsbRelease {
  const p = pairs(text, "=");
  const either = (a: string, b: string): string | null => p.get(a) ?? p.get(b) ?? null;
  return {
    id: either("DISTRIB_ID", "ID"),
    release: either("DISTRIB_RELEASE", "VERSION_ID"),
    codename: either("DISTRIB_CODENAME", "VERSION_CODENAME"),
    description: either("DISTRIB_DESCRIPTION", "PRETTY_NAME"),
  };
}

/** The number of mappings /proc/self/maps lists (its `start-end perms …` lines). */
export function memoryMapCount(maps: string): number {
  let n = 0;
  for (const line of maps.split("\n")) if (/^[0-9a-fA-F]+-[0-9a-fA-F]+\s/.test(line)) n++;
  return n;
}

/** /proc/cpuinfo's `microcode` (the first processor's) as a hex string, or null when it has none. */
export function microcodeVersion(cpuInfo: string): string | null {
  const value = pairs(cpuInfo, ":").get("microcode");
  if (value === undefined || !/^(0x)?[0-9a-fA-F]+$/.test(value)) return null;
  return "0x" + BigInt(value.startsWith("0x") ? value : `0x${value}`).toString(16);
}
