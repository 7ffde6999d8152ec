/** DirectorySandbox never reads or writes outside its root (issue 19 section 4), as Python's. */

import { strict as assert } from "node:assert";
import { linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";

import { CaseError } from "../src/core/errors.js";
import { DirectorySandbox, FileMissing } from "../src/reference/sandbox.js";

const work = mkdtempSync(join(tmpdir(), "threads-cases-sandbox-"));
after(() => rmSync(work, { recursive: true, force: true }));

function setup(name: string): { root: string; outside: string; sb: DirectorySandbox } {
  const base = join(work, name);
  mkdirSync(base);
  const outside = join(base, "outside.txt");
  writeFileSync(outside, "outside bytes\n");
  const root = join(base, "root");
  return { root, outside, sb: new DirectorySandbox(root) };
}

const refused = (err: unknown): boolean => err instanceof CaseError && err.code === "invalid_request";

describe("DirectorySandbox", () => {
  test("a symlink out of the root is refused for reading and writing", () => {
    const { root, outside, sb } = setup("sym");
    symlinkSync(outside, join(root, "link.txt"));
    symlinkSync(join(root, ".."), join(root, "dir"));
    for (const path of ["link.txt", "dir/outside.txt", "dir/new.txt"]) {
      assert.throws(() => sb.read(path), refused, path);
      assert.throws(() => sb.write(path, new TextEncoder().encode("overwritten")), refused, path);
    }
    assert.equal(readFileSync(outside, "utf8"), "outside bytes\n");
    assert.deepEqual(readdirSync(join(root, "..")).sort(), ["outside.txt", "root"]);
  });

  test("a hard link is neither read nor written through", () => {
    const { root, outside, sb } = setup("hard");
    linkSync(outside, join(root, "hard.txt"));
    assert.throws(() => sb.read("hard.txt"), (err: unknown) => refused(err) && String((err as Error).message).includes("hard link"));
    sb.write("hard.txt", new TextEncoder().encode("new bytes"));
    assert.equal(readFileSync(outside, "utf8"), "outside bytes\n");
    assert.equal(new TextDecoder().decode(sb.read("hard.txt")), "new bytes");
    assert.deepEqual(readdirSync(root), ["hard.txt"]);
  });

  test("ordinary files still work; missing files and folders are FileMissing", () => {
    const { sb } = setup("plain");
    sb.write("a/b.txt", new TextEncoder().encode("x"));
    assert.equal(new TextDecoder().decode(sb.read("a/b.txt")), "x");
    assert.deepEqual(sb.list(), ["a/b.txt"]);
    assert.throws(() => sb.read("missing.txt"), FileMissing);
    assert.throws(() => sb.read("a"), FileMissing);
  });
});
