/**
 * Output made piece by piece: a renderer pushes text as it makes it, and the text goes to the
 * caller's `write` in pieces of about 64 Ki characters, so that the report of a 100,000-frame
 * stack is never held as one string.
 */

/** Text in pieces of about this many characters. */
const CHUNK = 1 << 16;

/** Where a renderer puts its text: `push` as it goes, `end` once at the end. */
export interface ChunkedOutput {
  push(text: string): void;
  end(): void;
}

/** Gathers pushed text and hands it to `write` in pieces of about 64 Ki characters; `end` writes the rest. */
export function chunked(write: (text: string) => void): ChunkedOutput {
  let held = "";
  return {
    push(text) {
      held += text;
      if (held.length >= CHUNK) {
        write(held);
        held = "";
      }
    },
    end() {
      if (held !== "") write(held);
      held = "";
    },
  };
}

/** Collects what a renderer writes through `write` into one string. */
export function collect(render: (write: (text: string) => void) => void): string {
  const parts: string[] = [];
  render((text) => parts.push(text));
  return parts.join("");
}
