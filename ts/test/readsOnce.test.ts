/**
 * One read and one fold per case (issue 33), in the TypeScript driver: a run's `reduce` of a
 * case's log and its `replay` of the case read case.json once and fold the log once; the
 * replay parses and checks only the driver's own dialect's log (spec/replay.md 2.1 step 1),
 * with the same answers as a fresh reduce and replay.
 */

import { strict as assert } from "node:assert";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createRequire, syncBuiltinESMExports } from "node:module";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { test } from "node:test";

import { openCase } from "../src/case/loader.js";
import { canonicalLine, getDialect, type JsonObject } from "../src/index.js";
import { reduceLog } from "../src/core/log.js";
import { Reducer } from "../src/core/reducer.js";
import { handleRequest } from "../src/protocol/driver.js";
import { replayCase } from "../src/reference/replay.js";
import { conformanceCases } from "./helpers.js";

/** node:fs as an object whose functions can be replaced (the modules' imports follow it: syncBuiltinESMExports). */
const fs = createRequire(import.meta.url)("node:fs") as typeof import("node:fs");

function copyOf(name: string): { dir: string; done: () => void } {
  const root = mkdtempSync(join(tmpdir(), "threads-ts-reads-once-"));
  const dir = join(root, name);
  cpSync(conformanceCases().find((p) => basename(p) === name) as string, dir, { recursive: true });
  return { dir, done: () => rmSync(root, { recursive: true, force: true }) };
}

/** Run `body`, counting opens by file name and folds of a log from its start (a seq-0 event applied). */
function counted(body: () => void): { opened: Map<string, number>; folds: number } {
  const opened = new Map<string, number>();
  let folds = 0;
  const realOpen = fs.openSync;
  const realApply = Reducer.prototype.apply;
  const note = (p: unknown): void => {
    if (typeof p === "string") opened.set(basename(p), (opened.get(basename(p)) ?? 0) + 1);
  };
  // every read of a file by name opens it (readFileSync too): counted once per read
  fs.openSync = ((p: unknown, ...rest: unknown[]) => (note(p), (realOpen as (...a: unknown[]) => number)(p, ...rest))) as typeof fs.openSync;
  Reducer.prototype.apply = function (this: Reducer, ev: Parameters<Reducer["apply"]>[0]) {
    if (ev.seq === 0) folds++;
    return realApply.call(this, ev);
  };
  syncBuiltinESMExports();
  try {
    body();
  } finally {
    fs.openSync = realOpen;
    Reducer.prototype.apply = realApply;
    syncBuiltinESMExports();
  }
  return { opened, folds };
}

test("a reduce then a replay of one case read case.json once and fold the log once", () => {
  const { dir, done } = copyOf("reads-notes");
  try {
    const log = join(dir, "log.threads-ts.jsonl");
    let reduced: JsonObject = {};
    let replayed: JsonObject = {};
    const { opened, folds } = counted(() => {
      reduced = handleRequest({ cmd: "reduce", path: log, dialect: "threads-ts" });
      replayed = handleRequest({ cmd: "replay", case: { path: dir } });
    });
    assert.equal(opened.get("case.json"), 1, JSON.stringify([...opened]));
    assert.equal(folds, 1); // the reduce request's fold, gone on from by the replay
    // the same answers as a fresh reduce and a replay of the case read from scratch
    const fresh = handleRequest({ cmd: "reduce", log_text: fs.readFileSync(log, "utf8"), dialect: "threads-ts" });
    assert.equal(canonicalLine(reduced), canonicalLine(fresh));
    const d = getDialect("threads-ts");
    assert.equal(canonicalLine(reduced["state"] ?? null), canonicalLine(d.encodeState(reduceLog(log, { dialect: d }) as unknown as JsonObject)));
    const scratch = replayCase(openCase(dir), { implementation: "threads-ts" });
    assert.deepEqual(replayed["requests"], scratch.requests);
    assert.equal(canonicalLine(replayed["consumed"] ?? null), canonicalLine(scratch.consumed as unknown as JsonObject));
    const events = scratch.events.map((e) => d.encodeEvent(e as unknown as JsonObject));
    assert.equal(canonicalLine(replayed["events"] ?? null), canonicalLine(events));
    assert.equal(canonicalLine(replayed["stop"] ?? null), canonicalLine((scratch.stop ?? null) as unknown as JsonObject));
  } finally {
    done();
  }
});

test("a changed log is folded again, and a replay checks only its own dialect's log", () => {
  const { dir, done } = copyOf("reads-notes");
  try {
    handleRequest({ cmd: "reduce", path: join(dir, "log.threads-ts.jsonl"), dialect: "threads-ts" });
    writeFileSync(join(dir, "log.threads-ts.jsonl"), "not json\n");
    // the fold kept is not these bytes: the replay reads the log again, and refuses it
    assert.throws(() => handleRequest({ cmd: "replay", case: { path: dir } }), { code: "log_invalid" });
    // the other dialect's log broken: the case loader refuses the case, a threads-ts replay does not
    const other = copyOf("reads-notes");
    try {
      writeFileSync(join(other.dir, "log.threads-py.jsonl"), "not json\n");
      assert.throws(() => openCase(other.dir), { code: "log_invalid" });
      assert.throws(() => handleRequest({ cmd: "replay", case: { path: other.dir } }, "threads-py"), { code: "log_invalid" });
      const out = handleRequest({ cmd: "replay", case: { path: other.dir } });
      assert.equal(out["stop"], null);
    } finally {
      other.done();
    }
  } finally {
    done();
  }
});
