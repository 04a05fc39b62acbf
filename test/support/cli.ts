/** The command line run in this process with collected output: its exit code, stdout and stderr. */
import { run } from "../../src/cli/main.js";

/** Runs `stackwalk <argv>`; `errIsTty` makes stderr a terminal (the batch progress bar). */
export async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  return cliWith(argv);
}

/** {@link cli} with stderr a terminal or not. */
export async function cliWith(argv: string[], errIsTty = false): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await run(argv, { out: (t) => (out += t), err: (t) => (err += t), errIsTty });
  return { code, out, err };
}
