/** Thread.saveCase: a saved case, its atomic write, and every refusal code. */

import { strict as assert } from "node:assert";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { AgentSpec, BUILTIN_TOOLS, type ExternalHandler, type ToolSpec } from "../src/reference/agent.js";
import type { JsonObject } from "../src/index.js";
import { checkCaseName, readCaseFiles } from "../src/case/case.js";
import { CaseError } from "../src/core/errors.js";
import { ScriptedModel, textReply, toolReply } from "../src/reference/model.js";
import { replayCase } from "../src/reference/replay.js";
import { Clock } from "../src/reference/runtime.js";
import { DirectorySandbox, FakeSandbox } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const work = mkdtempSync(join(tmpdir(), "threads-cases-save-"));
after(() => rmSync(work, { recursive: true, force: true }));

const weather: ToolSpec = {
  name: "get_weather",
  description: "Current weather for a city.",
  input_schema: { type: "object" },
  kind: "external",
  effect: "read",
  handler: ((input: JsonObject) => `${String(input["city"])}: 4°C`) as ExternalHandler,
};
const agent = new AgentSpec("a", "model-x", "Be brief.", [...Object.values(BUILTIN_TOOLS), weather]);

function recorded(): { thread: Thread; at: string } {
  const thread = Thread.create({ agent, sandbox: new FakeSandbox({ "notes.txt": "buy milk\n" }), threadId: "t-save", clock: new Clock(1_795_982_400_000, 7) });
  const at = thread.events[0]?.event_id as string;
  thread.runTurn("What is on my list?", new ScriptedModel([toolReply([["tu_1", "read_file", { path: "notes.txt" }]]), textReply("Milk.")]));
  return { thread, at };
}

describe("saveCase", () => {
  test("saves a case that replays with no stop; unchanged, case_exists, replaced", () => {
    const { thread, at } = recorded();
    const dir = join(work, "ok");
    const expect = { must: [{ type: "sandbox_read", data: { path: "notes.txt" } }], expect: [] };
    const r = thread.saveCase("reads-notes", { expect, at, dir });
    assert.ok(r.ok, JSON.stringify(r));
    assert.equal(r.value.portable, true);
    assert.match(r.value.fingerprint, /^sha256:[0-9a-f]{64}$/);
    assert.equal(r.value.outcome, "created");
    assert.ok([...readCaseFiles(r.value.path).keys()].some((k) => k.startsWith("artifacts/")), "the read file's bytes are saved");
    const out = replayCase(r.value.path);
    assert.equal(out.stop, null);
    assert.equal(out.consumed.replies, 2);
    const again = thread.saveCase("reads-notes", { expect, at, dir });
    assert.ok(again.ok && again.value.outcome === "unchanged");
    const other = thread.saveCase("reads-notes", { expect: { must: [], expect: [] }, at, dir });
    assert.ok(!other.ok && other.error.code === "case_exists", JSON.stringify(other));
    const replaced = thread.saveCase("reads-notes", { expect: { must: [], expect: [] }, at, dir, overwrite: true });
    assert.ok(replaced.ok && replaced.value.outcome === "replaced");
    assert.deepEqual(readdirSync(dir), ["reads-notes"], "no temporary folders are left");
  });

  const refusals: Array<[string, () => ReturnType<Thread["saveCase"]>]> = [];
  const { thread, at } = recorded();
  const dir = join(work, "refused");
  const add = (code: string, fn: () => ReturnType<Thread["saveCase"]>): void => {
    refusals.push([code, fn]);
  };
  add("invalid_request", () => thread.saveCase("bad name!", { at, dir }));
  add("invalid_request", () => thread.saveCase("CON", { at, dir }));
  add("invalid_request", () => thread.saveCase("nul.txt", { at, dir }));
  add("invalid_request", () => thread.saveCase(".hidden", { at, dir }));
  add("invalid_request", () => thread.saveCase("x", { at, dir, externalEffects: "maybe" }));
  add("invalid_request", () => thread.saveCase("x", { at: "", dir }));
  add("invalid_request", () => thread.saveCase("x", { at, dir, expect: { must: [{ type: "x", sqe: 1 }] } }));
  add("invalid_request", () => thread.saveCase("x", { at, dir, expect: { must: [{ type: "nope" }] } }));
  add("invalid_request", () => thread.saveCase("x", { at, dir, dialects: ["threads-py", "no-such"] }));
  add("event_not_found", () => thread.saveCase("x", { at: "nope", dir }));
  add("no_turn_after_fork", () => thread.saveCase("x", { at: thread.events.at(-1)?.event_id as string, dir }));
  add("egress_policy_unsupported", () => {
    const t = Thread.create({ agent, sandbox: new DirectorySandbox(join(work, "real")) });
    t.runTurn("hi", new ScriptedModel([textReply("hello")]));
    return t.saveCase("x", { at: t.events[0]?.event_id as string, dir });
  });
  add("turn_incomplete", () => {
    const events = thread.events.slice(0, 4); // thread_started, user_message, turn_started, model_requested
    return Thread.open(events).saveCase("x", { at: events[0]?.event_id as string, dir });
  });
  add("turn_incomplete", () => {
    const events = thread.events.slice(0, 2); // a user_message that starts no turn
    return Thread.open(events).saveCase("x", { at: events[0]?.event_id as string, dir });
  });
  add("unsafe_value", () => {
    const t = Thread.create({ agent });
    const outcome = t.runTurn("hi", new ScriptedModel([{ ...textReply("x"), message: { role: "assistant", content: [{ type: "text", text: "x", n: 1e16 }] } }]));
    assert.equal(outcome.stop?.code, "unsafe_value");
    assert.equal(outcome.stop?.stop_key, "model:0");
    return t.saveCase("x", { at: t.events[0]?.event_id as string, dir });
  });
  add("invalid_request", () => {
    const t = Thread.create({ agent });
    t.runTurn("weather?", new ScriptedModel([toolReply([["tu_1", "get_weather", { city: "Oslo" }]]), textReply("4°C")]));
    return t.saveCase("x", { at: t.events[0]?.event_id as string, dir, externalEffects: "forbid" });
  });
  add("case_exists", () => {
    thread.saveCase("taken", { at, dir });
    return thread.saveCase("taken", { at, dir, expect: { must: [{ type: "turn_completed" }] } });
  });
  refusals.forEach(([code, fn], i) => {
    test(`refusal ${i}: ${code}`, () => {
      const r = fn();
      assert.ok(!r.ok, "refused");
      assert.equal(r.error.code, code, r.error.message);
      assert.ok(r.error.message.length > 0);
    });
  });
  test("refusals write nothing", () => {
    assert.ok(!existsSync(join(dir, "x")));
  });
});

