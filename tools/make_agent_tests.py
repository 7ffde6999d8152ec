"""Write spec/conformance/agent/: data-only tests of replaying the user's own agent
(spec/replay.md section 8, spec/driver-protocol.md 2.5.2, spec/conformance.md 2.12).

* ``cases/counts-stock/``: a turn recorded through the Python ``Thread`` API (fixed thread id
  and clock) whose agent has a custom sandbox tool, ``read_inventory``: a case holds its
  definition, never its handler;
* ``refusals.json``: replay requests and the failure every driver answers: the case replayed
  without an agent (``handler_missing``, the message byte for byte), agents that cannot be
  loaded (``agent_unavailable``), malformed ``agent`` fields (``invalid_request`` with the
  pointer).

``tests/test_conformance_agent.py`` and ``ts/test/agentConformance.test.ts`` run the files.
Run ``python tools/make_agent_tests.py`` after changing the recording or a refusal.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "spec" / "conformance" / "agent"

from threads_cases.core.canonical import canonical_document  # noqa: E402
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec, ToolSpec  # noqa: E402
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply  # noqa: E402
from threads_cases.reference.runtime import Clock  # noqa: E402
from threads_cases.reference.sandbox import FakeSandbox  # noqa: E402
from threads_cases.reference.thread import Thread  # noqa: E402


def read_inventory(ctx: Any, inp: dict[str, Any]) -> str:
    """The row of inventory.csv whose first column is the SKU."""
    rows = ctx.read("inventory.csv").decode("utf-8").splitlines()
    hit = [r for r in rows if r.split(",")[0] == inp["sku"]]
    return hit[0] if hit else f"no SKU {inp['sku']}"


INVENTORY = ToolSpec(
    "read_inventory",
    "Look a SKU up in inventory.csv.",
    {"type": "object", "properties": {"sku": {"type": "string"}}, "required": ["sku"]},
    kind="sandbox",
    effect="read",
    handler=read_inventory,
)
AGENT = AgentSpec(
    "stock-bot", "model-x-1", "You track stock.", (BUILTIN_TOOLS["read_file"], INVENTORY)
)
CASE = "cases/counts-stock"
HANDLER_MISSING = (
    'sandbox tool "read_inventory" has no handler: a case holds a tool\'s definition, not its code'
)


def record(out: Path) -> None:
    thread = Thread.create(
        agent=AGENT,
        thread_id="thread-stock",
        sandbox=FakeSandbox({"inventory.csv": "A1,3\nB2,0\n"}),
        clock=Clock(1_700_000_000_000),
    )
    at = thread.events[-1]["event_id"]
    thread.run_turn(
        "How many A1 are left?",
        ScriptedModel([tool_reply(("tu_1", "read_inventory", {"sku": "A1"})), text_reply("3.")]),
    )
    must = [{"type": "tool_result", "data": {"name": "read_inventory", "content": "A1,3"}}]
    saved = thread.save_case(
        "counts-stock", at=at, dir=out / "cases", expect={"must": must, "expect": []}
    )
    assert saved.ok, saved.error


def replay(agent: Any = None) -> dict[str, Any]:
    request: dict[str, Any] = {"cmd": "replay", "id": 1, "case": {"path": CASE}}
    if agent is not None:
        request["agent"] = agent
    return request


TESTS = [
    {
        "description": "a custom sandbox tool replayed without the user's agent is refused "
        "with handler_missing: a case holds the tool's definition, not its handler",
        "request": replay(),
        "code": "handler_missing",
        "message": HANDLER_MISSING,
        "pointer": None,
    },
    {
        "description": "an agent no implementation can import is agent_unavailable",
        "request": replay({"ref": "no-such-package-zz9#agent", "app_dir": []}),
        "code": "agent_unavailable",
        "message": None,
        "pointer": None,
    },
    {
        "description": "an agent field that is not an object is refused at /agent",
        "request": replay("my_agent:agent"),
        "code": "invalid_request",
        "message": None,
        "pointer": "/agent",
    },
    {
        "description": "an agent reference that is not a string is refused at /agent/ref",
        "request": replay({"ref": 1}),
        "code": "invalid_request",
        "message": None,
        "pointer": "/agent/ref",
    },
    {
        "description": "an app_dir that is not a list of strings is refused at /agent/app_dir",
        "request": replay({"ref": "a:b", "app_dir": "src"}),
        "code": "invalid_request",
        "message": None,
        "pointer": "/agent/app_dir",
    },
    {
        "description": "a key the agent field does not have is refused at /agent",
        "request": replay({"ref": "a:b", "module": "a"}),
        "code": "invalid_request",
        "message": None,
        "pointer": "/agent",
    },
]


def main() -> None:
    shutil.rmtree(OUT / "cases", ignore_errors=True)
    OUT.mkdir(parents=True, exist_ok=True)
    record(OUT)
    doc = {
        "description": "Replay requests naming the user's own agent, or needing one, and the "
        "failure every driver answers (spec/replay.md 8, spec/driver-protocol.md 2.5.2); case "
        "paths are relative to this folder.",
        "tests": TESTS,
    }
    (OUT / "refusals.json").write_bytes(canonical_document(json.loads(json.dumps(doc))))


if __name__ == "__main__":
    main()
