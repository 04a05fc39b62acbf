/**
 * The MSF 7.00 container of a PDB (x86-fpo.md §4.1-4.2): the superblock, the stream directory,
 * and streams gathered from the blocks they are scattered over, with errors inside a stream
 * reported at the file offset of the byte at fault. The file is read by position (a
 * {@link ByteSource}): the superblock, the directory and the blocks of each stream asked for,
 * so that the streams nobody reads (the type streams, most of a large PDB) are never read.
 */
import { InputError } from "../../errors.js";
import { hex } from "../../hex.js";
import { bytesSource, type ByteSource } from "../../memory/byte-source.js";
import { ByteCursor } from "../../memory/cursor.js";

/** The 32-byte MSF 7.00 superblock magic (§4.1). */
export const MSF_MAGIC = "Microsoft C/C++ MSF 7.00\r\n\x1aDS\0\0\0";

/** The older "JG" container, which this reader rejects (§4.1). */
const JG_MAGIC = "Microsoft C/C++ program database 2.00";

/** A stream size meaning "nil stream" in the directory (§4.2). */
const NIL_STREAM_SIZE = 0xffff_ffff;

/** A stream as the directory describes it. */
export interface StreamRef {
  /** Bytes; 0 for a nil stream. */
  size: number;
  /** Block numbers, in stream order. */
  blocks: readonly number[];
  /** File offset of this stream's Sizes[] entry, named by errors about an empty stream. */
  sizeEntryOffset: number;
}

/** The MSF container: the file, its block size and the stream directory. */
export interface Msf {
  source: ByteSource;
  blockSize: number;
  streams: StreamRef[];
}

/** Maps an offset inside a block-scattered byte run to the file offset of that byte. */
function mapToFile(blocks: readonly number[], blockSize: number, pos: number, fallback: number): number {
  if (blocks.length === 0) return fallback;
  const index = Math.floor(pos / blockSize);
  if (index < blocks.length) return blocks[index]! * blockSize + (pos % blockSize);
  return blocks[blocks.length - 1]! * blockSize + blockSize;
}

/**
 * Runs `fn`, which parses bytes gathered from `blocks`: the offsets of its InputErrors are
 * relative to those bytes and are turned into file offsets, and the message names the run.
 */
function mapErrors<T>(label: string, blocks: readonly number[], blockSize: number, fallback: number, fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof InputError && e.offset !== undefined) {
      throw new InputError(e.code, `${label} +${hex(e.offset)}: ${e.reason}`, {
        offset: mapToFile(blocks, blockSize, e.offset, fallback),
      });
    }
    throw e;
  }
}

/**
 * Reads `size` bytes scattered over `blocks` into one buffer (§4.2: fields straddle blocks), one
 * read for each run of consecutive blocks. The blocks lie inside the file (readMsf checks them);
 * a read that fails all the same (a file cut short while open) is "io" at the block's offset.
 */
function gather(source: ByteSource, blockSize: number, blocks: readonly number[], size: number): Uint8Array {
  const out = new Uint8Array(size);
  for (let i = 0; i < blocks.length && i * blockSize < size; ) {
    let k = i + 1;
    while (k < blocks.length && blocks[k] === blocks[k - 1]! + 1) k++;
    const at = i * blockSize;
    const n = Math.min((k - i) * blockSize, size - at);
    const from = blocks[i]! * blockSize;
    readInto(source, from, out.subarray(at, at + n));
    i = k;
  }
  return out;
}

/** Fills `into` with the file's bytes at `from`, which lie inside it; "io" should the read fail. */
function readInto(source: ByteSource, from: number, into: Uint8Array): void {
  let ok: boolean;
  if (source.readInto !== undefined) ok = source.readInto(from, into);
  else {
    const got = source.read(from, into.length);
    if (got !== undefined) into.set(got);
    ok = got !== undefined;
  }
  if (!ok) throw new InputError("io", `cannot read the ${into.length} bytes at offset ${hex(from)}`, { offset: from });
}

/** The file's bytes [at, at + length), which lie inside it; "io" should the read fail. */
function readAt(source: ByteSource, at: number, length: number): Uint8Array {
  const bytes = source.read(at, length);
  if (bytes === undefined) throw new InputError("io", `cannot read the ${length} bytes at offset ${hex(at)}`, { offset: at });
  return bytes;
}

/** Runs `fn`, reporting its stream-relative InputErrors at file offsets within stream `index`. */
export function inStream<T>(msf: Msf, index: number, label: string, fn: () => T): T {
  const ref = msf.streams[index]!;
  return mapErrors(`${label} (stream ${index})`, ref.blocks, msf.blockSize, ref.sizeEntryOffset, fn);
}

/**
 * Reads stream `index` into one buffer and parses it with `fn`, reporting errors at file offsets;
 * with `size`, only the stream's first `size` bytes (at most its size) are read.
 */
export function withStream<T>(msf: Msf, index: number, label: string, fn: (bytes: Uint8Array) => T, size?: number): T {
  const ref = msf.streams[index]!;
  const data = gather(msf.source, msf.blockSize, ref.blocks, size === undefined ? ref.size : Math.min(size, ref.size));
  return inStream(msf, index, label, () => fn(data));
}

/** Bytes [start, start + length) of stream `index`, which lie inside it: only those bytes are read, from the blocks that hold them. */
export function streamBytes(msf: Msf, index: number, start: number, length: number): Uint8Array {
  const ref = msf.streams[index]!;
  const bs = msf.blockSize;
  const out = new Uint8Array(length);
  for (let done = 0; done < length; ) {
    const pos = start + done;
    const within = pos % bs;
    const n = Math.min(bs - within, length - done);
    const from = ref.blocks[Math.floor(pos / bs)]! * bs + within;
    readInto(msf.source, from, out.subarray(done, done + n));
    done += n;
  }
  return out;
}

