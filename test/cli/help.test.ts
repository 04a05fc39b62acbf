/**
 * Every command's --help against the tables the code runs on, so that a help text cannot lag
 * behind them: the walkers (WALKER_NAMES, and which machines' walker tables offer each), the
 * machines (MACHINES), the output formats and ETW input forms the commands accept, the targets
 * of `compare`, and the commands themselves.
 */
import { describe, expect, it } from "vitest";
import { COMPARE_TARGETS } from "../../emulator/compare.js";
import { FORMS } from "../../src/cli/etw.js";
import { walkerChoices, walkerLine, walkerList, walkerMachines, walkerParagraph } from "../../src/cli/help.js";
import { COMMAND_NAMES, run, USAGE } from "../../src/cli/main.js";
import { FORMATS } from "../../src/cli/walk.js";
import { MACHINES } from "../../src/model/machine.js";
import { archWalker, WALKER_NAMES } from "../../src/walk/registry.js";

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => void (out += t), err: (t) => void (err += t) });
  return { code, out, err };
}

/** A help text with its line breaks and indents made single spaces (a list may be wrapped). */
const flat = (text: string): string => text.replace(/\s*\n\s*/g, " ");

/** The lines of `text` from the one that starts with `option` to the next option. */
function optionText(text: string, option: string): string {
  const lines = text.split("\n");
  const at = lines.findIndex((l) => l.trimStart().startsWith(option));
  expect(at, option).toBeGreaterThanOrEqual(0);
  const indent = lines[at]!.length - lines[at]!.trimStart().length;
  let end = at + 1;
  while (end < lines.length && lines[end]!.trim() !== "" && !(lines[end]!.length - lines[end]!.trimStart().length === indent && lines[end]!.trimStart().startsWith("-"))) end++;
  return lines.slice(at, end).join("\n");
}

const helps = new Map<string, string>();
async function help(command: string): Promise<string> {
  let text = helps.get(command);
  if (text === undefined) {
    const r = await cli(...command.split(" "), "--help");
    expect(r.code, `${command} --help`).toBe(0);
    helps.set(command, (text = r.out));
  }
  return text;
}

describe("help texts follow the tables", () => {
  it("the top-level usage lists every command, and only those", async () => {
    expect((await cli("--help")).out).toBe(USAGE);
    const listed = USAGE.split("\n")
      .filter((l) => /^ {2}[a-z]/.test(l))
      .map((l) => l.trim().split(/\s+/)[0]!);
    expect([...listed].sort()).toEqual([...COMMAND_NAMES].sort());
    for (const c of COMMAND_NAMES) expect((await help(c)).startsWith(`usage: stackwalk ${c}`), c).toBe(true);
  });

  it("every command that takes --walker lists every walker of the table", async () => {
    const takers: string[] = [];
    for (const c of COMMAND_NAMES) {
      const text = await help(c);
      if (!text.includes("--walker")) continue;
      takers.push(c);
      expect(flat(optionText(text, "--walker W")), c).toContain(c === "walk" ? "" : walkerList());
      for (const name of WALKER_NAMES) expect(flat(optionText(text, "--walker W")), `${c}: ${name}`).toMatch(new RegExp(`(^|[ (|,])${name}[ (,:|]`));
    }
    expect(takers.sort()).toEqual(["check", "crosscheck", "explain", "render", "view", "walk"]);
  });

  it("walk --help: the usage line and the --walker paragraph list each walker with the machines whose walker table offers it", async () => {
    const text = await help("walk");
    expect(text).toContain(`[--walker ${WALKER_NAMES.join("|")}]`);
    const paragraph = flat(optionText(text, "--walker W"));
    for (const name of WALKER_NAMES) {
      const machines = MACHINES.filter((m) => archWalker(m).walkers[name] !== undefined || archWalker(m).nonWindows?.[name] !== undefined);
      if (machines.length > 0) expect(walkerMachines(name)).toEqual(machines);
      else machines.push(...walkerMachines(name));
      expect(paragraph).toContain(`${name} (${machines.length === MACHINES.length ? "every machine" : machines.join(", ")}`);
    }
    // The error for a name the table does not have lists the same names.
    const bad = await cli("walk", "vectors/x86/ebp-chain-4.json", "--walker", "nonesuch");
    expect(bad.code).toBe(2);
    expect(bad.err).toContain(`--walker must be one of ${WALKER_NAMES.join(", ")}, not "nonesuch"`);
  });

  it("a walker added to the table is in every walker list without an edit to the texts", () => {
    const names = [...WALKER_NAMES, "newcomer"];
    expect(walkerChoices(names)).toBe(`${WALKER_NAMES.join("|")}|newcomer`);
    expect(walkerList(names)).toMatch(/, newcomer$|or newcomer$/);
    expect(flat(walkerLine("  --walker W  ", "as for walk", 60, names))).toContain(" or newcomer: as for walk");
    expect(walkerParagraph("  --walker W  ", 96, names)).toContain("newcomer (no machine)");
  });

  it("walk --help lists every format --format takes, in the usage line and in the option's words", async () => {
    const text = await help("walk");
    expect(text).toContain(`[--format ${FORMATS.join("|")}]`);
    const words = flat(optionText(text, "--format F"));
    for (const f of FORMATS) expect(words, f).toMatch(new RegExp(`(^|[ (,])${f}[ (,:)]`));
    const bad = await cli("walk", "vectors/x86/ebp-chain-4.json", "--format", "nonesuch");
    expect(bad.err).toContain(`--format must be one of ${FORMATS.join(", ")}, not "nonesuch"`);
  });

  it("roles --help lists every machine of the machine table", async () => {
    expect(await help("roles")).toContain(`[--machine ${MACHINES.join("|")}]`);
    const bad = await cli("roles", "--machine", "nonesuch");
    expect(bad.err).toContain(`--machine must be one of ${MACHINES.join(", ")}, not "nonesuch"`);
  });

  it("compare runs one target or two per machine, every machine; its help and the top-level usage say so", async () => {
    const compared = [...MACHINES];
    const machinesOf = [...new Set(COMPARE_TARGETS.map((t) => t.split("-")[0]!))];
    expect(machinesOf.sort()).toEqual([...compared].sort());
    const text = await help("compare");
    expect(text).toContain(`Targets: ${COMPARE_TARGETS.join(", ")}.`);
    for (const m of compared) expect(flat(text).toLowerCase(), m).toContain(m === "ia64" ? "ia-64" : m);
    const line = USAGE.split("\n").find((l) => l.startsWith("  compare "))!;
    for (const m of compared) expect(line, m).toContain(m);
  });

  it("etw decode --help lists every form --form takes", async () => {
    const text = await help("etw");
    expect(text).toContain(`[--form ${FORMS.join("|")}]`);
    for (const f of FORMS) expect(flat(optionText(text, "--form F")), f).toMatch(new RegExp(`(^|[ ,])${f}[ (,:]`));
  });
});
