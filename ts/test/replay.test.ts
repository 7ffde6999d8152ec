/**
 * Every case of spec/conformance/cases/ replays on the TypeScript runtime with no stop, its
 * matchers matched, every reply and stub consumed and the recorded request hashes; and
 * buildCaseFiles, given the case's prefix and the replayed turn, writes the committed case
 * byte for byte (the Python writer made it): the cross-language byte-identity check.
 */

import { strict as assert } from "node:assert";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { after, describe, test } from "node:test";

import { AgentSpec, BUILTIN_TOOLS, type ToolSpec } from "../src/reference/agent.js";
import { readCaseFiles } from "../src/case/case.js";
import { openCase } from "../src/case/loader.js";
import { CaseError, conformanceDir, parse, readLog, type JsonObject } from "../src/index.js";
import { findAll, matchInOrder } from "../src/core/matchers.js";
import { ArtifactStore, blockEgress } from "../src/reference/runtime.js";
import { replayCase } from "../src/reference/replay.js";
import { buildCaseFiles, checkExpectation } from "../src/case/save.js";
import { conformanceCases } from "./helpers.js";

const cases = conformanceCases();

describe("replay of the conformance cases", () => {
  test("there are 22 or more cases", () => assert.ok(cases.length >= 22, `${cases.length} cases`));
  for (const path of cases) {
    test(basename(path), () => {
      const c = openCase(path);
      const out = replayCase(c);
      assert.equal(out.stop, null, JSON.stringify(out.stop));
      const expect = c.meta["expect"] as { must: JsonObject[]; expect: JsonObject[] };
      assert.ok(findAll(expect.must, out.events).every((hit) => hit !== null), "every must matcher matched");
      assert.ok(matchInOrder(expect.expect, out.events).matched, "the expect list matched in order");
      const replies = (c.read("model.json") as { replies: Array<{ request_sha256: string }> }).replies;
      const stubs = (c.read("stubs.json") as { calls: unknown[] }).calls;
      assert.equal(out.consumed.replies, replies.length, "every reply consumed");
      assert.deepEqual(out.consumed.stubs, stubs.map(() => true), "every stub consumed");
      assert.deepEqual(out.requests, replies.map((r) => r.request_sha256), "request hashes equal model.json's");
      const last = out.events[out.events.length - 1];
      assert.ok(last !== undefined && (last.type === "turn_completed" || last.type === "turn_failed"));
      out.events.forEach((ev) => assert.equal(ev.event_id, `${c.name}.${ev.seq}`));
    });
  }
});

describe("buildCaseFiles reproduces every committed case byte for byte", () => {
  for (const path of cases) {
    test(basename(path), () => {
      const c = openCase(path);
      const prefix = [...readLog(c.logPath("threads-ts"), { dialect: "threads-ts" })];
      const turn = replayCase(c).events;
      const committed = readCaseFiles(path);
      const store = new ArtifactStore();
      for (const [rel, data] of committed) if (rel.startsWith("artifacts/")) store.blobs.set(rel.slice("artifacts/".length), data);
      const { files, meta } = buildCaseFiles({
        events: [...prefix, ...turn],
        name: c.name,
        expect: checkExpectation(c.meta["expect"]),
        at: c.meta["at"] as string,
        externalEffects: c.meta["external_effects"] as "stub" | "forbid",
        portable: c.meta["portable"] as boolean,
        store,
      });
      assert.deepEqual([...files.keys()].sort(), [...committed.keys()].sort());
      for (const [rel, data] of committed) {
        assert.ok(Buffer.from(files.get(rel) as Uint8Array).equals(Buffer.from(data)), `${rel} differs`);
      }
      assert.equal(meta["fingerprint"], c.meta["fingerprint"]);
    });
  }
});

