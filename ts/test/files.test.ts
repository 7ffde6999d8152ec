/** Bounded reads (mirrors tests/test_bounded_reads.py): kind and size are checked before any byte is read. */

import { strict as assert } from "node:assert";
import { execFileSync } from "node:child_process";
import { cpSync, mkdtempSync, openSync, closeSync, ftruncateSync, readdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { CaseError, MAX_CASE_BYTES, conformanceDir, openCase, readCaseFiles, readLog, readRegular } from "../src/index.js";

const dir = mkdtempSync(join(tmpdir(), "tc-files-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function sparse(path: string, size: number): string {
  const fd = openSync(path, "w");
  ftruncateSync(fd, size);
  closeSync(fd);
  return path;
}

function fifo(path: string): string {
  execFileSync("mkfifo", [path]);
  return path;
}

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof CaseError, String(err));
    return err.code;
  }
  assert.fail("no error");
}

describe("bounded reads", () => {
  test("a sparse 2 GiB file is refused by size, before reading", () => {
    const big = sparse(join(dir, "big"), 2 * 1024 ** 3);
    assert.equal(code(() => readRegular(big, { code: "case_invalid", limit: MAX_CASE_BYTES, limitCode: "case_too_large" })), "case_too_large");
    assert.equal(code(() => [...readLog(big)]), "log_invalid");
  });

  test("FIFOs and devices are refused, never waited on", () => {
    const p = fifo(join(dir, "pipe.jsonl"));
    assert.equal(code(() => readRegular(p, { code: "io_error", limit: 10, specialCode: "case_invalid" })), "case_invalid");
    assert.equal(code(() => [...readLog(p)]), "invalid_request");
    assert.equal(code(() => [...readLog("/dev/zero")]), "invalid_request");
  });

  test("a symlink is followed only where allowed; an over-long name is invalid_request", () => {
    const target = join(dir, "t.json");
    writeFileSync(target, "{}");
    symlinkSync(target, join(dir, "link.json"));
    assert.equal(new TextDecoder().decode(readRegular(join(dir, "link.json"), { code: "io_error", limit: 10 })), "{}");
    assert.equal(code(() => readRegular(join(dir, "link.json"), { code: "case_invalid", limit: 10, followSymlinks: false })), "case_invalid");
    assert.equal(code(() => readRegular(join(dir, "n".repeat(300)), { code: "io_error", limit: 10 })), "invalid_request");
  });

  test("a FIFO model.json or a giant artifact inside a case is refused by the case reader", () => {
    const src = join(conformanceDir(), "cases", "reads-notes");
    const a = join(dir, "case-a");
    cpSync(src, a, { recursive: true });
    unlinkSync(join(a, "model.json"));
    fifo(join(a, "model.json"));
    assert.equal(code(() => readCaseFiles(a)), "case_invalid");
    const b = join(dir, "case-b");
    cpSync(src, b, { recursive: true });
    const art = readdirSync(join(b, "artifacts"))[0] as string;
    unlinkSync(join(b, "artifacts", art));
    sparse(join(b, "artifacts", art), 2 * 1024 ** 3);
    assert.equal(code(() => readCaseFiles(b)), "case_too_large");
    assert.equal(code(() => openCase(b).artifact(art)), "case_too_large");
  });
});
