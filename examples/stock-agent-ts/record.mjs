// Record one turn of the agent and save it as the case cases/counts-a1: `node record.mjs`.
// A scripted model stands in for the provider. thread.saveCase replays the case with this
// agent before writing it (its custom tool needs the handler).
import { FakeSandbox, ScriptedModel, Thread, textReply, toolReply } from "threads-cases";

import { stockBot } from "./agent.mjs";

const thread = Thread.create({
  agent: stockBot,
  sandbox: new FakeSandbox({ "inventory.csv": "A1,3\nB2,0\n" }),
  threadId: "stock-demo",
});
const at = thread.events[thread.events.length - 1].event_id;
thread.runTurn("How many A1 are left?", new ScriptedModel([
  toolReply([["tu_1", "read_inventory", { sku: "A1" }]]),
  textReply("3"),
]));
const saved = thread.saveCase("counts-a1", {
  at,
  dir: "cases",
  overwrite: true,
  expect: {
    must: [{ type: "tool_result", data: { name: "read_inventory", is_error: false } }],
    expect: [{ type: "turn_completed" }],
  },
});
if (!saved.ok) {
  console.error(`error[${saved.error.code}]: ${saved.error.message}\n  hint: ${saved.error.hint}`);
  process.exit(2);
}
console.log(`saved ${saved.value.path}`);
