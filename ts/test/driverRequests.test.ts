/**
 * Driver requests are checked, not trusted (spec/driver-protocol.md, "Checked messages"): the
 * data-only tests of spec/conformance/driver-requests/, as tests/test_driver_requests.py runs them.
 */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { canonicalLine } from "../src/core/canonical.js";
import type { JsonObject } from "../src/core/strictjson.js";
import { answerLine } from "../src/protocol/driver.js";

const DATA = join(import.meta.dirname, "..", "..", "..", "spec", "conformance", "driver-requests");

interface RequestTest {
  description: string;
  request: JsonObject;
  code: string;
  pointer: string;
}

const tests: RequestTest[] = readdirSync(DATA)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .flatMap((f) => (JSON.parse(readFileSync(join(DATA, f), "utf8")) as { tests: RequestTest[] }).tests);

describe("driver requests", () => {
  for (const t of tests) {
    test(t.description, () => {
      const answer = answerLine(new TextEncoder().encode(canonicalLine(t.request))) as JsonObject;
      assert.equal(answer["ok"], false);
      const error = answer["error"] as JsonObject;
      assert.deepEqual([error["code"], error["pointer"]], [t.code, t.pointer], JSON.stringify(answer));
      assert.equal(answer["id"], t.request["id"] ?? null);
    });
  }

  test("the data holds every test", () => {
    assert.ok(tests.length >= 14);
  });
});