/** Whether the prefix of `bytes` matches the first bytes of `text`. */
function startsWith(bytes: Uint8Array, text: string): boolean {
  const n = Math.min(bytes.byteLength, text.length);
  for (let i = 0; i < n; i++) if (bytes[i] !== text.charCodeAt(i)) return false;
  return true;
}

/**
 * Superblock (§4.1) and stream directory (§4.2), with every block index checked and claimed once:
 * from the file's bytes, or read by position from `input` (which must keep giving the same bytes
 * for as long as the streams are read).
 */
export function readMsf(input: Uint8Array | ByteSource): Msf {
  const source = input instanceof Uint8Array ? bytesSource(input) : input;
  // The superblock and the block map are the only bytes read before the directory says where the rest is.
  const bytes = source.read(0, Math.min(source.size, 56)) ?? new Uint8Array(0);
  if (bytes.byteLength >= JG_MAGIC.length && startsWith(bytes, JG_MAGIC)) {
    throw new InputError("unsupported", "a PDB 2.00 (JG) container; only MSF 7.00 is supported", { offset: 0 });
  }
  if (!startsWith(bytes, MSF_MAGIC)) {
    throw new InputError("bad-magic", 'not an MSF 7.00 file: the magic "Microsoft C/C++ MSF 7.00\\r\\n\\x1aDS\\0\\0\\0" is missing', {
      offset: 0,
    });
  }
  const c = new ByteCursor(bytes);
  c.need(56, "MSF superblock", 0);
  c.seek(32);
  const blockSize = c.u32("BlockSize");
  c.u32("FreeBlockMapBlock");
  const numBlocks = c.u32("NumBlocks");
  const numDirectoryBytes = c.u32("NumDirectoryBytes");
  c.u32("Unknown");
  const blockMapAddr = c.u32("BlockMapAddr");

  // §4.1: classically 512..4096; larger powers of two come from /PDBPAGESIZE.
  if (blockSize < 512 || blockSize > 65536 || (blockSize & (blockSize - 1)) !== 0) {
    throw new InputError("bad-value", `BlockSize ${blockSize} is not a power of two from 512 to 65536`, { offset: 32 });
  }
  const fileSpan = numBlocks * blockSize;
  if (numBlocks < 2 || fileSpan > source.size) {
    throw new InputError(
      numBlocks < 2 ? "bad-value" : "truncated",
      `NumBlocks ${numBlocks} × BlockSize ${blockSize} = ${fileSpan} bytes, but the file has ${source.size}`,
      { offset: 40 },
    );
  }
  if (numDirectoryBytes < 4 || numDirectoryBytes > fileSpan) {
    throw new InputError("bad-value", `NumDirectoryBytes ${numDirectoryBytes} is not within 4..${fileSpan}`, { offset: 44 });
  }
  const numDirectoryBlocks = Math.ceil(numDirectoryBytes / blockSize);
  if (numDirectoryBlocks * 4 > blockSize) {
    throw new InputError("unsupported", `the directory needs ${numDirectoryBlocks} blocks, more than one block map holds`, {
      offset: 44,
    });
  }

  // Each block belongs to at most one stream; block 0 is the superblock.
  const owner = new Uint8Array(numBlocks);
  owner[0] = 1;
  const claim = (block: number, at: number, what: string): number => {
    let problem: string | undefined;
    if (block >= numBlocks) problem = `is beyond the file's ${numBlocks} blocks`;
    else if (block === 0) problem = "is block 0, the superblock";
    else if (owner[block] !== 0) problem = "is referenced twice";
    if (problem !== undefined) throw new InputError("bad-value", `${what}: block ${block} ${problem}`, { offset: at });
    owner[block] = 1;
    return block;
  };
  claim(blockMapAddr, 52, "BlockMapAddr");

  const mapAt = blockMapAddr * blockSize;
  const map = new ByteCursor(readAt(source, mapAt, numDirectoryBlocks * 4), mapAt);
  const dirBlocks: number[] = [];
  for (let i = 0; i < numDirectoryBlocks; i++) {
    const at = mapAt + 4 * i;
    dirBlocks.push(claim(map.u32("directory block index"), at, `directory block ${i}`));
  }
  const directory = gather(source, blockSize, dirBlocks, numDirectoryBytes);

  const streams = mapErrors("stream directory", dirBlocks, blockSize, 44, () => {
    const d = new ByteCursor(directory);
    const numStreams = d.u32("NumStreams");
    if (numStreams > (numDirectoryBytes - 4) / 4) {
      throw new InputError("bad-value", `NumStreams ${numStreams} does not fit a ${numDirectoryBytes}-byte directory`, { offset: 0 });
    }
    const sizes: number[] = [];
    for (let i = 0; i < numStreams; i++) sizes.push(d.u32(`Sizes[${i}]`));
    return sizes.map((raw, i): StreamRef => {
      const size = raw === NIL_STREAM_SIZE ? 0 : raw;
      const count = Math.ceil(size / blockSize);
      d.need(count * 4, `block list of stream ${i} (${size} bytes)`);
      const blocks: number[] = [];
      for (let k = 0; k < count; k++) {
        // `at` is a directory offset here; mapErrors turns it into a file offset.
        const at = d.pos;
        blocks.push(claim(d.u32("block index"), at, `stream ${i} block ${k}`));
      }
      return { size, blocks, sizeEntryOffset: mapToFile(dirBlocks, blockSize, 4 + 4 * i, 44) };
    });
  });
  return { source, blockSize, streams };
}

