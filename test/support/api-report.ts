/**
 * The API report: the public surface of every entry point in package.json `exports` (each
 * `types` condition, mapped back to its source under src/ or emulator/), one line per exported
 * name with its kind and signature, as the type checker sees it. `api/report.api.txt` is the
 * checked-in copy; `test/api.test.ts` compares it with a fresh one, so any change to what the
 * package exports, or to a signature, shows in review. `npm run api` writes it anew.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";

/** package.json's entries with declarations: subpath → source file (relative to the root). */
export function typedEntries(root: string): [string, string][] {
  const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { exports: Record<string, string | { types?: string }> };
  return Object.entries(pkg.exports).flatMap(([subpath, target]) => {
    if (typeof target === "string" || target.types === undefined) return [];
    return [[subpath, target.types.replace(/^\.\/dist\//, "").replace(/\.d\.ts$/, ".ts")] as [string, string]];
  });
}

const FLAGS = ts.TypeFormatFlags.NoTruncation;

/** The report of the entries' surface, one block per entry. */
export function apiReport(root: string): string {
  const entries = typedEntries(root);
  const config = ts.getParsedCommandLineOfConfigFile(join(root, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => undefined });
  if (config === undefined) throw new Error("tsconfig.json cannot be read");
  const program = ts.createProgram(
    entries.map(([, file]) => join(root, file)),
    { ...config.options, noEmit: true },
  );
  const checker = program.getTypeChecker();
  const typeText = (type: ts.Type, at?: ts.Node): string => checker.typeToString(type, at, FLAGS);
  const sigText = (sig: ts.Signature): string => checker.signatureToString(sig, undefined, FLAGS);

  /** The members of `type` (those declared in `owner` only, when given: a class's own, not Error's). */
  function members(type: ts.Type, owner?: ts.Node): string[] {
    const out: string[] = [];
    for (const sig of type.getCallSignatures()) out.push(`  ${sigText(sig)}`);
    for (const sig of type.getConstructSignatures()) out.push(`  new ${sigText(sig)}`);
    for (const info of checker.getIndexInfosOfType(type)) out.push(`  [key: ${typeText(info.keyType)}]: ${typeText(info.type)}`);
    for (const prop of checker.getPropertiesOfType(type)) {
      const decl = prop.valueDeclaration ?? prop.declarations?.[0];
      const mods = decl === undefined ? 0 : ts.getCombinedModifierFlags(decl as ts.Declaration);
      if (mods & (ts.ModifierFlags.Private | ts.ModifierFlags.Protected) || prop.name.startsWith("#") || prop.name.startsWith("__@")) continue;
      if (owner !== undefined && !prop.declarations?.some((d) => d.parent === owner)) continue;
      const optional = prop.flags & ts.SymbolFlags.Optional ? "?" : "";
      const readonly = mods & ts.ModifierFlags.Readonly ? "readonly " : "";
      const t = decl === undefined ? checker.getTypeOfSymbol(prop) : checker.getTypeOfSymbolAtLocation(prop, decl);
      const sigs = prop.flags & ts.SymbolFlags.Method ? t.getCallSignatures() : [];
      if (sigs.length > 0) for (const sig of sigs) out.push(`  ${prop.name}${optional}${sigText(sig)}`);
      else out.push(`  ${readonly}${prop.name}${optional}: ${typeText(t)}`);
    }
    return out;
  }

  function describe(name: string, symbol: ts.Symbol, depth: number): string[] {
    const s = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
    const lines: string[] = [];
    const f = s.flags;
    const decl = s.valueDeclaration ?? s.declarations?.[0];
    if (f & ts.SymbolFlags.ValueModule && decl !== undefined && ts.isSourceFile(decl)) {
      lines.push(`namespace ${name}`);
      if (depth === 0) for (const e of [...checker.getExportsOfModule(s)].sort((a, b) => a.name.localeCompare(b.name))) lines.push(...describe(e.name, e, depth + 1).map((l) => `  ${l}`));
      return lines;
    }
    if (f & ts.SymbolFlags.Class) {
      const heritage = s.declarations?.find(ts.isClassDeclaration)?.heritageClauses?.map((h) => ` ${h.getText()}`).join("") ?? "";
      lines.push(`class ${name}${heritage}`);
      const staticType = checker.getTypeOfSymbol(s);
      lines.push(...members(staticType, decl).filter((l) => !/^ {2}prototype:/.test(l)).map((l) => (l.startsWith("  new ") ? l : `  static${l.slice(1)}`)));
      lines.push(...members(checker.getDeclaredTypeOfSymbol(s), decl));
      return lines;
    }
    if (f & ts.SymbolFlags.Enum) {
      lines.push(`enum ${name}`);
      for (const m of checker.getExportsOfModule(s)) lines.push(`  ${m.name} = ${JSON.stringify(checker.getConstantValue(m.valueDeclaration as ts.EnumMember))}`);
      return lines;
    }
    if (f & ts.SymbolFlags.Function) {
      for (const sig of checker.getTypeOfSymbol(s).getCallSignatures()) lines.push(`function ${name}${sigText(sig)}`);
    } else if (f & ts.SymbolFlags.Variable) {
      const t = checker.getTypeOfSymbol(s);
      // A long text constant (a picture) is a string to its users; its words are not its API.
      lines.push(`const ${name}: ${t.isStringLiteral() && t.value.length > 60 ? "string" : typeText(t)}`);
    }
    if (f & ts.SymbolFlags.Interface) {
      const t = checker.getDeclaredTypeOfSymbol(s);
      const params = (t as ts.InterfaceType).typeParameters;
      lines.push(`interface ${name}${params === undefined ? "" : `<${params.map((p) => typeText(p)).join(", ")}>`}`);
      lines.push(...members(t));
    } else if (f & ts.SymbolFlags.TypeAlias) {
      const d = s.declarations?.find(ts.isTypeAliasDeclaration);
      const params = d?.typeParameters?.map((p) => p.getText()).join(", ");
      const t = checker.getDeclaredTypeOfSymbol(s);
      lines.push(`type ${name}${params === undefined ? "" : `<${params}>`} = ${checker.typeToString(t, d, FLAGS | ts.TypeFormatFlags.InTypeAlias)}`);
    }
    if (lines.length === 0) lines.push(`${ts.SymbolFlags[f] ?? f} ${name}`);
    return lines;
  }

  const out: string[] = [
    "# The public API of stackwalk-emu: every entry point's exported names with their signatures.",
    "# Generated by `npm run api` (test/support/api-report.ts); `npm test` fails when it differs.",
  ];
  for (const [subpath, file] of entries) {
    const source = program.getSourceFile(join(root, file));
    if (source === undefined) throw new Error(`${file} is not in the program`);
    const module = checker.getSymbolAtLocation(source);
    const exported = module === undefined ? [] : [...checker.getExportsOfModule(module)].sort((a, b) => a.name.localeCompare(b.name));
    const name = subpath === "." ? "stackwalk-emu" : `stackwalk-emu/${subpath.slice(2)}`;
    out.push("", `## ${name} (${file}): ${exported.length} names`, "");
    for (const e of exported) out.push(...describe(e.name, e, 0));
  }
  // A type the checker can only name through its module prints as import("<path>"): the path is
  // made relative to the root, so the report is the same wherever the repository is checked out.
  const absolute = ts.sys.resolvePath(root).replace(/\/$/, "");
  return out.join("\n").replaceAll(`import("${absolute}/`, 'import("./') + "\n";
}

/** The number of names each entry exports, by subpath. */
export function exportCounts(report: string): Record<string, number> {
  return Object.fromEntries([...report.matchAll(/^## (\S+) \(.*\): (\d+) names$/gm)].map((m) => [m[1]!, Number(m[2])]));
}
