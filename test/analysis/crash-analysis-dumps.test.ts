/**
 * The crash analysis of `walk --format json` on the real x86-64 dumps of the repository. The
 * crashing instruction is the one LLVM's own disassembler (llvm-mc 14, test/fixtures/llvm-mc)
 * decodes from the same bytes, written as rust-minidump writes instructions; the address the OS
 * reported for each data fault is one the instruction's accesses touch (the crash address comes
 * from the kernel, not from the analysis), with no inconsistency; a null base register gives the
 * null-pointer adjusted address; a `ret` into data has the return address on the stack as its
 * instruction-pointer update. Without a disassembler the fields are null and a note says why.
 */
import { describe, expect, it } from "vitest";
import { cli } from "../support/cli.js";
import { fixtureBytes, fixtureFile } from "../support/fixtures.js";
import { parseWalkJson } from "../support/walk-schema.js";
import { readMinidump, bytesSource, minidumpSnapshot } from "../../src/formats/minidump.js";
import { writeJson } from "../../src/render/json.js";
import { walkThreads } from "../../src/walk/walk.js";
import { collect } from "../../src/render/chunks.js";

interface Row {
  dump: string;
  pc: string;
  llvm: string;
}

const ROWS: Row[] = new TextDecoder()
  .decode(fixtureBytes("llvm-mc/crash-instructions.tsv"))
  .split("\n")
  .filter((l) => l !== "")
  .map((l) => {
    const [dump, pc, , llvm] = l.split("\t");
    return { dump: dump!, pc: pc!, llvm: llvm! };
  });

/** llvm-mc's Intel text as rust-minidump writes instructions: no `ptr`, numbers in hex, `x * n` scales. */
function schemaForm(intel: string): string {
  return intel
    .replace(/ ptr /g, " ")
    .replace(/(?<![\w*.(])\d+(?![\w.])/g, (n) => `0x${BigInt(n).toString(16)}`)
    .replace(/\*(\d)/g, " * $1");
}

async function json(dump: string): Promise<any> {
  const r = await cli("walk", fixtureFile(dump), "--format", "json");
  expect(r.code).toBe(0);
  return parseWalkJson(r.out);
}

/** The data faults whose address the kernel reported, with the adjusted address a null base gives. */
const DATA_FAULTS: Record<string, "null-pointer" | null> = {
  "breakpad-corpus/linux_executable_heap.dmp": "null-pointer",
  "breakpad-corpus/linux_null_dereference.dmp": "null-pointer",
  "breakpad-corpus/linux_inside_module_exe_region2.dmp": "null-pointer",
  "breakpad-corpus/linux_null_read_av.dmp": null,
  "breakpad-corpus/linux_write_to_nonwritable_module.dmp": null,
  "breakpad-corpus/linux_write_to_outside_module_via_math.dmp": null,
  "real-dumps/symbolicator-linux/linux.dmp": null,
};

describe("crash_info's analysis of the real x86-64 dumps", () => {
  it.each(ROWS)("$dump: the instruction llvm-mc decodes at $pc", async ({ dump, llvm }) => {
    const doc = await json(dump.replace(/\.gz$/, ""));
    expect(doc.crash_info.instruction).toBe(schemaForm(llvm));
    expect(doc.notes).toEqual([]);
  });

  it.each(Object.entries(DATA_FAULTS))("%s: the reported address is one the instruction touches", async (dump, adjusted) => {
    const c = (await json(dump)).crash_info;
    const address = BigInt(c.address);
    expect(c.memory_accesses.some((m: { address: string; size: number }) => address >= BigInt(m.address) && address < BigInt(m.address) + BigInt(m.size))).toBe(true);
    expect(c.crash_inconsistencies).toEqual([]);
    expect(c.adjusted_address?.kind ?? null).toBe(adjusted);
    if (adjusted === "null-pointer") expect(c.possible_bit_flips).toBeNull();
  });

  it("a ret into data: the return address on the stack is the update, the stack read the access", async () => {
    const c = (await json("breakpad-corpus/linux_jmp_to_module_not_exe_region.dmp")).crash_info;
    expect(c.instruction).toBe("ret");
    expect(c.memory_accesses).toEqual([{ address: "0x00007fff3ab68ea0", size: 8, access_type: "read" }]);
    expect(c.instruction_pointer_update).toEqual({ address: "0x00007fff3ab68fc0" });
  });

  it("the text header states the crashing instruction under the crash", async () => {
    const r = await cli("walk", fixtureFile("breakpad-corpus/linux_null_dereference.dmp"));
    expect(r.out.split("\n").slice(1, 3)).toEqual(["crash: SIGSEGV /0x00000000 at 0x0000000000000000 in thread 20520", "instruction: mov dword [rax], 0x5"]);
  });

  it("a Windows dump that captured its threads' TEBs gives each thread's last error", async () => {
    const doc = await json("breakpad-corpus/tiny-exe-fastfail.dmp");
    expect(doc.threads.map((t: { last_error_value: string }) => t.last_error_value)).toEqual(["ERROR_ALREADY_EXISTS", "ERROR_SUCCESS", "ERROR_SUCCESS", "ERROR_SUCCESS"]);
    expect(doc.crashing_thread.last_error_value).toBe("ERROR_ALREADY_EXISTS");
  });

  it("without a disassembler the instruction and its analysis are null, and a note says why", () => {
    const dump = readMinidump(bytesSource(fixtureBytes("breakpad-corpus/linux_null_dereference.dmp")));
    const snapshot = minidumpSnapshot(dump);
    const text = collect((write) => writeJson(snapshot.machine, snapshot.modules, walkThreads(snapshot), write, { dump, memory: snapshot.memory, decoderMissing: "no disassembler here", threadOrder: snapshot.threads }));
    const doc = parseWalkJson(text);
    expect(doc.crash_info.instruction).toBeNull();
    expect(doc.crash_info.memory_accesses).toBeNull();
    expect(doc.notes).toEqual(["crash_info.instruction and the analysis of it are null: no disassembler here"]);
  });
});
