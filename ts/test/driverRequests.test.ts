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
  request?: JsonObject;
  /** a line no canonical value writes (`1.0`, `1e16`): sent as is */
  request_text?: string;
  /** the answer's id when it is not the request's */
  answer_id?: number | null;
  code: string;
  /** null: the answer has no pointer (spec/conformance.md 2.13) */
  pointer: string | null;
}

const tests: RequestTest[] = readdirSync(DATA)
  .filter((f) => f.endsWith(".json"))
  .sort()
  .flatMap((f) => (JSON.parse(readFileSync(join(DATA, f), "utf8")) as { tests: RequestTest[] }).tests);

describe("driver requests", () => {
  for (const t of tests) {
    test(t.description, () => {
      const line = t.request_text ?? canonicalLine(t.request);
      const answer = answerLine(new TextEncoder().encode(line)) as JsonObject;
      assert.equal(answer["ok"], false);
      const error = answer["error"] as JsonObject;
      assert.deepEqual([error["code"], error["pointer"] ?? null], [t.code, t.pointer], JSON.stringify(answer));
      if (t.pointer === null) assert.ok(!Object.hasOwn(error, "pointer"), "a null pointer is an absent one");
      assert.equal(answer["id"], t.answer_id !== undefined ? t.answer_id : (t.request?.["id"] ?? null));
    });
  }

  test("the data holds every test", () => {
    assert.ok(tests.length >= 14);
  });
});
