/**
 * Text put together only when it is read. Deep walks build a rule description per frame that
 * most callers never print, so a frame keeps a module-level formatting function and the values
 * it needs, and the string is made by `toString()` on first use.
 */

/** A string, or an object whose `toString()` gives one (see {@link LazyText}). */
export type RuleText = string | LazyText<never[]>;

/** Formats `args` with `render` when converted to a string. */
export class LazyText<A extends unknown[]> {
  constructor(
    private readonly render: (...args: A) => string,
    private readonly args: A,
  ) {}

  toString(): string {
    return this.render(...this.args);
  }
}

/** Builds a {@link LazyText}; `render` should be a module-level function, not a new closure per call. */
export function lazyText<A extends unknown[]>(render: (...args: A) => string, ...args: A): RuleText {
  return new LazyText(render, args) as unknown as RuleText;
}
