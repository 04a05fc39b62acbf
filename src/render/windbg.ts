/**
 * WinDbg `kb`-style stacks: x86 `ChildEBP RetAddr  Args to Child` with three stack arguments;
 * x64 `Child-SP RetAddr Call Site` with the debugger's backquoted 64-bit addresses; IA-64 adds
 * the frame's backing-store pointer (Child-BSP). Module names lose their extension, as WinDbg's do.
 */
import type { Machine } from "../model/machine.js";
import type { Module } from "../model/snapshot.js";
import type { ThreadWalk } from "../walk/walk.js";
import { locate, locationText } from "./location.js";

const h32 = (v: bigint): string => (v & 0xffff_ffffn).toString(16).padStart(8, "0");
const h64 = (v: bigint): string => {
  const s = v.toString(16).padStart(16, "0");
  return `${s.slice(0, 8)}\`${s.slice(8)}`;
};

/** Renders walks the way WinDbg's `kb` prints them. */
export function renderWindbg(machine: Machine, modules: readonly Module[], walks: readonly ThreadWalk[]): string {
  const out: string[] = [];
  for (const { thread, walk } of walks) {
    if (walks.length > 1) out.push(`${thread.crashed ? "." : " "}  ${thread.id}  Id: ${thread.id}`);
    if (machine === "x86") {
      out.push("ChildEBP RetAddr  Args to Child              ");
      for (const f of walk.frames) {
        const site = locationText(locate(modules, f), `0x${h32(f.addrPC)}`, true);
        out.push(`${h32(f.addrFrame)} ${h32(f.addrReturn)} ${f.params.slice(0, 3).map(h32).join(" ")} ${site}`);
      }
    } else {
      out.push(machine === "x64" ? "Child-SP          RetAddr           Call Site" : "Child-SP          Child-BSP         RetAddr           Call Site");
      for (const f of walk.frames) {
        const site = locationText(locate(modules, f), `0x${h64(f.addrPC)}`, true);
        const bsp = machine === "ia64" ? `${h64(f.addrBStore)} ` : "";
        out.push(`${h64(f.addrStack)} ${bsp}${h64(f.addrReturn)} ${site}`);
      }
    }
    out.push("");
  }
  return out.join("\n");
}
