/**
 * The data-only Thread API tests of spec/conformance/thread-api/ (spec/thread-log.md 9.2), as
 * tests/test_conformance_thread_api.py runs them: programs of turns, forks, snapshots and
 * restores recorded with a fixed thread id and clock give the same event ids and log bytes.
 */

import { strict as assert } from "node:assert";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { encodeLog } from "../src/core/log.js";
import { conformanceDir } from "../src/core/resources.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";
import { AgentSpec } from "../src/reference/agent.js";
import { ScriptedModel } from "../src/reference/model.js";
import { Clock } from "../src/reference/runtime.js";
import { FakeSandbox, sha256Hex } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const suite = parse(readFileSync(join(conformanceDir(), "thread-api", "ids.json"))) as JsonObject;
const KEYS = ["clock_start_ms", "description", "files", "ops", "thread_id", "threads"];

/** Record the test's ops (spec/conformance.md 2.9): the first thread by `create`, each fork appended. */
function runProgram(agent: JsonObject, t: JsonObject): Thread[] {
  const threads = [
    Thread.create({
      agent: AgentSpec.fromJson(agent),
      sandbox: new FakeSandbox(t["files"] as Record<string, string>),
      threadId: t["thread_id"] as string,
      clock: new Clock(t["clock_start_ms"] as number),
    }),
  ];
  for (const op of t["ops"] as JsonObject[]) {
    const thread = threads[op["thread"] as number] as Thread;
    if (op["op"] === "turn") thread.runTurn(op["text"] as string, new ScriptedModel(op["replies"] as JsonObject[]));
    else if (op["op"] === "fork") threads.push(thread.fork(op["at"] as string, { branchId: op["branch_id"] as string }));
    else if (op["op"] === "snapshot") assert.equal(thread.snapshot(), op["snapshot_id"]);
    else {
      assert.equal(op["op"], "restore");
      thread.restore(op["snapshot_id"] as string);
    }
  }
  return threads;
}

describe("thread API conformance", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-thread-api-"));
  after(() => rmSync(work, { recursive: true, force: true }));
  (suite["tests"] as JsonObject[]).forEach((t, i) => {
    test(t["description"] as string, () => {
      assert.deepEqual(Object.keys(t).sort(), KEYS);
      const threads = runProgram(suite["agent"] as JsonObject, t);
      const got = threads.map((th) => ({
        event_ids: th.events.map((e) => e.event_id),
        log_sha256: sha256Hex(encodeLog(th.events)),
      }));
      assert.deepEqual(got, t["threads"]);
      // writeLog writes those bytes (through a sibling file moved into place)
      const last = threads[threads.length - 1] as Thread;
      last.writeLog(join(work, `${i}.jsonl`));
      assert.equal(sha256Hex(readFileSync(join(work, `${i}.jsonl`))), got[got.length - 1]?.log_sha256);
      assert.deepEqual(readdirSync(work).filter((n) => n.startsWith(".")), []);
    });
  });
});
