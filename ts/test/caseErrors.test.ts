/**
 * The data-only case-loader tests of spec/conformance/case-errors/ (spec/conformance.md 2.7), as
 * tests/test_conformance_case_errors.py runs them: each broken case directory gives the same first
 * problem (code, file, line, pointer) from `openCase`, or opens.
 */

import { strict as assert } from "node:assert";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, describe, test } from "node:test";

import { openCase } from "../src/case/loader.js";
import { CaseError } from "../src/core/errors.js";
import { conformanceDir } from "../src/core/resources.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";

const DIR = join(conformanceDir(), "case-errors");
const names = readdirSync(DIR).filter((n) => n.endsWith(".json")).sort();
const root = mkdtempSync(join(tmpdir(), "case-errors-"));
after(() => rmSync(root, { recursive: true, force: true }));

function build(t: JsonObject, where: string): string {
  const path = join(where, t["base"] as string);
  cpSync(join(conformanceDir(), "cases", t["base"] as string), path, { recursive: true });
  for (const [rel, body] of Object.entries(t["files"] as JsonObject)) {
    if (body === null) unlinkSync(join(path, rel));
    else {
      mkdirSync(dirname(join(path, rel)), { recursive: true });
      writeFileSync(join(path, rel), body as string);
    }
  }
  return path;
}

describe("case-errors conformance", () => {
  test("the suite has enough tests", () => assert.ok(names.length >= 30));
  names.forEach((name, i) => {
    const t = parse(readFileSync(join(DIR, name))) as JsonObject;
    test(`${name}: ${t["description"] as string}`, () => {
      assert.deepEqual(Object.keys(t).sort(), ["base", "description", "error", "files"]);
      const where = join(root, String(i));
      mkdirSync(where);
      const path = build(t, where);
      try {
        const c = openCase(path);
        assert.equal(t["error"], null, `the case opened; expected ${JSON.stringify(t["error"])}`);
        assert.equal(c.name, t["base"]);
      } catch (err) {
        if (!(err instanceof CaseError)) throw err;
        const file = err.file === undefined ? null : relative(path, err.file).split("\\").join("/");
        const got = { code: err.code, file, line: err.line ?? null, pointer: err.pointer ?? null };
        assert.deepEqual(got, t["error"], `${err.code}: ${err.message}`);
      }
    });
  });
});
