/**
 * The data-only tests of drafted matchers (spec/conformance/drafts/turns.json, spec/case-format.md
 * 5.12), as tests/test_conformance_drafts.py runs them, and `thread.saveCase` end to end: without
 * matchers it drafts them as `threads-cases save` and Python's `save_case` do and says so in
 * `warnings`; `draft: false` saves none (issue 38).
 */

import { strict as assert } from "node:assert";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { drafted } from "../src/case/draft.js";
import { canonicalDocument } from "../src/core/canonical.js";
import type { Envelope } from "../src/core/reducer.js";
import { conformanceDir } from "../src/core/resources.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";
import { AgentSpec } from "../src/reference/agent.js";
import { ScriptedModel, textReply, toolReply } from "../src/reference/model.js";
import { Clock } from "../src/reference/runtime.js";
import { FakeSandbox } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const FILE = join(conformanceDir(), "drafts", "turns.json");
const tests = (parse(readFileSync(FILE)) as JsonObject)["tests"] as JsonObject[];
const work = mkdtempSync(join(tmpdir(), "threads-cases-drafts-"));
after(() => rmSync(work, { recursive: true, force: true }));

describe("drafts conformance", () => {
  for (const t of tests) {
    test(t["description"] as string, () => {
      const given = t["given"] as { must: JsonObject[]; expect: JsonObject[] };
      const draft = t["draft"] === null ? undefined : (t["draft"] as boolean);
      const [saved, warnings] = drafted(t["events"] as unknown as Envelope[], given, draft);
      assert.equal(canonicalDocument(saved as unknown as JsonObject), canonicalDocument(t["saved"]!));
      assert.deepEqual(warnings, (t["warnings"] as string[]).map((w) => w.replace("{skip}", "draft: false")));
    });
  }
});

function recorded(): { thread: Thread; at: string } {
  const agent = new AgentSpec("notes-bot", "model-x-1", "Be brief.");
  const thread = Thread.create({ agent, sandbox: new FakeSandbox({ "notes.txt": "buy milk" }), threadId: "thread-notes", clock: new Clock(1_700_000_000_000) });
  const at = thread.events[thread.events.length - 1]!.event_id;
  thread.runTurn("What is on my list?", new ScriptedModel([toolReply([["tu_1", "read_file", { path: "notes.txt" }]]), textReply("Buy milk.")]));
  return { thread, at };
}

describe("thread.saveCase without matchers", () => {
  test("drafts them as the command line does, and says so", () => {
    const { thread, at } = recorded();
    const r = thread.saveCase("drafted", { at, dir: work });
    assert.ok(r.ok, JSON.stringify(r));
    const meta = JSON.parse(readFileSync(join(work, "drafted", "case.json"), "utf8")) as JsonObject;
    assert.deepEqual(meta["expect"], {
      must: [
        { type: "tool_result", data: { name: "read_file", is_error: false } },
        { type: "turn_completed", data: { stop_reason: "end_turn" } },
      ],
      expect: [{ type: "tool_called", data: { name: "read_file" } }],
    });
    assert.deepEqual(r.warnings, ["drafted 2 must and 1 expect matcher(s) from the recorded turn (see them in case.json; draft: false to skip)"]);
  });

  test("draft: false saves none and warns; a draft that is not a boolean is refused", () => {
    const { thread, at } = recorded();
    const r = thread.saveCase("bare", { at, dir: work, draft: false });
    assert.ok(r.ok, JSON.stringify(r));
    const meta = JSON.parse(readFileSync(join(work, "bare", "case.json"), "utf8")) as JsonObject;
    assert.deepEqual(meta["expect"], { must: [], expect: [] });
    assert.ok(r.warnings.some((w) => w.includes("checks nothing")));
    const bad = thread.saveCase("bad", { at, dir: work, draft: "no" as unknown as boolean });
    assert.ok(!bad.ok && bad.error.code === "invalid_request", JSON.stringify(bad));
  });
});
