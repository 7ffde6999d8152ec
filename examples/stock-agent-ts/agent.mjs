// The agent under test: a stock assistant with one custom sandbox tool, written against the
// npm package. `threads-cases run` has threads-ts import it (`agent` in threads-cases.toml,
// or `--agent ./agent.mjs#stockBot`) and replay every saved turn with it (spec/replay.md 8).
// A TypeScript agent works the same once compiled (or run through your own loader).
import { AgentSpec, BUILTIN_TOOLS } from "threads-cases";

export const SYSTEM = "You track stock. Answer with the count only.";

/** The inventory.csv row of the SKU (`sku,count`), read through ctx so the read is recorded. */
function readInventory(ctx, input) {
  const rows = new TextDecoder().decode(ctx.read("inventory.csv")).split("\n");
  const hit = rows.filter((row) => row.split(",")[0] === input.sku);
  return hit.length > 0 ? hit[0] : `no SKU ${input.sku}`;
}

export const stockBot = new AgentSpec("stock-bot", "model-x-1", SYSTEM, [
  BUILTIN_TOOLS.read_file,
  {
    name: "read_inventory",
    description: "Look a SKU up in inventory.csv.",
    input_schema: { type: "object", properties: { sku: { type: "string" } }, required: ["sku"] },
    kind: "sandbox",
    effect: "read",
    handler: readInventory,
  },
]);
