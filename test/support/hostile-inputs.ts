/**
 * Hostile inputs, made the same way for the tests and the bench (`npm run bench`, hostile
 * section): a dump of many overlapping modules, a dump whose every frame is found by one long
 * STACK CFI rule with its `.sym` file, vectors and sweeps that declare the largest zero-filled
 * region a file may, and a real dump of the Breakpad corpus with bytes deleted. The crafted deep
 * dump (one 120,000-deep stack listed by a hundred threads) is crafted-dump.ts's.
 */
import { MAX_ZERO_BYTES } from "../../src/formats/vector.js";
import { fixtureBytes } from "./fixtures.js";
import { writeMinidump } from "./minidump-writer.js";

/**
 * An x86 dump of `modules` modules, each 1 MiB long and 16 bytes after the one before (so they
 * overlap), with distinct debug ids, and `threads` threads whose 16 KiB stacks hold words that
 * point into them: a walk finds a frame at nearly every word, in a module among hundreds that
 * hold the address.
 */
export function manyModulesDump({ modules, threads }: { modules: number; threads: number }): Uint8Array {
  const STACK = 0x0010_0000n;
  const stack = new Uint8Array(16 * 1024);
  const dv = new DataView(stack.buffer);
  for (let i = 0; i < stack.length / 4; i++) dv.setUint32(4 * i, 0x0040_1000 + ((i * 0x1234) % 0x10_0000), true);
  return writeMinidump({
    machine: "x86",
    threads: Array.from({ length: threads }, (_, i) => {
      const base = STACK + BigInt(i) * 0x1_0000n;
      return { id: i + 1, registers: { eip: 0x0040_1010n, esp: base, ebp: base + 16n }, stack: { base, bytes: stack } };
    }),
    modules: Array.from({ length: modules }, (_, i) => ({
      path: `C:\\m\\mod${i}.dll`,
      base: 0x0040_0000n + BigInt(i) * 0x10n,
      size: 0x10_0000,
      codeView: { rsds: { guid: `00000001-1111-2222-3333-${i.toString(16).padStart(12, "0")}`, age: 1, pdb: `C:\\m\\mod${i}.pdb` } },
    })),
    exception: { threadId: 1, code: 0xc000_0005, address: 0x0040_1010n },
  }).bytes;
}

/** Where {@link cfiDump}'s stack and its one module lie, and the address every frame returns to. */
export const CFI_DUMP = { stack: 0x0010_0000n, app: 0x0040_0000n, returnAddress: 0x0040_1010n } as const;

/**
 * An x86 dump whose threads' stacks hold `depth` words, each a return address into
 * app.exe+0x1010: with {@link cfiSym}'s file every frame is found by the same STACK CFI rule.
 * All threads share the debug id `00000001111122223333444455556666` + age 1 (app.pdb).
 */
export function cfiDump(depth: number, threads = 1): Uint8Array {
  const stack = new Uint8Array(depth * 4);
  const dv = new DataView(stack.buffer);
  for (let i = 0; i < depth; i++) dv.setUint32(4 * i, Number(CFI_DUMP.returnAddress), true);
  return writeMinidump({
    machine: "x86",
    threads: Array.from({ length: threads }, (_, i) => ({ id: i + 1, registers: { eip: CFI_DUMP.returnAddress, esp: CFI_DUMP.stack, ebp: 0n }, stack: { base: CFI_DUMP.stack, bytes: stack } })),
    modules: [{ path: "C:\\app\\app.exe", base: CFI_DUMP.app, size: 0x10000, codeView: { rsds: { guid: "00000001-1111-2222-3333-444455556666", age: 1, pdb: "C:\\app\\app.pdb" } } }],
  }).bytes;
}

/** {@link cfiDump}'s module as a symbol store names it. */
export const CFI_SYM_PATH = ["app.pdb", "000000011111222233334444555566661", "app.sym"] as const;

/** A `.cfa` expression of `tokens` tokens (odd, at least 3): `$esp 4 +` then `0 +` pairs. */
export const cfaOf = (tokens: number): string => `$esp 4 +${" 0 +".repeat((tokens - 3) / 2)}`;

/**
 * The `.sym` file of {@link cfiDump}'s app.exe: one function, and one STACK CFI rule over it,
 * `.cfa: $esp 4 + (0 +)… .ra: .cfa 4 - ^`, whose `.cfa` expression is `tokens` tokens long.
 */
export function cfiSym(tokens: number): string {
  return ["MODULE windows x86 000000011111222233334444555566661 app.pdb", "FUNC 1000 100 0 recurse", `STACK CFI INIT 1000 100 .cfa: ${cfaOf(tokens)} .ra: .cfa 4 - ^`, ""].join("\n");
}

const hex8 = (n: number): string => `0x${n.toString(16).padStart(8, "0")}`;
const ZERO_STACK = 0x2000_0000;
const ZERO_HEAD = { machine: "x86", modules: [{ name: "p.exe", base: "0x00400000", size: "0x00002000", symbols: [{ name: "main", rva: "0x00001000", size: "0x00000020" }] }] };

/**
 * A vector whose stack is one zero-filled region of {@link MAX_ZERO_BYTES} (256 MiB, the most a
 * file may declare): a few hundred bytes of JSON.
 */
export function zeroVector(): string {
  const memory = [{ base: hex8(ZERO_STACK), zeros: hex8(MAX_ZERO_BYTES) }];
  return JSON.stringify({ format: "stackwalk-vector/1", ...ZERO_HEAD, context: { eip: "0x00401000", esp: hex8(ZERO_STACK + 0x100), ebp: hex8(ZERO_STACK + 0x200) }, memory });
}

/**
 * A sweep of `steps` snapshots over a stack page followed by a zero-filled region of
 * {@link MAX_ZERO_BYTES}, each snapshot writing a word a page further into the region; each
 * snapshot's truth is its context frame.
 */
export function zeroSweep(steps = 50): string {
  const snapshots = Array.from({ length: steps }, (_, i) => ({
    step: i,
    context: { eip: "0x00401000", esp: hex8(ZERO_STACK + 0x1000 + 4 * i), ebp: "0x00000000" },
    writes: [[hex8(ZERO_STACK + 0x1000 + 0x1000 * i), "78563412"]],
    truth: [{ pc: "0x00401000", sp: hex8(ZERO_STACK + 0x1000 + 4 * i), function: "main" }],
  }));
  const memory = [
    { base: hex8(ZERO_STACK), hex: "00".repeat(0x1000) },
    { base: hex8(ZERO_STACK + 0x1000), zeros: hex8(MAX_ZERO_BYTES) },
  ];
  return JSON.stringify({ format: "stackwalk-sweep/1", ...ZERO_HEAD, memory, snapshots });
}

/**
 * The Breakpad corpus's largest dump (Crashpad's macOS `minidump_crashpad_annotation.dmp`) with
 * 0x124 bytes deleted at `at`: everything after the cut lies 0x124 bytes early, so the RVAs of
 * the streams and lists past it point into other data. The default cut is the one of all cuts
 * every 36 bytes after which `view` took the most time.
 */
export function corpusDumpCut(at = 0x3f5c4): Uint8Array {
  const whole = fixtureBytes("breakpad-corpus/minidump_crashpad_annotation.dmp");
  const out = new Uint8Array(whole.length - 0x124);
  out.set(whole.subarray(0, at));
  out.set(whole.subarray(at + 0x124), at);
  return out;
}
