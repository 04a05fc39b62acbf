/**
 * What `minidump_stackwalk`'s `-s` and `-b` print (Breakpad's stackwalk_common.cc:
 * PrintStackContents, PrintRequestingThreadBrief), beside the report of breakpad.ts.
 *
 * `-s`, after each frame but the last: the stack between the frame's stack pointer and its
 * caller's, read from the thread's own stack memory, as rows of 16 bytes (`     %08x` address,
 * ` %02x` per byte, three spaces where nothing was captured, two spaces, the bytes as text with
 * `.` for what isprint() rejects; the last row whole, past the caller's stack pointer), then "Possible instruction pointers:": each
 * word of that stretch whose value lies in a module with symbols and names a function there
 * (looked up at the value itself, by Breakpad's resolver rules), as
 * `     *(0x%08x) = 0x%08x <function> [file : line + 0xoff]`, the file and line empty and 0 and
 * the offset from 0 when no line record covers the value, then an empty line. x86, amd64 and
 * arm64 only (4- and 8-byte words); a frame without a stack pointer prints nothing.
 *
 * `-b`: the requesting thread's frame lines alone, under `Thread N (crashed)`.
 */
import { WindowMemory } from "../memory/window-memory.js";
import { hasSymbols, moduleAt, type Snapshot } from "../model/snapshot.js";
import type { BreakpadReport, BreakpadThread } from "../analysis/breakpad-report.js";
import { hexDigits } from "../hex.js";
import { breakpadCpu, breakpadRegisters, frameText, inlineFrameText, instructionOf, locations, printedAddress } from "./breakpad.js";
import { chunked } from "./chunks.js";
import { symbolize } from "../analysis/location.js";
import { fileNameOf } from "../path-name.js";

/** The stack pointer Breakpad's frame holds, as its register block prints it; 0 when it has none. */
function stackPointer(cpu: string, frame: BreakpadThread["walk"]["frames"][number]): bigint {
  const name = breakpadCpu(cpu)?.stackPointer;
  return breakpadRegisters(cpu, frame).find(([n]) => n === name)?.[1] ?? 0n;
}

/**
 * The `-s` text printed after each frame of the report's threads (a function for
 * {@link BreakpadPrintOptions.afterFrame}). `snapshot` is the one the report was made from.
 */
export function breakpadStackContents(report: BreakpadReport, snapshot: Snapshot): (thread: BreakpadThread, frameIndex: number) => string {
  const word = breakpadCpu(report.cpu)?.wordSize ?? 0;
  const digits = word * 2;
  const indent = "    ";
  return (t, i) => {
    const frame = t.walk.frames[i];
    const next = t.walk.frames[i + 1];
    if (word === 0 || frame === undefined || next === undefined) return "";
    const begin = stackPointer(report.cpu, frame);
    let end = stackPointer(report.cpu, next);
    if (begin === 0n || end === 0n) return "";
    // Never past the thread's stack memory: a damaged dump's next frame may lie gigabytes above.
    const ranges = t.thread.stackRanges;
    if (ranges !== undefined) {
      const range = ranges.find((r) => r.start <= begin && begin < r.end);
      if (range === undefined) return "";
      if (end > range.end) end = range.end;
    }
    const memory = t.thread.stackRanges === undefined ? snapshot.memory : new WindowMemory(snapshot.memory, t.thread.stackRanges);
    const pad = (v: bigint): string => hexDigits(v, digits);
    let out = `\n${indent}Stack contents:`;
    for (let address = begin; address < end; ) {
      out += `\n${indent} ${pad(address)}`;
      let text = "";
      for (let k = 0; k < 16; k++, address++) {
        // The last row is printed whole: its bytes past the caller's stack pointer too, as far as the
        // thread's stack memory holds them.
        const byte = memory.read(address, 1)?.[0];
        if (byte === undefined) {
          out += "   ";
          text += " ";
        } else {
          out += ` ${byte.toString(16).padStart(2, "0")}`;
          text += byte >= 0x20 && byte <= 0x7e ? String.fromCharCode(byte) : ".";
        }
      }
      out += `  ${text}`;
    }
    out += `\n${indent}Possible instruction pointers:\n`;
    for (let address = begin; address < end; address += BigInt(word)) {
      const bytes = memory.read(address, word);
      let value = 0n;
      if (bytes !== undefined) for (let k = word - 1; k >= 0; k--) value = (value << 8n) | BigInt(bytes[k]!);
      const module = moduleAt(report.modules, value);
      if (module === undefined || !hasSymbols(module)) continue;
      const match = symbolize(module, value - module.base);
      if (match === undefined || match.symbol.name === "") continue;
      const line = match.line;
      const file = line?.file === undefined ? "" : fileNameOf(line.file);
      const lineBase = line?.file === undefined ? 0n : module.base + line.rva;
      out += `${indent} *(0x${pad(address)}) = 0x${pad(value)} <${match.symbol.name}> [${file} : ${line?.file === undefined ? 0 : line.line} + 0x${hexDigits(value - lineBase)}]\n`;
    }
    return out + "\n";
  };
}

/** `minidump_stackwalk -b`: the requesting thread's frame lines, or a line saying there is none. */
export function writeBreakpadBrief(report: BreakpadReport, write: (text: string) => void): void {
  const out = chunked(write);
  const t = report.threads.find((x) => x.index === report.requestingThread);
  if (report.requestingThread < 0 || t === undefined) out.push(" <no crashing or requesting dump thread identified>\n");
  else {
    out.push(`Thread ${t.index} (${report.crashed ? "crashed" : "requested dump, did not crash"})\n`);
    const locationOf = locations(report.modules, report.cpu);
    // Inline frames are numbered with the others, each before its frame.
    let number = 0;
    for (const f of t.walk.frames) {
      const loc = locationOf(f);
      for (const inline of loc.inlines ?? []) out.push(`${String(number++).padStart(2)}  ${inlineFrameText(loc, inline, instructionOf(report.cpu, f))}\n`);
      out.push(`${String(number++).padStart(2)}  ${frameText(loc, printedAddress(report.cpu, f))}\n`);
    }
  }
  out.end();
}
