/**
 * Where state lives (docs/architecture.md, "The cache"): what a walk learns is in the caller's
 * UnwindCache, rules never change once made, and the only module-level tables are the four memos
 * of pure functions the architecture names.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseJsonInput } from "../../src/formats/input.js";
import { UnwindCache } from "../../src/unwind/cache.js";
import type { FrameSite } from "../../src/unwind/step.js";
import type { ArchStrategy } from "../../src/arch/rule.js";
import { strategiesFor } from "../../src/walk/registry.js";
import { walkThread } from "../../src/walk/walk.js";

function files(dir: string, ending: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? files(p, ending) : p.endsWith(ending) && !p.endsWith(".d.ts") ? [p] : [];
  });
}

/**
 * Freezes a rule and the plain objects it holds, one level down (what a run could write into: its
 * plan, its steps, its inputs), leaving what it merely refers to (modules, memory, tables) alone.
 * A module is strict code: a run that writes into a frozen rule throws.
 */
function freeze<T>(rule: T): T {
  if (typeof rule !== "object" || rule === null) return rule;
  for (const value of Object.values(rule)) {
    if (typeof value === "object" && value !== null && Object.getPrototypeOf(value) === Object.prototype && !("base" in value && "size" in value)) Object.freeze(value);
  }
  return Object.freeze(rule);
}

describe("state", () => {
  it("module-level tables under src/ are the four memos the architecture names (the playground's page aside)", () => {
    const found: string[] = [];
    for (const file of files("src", ".ts")) {
      if (file.startsWith(join("src", "site"))) continue;
      const text = readFileSync(file, "utf8");
      // Tables filled as the program runs (a table made whole from constants is a constant).
      for (const m of text.matchAll(/^(?:export )?(?:const|let) (\w+)(?:: [^=]+)? = new (?:Weak)?Map(?:<[^(]*>)?\(\)/gm)) found.push(`${file}: ${m[1]}`);
      for (const m of text.matchAll(/^(?:const|let) (\w+)(?:: [^=]+)? = new (?:Uint8Array|Uint32Array|Array<bigint>)\(/gm)) found.push(`${file}: ${m[1]}`);
    }
    expect(found.sort()).toEqual(
      [
        `${join("src", "memory", "bigint-cache.ts")}: highs`,
        `${join("src", "memory", "bigint-cache.ts")}: lows`,
        `${join("src", "memory", "bigint-cache.ts")}: values`,
        `${join("src", "memory", "bigint-cache.ts")}: victims`,
        `${join("src", "model", "context.ts")}: REGISTER_FIELDS`,
        `${join("src", "model", "snapshot.ts")}: moduleIndexes`,
        `${join("src", "render", "windbg.ts")}: POSITIONS`,
        `${join("src", "unwind", "symbolize.ts")}: indexes`,
      ].sort(),
    );
  });

  it("rules are never changed once made: every vector walks to the same frames with each rule frozen as its strategy makes it", () => {
    let walks = 0;
    let rules = 0;
    for (const file of files("vectors", ".json")) {
      const text = readFileSync(file, "utf8");
      if (!text.includes('"stackwalk-vector/1"')) continue;
      const input = parseJsonInput(text, file);
      if (input.kind !== "vector") continue;
      const v = input.vector;
      for (const walker of ["auto", "breakpad"] as const) {
        let strategies: readonly ArchStrategy[];
        try {
          strategies = strategiesFor(v.machine, walker, v.os);
        } catch {
          continue;
        }
        const frozen = strategies.map((s) => ({
          ...s,
          ...(s.fixed === undefined ? {} : { fixed: freeze(s.fixed) }),
          ruleFor: (site: FrameSite) => {
            const rule = s.ruleFor(site);
            if (rule !== undefined) rules++;
            return rule === undefined ? undefined : freeze(rule);
          },
        })) as readonly ArchStrategy[];
        for (const thread of v.threads) {
          const plain = walkThread(v, thread, { walker });
          const cache = new UnwindCache();
          // Twice with one cache: the second walk runs the rules the first made and cached.
          for (let round = 0; round < 2; round++) {
            const walk = walkThread(v, thread, { walker, strategies: frozen, cache });
            expect(walk.frames.map((f) => [f.addrPC, f.addrStack, f.trust]), `${file} ${walker}`).toEqual(plain.frames.map((f) => [f.addrPC, f.addrStack, f.trust]));
            walks++;
          }
        }
      }
    }
    expect(walks).toBeGreaterThan(400);
    expect(rules).toBeGreaterThan(1000);
  });
});
