/** Where a frame's PC is: module, offset, function. Caller frames are looked up at return address − 1. */
import { moduleAt, symbolAt, type Module } from "../model/snapshot.js";
import type { Frame } from "../walk/frame.js";
import { lookupAddress } from "../walk/lookup-address.js";

/** A frame's place in the loaded modules; offsets are from the real PC, the lookup used PC − 1 for callers. */
export interface Location {
  module?: Module;
  moduleOffset?: bigint;
  function?: string;
  functionOffset?: bigint;
}

/** Finds the module and function of a frame. */
export function locate(modules: readonly Module[], frame: Frame): Location {
  const at = lookupAddress(frame.addrPC, frame.index > 0);
  const module = moduleAt(modules, at);
  if (module === undefined) return {};
  const loc: Location = { module, moduleOffset: frame.addrPC - module.base };
  const sym = symbolAt(module, at - module.base);
  if (sym !== undefined) {
    loc.function = sym.name;
    loc.functionOffset = frame.addrPC - module.base - sym.rva;
  }
  return loc;
}

/** `module!function+0xoff`, `module+0xoff` or the bare address, the way debuggers print a code address. */
export function locationText(loc: Location, pcText: string, stripExtension = false): string {
  if (loc.module === undefined) return pcText;
  const name = stripExtension ? loc.module.name.replace(/\.[^.\\/]*$/, "") : loc.module.name;
  if (loc.function !== undefined) return `${name}!${loc.function}+0x${loc.functionOffset!.toString(16)}`;
  return `${name}+0x${loc.moduleOffset!.toString(16)}`;
}
