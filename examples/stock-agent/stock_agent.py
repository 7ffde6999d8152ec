"""The agent under test: a stock assistant with one custom sandbox tool.

Its code (the system prompt, the tools and the handler of ``read_inventory``) lives here, in
the user's project; a saved case holds only what it did. ``threads-cases run`` imports it
(``agent`` in threads-cases.toml, or ``--agent stock_agent:agent``) and replays every saved
turn with it, so a change here shows up as a divergence (spec/replay.md section 8).
"""

from __future__ import annotations

from typing import Any

from threads_cases import AgentSpec, ToolSpec
from threads_cases.reference.agent import BUILTIN_TOOLS, ToolContext

SYSTEM = "You track stock. Answer with the count only."


def read_inventory(ctx: ToolContext, inp: dict[str, Any]) -> str:
    """The inventory.csv row of the SKU (``sku,count``): read through ``ctx``, so the
    read is recorded and replayed from the case."""
    rows = ctx.read("inventory.csv").decode("utf-8").splitlines()
    hit = [row for row in rows if row.split(",")[0] == inp["sku"]]
    return hit[0] if hit else f"no SKU {inp['sku']}"


agent = AgentSpec(
    name="stock-bot",
    model="model-x-1",
    system=SYSTEM,
    tools=(
        BUILTIN_TOOLS["read_file"],
        ToolSpec(
            "read_inventory",
            "Look a SKU up in inventory.csv.",
            {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
            kind="sandbox",
            effect="read",
            handler=read_inventory,
        ),
    ),
)
