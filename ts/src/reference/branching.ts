/**
 * What a forked thread shares with its parent: the log prefix and the event ids (the TypeScript
 * twin of threads_cases/reference/branching.py).
 *
 * A fork used to deep-copy its parent's log and copy every id; a {@link SharedLog} instead keeps
 * a reference to the parent's log and the length of the shared prefix, and an {@link IdIndex} a
 * reference to the parent's ids with the cut-off positions that say which of them the fork sees.
 * Both rely on the parent's log being append-only. Chains of forks of forks are flattened once
 * they are {@link MAX_DEPTH} links deep, so a lookup costs at most that many steps.
 */

import { IdMap } from "../core/idtable.js";
import type { Envelope } from "../core/reducer.js";

/** The longest chain of id indexes before it is flattened. */
export const MAX_DEPTH = 8;

/** An append-only log: `base[0, n)` (shared, never changed) followed by its own events. */
export class SharedLog implements Iterable<Envelope> {
  private base: SharedLog | null = null;
  private n = 0;
  private tail: Envelope[];
  /** How many links lead to the root log. */
  depth = 0;

  constructor(events: readonly Envelope[] = []) {
    this.tail = [...events];
  }

  /** A new log whose first `n` events are this log's first `n` (shared, O(1) until flattened). */
  branch(n: number): SharedLog {
    let base: SharedLog = this;
    while (base.base !== null && n <= base.n) base = base.base; // the prefix lies wholly in the base
    if (base.depth + 1 > MAX_DEPTH) return new SharedLog(base.slice(0, n));
    const child = new SharedLog();
    child.base = base;
    child.n = n;
    child.depth = base.depth + 1;
    return child;
  }

  push(event: Envelope): void {
    this.tail.push(event);
  }

  get length(): number {
    return this.n + this.tail.length;
  }

  /** The event at `index` (negative counts from the end), or undefined. */
  at(index: number): Envelope | undefined {
    let i = index < 0 ? index + this.length : index;
    if (i < 0 || i >= this.length) return undefined;
    let log: SharedLog = this;
    while (i < log.n) log = log.base as SharedLog;
    return log.tail[i - log.n];
  }

  /** The events from `start` to `end` (not included) as a new array. */
  slice(start = 0, end: number = this.length): Envelope[] {
    const stop = Math.min(end, this.length);
    if (start >= this.n) return this.tail.slice(start - this.n, Math.max(start, stop) - this.n);
    const out: Envelope[] = [];
    for (let i = start; i < stop; i++) out.push(this.at(i) as Envelope);
    return out;
  }

  *[Symbol.iterator](): Iterator<Envelope> {
    if (this.base !== null) {
      let i = 0;
      for (const ev of this.base) {
        if (i++ >= this.n) break;
        yield ev;
      }
    }
    yield* this.tail;
  }
}

/**
 * The event ids a thread must not reuse, each with its position in the log. A fork takes every id
 * its parent had taken when the fork was made (`clash` cut-off: the parent's length then;
 * spec/thread-log.md 9.2), its parent's own and those the parent took from its own parent in turn,
 * and can find by id the events of the shared prefix (`found` cut-off: the prefix length). A look-up
 * honours every cut-off on the way (prefix positions are shared); a taken id only the cut-off of
 * the link below it (an ancestor's id past the prefix is at a position of the ancestor's log).
 */
export class IdIndex {
  /** Ids and positions in a table keyed by the ids' hashes: checking a new id reads no other id (core/idtable.ts). */
  private own: IdMap<number>;
  private parent: IdIndex | null = null;
  private cutClash = 0;
  private cutFound = 0;
  /** How many links lead to the root index. */
  depth = 0;

  constructor(positions: Iterable<[string, number]> = []) {
    this.own = new IdMap(positions);
  }

  /** A child index: the ids here at positions below `clash` are taken, those below `found` are in the child's log. */
  branch(clash: number, found: number): IdIndex {
    const child = new IdIndex();
    if (this.depth + 1 > MAX_DEPTH) {
      // flattened: the parent's ids past `found` stay (taken); the caller checks that the log
      // holds an id at the position this index gives
      child.own = new IdMap(this.entries(clash));
      return child;
    }
    child.parent = this;
    child.cutClash = clash;
    child.cutFound = found;
    child.depth = this.depth + 1;
    return child;
  }

  private *entries(cut: number): Generator<[string, number]> {
    if (this.parent !== null) yield* this.parent.entries(this.cutClash);
    for (const [id, p] of this.own.entries()) if (p < cut) yield [id, p];
  }

  add(id: string, position: number): void {
    this.own.set(id, position);
  }

  /** Whether `id` is taken. */
  has(id: string): boolean {
    return this.lookup(id, (_cut, index) => index.cutClash) !== undefined;
  }

  /** The position of `id` in this thread's log, if any (the caller checks the log holds it there). */
  position(id: string): number | undefined {
    return this.lookup(id, (cut, index) => Math.min(cut, index.cutFound));
  }

  /** Walk up the parents; `next` gives the cut-off below which the parent's ids count. */
  private lookup(id: string, next: (cut: number, index: IdIndex) => number): number | undefined {
    let index: IdIndex | null = this;
    let cut = Infinity;
    while (index !== null) {
      const p = index.own.get(id);
      if (p !== undefined && p < cut) return p;
      cut = next(cut, index);
      index = index.parent;
    }
    return undefined;
  }
}
