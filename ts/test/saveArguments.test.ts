/**
 * saveCase and thread.saveCase with arguments a JavaScript caller can get wrong: each comes back
 * as a refusal (`invalid_request`, or `log_invalid` at the malformed event's index), never as a
 * TypeError (ts/README.md: refusals are returned, never thrown).
 */

import { strict as assert } from "node:assert";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { saveCase, type Envelope } from "../src/index.js";
import { AgentSpec, BUILTIN_TOOLS } from "../src/reference/agent.js";
import { ScriptedModel, textReply, toolReply } from "../src/reference/model.js";
import { Clock } from "../src/reference/runtime.js";
import { FakeSandbox } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const work = mkdtempSync(join(tmpdir(), "threads-cases-save-args-"));
after(() => rmSync(work, { recursive: true, force: true }));

function recorded(): { thread: Thread; at: string } {
  const agent = new AgentSpec("a", "model-x", "Be brief.", Object.values(BUILTIN_TOOLS));
  const thread = Thread.create({ agent, sandbox: new FakeSandbox({ "notes.txt": "buy milk\n" }), threadId: "t-args", clock: new Clock(1_795_982_400_000, 7) });
  const at = thread.events[0]?.event_id as string;
  thread.runTurn("What is on my list?", new ScriptedModel([toolReply([["tu_1", "read_file", { path: "notes.txt" }]]), textReply("Milk.")]));
  return { thread, at };
}

// any value: the point is what a caller without TypeScript's checks passes
const loose = saveCase as unknown as (events: unknown, name: unknown, options?: unknown) => ReturnType<typeof saveCase>;

describe("saveCase refuses bad arguments, never throws", () => {
  const { thread, at } = recorded();
  const dir = join(work, "cases");
  const good = (): Record<string, unknown> => ({ sandbox: thread.sandbox, store: thread.artifacts, at, dir });
  const events = (): Envelope[] => thread.events.map((e) => JSON.parse(JSON.stringify(e)) as Envelope);

  const cases: Array<[string, () => ReturnType<typeof saveCase>, string, RegExp, RegExp]> = [
    ["log undefined", () => loose(undefined, "x", good()), "invalid_request", /^the log must be an array of events, not undefined$/, /thread\.events/],
    ["log null", () => loose(null, "x", good()), "invalid_request", /^the log must be an array of events, not null$/, /thread\.events/],
    ["log a path string", () => loose("/nonexistent/thread.jsonl", "x", good()), "invalid_request", /not the string "\/nonexistent\/thread\.jsonl"$/, /readLog\(path\)/],
    ["no options object", () => loose(events(), "x"), "invalid_request", /^saveCase needs an options object, not undefined$/, /saveCase\(events, name, \{ sandbox, store, at, dir \}\)/],
    ["options null", () => loose(events(), "x", null), "invalid_request", /not null$/, /saveCase\(events, name/],
    ["store undefined", () => loose(events(), "x", { ...good(), store: undefined }), "invalid_request", /^store must be an ArtifactStore, not undefined$/, /thread\.artifacts/],
    ["sandbox undefined", () => loose(events(), "x", { ...good(), sandbox: undefined }), "invalid_request", /^sandbox must be the thread's sandbox, not undefined$/, /thread\.sandbox/],
    ["dir undefined", () => loose(events(), "x", { ...good(), dir: undefined }), "invalid_request", /^dir must be the folder to save the case in, not undefined$/, /as a string/],
    ["sandboxDir a number", () => loose(events(), "x", { ...good(), sandboxDir: 3 }), "invalid_request", /^sandboxDir must be a folder path, not number 3$/, /leave it out/],
  ];
  for (const [what, call, code, message, hint] of cases) {
    test(what, () => {
      const r = call();
      assert.ok(!r.ok, "saved, but the arguments are wrong");
      assert.equal(r.error.code, code);
      assert.match(r.error.message, message);
      assert.match(r.error.hint, hint);
      assert.ok(!r.error.hint.includes("\n"), "the hint is one line");
      assert.ok(!existsSync(join(dir, "x")));
    });
  }

  test("an event {foo: 1} inside the turn: log_invalid at its index", () => {
    const log = events() as unknown[];
    log.splice(3, 0, { foo: 1 });
    const r = loose(log, "x", good());
    assert.ok(!r.ok);
    assert.equal(r.error.code, "log_invalid");
    assert.equal(r.error.message, "event /3/event_id: event_id must be a string, not undefined");
    assert.match(r.error.hint, /array of canonical events/);
  });

  test("an event that is not an object, and one without data", () => {
    const log = events() as unknown[];
    log[2] = "line";
    let r = loose(log, "x", good());
    assert.ok(!r.ok);
    assert.equal(r.error.code, "log_invalid");
    assert.equal(r.error.message, "event /2: an event must be an object, not the string \"line\"");
    const noData = events() as unknown as Record<string, unknown>[];
    delete noData[1]!["data"];
    r = loose(noData, "x", good());
    assert.ok(!r.ok);
    assert.equal(r.error.message, "event /1/data: data must be an object, not undefined");
  });

  test("the earlier refusals keep their order: a bad name before a bad log", () => {
    const r = loose(undefined, "bad name!", good());
    assert.ok(!r.ok);
    assert.equal(r.error.code, "invalid_request");
    assert.match(r.error.message, /^case name/);
  });

  test("good arguments still save", () => {
    const r = saveCase(events(), "ok", { sandbox: thread.sandbox, store: thread.artifacts, at, dir });
    assert.ok(r.ok, r.ok ? "" : `${r.error.code}: ${r.error.message}`);
  });
});

describe("thread.saveCase refuses a missing request, never throws", () => {
  const { thread } = recorded();
  const loose = thread.saveCase.bind(thread) as (name: unknown, request?: unknown) => ReturnType<Thread["saveCase"]>;
  for (const [what, request] of [["no request", undefined], ["null", null], ["a string", "cases"]] as const) {
    test(what, () => {
      const r = loose("name", request);
      assert.ok(!r.ok);
      assert.equal(r.error.code, "invalid_request");
      assert.match(r.error.message, /^thread\.saveCase needs a request object, not /);
      assert.equal(r.error.hint, "call thread.saveCase(name, { at, dir }), with at the event_id of the fork point");
    });
  }
  test("a request without dir", () => {
    const r = loose("name", { at: thread.events[0]?.event_id });
    assert.ok(!r.ok);
    assert.equal(r.error.code, "invalid_request");
    assert.match(r.error.message, /^dir must be/);
  });
});
