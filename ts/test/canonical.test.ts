/** Unit tests of the canonical (RFC 8785) writer. */

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";

import { CaseError, canonicalDocument, canonicalJsonl, canonicalLine, emitCanonicalLine, MAX_DEPTH, parseString } from "../src/index.js";

function unsafe(value: unknown): CaseError {
  try {
    canonicalLine(value);
  } catch (err) {
    if (err instanceof CaseError) return err;
    throw err;
  }
  throw new assert.AssertionError({ message: "expected unsafe_value" });
}

describe("canonicalLine", () => {
  test("sorts keys by UTF-16 code units, at every depth", () => {
    assert.equal(canonicalLine({ b: 1, 10: 2, 9: 3, a: { z: 1, y: [{ d: 1, c: 2 }] } }), '{"10":2,"9":3,"a":{"y":[{"c":2,"d":1}],"z":1},"b":1}');
    assert.equal(canonicalLine({ "\ue000": 1, "\u{1f602}": 2, "\uffff": 3 }), '{"\u{1f602}":2,"\ue000":1,"\uffff":3}');
  });

  test("writes numbers in ECMAScript form", () => {
    const cases: Array<[number, string]> = [
      [1e21, "1e+21"],
      [1e15, "1000000000000000"],
      [-1e21, "-1e+21"],
      [1e-7, "1e-7"],
      [0.000001, "0.000001"],
      [-0, "0"],
      [0.1, "0.1"],
      [5e-324, "5e-324"],
      [1.7976931348623157e308, "1.7976931348623157e+308"],
      [9007199254740991, "9007199254740991"],
      [333333333.33333329, "333333333.3333333"],
    ];
    for (const [n, text] of cases) assert.equal(canonicalLine(n), text);
    assert.equal(canonicalLine(12n), "12");
  });

  test("escapes only what JSON requires", () => {
    assert.equal(canonicalLine("\u0000\u0001\b\t\n\u000b\f\r\u001f\u007f"), '"\\u0000\\u0001\\b\\t\\n\\u000b\\f\\r\\u001f\u007f"');
    assert.equal(canonicalLine("a/b \u2028\u2029 é € 😂 \"q\" \\"), '"a/b \u2028\u2029 é € 😂 \\"q\\" \\\\"');
  });

  test("empty containers and literals", () => {
    assert.equal(canonicalLine({ a: {}, b: [], c: [null, true, false] }), '{"a":{},"b":[],"c":[null,true,false]}');
  });

  test("keeps a __proto__ key parsed as data", () => {
    assert.equal(canonicalLine(parseString('{"b":1,"__proto__":{"x":1}}')), '{"__proto__":{"x":1},"b":1}');
  });

  test("refuses values that are not JSON, with a pointer", () => {
    const cyclic: Record<string, unknown> = {};
    cyclic["self"] = cyclic;
    let deep: unknown = [];
    for (let k = 0; k < MAX_DEPTH; k++) deep = [deep];
    const cases: Array<[unknown, string]> = [
      [{ a: [1, Number.NaN] }, "/a/1"],
      [{ a: Infinity }, "/a"],
      [["\ud800"], "/0"],
      [{ "x\udc00": 1 }, "/x\udc00"],
      [{ a: undefined }, "/a"],
      [[() => 1], "/0"],
      [{ d: new Date(0) }, "/d"],
      [new Map(), ""],
      [Symbol("s"), ""],
      [2n ** 53n, ""],
      [[2 ** 53], "/0"],
      [{ n: -1e16 }, "/n"],
      [[9.99e20], "/0"],
      [{ "a/b": { "m~n": -(2n ** 60n) } }, "/a~1b/m~0n"],
      // spec/strict-json.md 4.1: the pointer names at most the first 16 steps, then "/..."
      [cyclic, "/self".repeat(16) + "/..."],
      [deep, "/0".repeat(16) + "/..."],
    ];
    for (const [value, pointer] of cases) {
      const err = unsafe(value);
      assert.equal(err.code, "unsafe_value");
      assert.equal(err.pointer, pointer, err.message);
    }
  });
});

describe("canonicalDocument", () => {
  test("indents by two spaces with a final newline", () => {
    assert.equal(canonicalDocument({ b: [1, { d: {}, c: [] }], a: "x" }), '{\n  "a": "x",\n  "b": [\n    1,\n    {\n      "c": [],\n      "d": {}\n    }\n  ]\n}\n');
    assert.equal(canonicalDocument({}), "{}\n");
    assert.equal(canonicalDocument([]), "[]\n");
    assert.equal(canonicalDocument("s"), '"s"\n');
  });

  test("refuses what canonicalLine refuses", () => {
    assert.throws(() => canonicalDocument({ a: [Number.NaN] }), (err: unknown) => err instanceof CaseError && err.pointer === "/a/0");
  });
});

describe("canonicalJsonl", () => {
  test("one canonical line per value", () => {
    assert.equal(canonicalJsonl([{ b: 1, a: 2 }, [3]]), '{"a":2,"b":1}\n[3]\n');
    assert.equal(canonicalJsonl([]), "");
  });
});

describe("emitCanonicalLine", () => {
  test("a small value is one piece, the canonical line", () => {
    const pieces: string[] = [];
    emitCanonicalLine({ b: [1, "x"], a: null }, (t) => pieces.push(t));
    assert.deepEqual(pieces, ['{"a":null,"b":[1,"x"]}']);
  });

  test("a value past 8 Mi characters comes in pieces that join to the canonical line", () => {
    const value = { state: { messages: Array.from({ length: 5 }, (_, i) => ({ content: String(i).repeat(2_000_000) })) } };
    const pieces: string[] = [];
    emitCanonicalLine(value, (t) => pieces.push(t), 1 << 20);
    assert.ok(pieces.length > 4, String(pieces.length));
    assert.equal(pieces.join(""), canonicalLine(value));
  });

  test("an unsafe value deep in a big answer emits nothing", () => {
    const value = { a: "x".repeat(9_000_000), z: [1, Number.NaN] };
    const pieces: string[] = [];
    assert.throws(() => emitCanonicalLine(value, (t) => pieces.push(t)), (err: unknown) => err instanceof CaseError && err.code === "unsafe_value");
    assert.deepEqual(pieces, []);
  });
});
