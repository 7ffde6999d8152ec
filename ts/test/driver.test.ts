/** The driver: spawn `node dist/driver.js`, speak the protocol, check every answer. */

import { strict as assert } from "node:assert";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

import { readCaseFiles } from "../src/case/case.js";
import { openCase } from "../src/case/loader.js";
import { canonicalLine, getDialect, readLog, validator, type JsonObject, type JsonValue } from "../src/index.js";
import { replayCase } from "../src/reference/replay.js";
import { conformanceCases } from "./helpers.js";

const DIST = dirname(dirname(fileURLToPath(import.meta.url))); // ts/dist

/** Send `lines` to a fresh driver; return its stdout lines and exit status. */
function talk(lines: string[], entry = join(DIST, "driver.js")): Promise<{ answers: JsonObject[]; raw: string[]; status: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [entry], { stdio: ["pipe", "pipe", "pipe"] });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (d: string) => (out += d));
    child.stderr.resume();
    child.on("error", reject);
    child.on("close", (status) => {
      const raw = out.split("\n").filter((l) => l !== "");
      resolve({ answers: raw.map((l) => JSON.parse(l) as JsonObject), raw, status });
    });
    child.stdin.end(lines.map((l) => l + "\n").join(""));
  });
}

const req = (value: JsonObject): string => JSON.stringify(value);
const cases = conformanceCases();
const casePath = cases.find((p) => basename(p) === "weather-stub") as string;

function checkSchema(cmd: string, answer: JsonObject): void {
  const validate = validator(`driver/${cmd}.answer.schema.json`);
  assert.ok(validate(answer), `${cmd} answer breaks its schema: ${JSON.stringify(validate.errors)}`);
}

