/** spec/conformance/match/: one test per file, plus the refusals of spec/matchers.md 2.4. */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { CaseError, canonicalLine, conformanceDir, parse, parseString, type JsonObject, type JsonValue } from "../src/index.js";
import { differences, explain, findAll, matchInOrder, matches, nearest, validateMatcher, valuesEqual } from "../src/core/matchers.js";

const dir = join(conformanceDir(), "match");
const files = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();

describe("match conformance", () => {
  test("there are match cases", () => assert.ok(files.length >= 70, `${files.length} files`));
  for (const name of files) {
    test(name, () => {
      const c = parse(readFileSync(join(dir, name))) as JsonObject;
      const matcher = typeof c["matcher_text"] === "string" ? parseString(c["matcher_text"]) : c["matcher"];
      const event = (typeof c["event_text"] === "string" ? parseString(c["event_text"]) : c["event"]) as JsonObject;
      if (typeof c["matcher_text"] === "string") assert.ok(valuesEqual(matcher, c["matcher"]), "matcher_text equals matcher");
      if (typeof c["event_text"] === "string") assert.ok(valuesEqual(event, c["event"]), "event_text equals event");
      assert.equal(matches(matcher, event), c["matched"]);
      const diffs = differences(matcher, event);
      assert.equal(diffs.length === 0, c["matched"]);
      // the explanation is data too (spec/matchers.md 7.2, 10.1): byte for byte
      assert.equal(canonicalLine(diffs as unknown as JsonValue), canonicalLine(c["differences"] as JsonValue));
    });
  }
});

function refusal(fn: () => unknown): CaseError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CaseError) return err;
    throw err;
  }
  throw new assert.AssertionError({ message: "expected a refusal" });
}

describe("matcher validation", () => {
  const cases: Array<[unknown, string, RegExp]> = [
    [[], "/m", /not an array|, not an array/],
    [null, "/m", /not null/],
    [{ type: "x", sqe: 1 }, "/m/sqe", /unknown matcher key "sqe".*did you mean "seq"\?/],
    [{ type: "x", actorKind: "user" }, "/m/actorKind", /threads-py spelling "actor_kind" \("actorKind" is how threads-ts spells it\)/],
    [{ data: {} }, "/m", /needs a "type"/],
    [{ type: "" }, "/m/type", /non-empty string, not ""/],
    [{ type: "x", seq: -1 }, "/m/seq", /integer from 0 to 2\^53-1, not -1/],
    [{ type: "x", epoch: 1.5 }, "/m/epoch", /not 1.5/],
    [{ type: "x", seq: true }, "/m/seq", /not true/],
    [{ type: "x", critical: 1 }, "/m/critical", /true or false, not 1/],
    [{ type: "x", data: { a: [Number.NaN] } }, "/m/data/a/0", /a number is not finite/],
    [{ type: "x", data: { a: new Date(0) } }, "/m/data/a", /not a JSON value/],
  ];
  for (const [matcher, pointer, message] of cases) {
    test(`${JSON.stringify(matcher)} -> ${pointer}`, () => {
      const err = refusal(() => validateMatcher(matcher, "/m"));
      assert.equal(err.code, "invalid_request");
      assert.equal(err.pointer, pointer);
      assert.match(err.message, message);
    });
  }
  test("3.0 is the integer 3", () => assert.ok(matches({ type: "x", seq: 3.0 }, { type: "x", seq: 3 })));
});

describe("lists, nearest and explanations", () => {
  const events = [
    { seq: 0, type: "user_message", event_id: "e0", data: { content: "hi" } },
    { seq: 1, type: "tool_result", event_id: "e1", data: { is_error: true, name: "a" } },
    { seq: 2, type: "tool_result", event_id: "e2", data: { is_error: false, name: "b" } },
  ];
  test("findAll and matchInOrder", () => {
    assert.deepEqual(findAll([{ type: "tool_result" }, { type: "nope" }], events), [1, null]);
    assert.deepEqual(matchInOrder([{ type: "tool_result" }, { type: "user_message" }], events), { matched: false, count: 1 });
    assert.deepEqual(matchInOrder([], events), { matched: true, count: 0 });
    assert.equal(refusal(() => findAll([{ type: "x" }, { type: "x", seq: "1" }], events)).pointer, "/1/seq");
  });
  test("nearest prefers the type, then fewer differences", () => {
    const found = nearest({ type: "tool_result", data: { is_error: false, name: "a" } }, events);
    assert.equal(found?.index, 1);
    assert.equal(nearest({ type: "x" }, []), null);
  });
  test("explain", () => {
    assert.equal(
      explain({ type: "tool_result", data: { is_error: false, name: "c" } }, events),
      'must {"data":{"is_error":false,"name":"c"},"type":"tool_result"} matched no event; nearest is seq 2 tool_result (e2): /data/name expected "c", got "b"',
    );
    assert.equal(explain({ type: "x" }, [], "expect"), 'expect {"type":"x"} matched no event; the log has no events');
    assert.equal(explain({ type: "user_message" }, events), 'must {"type":"user_message"} matches seq 0 user_message (e0)');
  });
});
