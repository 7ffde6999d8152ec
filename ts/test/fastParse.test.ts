/**
 * The log reader's compiled parse (`fastParse`, ts/src/core/log.ts) takes only lines the strict
 * reader reads to the same value and whose value rules hold: over every line of the reduce
 * conformance cases, the bad-input logs and lines made to break each rule it relies on.
 */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";

import { CaseError, canonicalLine, conformanceDir, parse, specDir, type JsonObject, type JsonValue } from "../src/index.js";
import { checkLineValue, fastParse } from "../src/core/log.js";

const enc = new TextEncoder();

function logLines(): Uint8Array[] {
  const out: Uint8Array[] = [];
  const dir = join(conformanceDir(), "reduce");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const c = JSON.parse(readFileSync(join(dir, name), "utf8")) as JsonObject;
    let data: Uint8Array;
    if (typeof c["log_text"] === "string") data = enc.encode(c["log_text"]);
    else if (typeof c["log_base64"] === "string") data = Buffer.from(c["log_base64"], "base64");
    else data = enc.encode((c["log"] as JsonValue[]).map((ev) => canonicalLine(ev) + "\n").join(""));
    out.push(...split(data));
  }
  const bad = join(specDir(), "..", "tests", "badinput", "logs");
  for (const name of readdirSync(bad).filter((n) => n.endsWith(".jsonl"))) out.push(...split(readFileSync(join(bad, name))));
  return out;
}

function split(data: Uint8Array): Uint8Array[] {
  const out: Uint8Array[] = [];
  let start = 0;
  for (let i = 0; i <= data.length; i++) {
    if (i === data.length || data[i] === 0x0a) {
      out.push(data.subarray(start, i));
      start = i + 1;
    }
  }
  return out;
}

const MADE = [
  '{"a":1,"a":2}',
  '{"a":9007199254740992}',
  '{"a":-9007199254740992}',
  '{"a":9007199254740991}',
  '{"a":10000000000000000}',
  '{"a":1234567890123456.5}',
  '{"a":1e+21}',
  '{"a":1e-7}',
  '{"a":"\\ud800"}',
  '{"a":"\\ud83d\\ude00"}',
  '{"a": 1}',
  '{"__proto__":{"b":1}}',
  '\ufeff{"a":1}',
  '{"a":"\\u0041"}',
  '{"1":1,"b":2}',
  "{" + '"a":['.repeat(300) + "]".repeat(300) + "}",
  "{" + '"a":['.repeat(240) + "]".repeat(240) + "}",
].map((t) => enc.encode(t));

test("fastParse takes only what the strict reader reads alike and the value rules accept", () => {
  let taken = 0;
  for (const body of [...logLines(), ...MADE]) {
    const fast = fastParse(body);
    if (fast === undefined) continue;
    taken++;
    const strict = parse(body, { code: "log_invalid" });
    assert.deepEqual(fast, strict, Buffer.from(body).toString());
    assert.doesNotThrow(() => checkLineValue(body, strict), Buffer.from(body).toString());
  }
  assert.ok(taken > 500, `taken ${taken}`);
});

test("fastParse passes on each line made to break a rule it relies on", () => {
  const refused = (body: Uint8Array): boolean => {
    try {
      checkLineValue(body, parse(body, { code: "log_invalid" }));
      return false;
    } catch (err) {
      if (err instanceof CaseError) return true;
      throw err;
    }
  };
  for (const body of MADE) if (refused(body)) assert.equal(fastParse(body), undefined, Buffer.from(body).toString());
  assert.ok(MADE.filter(refused).length >= 5);
});
