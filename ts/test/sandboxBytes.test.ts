/**
 * The data-only sandbox-bytes tests (spec/conformance/sandbox-bytes/, spec/case-format.md 5.9,
 * spec/conformance.md 2.10), the files tests/test_conformance_sandbox_bytes.py runs: saveCase
 * with `sandboxDir` stores the same artifacts, leaves the same files hash-only, or refuses
 * the same way as the Python writer. Also the option through `Thread.saveCase`.
 */

import { strict as assert } from "node:assert";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { after, describe, test } from "node:test";

import { conformanceDir } from "../src/core/resources.js";
import { saveCase } from "../src/case/save.js";
import { replayFailedHint } from "../src/case/verify.js";
import { posixPathText, supplySandboxBytes, wantedSandboxFiles } from "../src/case/sandbox-files.js";
import type { Envelope } from "../src/core/reducer.js";
import { parse, type JsonObject } from "../src/core/strictjson.js";
import { ArtifactStore } from "../src/reference/runtime.js";
import { FakeSandbox, sha256Hex } from "../src/reference/sandbox.js";
import { Thread } from "../src/reference/thread.js";

const dir = join(conformanceDir(), "sandbox-bytes");
const names = readdirSync(dir).filter((n) => n.endsWith(".json")).sort();
const KEYS = ["artifacts", "at", "description", "folder", "log", "outside", "secrets"];

type Entry = { text?: string; base64?: string; symlink?: string };
const entryBytes = (e: Entry): Uint8Array => (e.text !== undefined ? Buffer.from(e.text, "utf8") : Buffer.from(e.base64 as string, "base64"));

/** `work/box` holding the test's folder (none when `folder` is null) and its `outside` files beside it. */
function layOut(t: JsonObject, work: string): string {
  const box = join(work, "box");
  for (const [name, e] of Object.entries(t["outside"] as Record<string, Entry>)) writeFileSync(join(work, name), entryBytes(e));
  if (t["folder"] === null) return box;
  mkdirSync(box);
  for (const [rel, e] of Object.entries(t["folder"] as Record<string, Entry>)) {
    const target = join(box, rel);
    mkdirSync(dirname(target), { recursive: true });
    if (e.symlink !== undefined) symlinkSync(e.symlink, target);
    else writeFileSync(target, entryBytes(e));
  }
  return box;
}

/** The case's artifacts (sorted) and the paths of the files the replay starts with whose bytes it lacks (sorted). */
function outcome(caseDir: string): JsonObject {
  const artsDir = join(caseDir, "artifacts");
  const arts = existsSync(artsDir) ? readdirSync(artsDir).sort() : [];
  const state = parse(readFileSync(join(caseDir, "expected.threads-py.json"))) as JsonObject;
  const reads = (parse(readFileSync(join(caseDir, "sandbox.json"))) as JsonObject)["reads"] as JsonObject[];
  const pairs: [string, string][] = [
    ...Object.entries((state["sandbox"] as JsonObject)["files"] as Record<string, string>),
    ...reads.map((r): [string, string] => [r["path"] as string, r["sha256"] as string]),
  ];
  const hashOnly = [...new Set(pairs.filter(([, sha]) => !arts.includes(sha)).map(([p]) => p))].sort();
  return { artifacts: arts, hash_only: hashOnly };
}

