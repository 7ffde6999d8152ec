/** Thread.events is a read-only view of the log (core/frozen.ts), and snapshot ids are looked up, not scanned. */

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";
import { inspect } from "node:util";

import { deepCopy } from "../src/core/reducer.js";
import { AgentSpec, BUILTIN_TOOLS } from "../src/reference/agent.js";
import { ScriptedModel, textReply, toolReply } from "../src/reference/model.js";
import { Clock } from "../src/reference/runtime.js";
import { FakeSandbox } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const agent = new AgentSpec("a", "model-x", "Be brief.", Object.values(BUILTIN_TOOLS));

function thread(): Thread {
  const t = Thread.create({ agent, sandbox: new FakeSandbox({ "notes.txt": "buy milk\n" }), threadId: "t-view", clock: new Clock(1_795_982_400_000, 7) });
  t.runTurn("What is on my list?", new ScriptedModel([toolReply([["tu_1", "read_file", { path: "notes.txt" }]]), textReply("Milk.")]));
  return t;
}

describe("Thread.events", () => {
  test("is an array of the log as it was when taken, read-only all the way down", () => {
    const t = thread();
    const view = t.events;
    const n = view.length;
    assert.ok(Array.isArray(view));
    assert.equal(view.at(-1)?.type, "turn_completed");
    assert.deepEqual(view.map((e) => e.seq), Array.from({ length: n }, (_, i) => i));
    assert.deepEqual([...view].map((e) => e.event_id), view.slice().map((e) => e.event_id));
    assert.equal(JSON.stringify(view), JSON.stringify(deepCopy([...view])));
    assert.deepEqual(Object.keys(view), Array.from({ length: n }, (_, i) => String(i)));
    assert.equal(inspect(view), inspect(deepCopy([...view])), "console.log shows the events");
    assert.throws(() => ((view as unknown as unknown[]).length = 0), TypeError);
    assert.throws(() => (view as unknown as unknown[]).push(1), TypeError);
    assert.throws(() => ((view as unknown as unknown[])[0] = 1), TypeError);
    assert.throws(() => ((view[0] as unknown as { seq: number }).seq = 9), TypeError);
    assert.throws(() => ((view.at(-1)?.data["usage"] as Record<string, number>)["input_tokens"] = 9), TypeError);
    t.snapshot();
    assert.equal(view.length, n, "a view keeps its length");
    assert.equal(t.events.length, n + 1);
    assert.equal(t.events[n]?.type, "snapshot_taken");
    assert.equal(t.events[n + 1], undefined);
    const copy = deepCopy(t.events[0]);
    (copy as { seq: number }).seq = 5; // a deep copy is mutable again
    assert.equal(t.events[0]?.seq, 0);
  });

  test("snapshot ids count up and restore refuses an unknown one", () => {
    const t = thread();
    assert.equal(t.snapshot(), "snap-1");
    assert.equal(t.snapshot(), "snap-2");
    t.restore("snap-1");
    assert.throws(() => t.restore("snap-9"), /unknown snapshot_id/);
  });
});
