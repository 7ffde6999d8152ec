/** A live replay on the TypeScript runtime (spec/replay.md section 11, driver-protocol.md 2.5.1). */

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { basename, join } from "node:path";
import { describe, test } from "node:test";

import type { JsonObject, JsonValue } from "../src/index.js";
import { handleRequest } from "../src/protocol/driver.js";
import { conformanceCases } from "./helpers.js";

const cases = conformanceCases();
const casePath = (name: string): string => cases.find((p) => basename(p) === name) as string;
const replies = (name: string): JsonObject[] =>
  (JSON.parse(readFileSync(join(casePath(name), "model.json"), "utf8")) as { replies: JsonObject[] }).replies;

function recorded(name: string): (index: number) => JsonObject {
  const all = replies(name);
  return (index) => {
    const r = all[index] as JsonObject;
    return { reply: { message: r["message"] as JsonValue, stop_reason: r["stop_reason"] as JsonValue, usage: r["usage"] as JsonValue } };
  };
}

describe("a live replay", () => {
  test("answered with the recorded replies, it records what the replay records", () => {
    const asked: Array<[number, string]> = [];
    const answer = recorded("weather-stub");
    const live = handleRequest({ cmd: "replay", case: { path: casePath("weather-stub") }, live: {} }, "threads-ts", (index, _request, sha) => {
      asked.push([index, sha]);
      return answer(index);
    });
    const plain = handleRequest({ cmd: "replay", case: { path: casePath("weather-stub") } }, "threads-ts");
    assert.deepEqual(live["events"], plain["events"]);
    assert.deepEqual(
      asked.map(([, sha]) => sha),
      replies("weather-stub").map((r) => r["request_sha256"]),
    );
    assert.deepEqual(live["consumed"], { replies: 0, stubs: [true] });
  });

  test("--model replaces the agent's model in every request", () => {
    const models: JsonValue[] = [];
    const answer = recorded("weather-stub");
    const out = handleRequest({ cmd: "replay", case: { path: casePath("weather-stub") }, live: { model: "fake-2", system: "Be brief." } }, "threads-ts", (index, request) => {
      models.push(request["model"] as JsonValue, request["system"] as JsonValue);
      return answer(index);
    });
    assert.deepEqual(models, ["fake-2", "Be brief.", "fake-2", "Be brief."]);
    const requested = (out["events"] as JsonObject[]).filter((e) => e["type"] === "model_requested");
    assert.deepEqual(
      requested.map((e) => (e["data"] as JsonObject)["model"]),
      ["fake-2", "fake-2"],
    );
  });

  test("a stop answered by the harness ends the turn with its code and key", () => {
    const out = handleRequest({ cmd: "replay", case: { path: casePath("weather-stub") }, live: {} }, "threads-ts", (index) => ({
      stop: { code: "live_budget_exceeded", stop_key: `model:${index}`, message: "the live budget of 0 model call(s) is spent" },
    }));
    assert.deepEqual(out["stop"], { code: "live_budget_exceeded", stop_key: "model:0", message: "the live budget of 0 model call(s) is spent" });
    const last = (out["events"] as JsonObject[]).at(-1) as JsonObject;
    assert.equal(last["type"], "turn_failed");
  });

  test("a write tool no stub answers stops with write_not_allowed unless allowed", () => {
    const reply = {
      reply: {
        message: { role: "assistant", content: [{ type: "tool_use", id: "toolu_m", name: "send_email", input: { to: "bob@example.com", body: "hi" } }] },
        stop_reason: "tool_use",
        usage: { input_tokens: 1, output_tokens: 1 },
      },
    };
    const path = casePath("email-write-effect");
    const out = handleRequest({ cmd: "replay", case: { path }, live: { model: "fake-2" } }, "threads-ts", () => reply);
    assert.deepEqual(out["stop"], {
      code: "write_not_allowed",
      stop_key: "tool:send_email",
      message: 'the live turn called external tool "send_email", whose effect is write, with an input no stub answers',
    });
    const allowed = handleRequest({ cmd: "replay", case: { path }, live: { allow_write: ["send_email"] } }, "threads-ts", () => reply);
    assert.equal((allowed["stop"] as JsonObject)["code"], "missing_stub");
  });

  test("a live request without a client that answers model calls is refused", () => {
    assert.throws(() => handleRequest({ cmd: "replay", case: { path: casePath("weather-stub") }, live: {} }), /needs a client/);
  });
});
