/**
 * The data-only first-divergence tests of spec/conformance/divergence/ (spec/reports.md 7.4), as
 * tests/test_conformance_divergence.py runs them: the recorded replies against a real replay give
 * the same divergence record, byte for byte (canonical JSON).
 */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import { replayedRequests, requestDivergence } from "../src/case/divergence.js";
import { expandRecords } from "../src/case/requests.js";
import { canonicalDocument } from "../src/core/canonical.js";
import type { Envelope } from "../src/core/reducer.js";
import { conformanceDir } from "../src/core/resources.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";

const DIR = join(conformanceDir(), "divergence");
const names = readdirSync(DIR).filter((n) => n.endsWith(".json")).sort();

describe("divergence conformance", () => {
  test("the suite has enough tests", () => assert.ok(names.length >= 15));
  for (const name of names) {
    const t = parse(readFileSync(join(DIR, name))) as JsonObject;
    test(`${name}: ${t["description"] as string}`, () => {
      assert.deepEqual(Object.keys(t).sort(), ["description", "divergence", "events", "prefix", "replies", "requests"]);
      const replies = t["replies"] as JsonObject[];
      const events = t["events"] as unknown as Envelope[];
      const hit = requestDivergence(
        expandRecords(replies),
        replies.map((r) => r["request_sha256"] as string),
        replayedRequests(t["prefix"] as unknown as Envelope[], events),
        t["requests"] as string[],
        events,
      );
      assert.equal(canonicalDocument(hit === null ? null : hit.toJson()), canonicalDocument(t["divergence"]!));
    });
  }
});
