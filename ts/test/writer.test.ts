/**
 * writeCaseDir under concurrency and the case lock shared with Python (spec/case-format.md
 * section 6): many writers of one case, in worker threads, always leave one complete case.
 */

import { strict as assert } from "node:assert";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

import { readCaseFiles } from "../src/case/case.js";
import { writeCaseDir } from "../src/case/writer.js";

const work = mkdtempSync(join(tmpdir(), "threads-cases-writer-"));
after(() => rmSync(work, { recursive: true, force: true }));

const WRITER_URL = pathToFileURL(join(import.meta.dirname, "..", "src", "case", "writer.js")).href;
const WORKER = `
const { parentPort, workerData } = require("node:worker_threads");
import(${JSON.stringify(WRITER_URL)}).then(({ writeCaseDir }) => {
  const files = new Map(workerData.files.map(([k, v]) => [k, Buffer.from(v, "base64")]));
  parentPort.on("message", (msg) => {
    if (msg === "stop") return parentPort.close();
    try {
      parentPort.postMessage(writeCaseDir(workerData.dir, "c", files, true));
    } catch (err) {
      parentPort.postMessage("error: " + err.message);
    }
  });
  parentPort.postMessage("ready");
});
`;

/** The files of writer `i`: several files and folders, all differing from writer to writer. */
function variant(i: number): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  files.set("case.json", Buffer.from(`{"writer": ${i}}\n`));
  for (let k = 0; k < 2; k++) {
    const data = Buffer.from(`writer ${i} file ${k}\n`.repeat(50 + i));
    files.set(`artifacts/${createHash("sha256").update(data).digest("hex")}`, data);
  }
  files.set("model.json", Buffer.from(`{"replies": ${i}}\n`));
  return files;
}

function key(files: ReadonlyMap<string, Uint8Array>): string {
  return [...files].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${Buffer.from(v).toString("base64")}`).join(";");
}

function next(w: Worker): Promise<string> {
  return new Promise((resolve, reject) => {
    w.once("message", resolve);
    w.once("error", reject);
  });
}

async function race(writers: number, rounds: number): Promise<void> {
  const dir = join(work, `w${writers}`);
  const variants = Array.from({ length: writers }, (_, i) => variant(i));
  const complete = new Set(variants.map(key));
  const workers = variants.map(
    (files) =>
      new Worker(WORKER, {
        eval: true,
        workerData: { dir, files: [...files].map(([k, v]) => [k, Buffer.from(v).toString("base64")]) },
      }),
  );
  try {
    assert.deepEqual(await Promise.all(workers.map(next)), workers.map(() => "ready"));
    for (let round = 0; round < rounds; round++) {
      const done = workers.map(next);
      for (const w of workers) w.postMessage("go");
      const outcomes = await Promise.all(done);
      for (const o of outcomes) assert.ok(["created", "replaced", "unchanged"].includes(o), `round ${round}: ${o}`);
      assert.ok(complete.has(key(readCaseFiles(join(dir, "c")))), `round ${round}: the case is not one writer's complete case`);
      assert.deepEqual(readdirSync(dir), ["c"], `round ${round}: strays or a lock left beside the case`);
    }
  } finally {
    for (const w of workers) w.postMessage("stop");
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

describe("writeCaseDir", () => {
  test("8 concurrent writers, 30 rounds: always one complete case", async () => {
    await race(8, 30);
  });

  // 32 writers contend for one lock; 8 rounds are 256 contended writes (30 rounds took 19 s of
  // the suite's wall time and 12 CPU-seconds, mostly waiting writers polling the lock)
  test("32 concurrent writers, 8 rounds: always one complete case", async () => {
    await race(32, 8);
  });

  test("a lock whose owner process is gone is taken over; strays of dead writers are removed", () => {
    const dir = join(work, "stale");
    mkdirSync(join(dir, ".c.lock"), { recursive: true });
    // a pid far above any pid_max on Linux: no such process
    writeFileSync(join(dir, ".c.lock", "owner.json"), JSON.stringify({ host: hostname(), pid: 2 ** 30, token: "dead" }));
    mkdirSync(join(dir, ".c.tmp-1-deadbeef"));
    assert.equal(writeCaseDir(dir, "c", variant(1), false), "created");
    assert.deepEqual(readdirSync(dir), ["c"]);
  });

  test("a lock held by a live process (Python's or ours) is waited for", async () => {
    const dir = join(work, "held");
    mkdirSync(join(dir, ".c.lock"), { recursive: true });
    writeFileSync(join(dir, ".c.lock", "owner.json"), JSON.stringify({ host: hostname(), pid: process.pid, token: "live" }));
    const worker = new Worker(WORKER, { eval: true, workerData: { dir, files: [...variant(2)].map(([k, v]) => [k, Buffer.from(v).toString("base64")]) } });
    try {
      assert.equal(await next(worker), "ready");
      const done = next(worker);
      worker.postMessage("go");
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(readdirSync(dir), [".c.lock"], "the writer went ahead while the lock was held");
      rmSync(join(dir, ".c.lock"), { recursive: true });
      assert.equal(await done, "created");
      assert.equal(key(readCaseFiles(join(dir, "c"))), key(variant(2)));
    } finally {
      await worker.terminate();
    }
  });
});

describe("writeCaseDir makes the save checks itself (spec/case-format.md 6.6)", () => {
  const blob = Buffer.from("bytes\n");
  const good = (): Map<string, Uint8Array> =>
    new Map<string, Uint8Array>([
      ["case.json", Buffer.from("{}\n")],
      [`artifacts/${createHash("sha256").update(blob).digest("hex")}`, blob],
    ]);
  const refused = (name: string, files: Map<string, Uint8Array>, code: string): string => {
    const root = mkdtempSync(join(work, "checks-"));
    let message = "";
    assert.throws(
      () => writeCaseDir(join(root, "cases"), name, files, false),
      (e: unknown) => {
        message = (e as { message: string }).message;
        return (e as { code: string }).code === code;
      },
    );
    assert.deepEqual(readdirSync(root), []); // nothing written, above the case or anywhere
    return message;
  };
  for (const rel of ["../../x.txt", "/etc/x", "a/../b", ".hidden", "a//b", "a\\b", "", "sub/CON", "nul.txt"]) {
    test(`refuses the file path ${JSON.stringify(rel)}`, () => {
      const files = good();
      files.set(rel, Buffer.from("x"));
      assert.ok(refused("c", files, "invalid_request").startsWith("case file "));
    });
  }
  for (const name of ["CON", "../c", ".c", "a/b", "LPT1.txt"]) {
    test(`refuses the case name ${JSON.stringify(name)}`, () => {
      refused(name, good(), "invalid_request");
    });
  }
  test("refuses an artifact whose bytes do not match its name", () => {
    const files = new Map<string, Uint8Array>([[`artifacts/${createHash("sha256").update("other").digest("hex")}`, blob]]);
    assert.ok(refused("c", files, "invalid_request").includes("a corrupt case"));
    refused("c", new Map([["artifacts/abc", blob]]), "invalid_request");
  });
  test("refuses a credential unless allowed, never quoting it", () => {
    const key = "sk-ant-api03-" + "Zq9x".repeat(20);
    const files = new Map<string, Uint8Array>([["case.json", Buffer.from(`{"input": "${key}"}\n`)]]);
    assert.ok(!refused("c", files, "secret_detected").includes(key.slice(0, 16)));
    const root = mkdtempSync(join(work, "allowed-"));
    assert.equal(writeCaseDir(root, "c", files, false, "allow"), "created");
  });
});
