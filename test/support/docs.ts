/**
 * The documentation as the tests that run its examples read it: README.md, CONTRIBUTING.md,
 * CHANGELOG.md and docs/*.md (docs/spec/ holds the specifications, which show no output of ours).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { ROOT } from "./corpus.js";

/** The documentation files, relative to the root. */
export function docFiles(): string[] {
  const docs = existsSync(`${ROOT}docs`) ? readdirSync(`${ROOT}docs`).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`) : [];
  return ["README.md", "CONTRIBUTING.md", "CHANGELOG.md", ...docs].filter((f) => existsSync(`${ROOT}${f}`));
}

/** The text of one documentation file (relative to the root). */
export function docText(file: string): string {
  return readFileSync(`${ROOT}${file}`, "utf8");
}

/** A fenced code block: the file, the line its opening fence is on, its info string and its lines (unindented, trailing white space removed). */
export interface DocBlock {
  file: string;
  line: number;
  indent: number;
  info: string;
  lines: string[];
}

/** Every fenced block of a documentation file. A block in a list item is indented; the indentation is removed. */
export function docBlocks(file: string): DocBlock[] {
  const text = docText(file);
  const blocks: DocBlock[] = [];
  for (const m of text.matchAll(/^( *)```([^\n`]*)\n([\s\S]*?)^ *```$/gm)) {
    const indent = m[1]!.length;
    const line = text.slice(0, m.index).split("\n").length;
    const lines = m[3]!.replace(/\n$/, "").split("\n").map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)).trimEnd());
    blocks.push({ file, line, indent, info: m[2]!.trim(), lines });
  }
  return blocks;
}

/**
 * The lines of the first fenced block after the first line of the documentation that contains
 * `marker` (README.md first, then the other files in order).
 */
export function docBlockAfter(marker: string): string[] {
  for (const file of docFiles()) {
    const text = docText(file);
    const at = text.indexOf(marker);
    if (at < 0) continue;
    const line = text.slice(0, at).split("\n").length;
    const block = docBlocks(file).find((b) => b.line >= line);
    if (block === undefined) throw new Error(`${file} has no code block after "${marker}"`);
    return block.lines;
  }
  throw new Error(`no documentation file has "${marker}"`);
}

/** One command of a transcript and the lines it is shown to print (stderr first, then stdout). */
export interface ShownCommand {
  argv: string[];
  shown: string[];
}

/**
 * The transcripts: the blocks whose first line is a command (`$ stackwalk …` or `$ npx stackwalk …`),
 * each split into its commands and what each is shown to print.
 */
export function transcripts(): (DocBlock & { commands: ShownCommand[] })[] {
  return docFiles().flatMap((file) =>
    docBlocks(file)
      .filter((b) => b.lines[0]?.startsWith("$ "))
      .map((b) => {
        const commands: ShownCommand[] = [];
        for (const l of b.lines) {
          if (l.startsWith("$ ")) commands.push({ argv: shellWords(l.slice(2)), shown: [] });
          else commands.at(-1)!.shown.push(l);
        }
        return { ...b, commands };
      }),
  );
}

/** A command line split as a POSIX shell splits words: blanks separate, single and double quotes group. */
export function shellWords(line: string): string[] {
  const words: string[] = [];
  for (const m of line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3]!);
  return words;
}

/**
 * Whether `actual` is what `shown` shows: line for line, trailing white space ignored, where a
 * line `...` stands for any number of lines (an example that shows part of a long output).
 */
export function matchesShown(shown: readonly string[], actual: readonly string[]): boolean {
  const a = actual.map((l) => l.trimEnd());
  const s = shown.map((l) => l.trimEnd());
  const memo = new Map<string, boolean>();
  const at = (i: number, j: number): boolean => {
    const key = `${i},${j}`;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let r: boolean;
    if (i === s.length) r = j === a.length;
    else if (s[i]!.trim() === "...") r = at(i + 1, j) || (j < a.length && at(i, j + 1));
    else r = j < a.length && s[i] === a[j] && at(i + 1, j + 1);
    memo.set(key, r);
    return r;
  };
  return at(0, 0);
}

/**
 * Rewrites the blocks of `file` whose opening fence is on the given lines with new lines (indented
 * as the block is): how `UPDATE_DOCS=1` writes what the commands print into their transcripts.
 */
export function rewriteBlocks(file: string, replacements: ReadonlyMap<number, readonly string[]>): void {
  const lines = docText(file).split("\n");
  const blocks = docBlocks(file).filter((b) => replacements.has(b.line)).sort((a, b) => b.line - a.line);
  for (const b of blocks) {
    const body = replacements.get(b.line)!.map((l) => (l === "" ? "" : `${" ".repeat(b.indent)}${l}`));
    lines.splice(b.line, b.lines.length, ...body);
  }
  writeFileSync(`${ROOT}${file}`, lines.join("\n"));
}

/**
 * The figures a documentation file quotes, found by `pattern` in its text with line breaks read as
 * spaces: the pattern's groups, for a test that computes the figure to compare with. Throws when
 * the text is not there (the sentence was reworded: the test must follow it).
 */
export function docFigures(file: string, pattern: RegExp): string[] {
  const m = pattern.exec(docText(file).replace(/\s*\n\s*/g, " "));
  if (m === null) throw new Error(`${file} no longer says ${pattern}`);
  return m.slice(1);
}

/** A quoted whole number ("4,202") as a number. */
export const quotedNumber = (text: string): number => Number(text.replaceAll(",", ""));
