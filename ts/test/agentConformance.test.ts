/**
 * The data-only tests of spec/conformance/agent/ through the driver's request path (the agent
 * loaded first, as `serve` does), case paths taken from that folder, as
 * tests/test_conformance_agent.py runs them (spec/replay.md 8, spec/driver-protocol.md 2.5.2).
 */

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { canonicalLine } from "../src/core/canonical.js";
import type { JsonObject } from "../src/core/strictjson.js";
import { answerLine, prepareLine } from "../src/protocol/driver.js";

const DATA = join(import.meta.dirname, "..", "..", "..", "spec", "conformance", "agent");

interface AgentTest {
  description: string;
  request: JsonObject;
  code: string;
  message: string | null;
  pointer: string | null;
}

const tests = (JSON.parse(readFileSync(join(DATA, "refusals.json"), "utf8")) as { tests: AgentTest[] }).tests;

describe("agent conformance", () => {
  for (const t of tests) {
    test(t.description, async () => {
      const cwd = process.cwd();
      process.chdir(DATA);
      try {
        const line = new TextEncoder().encode(canonicalLine(t.request));
        await prepareLine(line);
        const answer = answerLine(line) as JsonObject;
        assert.equal(answer["ok"], false, JSON.stringify(answer));
        const error = answer["error"] as JsonObject;
        assert.deepEqual([error["code"], error["pointer"] ?? null], [t.code, t.pointer], JSON.stringify(answer));
        if (t.message !== null) assert.equal(error["message"], t.message);
      } finally {
        process.chdir(cwd);
      }
    });
  }

  test("the data pins the refusals of section 8", () => {
    assert.deepEqual(new Set(tests.map((t) => t.code)), new Set(["handler_missing", "agent_unavailable", "invalid_request"]));
  });
});
