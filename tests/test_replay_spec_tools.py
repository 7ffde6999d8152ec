"""The built-in sandbox tools' definitions written in spec/replay.md 3.4 are, byte for byte,
the ones the Python runtime's default agent records (ts/test/replaySpecTools.test.ts checks
the TypeScript runtime's against the same lines)."""

from __future__ import annotations

import re
from pathlib import Path

from threads_cases.core.canonical import canonical_line
from threads_cases.core.strictjson import parse
from threads_cases.reference.agent import BUILTIN_TOOLS, AgentSpec

SPEC = Path(__file__).resolve().parent.parent / "spec" / "replay.md"


def spec_lines() -> list[bytes]:
    """The lines of the code block under 3.4's "Their definitions"."""
    text = SPEC.read_text("utf-8")
    block = re.search(r"Their definitions.*?```\n(.*?)```", text, re.S)
    assert block is not None, "replay.md 3.4 lost its block of tool definitions"
    return [line.encode() for line in block.group(1).splitlines()]


def test_the_spec_lists_each_built_in_tool_once_as_a_canonical_line() -> None:
    lines = spec_lines()
    assert [parse(x)["name"] for x in lines] == [
        "read_file",
        "write_file",
        "list_files",
        "delete_file",
    ]
    assert all(canonical_line(parse(x)) == x for x in lines)


def test_the_default_agent_records_those_bytes() -> None:
    agent = AgentSpec("a", "m").to_json()
    assert [canonical_line(t) for t in agent["tools"]] == spec_lines()
    assert [canonical_line(t.to_json()) for t in BUILTIN_TOOLS.values()] == spec_lines()