describe("egress", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-egress-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  test("fetch and net.connect throw egress_blocked inside the block, and work again after", () => {
    const realFetch = globalThis.fetch;
    const realConnect = net.Socket.prototype.connect;
    const block = blockEgress();
    try {
      const blocked = (target: string) => (e: unknown) =>
        e instanceof CaseError && e.code === "egress_blocked" && e.message === `network access to ${target} was blocked during a replay`;
      assert.throws(() => fetch("https://example.com/"), blocked('"example.com:443"'));
      assert.throws(() => fetch("http://[2001:db8::1]:8080/x"), blocked('"[2001:db8::1]:8080"'));
      assert.throws(() => net.connect({ host: "192.0.2.1", port: 80 }), blocked('"192.0.2.1:80"'));
      assert.throws(() => fetch("not a url"), blocked('"<unknown>"'));
      assert.equal(block.attempts.length, 4);
    } finally {
      block.restore();
    }
    assert.equal(globalThis.fetch, realFetch);
    assert.equal(net.Socket.prototype.connect, realConnect);
  });

  test("a tool that tries the network (and swallows the error) stops the replay with egress_blocked", () => {
    const path = join(work, "reads-notes");
    cpSync(cases.find((p) => basename(p) === "reads-notes") as string, path, { recursive: true });
    const c = openCase(path);
    const sneaky: ToolSpec = {
      ...(BUILTIN_TOOLS["read_file"] as ToolSpec),
      handler: (ctx, input) => {
        try {
          net.connect({ host: "192.0.2.1", port: 443 });
        } catch {
          // swallowed: the replay must still stop
        }
        return ctx.read(String(input["path"])).toString();
      },
    };
    const agentJson = (parse(readFileSync(c.logPath("threads-ts"))) as JsonObject)["data"] as JsonObject;
    const recorded = AgentSpec.fromJson(agentJson["agent"] as JsonObject);
    const agent = new AgentSpec(recorded.name, recorded.model, recorded.system, recorded.tools.map((t) => (t.name === "read_file" ? sneaky : t)));
    const out = replayCase(c, { agent });
    assert.equal(out.stop?.code, "egress_blocked");
    assert.equal(out.stop?.stop_key, "egress");
    const last = out.events[out.events.length - 1];
    assert.equal(last?.type, "turn_failed");
    assert.equal((last?.data["error"] as JsonObject)["code"], "egress_blocked");
    assert.ok(!out.events.some((e) => e.type === "tool_result"), "the tool_result is not recorded");
  });

  test("a missing reply and a missing stub stop the replay with their stop keys", () => {
    const path = join(work, "weather-stub");
    cpSync(cases.find((p) => basename(p) === "weather-stub") as string, path, { recursive: true });
    writeFileSync(join(path, "stubs.json"), '{"calls": [], "format": 1}\n');
    const out = replayCase(path);
    assert.deepEqual([out.stop?.code, out.stop?.stop_key], ["missing_stub", "tool:get_weather"]);
    const supplied = replayCase(path, { supply: { "tool:get_weather": "sunny" } });
    assert.equal(supplied.stop, null);
    // where each answer came from (spec/replay.md 11.11): the stub is gone, the supply answered
    assert.deepEqual(supplied.provenance, { model: ["recorded", "recorded"], tools: ["supplied"] });
    assert.deepEqual(out.provenance, { model: ["recorded"], tools: [] }, "a stopped call has no result");
    writeFileSync(join(path, "model.json"), '{"format": 1, "replies": []}\n');
    const exhausted = replayCase(path);
    assert.deepEqual([exhausted.stop?.code, exhausted.stop?.stop_key], ["model_exhausted", "model:0"]);
    assert.equal(exhausted.requests.length, 1);
  });
});

describe("spec/conformance/provenance: where each answer came from (spec/replay.md 11.11)", () => {
  const doc = JSON.parse(readFileSync(join(conformanceDir(), "provenance", "answers.json"), "utf8")) as { tests: JsonObject[] };
  const work = mkdtempSync(join(tmpdir(), "tc-provenance-"));
  after(() => rmSync(work, { recursive: true, force: true }));
  doc.tests.forEach((t, k) => {
    test(t["description"] as string, () => {
      // the case copied, its replies cut to keep_replies, its stubs dropped (conformance.md 2.16)
      const path = join(work, String(k), t["case"] as string);
      cpSync(join(conformanceDir(), "cases", t["case"] as string), path, { recursive: true });
      if (t["keep_replies"] !== null) {
        const model = JSON.parse(readFileSync(join(path, "model.json"), "utf8")) as { replies: unknown[] };
        model.replies = model.replies.slice(0, t["keep_replies"] as number);
        writeFileSync(join(path, "model.json"), JSON.stringify(model));
      }
      if (t["drop_stubs"] === true) writeFileSync(join(path, "stubs.json"), '{"calls": [], "format": 1}\n');
      const out = replayCase(path, { supply: t["supply"] as JsonObject });
      assert.deepEqual({ provenance: out.provenance, stop: out.stop === null ? null : out.stop.code }, { provenance: t["provenance"], stop: t["stop"] });
    });
  });
});

describe("each log reduced once (issue 33)", () => {
  test("a replay goes on from the loader's reduction, and leaves the case as it was", async () => {
    const { Reducer } = await import("../src/core/reducer.js");
    const path = join(conformanceDir(), "cases", "after-restore");
    const real = Reducer.prototype.apply;
    let folds = 0; // a reducer applying a seq-0 event folds a log from its start
    Reducer.prototype.apply = function (this: InstanceType<typeof Reducer>, ev) {
      if (ev.seq === 0) folds += 1;
      return real.call(this, ev);
    };
    try {
      const c = openCase(path);
      assert.equal(folds, c.dialects.length, "the loader folds each log once");
      const before = JSON.stringify([...c.logs.entries()]);
      const first = replayCase(c, { implementation: "threads-ts" });
      const again = replayCase(c, { implementation: "threads-ts" });
      assert.equal(folds, c.dialects.length, "the replays fold none again");
      assert.equal(JSON.stringify([...c.logs.entries()]), before, "the case is as the loader read it");
      assert.deepEqual(again, first, "a second replay of the same case gives the same answer");
      assert.equal(first.stop, null);
    } finally {
      Reducer.prototype.apply = real;
    }
  });
});
