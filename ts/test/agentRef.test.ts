/**
 * Loading the user's own agent by reference (spec/replay.md 8.2, 8.3): a module and export
 * from the app folder, a function returning an agent, and the agent_unavailable refusals
 * naming the module and the first line of the error; the loaded agent replays a case whose
 * custom sandbox tool needs its handler (8.4).
 */

import { strict as assert } from "node:assert";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";

import { CaseError } from "../src/core/errors.js";
import { AgentSpec, BadInput, ToolResult, asResult } from "../src/reference/agent.js";
import { loadAgent } from "../src/reference/agent-ref.js";
import { replayCase } from "../src/reference/replay.js";

const CASE = join(import.meta.dirname, "..", "..", "..", "spec", "conformance", "agent", "cases", "counts-stock");

const AGENT = `
const PATH = { type: "string", description: "A relative POSIX path inside the sandbox." };
const tools = [
  { name: "read_file", description: "Read a UTF-8 text file from the sandbox.",
    input_schema: { type: "object", properties: { path: PATH }, required: ["path"] }, kind: "sandbox", effect: "read" },
  { name: "read_inventory", description: "Look a SKU up in inventory.csv.",
    input_schema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] }, kind: "sandbox", effect: "read",
    handler: (ctx, input) => new TextDecoder().decode(ctx.read("inventory.csv")).split("\\n").find((r) => r.split(",")[0] === input.sku) ?? "none" },
];
export const bot = { name: "stock-bot", model: "model-x-1", system: "You track stock.", tools };
export const later = async () => ({ ...bot, system: "Later." });
export default bot;
export const notAnAgent = 42;
`;

function folder(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-ref-"));
  writeFileSync(join(dir, "agent.mjs"), AGENT);
  writeFileSync(join(dir, "broken.mjs"), "export const x = ;\n");
  return dir;
}

async function refusal(ref: string, dir: string): Promise<CaseError> {
  try {
    await loadAgent({ ref, app_dir: [dir] });
  } catch (err) {
    assert.ok(err instanceof CaseError);
    assert.equal(err.code, "agent_unavailable");
    return err;
  }
  assert.fail(`${ref} loaded`);
}

describe("agent references", () => {
  test("a module export from the app folder replays the custom tool with its handler", async () => {
    const dir = folder();
    const agent = await loadAgent({ ref: "./agent.mjs#bot", app_dir: [dir] });
    assert.deepEqual(agent.tools.map((t) => t.name), ["read_file", "read_inventory"]);
    assert.throws(() => replayCase(CASE), (err: unknown) => err instanceof CaseError && err.code === "handler_missing");
    const out = replayCase(CASE, { agent });
    assert.equal(out.stop, null);
    const result = out.events.find((e) => e.type === "tool_result");
    assert.equal(result?.data["content"], "A1,3");
    assert.equal((out.agent as { system: string }).system, "You track stock.");
  });

  test("a ToolResult of another copy of the package is the handler's result, not an unwritable value", async () => {
    // a second instance of the module stands for the copy the user's agent imports
    const copy = (await import(`${new URL("../src/reference/agent.js", import.meta.url).href}?copy`)) as typeof import("../src/reference/agent.js");
    assert.notEqual(copy.ToolResult, ToolResult);
    const own = new copy.ToolResult("cannot count", true);
    assert.ok(own instanceof ToolResult && asResult(own) === own);
    assert.ok(new copy.BadInput("t", "k", "is missing") instanceof BadInput);
    const dir = folder();
    const bot = await loadAgent({ ref: "./agent.mjs#bot", app_dir: [dir] });
    const tools = bot.tools.map((t) => (t.name === "read_inventory" ? { ...t, handler: () => own } : t));
    const out = replayCase(CASE, { agent: new AgentSpec(bot.name, bot.model, bot.system, tools) });
    const result = out.events.find((e) => e.type === "tool_result");
    assert.deepEqual([result?.data["content"], result?.data["is_error"]], ["cannot count", true]);
  });

  test("the default export and a function returning a Promise of an agent load", async () => {
    const dir = folder();
    assert.equal((await loadAgent({ ref: "./agent.mjs", app_dir: [dir] })).name, "stock-bot");
    assert.equal((await loadAgent({ ref: "./agent.mjs#later", app_dir: [dir] })).system, "Later.");
  });

  test("what cannot be loaded is agent_unavailable naming the module and the error", async () => {
    const dir = folder();
    assert.match((await refusal("./nope.mjs#bot", dir)).message, /^cannot load the agent "\.\/nope\.mjs#bot": importing "\.\/nope\.mjs" failed: Error: Cannot find module/);
    assert.match((await refusal("./broken.mjs#x", dir)).message, /importing "\.\/broken\.mjs" failed: SyntaxError: /);
    assert.match((await refusal("./agent.mjs#nope", dir)).message, /"\.\/agent\.mjs" has no export "nope" \(its exports: "bot", "default", "later", "notAnAgent"\)$/);
    assert.match((await refusal("agent.mjs#agent", dir)).message, /importing "agent\.mjs" failed: .*; a file is named with \.\/ \("\.\/agent\.mjs#agent"\)$/);
    assert.doesNotMatch((await refusal("no-such-package-zz9#agent", dir)).message, /a file is named/);
    assert.match((await refusal("./agent.mjs#notAnAgent", dir)).message, /"notAnAgent" is not an agent/);
    assert.match((await refusal("no-such-package-zz9#agent", dir)).message, /importing "no-such-package-zz9" failed/);
  });
});
