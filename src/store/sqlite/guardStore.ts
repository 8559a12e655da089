import { sqliteStoreFault } from './sqliteErrors.js';

/**
 * Wraps every method of a store part (dead letters, batch log, hunting reads...) so a SQLite
 * failure that is the store's (full disk, damaged file, read-only) leaves it as the typed store
 * fault of the one table in sqliteErrors, naming the file, whichever part met it. With
 * `stillThere` (a store opened for writes), each call's success is checked to have gone to the
 * file still at the path.
 */
export function guardPart<T extends object>(part: T, file: string, stillThere?: () => void): T {
  const map = (err: unknown): unknown => sqliteStoreFault(err, file) ?? err;
  // a write that went to a file no longer at the path (removed, replaced) is a fault, not a success
  const checked = <V>(v: V): V => (stillThere?.(), v);
  return new Proxy(part, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || prop === 'constructor') return value;
      return (...args: unknown[]): unknown => {
        let out: unknown;
        try {
          out = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (err) {
          throw map(err);
        }
        if (out instanceof Promise) return out.then(checked, (err: unknown) => Promise.reject(map(err)));
        // async iterators (dead-letter paging) fail on next()
        if (out && typeof out === 'object' && Symbol.asyncIterator in out) return guardPart(out, file, stillThere);
        return checked(out);
      };
    },
  });
}