describe("saveCase refuses a dir that is a file or inside a case (case-format.md 5.2 step 1)", () => {
  const hint = "write it outside the case: a case holds only the files of its format, and any other file makes it invalid";

  test("a dir that is or lies inside a case directory is invalid_request; the case stays as it was", () => {
    const { thread, at } = recorded();
    const cases = join(work, "inside");
    assert.ok(thread.saveCase("outer", { at, dir: cases }).ok);
    const outer = join(cases, "outer");
    const before = readdirSync(outer, { recursive: true }).sort();
    for (const [dir, where] of [
      [outer, "is the case directory"],
      [join(outer, "artifacts"), "is inside the case directory"],
      [join(outer, "artifacts", "deeper"), "is inside the case directory"],
    ] as const) {
      const r = thread.saveCase("nested", { at, dir });
      assert.ok(!r.ok, `refused: ${dir}`);
      assert.deepEqual(r.error, { code: "invalid_request", message: `${dir}: ${where} ${outer}`, hint });
    }
    assert.deepEqual(readdirSync(outer, { recursive: true }).sort(), before);
    assert.doesNotThrow(() => readCaseFiles(outer));
  });

  test("a dir that is a file, or below one, is invalid_request, not io_error EEXIST", () => {
    const { thread, at } = recorded();
    const afile = join(work, "afile");
    writeFileSync(afile, "x");
    const folderHint = "expected the folder to create the case in (it is created when missing)";
    const r = thread.saveCase("c", { at, dir: afile });
    assert.ok(!r.ok);
    assert.deepEqual(r.error, { code: "invalid_request", message: `${afile}: is a file, not a folder`, hint: folderHint });
    const below = thread.saveCase("c", { at, dir: join(afile, "sub") });
    assert.ok(!below.ok);
    assert.deepEqual(below.error, { code: "invalid_request", message: `${join(afile, "sub")}: ${afile} is a file, not a folder`, hint: folderHint });
    assert.equal(readFileSync(afile, "utf8"), "x");
  });
});

describe("saveCase checks its own work (spec/case-format.md 5.10)", () => {
  const never = { must: [], expect: [{ type: "tool_called", data: { name: "nope" } }] };

  test("a case whose first run would drift on an expect is refused with replay_failed; nothing is written", () => {
    const { thread, at } = recorded();
    const dir = join(work, "verify-refused");
    const r = thread.saveCase("bad", { expect: never, at, dir });
    assert.ok(!r.ok);
    assert.equal(r.error.code, "replay_failed");
    assert.match(r.error.message, /check expect \(expect_unmatched\)/);
    assert.match(r.error.message, /nearest event: seq \d+ tool_called/);
    assert.ok(!existsSync(join(dir, "bad")));
  });

  test("verify: false writes it anyway", () => {
    const { thread, at } = recorded();
    const dir = join(work, "verify-skipped");
    const r = thread.saveCase("bad", { expect: never, at, dir, verify: false });
    assert.ok(r.ok, JSON.stringify(r));
    assert.ok(existsSync(join(dir, "bad", "case.json")));
  });

  test("a passing case is written after its check", () => {
    const { thread, at } = recorded();
    const r = thread.saveCase("good", { expect: { must: [{ type: "turn_completed" }], expect: [] }, at, dir: join(work, "verify-ok") });
    assert.ok(r.ok, JSON.stringify(r));
  });
});

describe("names are ASCII, and the messages say so (the same words as Python's)", () => {
  const rule = "must be 1-64 ASCII letters, digits, '.', '_' or '-'";
  test("a case name with non-ASCII letters", () => {
    assert.throws(() => checkCaseName("café-ñ-日本語"), (e: CaseError) => e.code === "invalid_request" && e.message === `case name "café-ñ-日本語" ${rule}`);
  });
  test("a branch id with non-ASCII letters", () => {
    const thread = Thread.create({ agent: new AgentSpec("a", "model-x", "Be brief.", []), clock: new Clock(1_795_982_400_000, 7) });
    thread.runTurn("hi", new ScriptedModel([textReply("hello")]));
    const at = thread.events[0]?.event_id as string;
    assert.throws(() => thread.fork(at, { branchId: "essai-é" }), (e: CaseError) => e.message.endsWith("may hold only ASCII letters, digits, '.', '_' or '-'"));
  });
});
