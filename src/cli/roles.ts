/** `stackwalk roles`: which register plays each STACKFRAME role, per machine. */
import { isMachine, machineInfo, MACHINES, type Machine } from "../model/machine.js";
import { renderRoles } from "../render/text.js";
import { archWalker } from "../walk/registry.js";
import { EXIT, parseOptions, UsageError, type Io } from "./common.js";


/** Usage text of `roles`. */
export const ROLES_USAGE = `usage: stackwalk roles [--machine ${MACHINES.join("|")}] [--json]

Prints which register plays each STACKFRAME64 role (AddrPC, AddrFrame, AddrStack, AddrBStore,
...) on each machine, side by side, with a line on why. With --machine ia64 it also draws
Itanium's two stacks (memory stack and register backing store) and where AddrBStore points;
with --machine arm64, where the return address lives: the link register, then the frame record.
`;

/** Runs `roles`. */
export function rolesCommand(argv: string[], io: Io): number {
  const { values, positionals } = parseOptions(argv, {
    machine: { type: "string" },
    json: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  });
  if (values.help) {
    io.out(ROLES_USAGE);
    return EXIT.ok;
  }
  if (positionals.length > 0) throw new UsageError(`roles takes no positional arguments (got "${positionals[0]}")`);
  let machines: readonly Machine[] = MACHINES;
  if (values.machine !== undefined) {
    if (!isMachine(values.machine)) throw new UsageError(`--machine must be one of ${MACHINES.join(", ")}, not "${values.machine}"`);
    machines = [values.machine];
  }
  if (values.json) {
    const doc = machines.map((m) => {
      const info = machineInfo(m);
      return {
        machine: m,
        imageFileMachine: "0x" + info.imageFileMachine.toString(16).padStart(4, "0"),
        title: info.title,
        pointerSize: info.pointerSize,
        roles: info.roles.map((r) => ({ role: r.role, register: r.register, display: r.display, explanation: r.explanation })),
      };
    });
    io.out(JSON.stringify(doc, null, 2) + "\n");
  } else {
    io.out(renderRoles(machines));
    const picture = machines.length === 1 ? archWalker(machines[0]!).picture : undefined;
    if (picture !== undefined) io.out("\n" + picture);
  }
  return EXIT.ok;
}
