/**
 * The built-in sandbox tools' definitions written in spec/replay.md 3.4 are, byte for byte, the
 * ones the TypeScript runtime's default agent records (tests/test_replay_spec_tools.py checks
 * the Python runtime's against the same lines).
 */

import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "node:test";

import { canonicalLine } from "../src/core/canonical.js";
import { conformanceDir } from "../src/core/resources.js";
import type { JsonObject } from "../src/core/strictjson.js";
import { AgentSpec } from "../src/reference/agent.js";

test("the default agent records the tool definitions of spec/replay.md 3.4", () => {
  const text = readFileSync(join(dirname(conformanceDir()), "replay.md"), "utf8");
  const block = /Their definitions[\s\S]*?```\n([\s\S]*?)```/.exec(text);
  assert.ok(block !== null, "replay.md 3.4 lost its block of tool definitions");
  const lines = (block[1] ?? "").split("\n").filter((l) => l !== "");
  const tools = new AgentSpec("a", "m").toJson()["tools"] as JsonObject[];
  assert.deepEqual(
    tools.map((t) => canonicalLine(t)),
    lines,
  );
});
