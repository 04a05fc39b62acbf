/**
 * The parts of the commands' usage texts that list what the code's tables hold: the walkers
 * (WALKER_NAMES, and the machines whose walker table offers each) and the machines (MACHINES).
 * Made from the tables, so that a walker or a machine added there is in every usage text that
 * lists them without an edit here (test/cli/help.test.ts checks every command's text against the
 * tables).
 */
import { MACHINES, type Machine } from "../model/machine.js";
import type { OperatingSystem } from "../model/snapshot.js";
import { strategiesFor, WALKER_NAMES, type WalkerName } from "../walk/registry.js";

/** What each walker does, in a usage text's words. A walker without words is listed with its machines alone. */
const WALKER_WORDS: Readonly<Record<string, string>> = {
  auto: "the most trusted strategy per frame, falling back down the trust order, with stack scanning last",
  "frame-pointer": "the EBP/RBP chain, or on arm64 and arm lr for the context frame, then the x29 frame records or the r11 chain (r7 for Thumb code off Windows)",
  fpo: "FrameData programs and FPO_DATA, then the EBP chain, no free scanning",
  unwind: "the unwind tables (UNWIND_INFO, .pdata/.xdata, STACK CFI), then stack scanning",
  ia64: "the unwind table's descriptors and the register stack engine",
  scan: "stack scanning (on x64 after the leaf rule): a stack word that points into a module's code is taken as a return address",
  breakpad: "Breakpad's own walker: its order of strategies, its scan test and its rules for ending a walk (the default of --format breakpad and breakpad-m)",
};

/** The machines that offer walker `name`, as a walk looks it up (for Windows code or other code). */
export function walkerMachines(name: string): Machine[] {
  const offers = (m: Machine, os: OperatingSystem | undefined): boolean => {
    try {
      return strategiesFor(m, name as WalkerName, os).length > 0;
    } catch {
      return false;
    }
  };
  return MACHINES.filter((m) => offers(m, undefined) || offers(m, "linux"));
}

/** `auto|frame-pointer|…`: the names `--walker` takes, for a usage line. */
export function walkerChoices(names: readonly string[] = WALKER_NAMES): string {
  return names.join("|");
}

/** `auto (default), frame-pointer, … or scan`: the names `--walker` takes, in a sentence. */
export function walkerList(names: readonly string[] = WALKER_NAMES): string {
  const [first, ...rest] = names.map((n, i) => (i === 0 ? `${n} (default)` : n));
  if (rest.length === 0) return first ?? "";
  return `${[first, ...rest.slice(0, -1)].join(", ")} or ${rest[rest.length - 1]}`;
}

/** `x86|x64|…`: the machines, for a usage line. */
export function machineChoices(): string {
  return MACHINES.join("|");
}

/** `x86, x64, … and arm64`: the machines, in a sentence. */
export function machineList(): string {
  return `${MACHINES.slice(0, -1).join(", ")} and ${MACHINES[MACHINES.length - 1]}`;
}

/** `text` cut at spaces into lines: the first at most `first` characters long, the others `rest`. */
export function wrap(text: string, first: number, rest: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(" ")) {
    if (line !== "" && line.length + 1 + word.length > (lines.length === 0 ? first : rest)) {
      lines.push(line);
      line = word;
    } else line = line === "" ? word : `${line} ${word}`;
  }
  lines.push(line);
  return lines;
}

/**
 * The `--walker` paragraph of a usage text: one entry per walker of the table, with the machines
 * that offer it and what it does. `lead` is the option column (`  --walker W       `); the
 * entries start below it, indented by its width.
 */
export function walkerParagraph(lead: string, width = 96, names: readonly string[] = WALKER_NAMES): string {
  const indent = " ".repeat(lead.length);
  const entries = names.map((name, i) => {
    const machines = walkerMachines(name);
    const where = machines.length === MACHINES.length ? "every machine" : machines.length === 0 ? "no machine" : machines.join(", ");
    const words = WALKER_WORDS[name];
    const head = `${name} (${where}${i === 0 ? "; the default" : ""})`;
    const [line, ...more] = wrap(words === undefined ? head : `${head}: ${words}`, width - indent.length, width - indent.length - 2);
    return [`${indent}${line}`, ...more.map((l) => `${indent}  ${l}`)].join("\n");
  });
  return `${lead}the walker, one of:\n${entries.join("\n")}`;
}

/**
 * A `--walker` line that lists the walkers and says `tail` of them (`  --walker W  auto (default),
 * …, scan: as for walk`), wrapped under its option column.
 */
export function walkerLine(lead: string, tail: string, width = 96, names: readonly string[] = WALKER_NAMES): string {
  const room = width - lead.length;
  return `${lead}${wrap(`${walkerList(names)}: ${tail}`, room, room).join(`\n${" ".repeat(lead.length)}`)}`;
}
