/**
 * What a newcomer meets first, as the Python suite pins it (issue 38): a case path that does not
 * exist is refused in the command line's words (`invalid_request`, `no such file or folder`,
 * spec/case-format.md 8.1 item 0) by `openCase` and `replayCase`, as `run_case` says it
 * (tests/test_newcomer_refusals.py); a folder without case.json still says so.
 */

import { strict as assert } from "node:assert";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { openCase } from "../src/case/loader.js";
import { CaseError } from "../src/core/errors.js";
import { replayCase } from "../src/reference/replay.js";

const root = mkdtempSync(join(tmpdir(), "newcomer-"));
after(() => rmSync(root, { recursive: true, force: true }));

function refusal(run: () => unknown): CaseError {
  try {
    run();
  } catch (err) {
    if (err instanceof CaseError) return err;
    throw err;
  }
  throw new Error("no refusal");
}

describe("a case path that does not exist", () => {
  test("openCase and replayCase say no such file or folder, as the command line", () => {
    const missing = join(root, "cases", "nothere");
    for (const run of [() => openCase(missing), () => replayCase(missing)]) {
      const err = refusal(run);
      assert.equal(err.code, "invalid_request");
      assert.equal(err.message, "no such file or folder");
      assert.equal(err.hint, "expected a case directory (a folder holding case.json)");
    }
  });

  test("a folder without case.json is still not a case directory", () => {
    const empty = join(root, "cases", "empty");
    mkdirSync(empty, { recursive: true });
    const err = refusal(() => openCase(empty));
    assert.equal(err.code, "case_invalid");
    assert.equal(err.message, "not a case directory: case.json is missing");
  });
});
