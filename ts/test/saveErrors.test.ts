/**
 * The data-only save-refusal tests (spec/conformance/save-errors/, spec/conformance.md 2.11),
 * the files tests/test_conformance_save_errors.py runs: saveCase refuses with the same code
 * and, byte for byte, the same one-line hint as Python's save_case.
 */

import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { saveCase, type SaveResult } from "../src/case/save.js";
import { conformanceDir } from "../src/core/resources.js";
import type { Envelope } from "../src/core/reducer.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";
import { ArtifactStore } from "../src/reference/runtime.js";
import { FakeSandbox } from "../src/reference/sandbox.js";

const dir = join(conformanceDir(), "save-errors");
const names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();
const KEYS = ["artifacts", "at", "description", "error", "existing", "log", "name", "options"];

describe("save-errors conformance", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-save-errors-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  test("the suite covers the refusals", () => assert.ok(names.length >= 12));
  for (const name of names) {
    const t = parse(readFileSync(join(dir, name))) as JsonObject;
    test(`${name}: ${String(t["description"])}`, () => {
      assert.deepEqual(Object.keys(t).sort(), KEYS);
      const here = join(work, name);
      mkdirSync(here);
      const options = t["options"] as JsonObject;
      const store = new ArtifactStore(Object.entries(t["artifacts"] as Record<string, string>).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, "base64"))]));
      const save = (caseName: string, o: JsonObject): SaveResult =>
        saveCase(t["log"] as unknown as Envelope[], caseName, {
          sandbox: new FakeSandbox({}),
          store,
          at: t["at"] as string,
          dir: join(here, "cases"),
          verify: false,
          expect: o["expect"],
          ...(o["external_effects"] !== undefined ? { externalEffects: o["external_effects"] as string } : {}),
          ...(o["dialects"] !== undefined ? { dialects: o["dialects"] as string[] } : {}),
          ...(o["secrets"] !== undefined ? { secrets: o["secrets"] as string } : {}),
        });
      if (t["existing"] === true) assert.ok(save(t["name"] as string, {}).ok, "the first save refused");
      const r = save(t["name"] as string, options);
      assert.ok(!r.ok, "saved, but the test expects a refusal");
      assert.deepEqual({ code: r.error.code, hint: r.error.hint }, t["error"], r.error.message);
    });
  }
});
