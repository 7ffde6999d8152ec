/**
 * A map from id strings (turn ids, snapshot ids) whose lookups touch only a table of small
 * integers: the reducer's id checks (spec/reducer.md, "Cost").
 *
 * A JavaScript `Set<string>` compares a looked-up string with every key of its hash chain by
 * reading that key's string object; the keys are strings of events spread over the whole log
 * in memory, so on a long log each check of a new id costs a cache miss or two per chain entry,
 * and the cost per event grew with the log (1.6x at 160,000 turns against 10,000 in
 * benchmarks/scaling_ts.mjs). {@link IdMap} keeps a 30-bit FNV-1a hash of every id in an
 * open-addressing table (an `Int32Array` of hash and position pairs, linear probing, at most
 * half full) and reads an id string only when the hashes are equal: for a true repeat, or a
 * rare collision.
 *
 * The table holds no object per id: the ids and values sit in two plain arrays, and the
 * table is a typed array the garbage collector never walks. A `Map` from hash to a chain
 * object (the earlier form) kept about 90 bytes and one heap object per id, all retained for
 * the reducer's life, which every young-generation collection had to copy and promote.
 */

/** 30-bit FNV-1a of the UTF-16 code units of `id` (a small integer in V8). */
function hash30(id: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) h = Math.imul(h ^ id.charCodeAt(i), 0x01000193);
  return h & 0x3fffffff;
}

const EMPTY = 0; // a free slot; a used slot holds position + 1
const MIN_BITS = 4;

/** A map from id strings to values; `has`, `get` and `set` cost the id's length. */
export class IdMap<V> {
  private ids: string[] = [];
  private values: V[] = [];
  /** `2 << bits` int32s: slot i is (hash, position + 1) at 2i, 2i + 1. */
  private table = new Int32Array(2 << MIN_BITS);
  private bits = MIN_BITS;

  constructor(entries: Iterable<[string, V]> = []) {
    for (const [id, value] of entries) this.set(id, value);
  }

  /** The number of ids. */
  get size(): number {
    return this.ids.length;
  }

  /** Every id with its value, in the order first set. */
  *entries(): Generator<[string, V]> {
    for (let i = 0; i < this.ids.length; i++) yield [this.ids[i] as string, this.values[i] as V];
  }

  /** A copy that changes independently. */
  copy(): IdMap<V> {
    const out = new IdMap<V>();
    out.ids = this.ids.slice();
    out.values = this.values.slice();
    out.table = this.table.slice();
    out.bits = this.bits;
    return out;
  }

  /** The first slot to probe for `hash` (Fibonacci hashing: the top `bits` of hash * 2^32/phi). */
  private home(hash: number): number {
    return Math.imul(hash, 0x9e3779b9) >>> (32 - this.bits);
  }

  /** The position of `id` in `ids`, or -1 - (the free slot where it would go). */
  private find(id: string, hash: number): number {
    const t = this.table;
    const mask = (1 << this.bits) - 1;
    for (let i = this.home(hash); ; i = (i + 1) & mask) {
      const at = t[2 * i + 1] as number;
      if (at === EMPTY) return -1 - i;
      if (t[2 * i] === hash && this.ids[at - 1] === id) return at - 1;
    }
  }

  has(id: string): boolean {
    return this.find(id, hash30(id)) >= 0;
  }

  get(id: string): V | undefined {
    const at = this.find(id, hash30(id));
    return at >= 0 ? this.values[at] : undefined;
  }

  set(id: string, value: V): void {
    const hash = hash30(id);
    const at = this.find(id, hash);
    if (at >= 0) {
      this.values[at] = value;
      return;
    }
    this.ids.push(id);
    this.values.push(value);
    const slot = -1 - at;
    this.table[2 * slot] = hash;
    this.table[2 * slot + 1] = this.ids.length;
    if (2 * this.ids.length > 1 << this.bits) this.grow();
  }

  /** Double the table, placing every entry again from its stored hash (no id is read). */
  private grow(): void {
    const old = this.table;
    this.bits += 1;
    this.table = new Int32Array(2 << this.bits);
    const mask = (1 << this.bits) - 1;
    for (let j = 0; j < old.length; j += 2) {
      const hash = old[j] as number;
      const at = old[j + 1] as number;
      if (at === EMPTY) continue;
      let i = this.home(hash);
      while (this.table[2 * i + 1] !== EMPTY) i = (i + 1) & mask;
      this.table[2 * i] = hash;
      this.table[2 * i + 1] = at;
    }
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