describe("driver", () => {
  test("answers every command in order, canonically, and exits 0 on shutdown", async () => {
    const c = openCase(casePath);
    const prefix = [...readLog(c.logPath("threads-py"))];
    const turn = replayCase(c).events;
    const artifacts: Record<string, string> = {};
    for (const [rel, data] of readCaseFiles(casePath)) if (rel.startsWith("artifacts/")) artifacts[rel.slice(10)] = Buffer.from(data).toString("base64");
    const logText = readFileSync(c.logPath("threads-ts"), "utf8");
    const lines = [
      req({ id: 1, cmd: "hello", protocol: 1 }),
      req({ id: 2, cmd: "reduce", path: c.logPath("threads-ts") }),
      req({ id: 3, cmd: "reduce", log_text: logText }),
      req({ id: 4, cmd: "reduce", log: prefix as unknown as JsonValue, dialect: "threads-py" }),
      req({ id: 5, cmd: "reduce", log_base64: Buffer.from("{}\n").toString("base64") }),
      req({ id: 6, cmd: "match", matcher: { type: "thread_started", seq: 0.0 }, event: prefix[0] as unknown as JsonObject }),
      req({ id: 7, cmd: "match", matcher: { type: "x", sqe: 1 }, event: {} }),
      '{"id":8,"cmd":"canonicalize","text":"{\\"b\\":1.0,\\"a\\":[-0.0,1e21,\\"\\u00e9\\"]}"}',
      req({ id: 9, cmd: "canonicalize", text: '{"a":1,"a":2}' }),
      req({ id: 10, cmd: "canonicalize", value: { z: 1, a: null } }),
      req({ id: 11, cmd: "replay", case: { path: casePath } }),
      req({
        id: 12,
        cmd: "write_case",
        thread: { log: [...prefix, ...turn] as unknown as JsonValue, artifacts },
        name: c.name,
        at: c.meta["at"] as string,
        expect: c.meta["expect"] as JsonObject,
        external_effects: c.meta["external_effects"] as string,
      }),
      "this is not json",
      "[1, 2]",
      req({ id: 13, cmd: "no_such_command" }),
      req({ id: 14, cmd: "reduce", path: "/no/such/log.jsonl" }),
      req({ id: 15, cmd: "reduce", log: [], dialect: "klingon" }),
      req({ id: 16, cmd: "write_case", thread: { log: [{ type: "x" }] }, name: "x", at: "a", expect: {}, external_effects: "stub" }),
      req({ id: 17, cmd: "replay", case: { path: "/no/such/case" } }),
      req({ id: 18, cmd: "shutdown" }),
      req({ id: 19, cmd: "hello", protocol: 1 }),
    ];
    const { answers, raw, status } = await talk(lines);
    assert.equal(status, 0);
    assert.equal(answers.length, 19, "one answer per request before shutdown, none after");
    raw.forEach((line, i) => assert.equal(line, canonicalLine(answers[i] as JsonValue), "answers are canonical lines"));
    const byId = (id: number): JsonObject => answers.find((a) => a["id"] === id) as JsonObject;

    const hello = byId(1);
    checkSchema("hello", hello);
    assert.deepEqual(hello["implementation"], {
      name: "threads-ts",
      language: "typescript",
      version: "0.1.0",
      dialect: "threads-ts",
      homepage: "https://threads-cases.dev",
    });
    assert.deepEqual(hello["capabilities"], ["reduce", "match", "canonicalize", "replay", "write_case", "live", "agent", "library"]);

    const expected = JSON.parse(readFileSync(c.expectedPath("threads-ts"), "utf8")) as JsonValue;
    for (const id of [2, 3]) {
      checkSchema("reduce", byId(id));
      assert.deepEqual(byId(id)["state"], expected);
    }
    const expectedPy = JSON.parse(readFileSync(c.expectedPath("threads-py"), "utf8")) as JsonValue;
    assert.deepEqual(byId(4)["state"], expectedPy, "the state is in the requested dialect");
    assert.equal((byId(5)["error"] as JsonObject)["code"], "log_invalid");

    assert.equal(byId(6)["matched"], true);
    checkSchema("match", byId(6));
    assert.equal((byId(7)["error"] as JsonObject)["code"], "invalid_request");

    assert.deepEqual([byId(8)["text"], byId(8)["document"]], ['{"a":[0,1e+21,"é"],"b":1}', '{\n  "a": [\n    0,\n    1e+21,\n    "é"\n  ],\n  "b": 1\n}\n']);
    checkSchema("canonicalize", byId(8));
    assert.equal((byId(9)["error"] as JsonObject)["code"], "json_invalid");
    assert.equal(byId(10)["text"], '{"a":null,"z":1}');

    const replay = byId(11);
    checkSchema("replay", replay);
    const ts = getDialect("threads-ts");
    const direct = replayCase(casePath);
    assert.deepEqual(replay["events"], direct.events.map((e) => ts.encodeEvent(e as unknown as JsonObject)));
    assert.deepEqual([replay["stop"], replay["requests"], replay["consumed"]], [null, direct.requests, direct.consumed]);

    const written = byId(12);
    checkSchema("write_case", written);
    const committed = readCaseFiles(casePath);
    const files = written["files"] as Record<string, string>;
    assert.deepEqual(Object.keys(files).sort(), [...committed.keys()].sort());
    for (const [rel, data] of committed) assert.ok(Buffer.from(files[rel] as string, "base64").equals(Buffer.from(data)), rel);

    const garbage = answers.filter((a) => a["id"] === null);
    assert.equal(garbage.length, 2);
    for (const g of garbage) {
      assert.equal((g["error"] as JsonObject)["code"], "protocol_error");
      checkSchema("hello", g); // any answer schema accepts the error form
    }
    assert.equal((byId(13)["error"] as JsonObject)["code"], "invalid_request");
    assert.equal((byId(14)["error"] as JsonObject)["code"], "log_invalid");
    assert.equal((byId(15)["error"] as JsonObject)["code"], "dialect_unknown");
    assert.equal((byId(16)["error"] as JsonObject)["code"], "log_invalid");
    assert.equal((byId(17)["error"] as JsonObject)["code"], "invalid_request");
    assert.equal(byId(19), undefined);
  });

  test("dist/src/protocol/driver.js serves too, and end of input exits 0", async () => {
    const { answers, status } = await talk([req({ id: 7, cmd: "hello", protocol: 1 })], join(DIST, "src", "protocol", "driver.js"));
    assert.equal(status, 0);
    assert.equal(answers.length, 1);
    assert.equal(answers[0]?.["ok"], true);
  });

  test("an unexpected exception is internal_error and the driver goes on", async () => {
    // a write_case whose expect.must is not a list of matchers is refused, never fatal
    const { answers } = await talk([
      req({ id: 1, cmd: "write_case", thread: { log: [] }, name: "x", at: "a", expect: { must: 5 }, external_effects: "stub" }),
      req({ id: 2, cmd: "match", matcher: { type: "x" }, event: { type: "x" } }),
    ]);
    assert.equal(answers.length, 2);
    assert.equal(answers[0]?.["ok"], false);
    assert.equal(answers[1]?.["matched"], true);
  });
});
