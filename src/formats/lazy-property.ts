/**
 * Properties whose value is made when first read: records a parse keeps in compact form become
 * objects only when someone looks at them.
 */

/**
 * Defines `key` on `target` as a property whose value `make` makes when it is first read; from
 * then on (or once assigned) it is a plain data property. Enumerable (the default), it is seen by
 * copies and comparisons of `target`, which read it; not enumerable, they neither see nor make it.
 */
export function lazyProperty<T extends object, K extends keyof T>(target: T, key: K, make: () => T[K], enumerable = true): void {
  const settle = (value: T[K]): void => {
    Object.defineProperty(target, key, { value, enumerable, configurable: true, writable: true });
  };
  Object.defineProperty(target, key, {
    enumerable,
    configurable: true,
    get(): T[K] {
      const value = make();
      settle(value);
      return value;
    },
    set: settle,
  });
}
