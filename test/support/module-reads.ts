/**
 * Counts the reads of a target's module-list entries, for tests that hold a path to linear work:
 * a search of the list per module reads n² / 2 entries where a walk through it reads n. The count
 * follows the list when the code puts a new one in its place (attaching a symbol file does).
 */
import type { Module } from "../../src/model/snapshot.js";

/** Counts, from now on, every read of an entry of `target.modules`, whatever list it holds. */
export function countModuleReads(target: { modules: Module[] }): { reads: number } {
  const counter = { reads: 0 };
  const counted = (list: Module[]): Module[] =>
    new Proxy(list, {
      get(inner, key, receiver) {
        if (typeof key === "string" && /^\d+$/.test(key)) counter.reads++;
        return Reflect.get(inner, key, receiver);
      },
    });
  let current = counted(target.modules);
  Object.defineProperty(target, "modules", {
    get: () => current,
    set: (list: Module[]) => void (current = counted(list)),
    enumerable: true,
    configurable: true,
  });
  return counter;
}
