/**
 * A map from id strings (turn ids, snapshot ids) whose lookups touch only a table of small
 * integers: the reducer's id checks (spec/reducer.md, "Cost").
 *
 * A JavaScript `Set<string>` compares a looked-up string with every key of its hash chain by
 * reading that key's string object; the keys are strings of events spread over the whole log
 * in memory, so on a long log each check of a new id costs a cache miss or two per chain entry,
 * and the cost per event grew with the log (1.6x at 160,000 turns against 10,000 in
 * benchmarks/scaling_ts.mjs). {@link IdMap} keys a `Map` by a 30-bit FNV-1a hash of the id (a
 * small integer, compared in the table itself) and reads an id string only when the hashes
 * are equal: for a true repeat, or a rare collision (a chain of entries per hash).
 */

/** 30-bit FNV-1a of the UTF-16 code units of `id` (a small integer in V8). */
function hash30(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

interface Slot<V> {
  readonly id: string;
  readonly value: V;
  readonly next: Slot<V> | undefined;
}

/** A map from id strings to values; `has`, `get` and `set` cost the id's length. */
export class IdMap<V> {
  private slots = new Map<number, Slot<V>>();

  constructor(entries: Iterable<[string, V]> = []) {
    for (const [id, value] of entries) this.set(id, value);
  }

  /** A copy that changes independently (slots are never changed in place, so they are shared). */
  copy(): IdMap<V> {
    const out = new IdMap<V>();
    out.slots = new Map(this.slots);
    return out;
  }

  private slot(id: string, first: Slot<V> | undefined): Slot<V> | undefined {
    for (let s = first; s !== undefined; s = s.next) if (s.id === id) return s;
    return undefined;
  }

  has(id: string): boolean {
    return this.slot(id, this.slots.get(hash30(id))) !== undefined;
  }

  get(id: string): V | undefined {
    return this.slot(id, this.slots.get(hash30(id)))?.value;
  }

  set(id: string, value: V): void {
    const h = hash30(id);
    const first = this.slots.get(h);
    let next = first;
    if (this.slot(id, first) !== undefined) {
      next = undefined; // a new chain without the old entry (a copy may share the old one)
      for (let s = first; s !== undefined; s = s.next) if (s.id !== id) next = { id: s.id, value: s.value, next };
    }
    this.slots.set(h, { id, value, next });
  }
}

/** A set of id strings on an {@link IdMap}. */
export class IdSet {
  private map: IdMap<true>;

  constructor(ids: Iterable<string> = []) {
    this.map = new IdMap<true>();
    for (const id of ids) this.map.set(id, true);
  }

  /** A copy that changes independently. */
  copy(): IdSet {
    const out = new IdSet();
    out.map = this.map.copy();
    return out;
  }

  has(id: string): boolean {
    return this.map.has(id);
  }

  add(id: string): void {
    this.map.set(id, true);
  }
}