describe("sandbox-bytes conformance", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-sandbox-bytes-"));
  after(() => rmSync(work, { recursive: true, force: true }));

  test("the suite covers every rule", () => assert.ok(names.length >= 12));
  for (const name of names) {
    const t = parse(readFileSync(join(dir, name))) as JsonObject;
    test(`${name}: ${String(t["description"])}`, () => {
      const rest = Object.keys(t).filter((k) => !KEYS.includes(k));
      assert.ok(rest.length === 1 && (rest[0] === "saved" || rest[0] === "error"), `keys ${Object.keys(t).join(", ")}`);
      const here = join(work, name);
      mkdirSync(here);
      const box = layOut(t, here);
      const store = new ArtifactStore(Object.entries(t["artifacts"] as Record<string, string>).map(([k, v]) => [k, new Uint8Array(Buffer.from(v, "base64"))]));
      const r = saveCase(t["log"] as unknown as Envelope[], "c", {
        sandbox: new FakeSandbox({}),
        store,
        at: t["at"] as string,
        dir: join(here, "cases"),
        secrets: t["secrets"] as string,
        verify: false,
        sandboxDir: box,
      });
      if (Object.hasOwn(t, "saved")) {
        assert.ok(r.ok, r.ok ? "" : `${r.error.code}: ${r.error.message}`);
        assert.deepEqual(outcome(join(here, "cases", "c")), t["saved"]);
      } else {
        const want = t["error"] as JsonObject;
        assert.ok(!r.ok, "saved, but the test expects a refusal");
        assert.equal(r.error.code, want["code"]);
        assert.ok(r.error.message.endsWith(want["message_end"] as string), r.error.message);
        assert.equal(r.error.hint, want["hint"]); // Python's hint, byte for byte
      }
    });
  }
});

describe("supplySandboxBytes", () => {
  const work = mkdtempSync(join(tmpdir(), "threads-cases-supply-"));
  after(() => rmSync(work, { recursive: true, force: true }));
  const first = parse(readFileSync(join(dir, names[0] as string))) as JsonObject;
  const events = first["log"] as unknown as Envelope[];

  test("names the folder as Python's pathlib does", () => {
    assert.equal(posixPathText("a//b/./c/"), "a/b/c");
    assert.equal(posixPathText(""), ".");
    assert.equal(posixPathText("./"), ".");
    assert.equal(posixPathText("//x"), "//x");
    assert.equal(posixPathText("///x/../y"), "/x/../y");
  });

  test("a missing folder is refused; the store given is not changed", () => {
    assert.throws(
      () => supplySandboxBytes(events, first["at"] as string, new ArtifactStore(), join(work, "nope/")),
      (e: unknown) => e instanceof Error && e.message === `--sandbox folder ${join(work, "nope")} does not exist`,
    );
    writeFileSync(join(work, "todo.md"), "- ship it\n");
    const store = new ArtifactStore();
    const out = supplySandboxBytes(events, first["at"] as string, store, work);
    assert.equal(store.blobs.size, 0);
    assert.deepEqual([...out.blobs.keys()], [sha256Hex("- ship it\n")]);
  });

  test("Thread.saveCase passes sandboxDir on: the case is verified and passes", () => {
    const t = parse(readFileSync(join(dir, "002-turn-read-supplied.json"))) as JsonObject;
    const here = join(work, "thread");
    mkdirSync(here);
    const box = layOut(t, here);
    const thread = Thread.open(t["log"] as unknown as Envelope[]);
    const without = thread.saveCase("c", { at: t["at"] as string, dir: join(here, "cases") });
    assert.ok(!without.ok && without.error.code === "replay_failed", JSON.stringify(without));
    const r = thread.saveCase("c", { at: t["at"] as string, dir: join(here, "cases"), sandboxDir: box });
    assert.ok(r.ok, r.ok ? "" : `${r.error.code}: ${r.error.message}`);
    assert.deepEqual(outcome(join(here, "cases", "c")), t["saved"]);
  });

  test("replay_failed on bytes the case lacks hints at --sandbox DIR, not verify: false", () => {
    const hint = replayFailedHint('check stop (sandbox_content_missing): sandbox_content_missing at sandbox:notes.txt: ...');
    assert.ok(hint.includes("--sandbox DIR") && !hint.includes("verify: false"), hint);
    assert.ok(replayFailedHint("check must[0] (must_unmatched): ...").includes("verify: false"));
  });

  test("an unknown fork point asks for nothing", () => {
    assert.deepEqual(wantedSandboxFiles(events, "no-such-event"), []);
  });
});
