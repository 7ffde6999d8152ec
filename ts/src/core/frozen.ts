/**
 * Read-only JSON values and a read-only view of a log, handed out instead of deep copies
 * (mirrors threads_cases/core/frozen.py).
 *
 * {@link frozenCopy} gives a copy of a JSON value whose objects and arrays are frozen all the
 * way down: a change throws `TypeError` in strict code (every ES module) and is ignored
 * elsewhere. {@link eventsView} is what `Thread.events` returns: the events of the log at the
 * time of the call, copied and frozen one by one on first access, so `thread.events.at(-1)`
 * costs one event, not a copy of the log.
 */

import { deepCopy, type Envelope } from "./reducer.js";

/** A deep copy of a JSON value with every object and array frozen. */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(deepCopy(value));
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

const HINT = "a thread's events are read-only; deepCopy() them for a mutable copy";

function index(key: string | symbol, length: number): number | null {
  if (typeof key !== "string") return null;
  const i = Number(key);
  return Number.isInteger(i) && i >= 0 && String(i) === key && i < length ? i : null;
}

/**
 * The first `length` envelopes of the append-only `events`, read-only: an `Array` (so
 * `Array.isArray`, indexing, `length`, iteration and every method that does not change it
 * work) whose items are frozen copies, made on first access and kept in `frozen`, the cache
 * shared by the views of one log. Changing the view or an item throws `TypeError`.
 */
export function eventsView(events: { at(index: number): Envelope | undefined }, frozen: Envelope[], length: number): readonly Envelope[] {
  const at = (i: number): Envelope => {
    while (frozen.length <= i) frozen.push(frozenCopy(events.at(frozen.length) as Envelope));
    return frozen[i] as Envelope;
  };
  const refuse = (): never => {
    throw new TypeError(HINT);
  };
  // An empty array stands behind the view and the traps answer `length`: `new Array(length)`
  // wrote `length` holes on every `thread.events`, 50 us at 16,000 events, so reading the last
  // event once per turn was quadratic again. (A proxy may report another value for an
  // array's length: it is non-configurable but writable.)
  const target: Envelope[] = [];
  // node's console.log and util.inspect show a proxy's target: show the events
  Object.defineProperty(target, Symbol.for("nodejs.util.inspect.custom"), {
    value: (_depth: number, options: object, inspect: (value: unknown, options: object) => string) =>
      inspect(Array.from({ length }, (_, i) => at(i)), options),
  });
  return new Proxy<Envelope[]>(target, {
    get(target, key, receiver) {
      if (key === "length") return length;
      const i = index(key, length);
      return i === null ? Reflect.get(target, key, receiver) : at(i);
    },
    has(target, key) {
      return index(key, length) !== null || Reflect.has(target, key);
    },
    getOwnPropertyDescriptor(target, key) {
      if (key === "length") return { value: length, writable: true, enumerable: false, configurable: false };
      const i = index(key, length);
      if (i === null) return Reflect.getOwnPropertyDescriptor(target, key);
      return { value: at(i), writable: false, enumerable: true, configurable: true };
    },
    ownKeys(target) {
      return [...Array.from({ length }, (_, i) => String(i)), ...Reflect.ownKeys(target)];
    },
    set: refuse,
    deleteProperty: refuse,
    defineProperty: refuse,
    setPrototypeOf: refuse,
  });
}
