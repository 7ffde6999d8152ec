/**
 * The data-only tests of spec/conformance/live/ (live turns, spec/replay.md section 11) on the
 * TypeScript runtime, as tests/test_conformance_live.py runs them on the Python one.
 */

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { canonicalLine, conformanceDir, getDialect, type JsonObject, type JsonValue } from "../src/index.js";
import { handleRequest } from "../src/protocol/driver.js";

const doc = JSON.parse(readFileSync(join(conformanceDir(), "live", "turns.json"), "utf8")) as { tests: JsonObject[] };

describe("spec/conformance/live", () => {
  for (const t of doc.tests) {
    test(t["description"] as string, () => {
      const answers = t["answers"] as JsonObject[];
      const then = t["then"] as JsonObject;
      const asked: string[] = [];
      const path = join(conformanceDir(), "cases", t["case"] as string);
      const out = handleRequest({ cmd: "replay", case: { path }, live: t["live"] as JsonValue }, "threads-ts", (index, _request, sha) => {
        asked.push(sha);
        return index < answers.length ? (answers[index] as JsonObject) : { stop: { ...then, stop_key: `model:${index}` } };
      });
      const d = getDialect("threads-ts");
      const events = (out["events"] as JsonObject[]).map((e) => d.decodeEvent(e));
      const lines = events.map((e) => canonicalLine(e) + "\n").join("");
      assert.deepEqual(asked, t["requests"]);
      assert.deepEqual(out["stop"], t["stop"]);
      assert.deepEqual(
        events.map((e) => e["type"]),
        t["event_types"],
      );
      assert.equal(createHash("sha256").update(lines, "utf8").digest("hex"), t["events_sha256"]);
    });
  }
});
