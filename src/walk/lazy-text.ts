/**
 * Text put together only when it is read. Deep walks build a rule description per frame that
 * most callers never print, so a frame keeps a module-level formatting function and the values
 * it needs (up to six, held in fields: one small object per frame), and the string is made by
 * `toString()` on first use.
 */

/** A string, or an object whose `toString()` gives one (see {@link lazyText}). */
export type RuleText = string | { toString(): string };

class LazyText {
  constructor(
    private readonly render: (...args: never[]) => string,
    private readonly a: unknown,
    private readonly b: unknown,
    private readonly c: unknown,
    private readonly d: unknown,
    private readonly e: unknown,
    private readonly f: unknown,
  ) {}

  toString(): string {
    return (this.render as (...args: unknown[]) => string)(this.a, this.b, this.c, this.d, this.e, this.f);
  }
}

/** Text made by `render(a, ...)` when first read; `render` should be a module-level function, not a new closure per call. */
export function lazyText<A>(render: (a: A) => string, a: A): RuleText;
export function lazyText<A, B>(render: (a: A, b: B) => string, a: A, b: B): RuleText;
export function lazyText<A, B, C>(render: (a: A, b: B, c: C) => string, a: A, b: B, c: C): RuleText;
export function lazyText<A, B, C, D>(render: (a: A, b: B, c: C, d: D) => string, a: A, b: B, c: C, d: D): RuleText;
export function lazyText<A, B, C, D, E>(render: (a: A, b: B, c: C, d: D, e: E) => string, a: A, b: B, c: C, d: D, e: E): RuleText;
export function lazyText<A, B, C, D, E, F>(render: (a: A, b: B, c: C, d: D, e: E, f: F) => string, a: A, b: B, c: C, d: D, e: E, f: F): RuleText;
export function lazyText(render: (...args: never[]) => string, a?: unknown, b?: unknown, c?: unknown, d?: unknown, e?: unknown, f?: unknown): RuleText {
  return new LazyText(render, a, b, c, d, e, f);
}
