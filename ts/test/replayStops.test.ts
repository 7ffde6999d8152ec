/**
 * The stop tests of spec/conformance/replay/ (`NNN-slug.json` beside its case directories,
 * spec/conformance.md 2.14), as tests/test_conformance_replay_stops.py runs them: a copy of
 * `replay/<case>` with model.json's first `keep_replies` replies kept (all when null) and
 * stubs.json emptied when `drop_stubs`, replayed; its stop, event types, request hashes and
 * consumption are the test's.
 */

import { strict as assert } from "node:assert";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { getDialect } from "../src/core/dialects.js";
import { conformanceDir } from "../src/core/resources.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";
import { handleRequest } from "../src/protocol/driver.js";

const dir = join(conformanceDir(), "replay");
const names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();
const work = mkdtempSync(join(tmpdir(), "threads-cases-replay-stops-"));
after(() => rmSync(work, { recursive: true, force: true }));

describe("replay stop conformance", () => {
  test("the area has its stop tests", () => assert.ok(names.length >= 2));
  for (const name of names) {
    const t = parse(readFileSync(join(dir, name))) as JsonObject;
    test(`${name}: ${String(t["description"])}`, () => {
      const copy = join(work, name, t["case"] as string);
      cpSync(join(dir, t["case"] as string), copy, { recursive: true });
      if (t["keep_replies"] !== null) {
        const model = JSON.parse(readFileSync(join(copy, "model.json"), "utf8")) as JsonObject;
        model["replies"] = (model["replies"] as JsonObject[]).slice(0, t["keep_replies"] as number);
        writeFileSync(join(copy, "model.json"), JSON.stringify(model));
      }
      if (t["drop_stubs"] === true) writeFileSync(join(copy, "stubs.json"), '{"calls": [], "format": 1}\n');
      const out = handleRequest({ cmd: "replay", case: { path: copy } });
      const d = getDialect("threads-ts");
      const got = {
        stop: out["stop"],
        event_types: (out["events"] as JsonObject[]).map((e) => d.decodeEvent(e)["type"]),
        requests: out["requests"],
        consumed: out["consumed"],
      };
      assert.deepEqual(got, { stop: t["stop"], event_types: t["event_types"], requests: t["requests"], consumed: t["consumed"] });
    });
  }
});
