/** Shared snapshots restore exactly what deep copies would (mirrors tests/test_reducer_properties.py). */

import { strict as assert } from "node:assert";
import { describe, test } from "node:test";

import { reduceEnvelopes, type Envelope, type JsonObject } from "../src/index.js";

function log(specs: [string, JsonObject, string?][]): Envelope[] {
  let epoch = 0;
  return specs.map(([type, data, actor], seq) => {
    if (type === "restored") epoch += 1;
    return {
      event_id: `ev-${seq}`,
      thread_id: "th",
      seq,
      type,
      actor_kind: actor ?? "system",
      epoch,
      branch_id: "main",
      critical: false,
      ts: "2026-01-01T00:00:00.000Z",
      data,
    };
  });
}

const AGENT = { name: "a", model: "m", system: "s", tools: [] };

describe("reducer snapshots", () => {
  test("a snapshot between two merged tool results restores one result", () => {
    const call = (id: string): JsonObject => ({ turn_id: "t1", tool_use_id: id, name: "read_file", input: {}, kind: "sandbox", effect: "read" });
    const result = (id: string): JsonObject => ({ turn_id: "t1", tool_use_id: id, name: "read_file", content: "x", is_error: false });
    const state = reduceEnvelopes(
      log([
        ["thread_started", { agent: AGENT, metadata: {} }],
        ["user_message", { content: "go" }, "user"],
        ["turn_started", { turn_id: "t1" }],
        ["tool_called", call("a"), "model"],
        ["tool_called", call("b"), "model"],
        ["tool_result", result("a"), "tool"],
        ["snapshot_taken", { snapshot_id: "s" }],
        ["tool_result", result("b"), "tool"],
        ["restored", { snapshot_id: "s" }],
      ]),
    );
    const last = state.messages[state.messages.length - 1]?.content as JsonObject[];
    assert.deepEqual(last.map((b) => b["tool_use_id"]), ["a"]);
    assert.deepEqual(state.pending_tool_calls, ["b"]);
  });

  test("a turn id that ended after a snapshot may be used again after restoring it, not before", () => {
    const turn = (id: string): [string, JsonObject, string?][] => [
      ["user_message", { content: "go" }, "user"],
      ["turn_started", { turn_id: id }],
      ["turn_completed", { turn_id: id, stop_reason: "end_turn", usage: { input_tokens: 0, output_tokens: 0 } }],
    ];
    const ok = reduceEnvelopes(
      log([["thread_started", { agent: AGENT, metadata: {} }], ["snapshot_taken", { snapshot_id: "s" }], ...turn("t1"), ["restored", { snapshot_id: "s" }], ...turn("t1")]),
    );
    assert.equal(ok.turns.length, 1);
    assert.throws(() => reduceEnvelopes(log([["thread_started", { agent: AGENT, metadata: {} }], ...turn("t1"), ...turn("t1")])), /was used before/);
  });

  test("changes after a snapshot to the parts it shares (usage, pending calls, files, artifacts) do not reach it", () => {
    const sha = "a".repeat(64);
    const art = `sha256:${sha}`;
    const head: [string, JsonObject, string?][] = [
      ["thread_started", { agent: AGENT, metadata: {} }],
      ["artifact_added", { artifact_id: art, media_type: "text/plain", size: 1 }, "sandbox"],
      ["sandbox_read", { path: "a.txt", sha256: sha, size: 1, artifact: art }, "sandbox"],
      ["user_message", { content: "go" }, "user"],
      ["turn_started", { turn_id: "t1" }],
      ["tool_called", { turn_id: "t1", tool_use_id: "a", name: "read_file", input: {}, kind: "sandbox", effect: "read" }, "model"],
      ["snapshot_taken", { snapshot_id: "s1" }],
      ["snapshot_taken", { snapshot_id: "s2" }], // shares the same parts as s1
    ];
    const tail: [string, JsonObject, string?][] = [
      ["model_responded", { turn_id: "t1", message: { role: "assistant", content: [] }, stop_reason: "tool_use", usage: { input_tokens: 5, output_tokens: 7 } }, "model"],
      ["tool_called", { turn_id: "t1", tool_use_id: "b", name: "read_file", input: {}, kind: "sandbox", effect: "read" }, "model"],
      ["artifact_added", { artifact_id: "sha256:" + "b".repeat(64), media_type: "text/plain", size: 2 }, "sandbox"],
      ["sandbox_wrote", { path: "a.txt", sha256: null, size: 0, artifact: null }, "sandbox"],
      ["sandbox_wrote", { path: "b.txt", sha256: sha, size: 1, artifact: art }, "sandbox"],
      ["sandbox_read", { path: "c.txt", sha256: sha, size: 1, artifact: art }, "sandbox"],
      ["tool_result", { turn_id: "t1", tool_use_id: "a", name: "read_file", content: "x", is_error: false }, "tool"],
    ];
    const keys = ["status", "current_turn", "turns", "messages", "pending_tool_calls", "sandbox", "artifacts", "usage"] as const;
    const at = reduceEnvelopes(log(head));
    const expected = JSON.stringify(keys.map((k) => at[k]));
    // each change first after the snapshots (the one that copies the shared parts), then all of them twice
    const runs = [...tail.map((change) => [change]), [...tail, ["restored", { snapshot_id: "s1" }], ...tail]];
    for (const changes of runs) {
      for (const sid of ["s1", "s2"]) {
        const state = reduceEnvelopes(log([...head, ...changes, ["restored", { snapshot_id: sid }]] as [string, JsonObject, string?][]));
        assert.equal(JSON.stringify(keys.map((k) => state[k])), expected, `${changes[0]?.[0]} then restoring ${sid}`);
      }
    }
  });
});
