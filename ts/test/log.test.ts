/** Unit tests of the log reader, dialects and the reducer. */

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import {
  CaseError,
  Reducer,
  deepCopy,
  dialectNames,
  encodeLog,
  getDialect,
  readLog,
  reduce,
  specDir,
  type Envelope,
  type JsonObject,
} from "../src/index.js";

const SAMPLE = join(specDir(), "..", "tests", "data", "sample-thread.jsonl"); // moved from examples/
const enc = new TextEncoder();

function refusal(fn: () => unknown): CaseError {
  try {
    fn();
  } catch (err) {
    if (err instanceof CaseError) return err;
    throw err;
  }
  throw new assert.AssertionError({ message: "expected a CaseError" });
}

let seq = 0;
function ev(type: string, data: JsonObject, extra: Partial<Envelope> = {}): Envelope {
  const n = seq++;
  return {
    actor_kind: "system",
    branch_id: "main",
    critical: false,
    data,
    epoch: 0,
    event_id: `e${n}`,
    seq: n,
    thread_id: "th",
    ts: "2026-01-01T00:00:00.000Z",
    type,
    ...extra,
  };
}

function start(): Envelope[] {
  seq = 0;
  return [ev("thread_started", { agent: { model: "m", name: "a", system: "s", tools: [] }, metadata: {} })];
}

describe("log reader", () => {
  test("the sample log reduces to an idle thread", () => {
    const state = reduce(SAMPLE);
    assert.equal(state.status, "idle");
    assert.equal(state.turns[0]?.status, "completed");
    assert.deepStrictEqual(state.sandbox.files, { "a.txt": "a".repeat(64) });
    assert.deepStrictEqual(reduce(readFileSync(SAMPLE)), state);
  });

  test("a log encoded in threads-ts reads back to the same envelopes", () => {
    const events = [...readLog(SAMPLE)];
    const text = encodeLog(events, { dialect: "threads-ts" });
    assert.match(text, /"eventId":"e0"/);
    assert.deepStrictEqual([...readLog(enc.encode(text), { dialect: "threads-ts" })], events);
    const wrong = refusal(() => [...readLog(enc.encode(text))]);
    assert.equal(wrong.code, "log_invalid");
    assert.equal(wrong.line, 1);
    const canonicalAsTs = refusal(() => [...readLog(SAMPLE, { dialect: "threads-ts" })]);
    assert.deepStrictEqual([canonicalAsTs.line, canonicalAsTs.pointer], [1, "/actor_kind"]);
  });

  test("a repeated event_id is reported at the line of the repeat", () => {
    const events = start();
    events.push(ev("user_message", { content: "a" }), ev("user_message", { content: "b" }, { event_id: "e1" }));
    events.push(ev("x_note", {}, { actor_kind: "system" }), ev("user_message", { content: "c" }));
    const bytes = enc.encode(encodeLog(events));
    const read: string[] = [];
    const err = refusal(() => {
      for (const e of readLog(bytes, { name: "log.jsonl" })) read.push(e.event_id);
    });
    assert.equal(read.length, 2);
    assert.deepStrictEqual([err.file, err.line, err.pointer], ["log.jsonl", 3, "/event_id"]);
    const mem = refusal(() => reduce(events as unknown as JsonObject[]));
    assert.deepStrictEqual([mem.file, mem.pointer], ["event 2", "/event_id"]);
  });

  test("schema, thread_id and seq problems name the line and pointer", () => {
    const events = start();
    events.push(ev("user_message", { content: 3 }));
    let err = refusal(() => reduce(enc.encode(encodeLog(events))));
    assert.deepStrictEqual([err.line, err.pointer], [2, "/data/content"]);
    events.pop();
    events.push(ev("user_message", { content: "x" }, { thread_id: "other" }));
    err = refusal(() => reduce(enc.encode(encodeLog(events))));
    assert.deepStrictEqual([err.line, err.pointer], [2, "/thread_id"]);
    events.pop();
    events.push(ev("user_message", { content: "x" }, { seq: 5 }));
    err = refusal(() => reduce(enc.encode(encodeLog(events))));
    assert.deepStrictEqual([err.line, err.pointer], [2, "/seq"]);
    assert.equal(refusal(() => reduce(enc.encode("[1]\n"))).pointer, "");
  });

  test("in-memory events that a file could not hold are refused as log_invalid", () => {
    const events = start() as unknown as JsonObject[];
    (events[0]?.["data"] as JsonObject)["metadata"] = { n: Number.NaN };
    const err = refusal(() => reduce(events));
    assert.deepStrictEqual([err.code, err.file, err.pointer], ["log_invalid", "event 0", "/data/metadata/n"]);
  });

  test("dialects", () => {
    assert.deepStrictEqual(dialectNames().slice(0, 2), ["threads-py", "threads-ts"]);
    assert.equal(refusal(() => getDialect("threads-go")).code, "dialect_unknown");
    assert.equal(refusal(() => getDialect("threads-go")).exitStatus, 2);
    const ts = getDialect("threads-ts");
    const state = ts.encodeState(reduce(SAMPLE) as unknown as JsonObject);
    assert.ok("lastSeq" in state && !("last_seq" in state));
    assert.deepStrictEqual(ts.decodeState(state), reduce(SAMPLE));
    assert.equal(refusal(() => ts.decodeState({ last_seq: 1 })).pointer, "/last_seq");
  });
});

describe("reducer", () => {
  test("a refused event leaves the state as it was", () => {
    const events = start();
    events.push(ev("turn_started", { turn_id: "t1" }));
    events.push(ev("tool_called", { effect: "read", input: {}, kind: "sandbox", name: "r", tool_use_id: "c1", turn_id: "t1" }));
    const r = new Reducer();
    for (const e of events) r.apply(e);
    const before = deepCopy(r.state);
    const bad = [
      ev("tool_result", { content: "x", is_error: false, name: "r", tool_use_id: "nope", turn_id: "t1" }),
      { ...ev("turn_completed", { stop_reason: "end", turn_id: "t1", usage: { input_tokens: 1, output_tokens: 1 } }), seq: 3 },
      { ...ev("snapshot_taken", { snapshot_id: "s" }), seq: 3, epoch: 1 },
      { ...ev("restored", { snapshot_id: "s" }), seq: 3, epoch: 1 },
      { ...ev("user_message", { content: "x" }), seq: 3 },
    ];
    for (const e of bad) {
      assert.equal(refusal(() => r.apply(e)).code, "log_invalid");
      assert.deepStrictEqual(r.state, before);
    }
  });

  test("a reducer resumed from a state goes on from it", () => {
    const events = start();
    events.push(ev("user_message", { content: "a" }));
    const r = new Reducer();
    for (const e of events) r.apply(e);
    const resumed = new Reducer(r.state);
    assert.deepStrictEqual(resumed.state, r.state);
    assert.notEqual(resumed.state, r.state);
    resumed.apply(ev("user_message", { content: "b" }));
    assert.equal(resumed.state.messages.length, 2);
    assert.equal(r.state.messages.length, 1);
    assert.equal(refusal(() => resumed.apply(ev("restored", { snapshot_id: "s" }, { epoch: 1 }))).pointer, "/data/snapshot_id");
  });

  test("values taken from events are copied", () => {
    const events = start();
    const content = [{ type: "text", text: "a" }];
    events.push(ev("user_message", { content }));
    const r = new Reducer();
    for (const e of events) r.apply(e);
    content.push({ type: "text", text: "b" });
    assert.deepStrictEqual(r.state.messages[0]?.content, [{ type: "text", text: "a" }]);
  });
});
