/**
 * The zip reader (src/formats/zip.ts) against archives the test support writes with Node's zlib
 * (test/support/zip-writer.ts): every member, stored or deflated, reads back byte for byte; and
 * what the reader refuses, each an InputError naming the archive offset.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { InputError } from "../../src/errors.js";
import { inZipMember, isZip, zipEntries, zipMember } from "../../src/formats/zip.js";
import { inputError } from "../support/input-error.js";
import { zip } from "../support/zip-writer.js";

const member = fc.record({
  name: fc.string({ minLength: 1, maxLength: 12 }),
  // Repetitive bytes as well as random ones, so that deflate makes matches and dynamic blocks.
  bytes: fc.oneof(fc.uint8Array({ maxLength: 3000 }), fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 8 }), fc.integer({ min: 1, max: 4000 })).map(([unit, n]) => Uint8Array.from({ length: n }, (_, i) => unit[i % unit.length]!))),
  deflate: fc.boolean(),
});

describe("zip archives round trip through a writer that uses zlib", () => {
  it("lists every member with its name and sizes, and reads each back byte for byte (property)", () => {
    fc.assert(
      fc.property(fc.array(member, { minLength: 1, maxLength: 5 }), (members) => {
        const archive = zip(members);
        expect(isZip(archive)).toBe(true);
        const entries = zipEntries(archive);
        expect(entries.map((e) => [e.storedName, e.method, e.size])).toEqual(members.map((m) => [m.name, m.deflate ? 8 : 0, m.bytes.length]));
        entries.forEach((e, i) => {
          expect(zipMember(archive, e).bytes).toEqual(members[i]!.bytes);
        });
      }),
      { numRuns: 200 },
    );
  });

  it("quotes a name with control characters, so that no message breaks its line", () => {
    const [e] = zipEntries(zip([{ name: "a\nb", bytes: Uint8Array.of(1) }]));
    expect([e!.name, e!.storedName]).toEqual(['"a\\nb"', "a\nb"]);
  });
});

describe("what the zip reader refuses", () => {
  const archive = zip([{ name: "x.etl", bytes: new Uint8Array(1000).fill(7), deflate: true }]);

  it("an archive without its end record", () => {
    expect(inputError(() => zipEntries(archive.subarray(0, archive.length - 22)))).toMatchObject({ code: "bad-magic", offset: archive.length - 22 });
  });

  it("a member whose entry declares fewer bytes than its data inflates to, or more", () => {
    const [e] = zipEntries(archive);
    const small = inputError(() => zipMember(archive, { ...e!, size: 16 }));
    expect(small.reason).toBe("zip member x.etl does not inflate: it inflates to more than the 16 bytes its entry says");
    expect(small.offset).toBe(30 + 5);
    expect(inputError(() => zipMember(archive, { ...e!, size: 1001 })).reason).toBe("zip member x.etl inflates to 1000 bytes, not the 1001 its entry says");
  });

  it("deflated data that is not DEFLATE, and a method other than stored or deflate", () => {
    const bad = archive.slice();
    bad[35] = 0x07; // block type 3
    expect(inputError(() => zipMember(bad, zipEntries(bad)[0]!)).reason).toBe("zip member x.etl does not inflate: block type 3 is reserved");
    const [e] = zipEntries(archive);
    expect(inputError(() => zipMember(archive, { ...e!, method: 12 }))).toMatchObject({ code: "unsupported", offset: 0 });
  });

  it("an error inside a member, as the archive's", () => {
    const inner = new InputError("truncated", "cut short", { offset: 4 });
    expect(inZipMember(inner, { name: "x.etl", dataOffset: 0x23 }).message).toBe("offset 0x23: zip member x.etl (its data at archive offset 0x23), at offset 0x4 of the unpacked member: cut short");
  });
});
