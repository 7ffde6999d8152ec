/** IdMap / IdSet (core/idtable.ts): the reducer's id checks, including ids whose hashes collide. */

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";

import { IdMap, IdSet } from "../src/core/idtable.js";

/** Two distinct ids with the same 30-bit hash: found among ~2^15 ids by the birthday bound. */
function collidingPair(): [string, string] {
  const seen = new IdMap<string>();
  for (let i = 0; ; i++) {
    const id = `turn-${i}`;
    let h = 0x811c9dc5; // the 30-bit FNV-1a of core/idtable.ts
    for (let j = 0; j < id.length; j++) h = Math.imul(h ^ id.charCodeAt(j), 0x01000193);
    const key = String(h & 0x3fffffff);
    const other = seen.get(key);
    if (other !== undefined) return [other, id];
    seen.set(key, id);
  }
}

describe("IdMap", () => {
  test("ids with the same hash are told apart, replaced and copied independently", () => {
    const [a, b] = collidingPair();
    const m = new IdMap<number>([[a, 1]]);
    assert.equal(m.has(b), false, "a colliding id that was never set is absent");
    m.set(b, 2);
    assert.deepEqual([m.get(a), m.get(b)], [1, 2]);
    const c = m.copy();
    c.set(a, 10);
    c.set("other", 3);
    assert.deepEqual([m.get(a), m.get(b), m.has("other")], [1, 2, false], "the original is unchanged");
    assert.deepEqual([c.get(a), c.get(b), c.get("other")], [10, 2, 3]);
    const s = new IdSet([a]);
    const t = s.copy();
    t.add(b);
    assert.deepEqual([s.has(a), s.has(b), t.has(a), t.has(b)], [true, false, true, true]);
  });

  test("a table grown past many doublings finds every id, and only those, with their last values", () => {
    const [a, b] = collidingPair();
    const m = new IdMap<number>();
    const n = 5000;
    for (let i = 0; i < n; i++) m.set(`s${i}`, i);
    m.set(a, -1);
    m.set(b, -2);
    for (let i = 0; i < n; i += 2) m.set(`s${i}`, i + 0.5); // replaced, not added
    assert.equal(m.size, n + 2);
    for (let i = 0; i < n; i++) assert.equal(m.get(`s${i}`), i % 2 === 0 ? i + 0.5 : i);
    assert.deepEqual([m.get(a), m.get(b), m.has(`s${n}`), m.has("s-1")], [-1, -2, false, false]);
    const c = m.copy();
    c.set(`s${n}`, n);
    assert.deepEqual([m.has(`s${n}`), c.get(`s${n}`), c.size, m.size], [false, n, n + 3, n + 2]);
  });
});
