import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/main.js";
import { encodeApiItems, encodeDiskItems, encodeStackTrace, EVENT_HEADER_EXT_TYPE } from "../../src/formats/etw/extended-data.js";
import { zip } from "../support/zip-writer.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

const dir = mkdtempSync(join(tmpdir(), "sw-etw-"));
function file(name: string, bytes: Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

const kernel = encodeStackTrace({ matchId: 3n, addressSize: 4, addresses: [0x8040_108dn, 0x8040_1020n] });
const user = encodeStackTrace({ matchId: 3n, addressSize: 4, addresses: [0x0040_1083n, 0x0040_1054n] });
const tsId = { extType: EVENT_HEADER_EXT_TYPE.TS_ID, linkage: false, reserved1: 0, reserved2: 0, data: Uint8Array.of(7, 0, 0, 0) };

describe("stackwalk etw decode", () => {
  it("decodes on-disk chains: every item with its offset, the stacks, and the stitching", async () => {
    const path = file("disk.bin", new Uint8Array([...encodeDiskItems([kernel]), ...encodeDiskItems([tsId, user])]));
    const r = await cli("etw", "decode", path);
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out).toBe(
      [
        `${path}: on-disk extended data items (etw.md §1.2), 2 events`,
        "event 0: 1 item",
        "  item 0 at 0x0: STACK_TRACE32 (0x05), Linkage 0, DataSize 16",
        "    MatchId 0x3, 2 addresses: 0x8040108d 0x80401020",
        "event 1: 2 items",
        "  item 0 at 0x18: TS_ID (0x03), Linkage 1, DataSize 4: 07000000",
        "  item 1 at 0x28: STACK_TRACE32 (0x05), Linkage 0, DataSize 16",
        "    MatchId 0x3, 2 addresses: 0x00401083 0x00401054",
        "stacks, stitched by MatchId (etw.md §2.3): 1",
        "  stack 0: MatchId 0x3, complete, 4 addresses (kernel disk.bin event 0 item 0 (offset 0x0) + user disk.bin event 1 item 1 (offset 0x28))",
        "",
      ].join("\n"),
    );
  });

  it("decodes the API form: headers, then the data their DataPtr offsets point at", async () => {
    const { headers, data } = encodeApiItems([{ ...user, linkage: true, reserved1: 0 }, tsId], 32n);
    const path = file("api.bin", new Uint8Array([...headers, ...data]));
    const r = await cli("etw", "decode", path);
    expect(r.code).toBe(0);
    expect(r.out.split("\n").slice(0, 5)).toEqual([
      `${path}: API-form extended data items (etw.md §1.2), 1 event`,
      "event 0: 2 items",
      "  item 0 at 0x0: STACK_TRACE32 (0x05), Linkage 1, DataSize 16",
      "    MatchId 0x3, 2 addresses: 0x00401083 0x00401054",
      "  item 1 at 0x10: TS_ID (0x03), Linkage 0, DataSize 4: 07000000",
    ]);
    expect(r.out).toContain("user-half");
    expect(r.out).toContain("note: user part with MatchId 0x3: no kernel part with that MatchId came before it");
  });

  it("prints JSON; an empty address array is an empty stack", async () => {
    const path = file("empty.bin", encodeDiskItems([encodeStackTrace({ matchId: 0n, addressSize: 8, addresses: [] })]));
    const r = await cli("etw", "decode", path, "--json");
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc.form).toBe("disk");
    expect(doc.events[0][0]).toMatchObject({ offset: 0, name: "STACK_TRACE64", dataSize: 8, stack: { matchId: "0", addressSize: 8, addresses: [] } });
    expect(doc.stacks[0].notes[0]).toMatch(/the address array is empty/);
    expect((await cli("etw", "decode", path)).out).toContain("MatchId 0x0, 0 addresses: an empty stack");
  });

  it("decodes the public .etl sample inside its zip (etw.md §6)", async () => {
    const r = await cli("etw", "decode", "test/fixtures/etw/net.4.5.2.x64.etl.zip", "--summary");
    expect([r.code, r.err]).toEqual([0, ""]);
    expect(r.out.split("\n").slice(0, 5)).toEqual([
      "test/fixtures/etw/net.4.5.2.x64.etl.zip (net.4.5.2.x64.etl): ETL trace (etw.md §5), pointer size 8, 8 processors, LogFileMode 0x04010001, compression XPRESS",
      "  360 buffers (359 compressed), 179474 records: SYSTEM64 3189, PERFINFO64 100157, FULL_HEADER64 7956, EVENT_HEADER32 33378, EVENT_HEADER64 34765, FULL_HEADER32 27, SYSTEM32 2",
      "  extended items: 655 STACK_TRACE64, 0 STACK_TRACE32 (0 with a nonzero MatchId), 0 STACK_KEY",
      "  StackWalk events: 252 (129 kernel-only)",
      "  stack-key references: 2061 kernel + 7046 user, resolved by 2921 definitions (0 create, 1909 delete, 1012 rundown) of 1077 keys; 0 unresolved",
    ]);
  });

  it("reads a deflated or stored .etl member and rejects a zip without exactly one", async () => {
    const items = encodeDiskItems([user]);
    const none = await cli("etw", "decode", file("none.zip", zip([{ name: "a.txt", bytes: items, deflate: true }])));
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/none\.zip: offset 0x0: the zip archive holds 0 \.etl files \(a\.txt\); decode needs exactly one/);
    const odd = await cli("etw", "decode", file("odd.zip", zip([{ name: "a\nb.txt", bytes: items }])));
    expect(odd.err).toBe(`stackwalk etw: ${join(dir, "odd.zip")}: offset 0x0: the zip archive holds 0 .etl files ("a\\nb.txt"); decode needs exactly one\n`);
    const notEtl = await cli("etw", "decode", file("fake.zip", zip([{ name: "x.etl", bytes: items }])));
    expect(notEtl.code).toBe(0);
    expect(notEtl.out).toContain("on-disk extended data items");
  });

  it("an error inside a zipped member names the member, where its data starts in the archive, and the offset in the member", async () => {
    // Local header 30 bytes + "x.etl": the member's data starts at archive offset 0x23.
    const r = await cli("etw", "decode", file("cut.zip", zip([{ name: "x.etl", bytes: Uint8Array.of(0x18, 0, 5, 0) }])));
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      `stackwalk etw: ${join(dir, "cut.zip")}: offset 0x23: zip member x.etl (its data at archive offset 0x23), at offset 0x4 of the unpacked member: Linkage: needs 2 byte(s) at offset 0x4, but the input ends at offset 0x4\n`,
    );
  });

  it("inflates a member to no more than its entry declares: a small archive cannot unpack to gigabytes", async () => {
    // 64 MiB of zeros deflate to about 64 KiB; the entry claims 16 bytes. The data starts at 30 + 8 = 0x26.
    const archive = zip([{ name: "bomb.etl", bytes: new Uint8Array(64 << 20), deflate: true }]);
    const view = new DataView(archive.buffer);
    const central = view.getUint32(archive.length - 6, true);
    view.setUint32(central + 24, 16, true);
    view.setUint32(22, 16, true);
    const r = await cli("etw", "decode", file("bomb.zip", archive));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/bomb\.zip: offset 0x26: zip member bomb\.etl does not inflate: it inflates to more than the 16 bytes its entry says\n$/);
  });

  it.each([
    ["empty.bin", new Uint8Array(0), [], /empty\.bin: offset 0x0: the file is empty/],
    ["short.bin", Uint8Array.of(0x18, 0, 5, 0), [], /short\.bin: offset 0x4: Linkage: needs 2 byte\(s\) at offset 0x4, but the input ends at offset 0x4/],
    ["lying.bin", Uint8Array.of(0x10, 0, 5, 0, 0, 0, 0x20, 0, ...new Uint8Array(8)), [], /lying\.bin: offset 0x0: item size 16 is smaller than its header \(8\) plus DataSize 32/],
    ["chain.bin", Uint8Array.of(0x10, 0, 3, 0, 1, 0, 4, 0, 7, 0, 0, 0, 0, 0, 0, 0), [], /chain\.bin: offset 0x10: the Linkage bit says another item follows, but the input ends/],
    ["notetl.bin", new Uint8Array(0x100), ["--form", "etl"], /notetl\.bin: offset 0x0: not an ETL file/],
    ["apiptr.bin", Uint8Array.of(0, 0, 5, 0, 0, 0, 16, 0, 0x40, 0, 0, 0, 0, 0, 0, 0), ["--form", "api"], /apiptr\.bin: offset 0x8: item 0: DataPtr 0x40 \+ DataSize 16 is outside the data buffer/],
  ])("exit 2 with the offset for %s", async (name, bytes, extra, message) => {
    const r = await cli("etw", "decode", file(name, bytes), ...extra);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });

  it.each([
    [[], /etw needs a subcommand: decode/],
    [["encode", "x"], /unknown etw subcommand "encode"/],
    [["decode"], /etw decode takes exactly one file \(got 0\)/],
    [["decode", "x.bin", "--form", "xml"], /--form must be one of auto, disk, api, etl/],
  ])("usage errors exit 2: %j", async (argv, message) => {
    const r = await cli("etw", ...argv);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(message);
  });
});
