/**
 * The node entry writes minidumps to files (src/node/file-sink.ts): a dump written with
 * writeMinidumpFile holds exactly the bytes the in-memory writer makes, opens with openDump and
 * walks to the same frames as the vector it was made from; fileSink gathers small chunks and
 * passes large ones through without changing a byte.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseVector, walkThread } from "../../src/index.js";
import { bytesSink, writeMinidump } from "../../src/entry/formats.js";
import { fileSink, openDump, writeMinidumpFile } from "../../src/node/index.js";

const dir = mkdtempSync(join(tmpdir(), "file-sink-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("writeMinidumpFile", () => {
  it("writes the writer's bytes to the file, and the dump opened from it walks like the vector", () => {
    const vector = parseVector(readFileSync("vectors/x86/ebp-chain-4.json", "utf8"));
    const path = join(dir, "ebp-chain-4.dmp");
    const result = writeMinidumpFile(path, vector);
    const sink = bytesSink();
    writeMinidump(vector, sink);
    const written = readFileSync(path);
    expect(written.byteLength).toBe(sink.bytes().byteLength);
    expect(Buffer.compare(written, Buffer.from(sink.bytes()))).toBe(0);
    expect(result.size).toBe(written.byteLength);
    const opened = openDump(path);
    try {
      const thread = opened.snapshot.threads[0]!;
      const frames = walkThread(opened.snapshot, thread).frames.map((f) => [f.addrPC, f.addrStack]);
      expect(frames).toEqual(walkThread(vector, vector.threads[0]!).frames.map((f) => [f.addrPC, f.addrStack]));
    } finally {
      opened.close();
    }
  });
});

describe("fileSink", () => {
  it("keeps every byte in order across small chunks, a chunk that overflows the buffer and one larger than it", () => {
    const path = join(dir, "chunks.bin");
    const sink = fileSink(path);
    const chunks = [new Uint8Array([1, 2, 3]), new Uint8Array((1 << 20) - 2).fill(7), new Uint8Array((1 << 20) + 5).fill(9), new Uint8Array([4])];
    for (const c of chunks) sink.write(c);
    sink.close();
    const expected = Buffer.concat(chunks.map((c) => Buffer.from(c)));
    const written = readFileSync(path);
    expect(written.byteLength).toBe(expected.byteLength);
    expect(Buffer.compare(written, expected)).toBe(0);
  });
});
