/** The incremental request hash always equals the hash of the whole request (mirrors tests/test_request_hash.py). */

import { strict as assert } from "node:assert";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";

import {
  Reducer,
  RequestHasher,
  buildRequest,
  conformanceDir,
  deepCopy,
  getDialect,
  parse,
  requestSha256,
  type Envelope,
  type JsonObject,
  type State,
} from "../src/index.js";

const full = (state: State): string => requestSha256(JSON.parse(JSON.stringify(buildRequest(state))));

describe("request hash", () => {
  const dir = join(conformanceDir(), "reduce");
  for (const name of readdirSync(dir).filter((n) => n.endsWith(".json")).sort()) {
    const doc = parse(readFileSync(join(dir, name)), { code: "json_invalid", file: name }) as JsonObject;
    if (!Array.isArray(doc["log"])) continue;
    test(`matches the full hash after every event of ${name}`, () => {
      const dialect = getDialect(doc["dialect"] as string);
      const reducer = new Reducer();
      const hasher = new RequestHasher();
      for (const ev of doc["log"] as JsonObject[]) {
        try {
          reducer.apply(dialect.decodeEvent(ev) as unknown as Envelope);
        } catch {
          break; // a log refused on purpose: compare up to there
        }
        assert.equal(hasher.sha256(reducer.state), full(reducer.state));
      }
    });
  }

  test("appends, in-place extension, replaced lists and agents never leave it stale", () => {
    let seed = 7;
    const rand = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % n;
    };
    for (let round = 0; round < 200; round++) {
      const state = { agent: { model: "m", system: "s", tools: [] }, messages: [] as JsonObject[] } as unknown as State;
      const hasher = new RequestHasher();
      for (let step = 0; step < 30; step++) {
        const msgs = state.messages as unknown as JsonObject[];
        const op = rand(5);
        if (op === 0) msgs.push({ role: rand(2) ? "user" : "assistant", content: [{ type: "text", text: `t${rand(9)}\u{1F600}` }] });
        else if (op === 1 && msgs.length > 0) ((msgs[msgs.length - 1] as JsonObject)["content"] as JsonObject[]).push({ type: "text", text: "x" });
        else if (op === 2) (state as unknown as JsonObject)["messages"] = deepCopy(msgs.slice(0, rand(msgs.length + 1)));
        else if (op === 3) (state as unknown as JsonObject)["agent"] = { model: "m", system: `s${rand(3)}`, tools: [] };
        assert.equal(hasher.sha256(state), full(state));
      }
    }
  });
});
