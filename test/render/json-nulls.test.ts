/**
 * Which of rust-minidump's fields the JSON of each real dump of the repository leaves null, and
 * why: every field a dump's streams can fill is filled. The reasons are the streams the dump
 * lacks (as Breakpad's minidump_dump lists its directory) or the fields the project does not
 * fill yet (listed in the README).
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { fixtureDir } from "../support/fixtures.js";
import { parseWalkJson } from "../support/walk-schema.js";

/** Fields the project does not fill yet, for every dump. */
const NOT_YET = ["mac_crash_info", "mac_boot_args", "soft_errors", "proc_limits", "crash_info.adjusted_address", "crash_info.instruction", "crash_info.memory_accesses", "crash_info.instruction_pointer_update", "crash_info.possible_bit_flips"];

/** The fields each kind of dump has no stream for. */
const NO_STREAM: Record<string, string[]> = {
  // Breakpad's Linux client writes no HandleData, MiscInfo (pid, process times) or Linux limits.
  linux: ["pid", "process_uptime", "handles"],
  // Windows dumps have none of Breakpad's Linux streams; these have no HandleData.
  windows: ["linux_memory_map_count", "lsb_release", "system_info.cpu_microcode_version", "handles"],
  // Crashpad's macOS dump: no Linux streams, no HandleData.
  macos: ["linux_memory_map_count", "lsb_release", "system_info.cpu_microcode_version", "handles"],
};

/** What single dumps lack besides, as Breakpad's minidump_dump shows them. */
const ALSO: Record<string, string[]> = {
  // No LinuxLsbRelease stream; its /proc/cpuinfo (a virtual machine's) has no microcode line.
  "linux_null_read_av.dmp": ["lsb_release", "system_info.cpu_microcode_version"],
};

/** The paths of the fields of rust-minidump's schema (top level, crash_info, system_info) that are null. */
function nulls(doc: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(doc)) {
    if (v === null) out.push(k);
    else if ((k === "crash_info" || k === "system_info") && typeof v === "object") {
      for (const [kk, vv] of Object.entries(v as Record<string, unknown>)) if (vv === null) out.push(`${k}.${kk}`);
    }
  }
  return out.sort();
}

describe("the fields a dump's streams fill", () => {
  const dir = fixtureDir("breakpad-corpus");
  const dumps = readdirSync(dir).filter((f) => f.endsWith(".dmp")).sort();
  it.each(dumps)("%s", async (name) => {
    const doc = parseWalkJson((await cli("walk", `${dir}/${name}`, "--format", "json")).out);
    const kind = name.startsWith("linux") ? "linux" : name === "tiny-exe-fastfail.dmp" ? "windows" : "macos";
    const expected = [...NOT_YET, ...NO_STREAM[kind]!, ...(ALSO[name] ?? [])];
    // A dump that did not crash on an assertion has none.
    expected.push("crash_info.assertion");
    expect(nulls(doc)).toEqual(expected.sort());
  });
});
