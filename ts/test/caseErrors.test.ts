/**
 * The data-only case-loader tests of spec/conformance/case-errors/ (spec/conformance.md 2.7), as
 * tests/test_conformance_case_errors.py runs them: each broken case directory (files replaced,
 * removed, or made a folder or a symlink) gives the same first problem (code, file, line, pointer,
 * and the message and hint where the test pins them) from `openCase`, or opens; where the test
 * lists `replay_refused_in`, a replay in each dialect is refused (listed) or not.
 */

import { strict as assert } from "node:assert";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { after, describe, test } from "node:test";

import { openCase } from "../src/case/loader.js";
import { handleRequest } from "../src/protocol/driver.js";
import { CaseError } from "../src/core/errors.js";
import { conformanceDir } from "../src/core/resources.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";

const DIR = join(conformanceDir(), "case-errors");
const names = readdirSync(DIR).filter((n) => n.endsWith(".json")).sort();
const root = mkdtempSync(join(tmpdir(), "case-errors-"));
after(() => rmSync(root, { recursive: true, force: true }));

/** The test's case directory under `where`, or null when a symlink cannot be made here (Windows). */
function build(t: JsonObject, where: string): string | null {
  const path = join(where, t["base"] as string);
  cpSync(join(conformanceDir(), "cases", t["base"] as string), path, { recursive: true });
  for (const [rel, body] of Object.entries(t["files"] as JsonObject)) {
    if (body !== null && typeof body === "object") {
      // a folder or a symlink in the file's place
      const spec = body as JsonObject;
      rmSync(join(path, rel), { force: true });
      if (spec["kind"] === "folder") mkdirSync(join(path, rel));
      else {
        try {
          symlinkSync(spec["target"] as string, join(path, rel));
        } catch {
          return null;
        }
      }
    } else if (body === null) unlinkSync(join(path, rel));
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
    test(`${name}: ${t["description"] as string}`, (ctx) => {
      const keys = Object.keys(t).filter((k) => k !== "replay_refused_in");
      assert.deepEqual(keys.sort(), ["base", "description", "error", "files"]);
      const where = join(root, String(i));
      mkdirSync(where);
      const path = build(t, where);
      if (path === null) {
        ctx.skip("cannot make a symlink here");
        return;
      }
      if (Object.hasOwn(t, "replay_refused_in")) {
        // a replay checks only its own dialect's log (spec/replay.md 2.1 step 1)
        const refused = t["replay_refused_in"] as string[];
        for (const d of ["threads-py", "threads-ts"]) {
          const want = refused.includes(d) ? (t["error"] as JsonObject)["code"] : null;
          let got: string | null = null;
          try {
            handleRequest({ cmd: "replay", case: { path } }, d);
          } catch (err) {
            if (!(err instanceof CaseError)) throw err;
            got = err.code;
          }
          assert.equal(got, want, `a ${d} replay`);
        }
      }
      try {
        const c = openCase(path);
        assert.equal(t["error"], null, `the case opened; expected ${JSON.stringify(t["error"])}`);
        assert.equal(c.name, t["base"]);
      } catch (err) {
        if (!(err instanceof CaseError)) throw err;
        const file = err.file === undefined ? null : relative(path, err.file).split("\\").join("/");
        const got: Record<string, unknown> = { code: err.code, file, line: err.line ?? null, pointer: err.pointer ?? null };
        // pinned: both languages say the same words
        const want = t["error"] as JsonObject | null;
        if (want !== null && "message" in want) Object.assign(got, { message: err.message, hint: err.hint });
        assert.deepEqual(got, t["error"], `${err.code}: ${err.message}`);
      }
    });
  });
});
