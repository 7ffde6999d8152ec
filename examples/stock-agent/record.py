"""Record one turn of the agent and save it as the case cases/counts-a1.

    python record.py

A scripted model stands in for the provider, so no API key is needed; with a real model the
recording is the same. ``thread.save_case`` replays the case with this agent before writing
it (its custom tool needs the handler), and drafts nothing: the matchers are given.
"""

from __future__ import annotations

import sys

from stock_agent import agent

from threads_cases import FakeSandbox, ScriptedModel, Thread
from threads_cases.reference.model import text_reply, tool_reply

thread = Thread.create(
    agent=agent,
    thread_id="stock-demo",
    sandbox=FakeSandbox({"inventory.csv": "A1,3\nB2,0\n"}),
)
at = thread.events[-1]["event_id"]
thread.run_turn(
    "How many A1 are left?",
    ScriptedModel([tool_reply(("tu_1", "read_inventory", {"sku": "A1"})), text_reply("3")]),
)
saved = thread.save_case(
    "counts-a1",
    at=at,
    dir="cases",
    overwrite=True,
    expect={
        "must": [{"type": "tool_result", "data": {"name": "read_inventory", "is_error": False}}],
        "expect": [{"type": "turn_completed"}],
    },
)
if not saved.ok:
    assert saved.error is not None
    sys.exit(f"error[{saved.error.code}]: {saved.error.message}\n  hint: {saved.error.hint}")
print(f"saved {saved.value.path if saved.value else ''}")
