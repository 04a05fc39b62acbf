/**
 * Breakpad's Linux text streams as rust-minidump's JSON gives them: `lsb_release`,
 * `linux_memory_map_count` and `system_info.cpu_microcode_version`. On a dump of Breakpad's
 * corpus (test/fixtures/breakpad-corpus) the values are those of the streams as Breakpad's
 * minidump_dump prints them: DISTRIB_ID=Ubuntu, DISTRIB_RELEASE=14.04, DISTRIB_CODENAME=trusty,
 * DISTRIB_DESCRIPTION="Ubuntu 14.04 LTS", 35 mapping lines, `microcode : 0x2b`.
 */
import { describe, expect, it } from "vitest";
import { lsbRelease, memoryMapCount, microcodeVersion } from "../../src/analysis/linux-info.js";
import { cli } from "../support/cli.js";
import { fixtureFile } from "../support/fixtures.js";
import { parseWalkJson } from "../support/walk-schema.js";

describe("Linux streams", () => {
  it("lsb_release takes DISTRIB_* keys, else the os-release ones, values unquoted", () => {
    expect(lsbRelease('DISTRIB_ID=Ubuntu\nDISTRIB_RELEASE=14.04\nDISTRIB_CODENAME=trusty\nDISTRIB_DESCRIPTION="Ubuntu 14.04 LTS"\n')).toEqual({
      id: "Ubuntu",
      release: "14.04",
      codename: "trusty",
      description: "Ubuntu 14.04 LTS",
    });
    expect(lsbRelease('ID=debian\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')).toEqual({
      id: "debian",
      release: "12",
      codename: "bookworm",
      description: "Debian GNU/Linux 12 (bookworm)",
    });
    expect(lsbRelease("# nothing\n")).toEqual({ id: null, release: null, codename: null, description: null });
  });

  it("counts the mappings of /proc/self/maps and reads the microcode version", () => {
    expect(memoryMapCount("00400000-00417000 r-xp 00000000 fc:02 1 /bin/x\n7fff0000-7fff1000 rw-p 00000000 00:00 0 [stack]\n\n")).toBe(2);
    expect(microcodeVersion("processor\t: 0\nmicrocode\t: 0x2b\nprocessor\t: 1\nmicrocode\t: 0x2c\n")).toBe("0x2b");
    expect(microcodeVersion("processor\t: 0\n")).toBeNull();
  });

  it("fill the JSON of a Linux dump of Breakpad's corpus", async () => {
    const r = await cli("walk", fixtureFile("breakpad-corpus/linux_divide_by_zero.dmp"), "--format", "json");
    const doc = parseWalkJson(r.out);
    expect(doc.lsb_release).toEqual({ id: "Ubuntu", release: "14.04", codename: "trusty", description: "Ubuntu 14.04 LTS" });
    expect(doc.linux_memory_map_count).toBe(35);
    expect(doc.system_info.cpu_microcode_version).toBe("0x2b");
  });
});
