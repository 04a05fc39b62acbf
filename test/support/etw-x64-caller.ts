/**
 * A small x64 program that logs an ETW event: main calls work, which calls
 * etwlog64.dll!EtwEventWrite through a register, as code calling through an import does. The
 * image has no .pdata. Captured at `capture` in work, with its labels for the tests' expectations.
 */
import { loadAssembler } from "../../emulator/assemble.js";
import { captureX64Vectors } from "../../emulator/etw-capture.js";
import { ETW_EVENT_WRITE64 } from "../../emulator/etw-modules.js";
import { FIRST_SECTION_RVA, SECTION_CHARACTERISTICS, writePeImage } from "../../emulator/image-writer.js";
import type { Vector } from "../../src/formats/vector.js";

const IMAGE_BASE = 0x1_4000_0000n;
const TEXT = IMAGE_BASE + BigInt(FIRST_SECTION_RVA);

const SOURCE = [
  "main:",
  "    sub rsp, 40",
  "    call work",
  "main_back:",
  "    add rsp, 40",
  "    ret",
  "main_end:",
  "work:",
  "    push rbx",
  "    sub rsp, 32",
  "capture:",
  `    mov rax, ${ETW_EVENT_WRITE64}`,
  "    call rax",
  "work_back:",
  "    add rsp, 32",
  "    pop rbx",
  "    ret",
  "work_end:",
];

/** Builds `etw-caller.exe` and runs it beside etwlog64.dll: the vectors captured at `capture`, and the program's labels. */
export async function captureEtwCaller(): Promise<{ vectors: Vector[]; labels: ReadonlyMap<string, bigint> }> {
  const program = (await loadAssembler()).assembleProgram(SOURCE.join("\n"), { mode: 64, address: TEXT });
  const labels = program.labels;
  const image = writePeImage({
    machine: "x64",
    imageBase: IMAGE_BASE,
    entryRva: FIRST_SECTION_RVA,
    sections: [{ name: ".text", characteristics: SECTION_CHARACTERISTICS.text, content: { bytes: program.bytes } }],
  }).bytes;
  const symbol = (name: string) => ({ name, rva: labels.get(name)! - IMAGE_BASE, size: labels.get(`${name}_end`)! - labels.get(name)! });
  const capture = `etw-caller.exe!work+0x${(labels.get("capture")! - labels.get("work")!).toString(16)}`;
  const vectors = await captureX64Vectors({ name: "etw-caller.exe", image, symbols: [symbol("main"), symbol("work")] }, { captures: [capture] });
  return { vectors, labels };
}
