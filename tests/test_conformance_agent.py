"""The data-only tests of spec/conformance/agent/ through the Python server loop (the
subprocess driver's), with the case paths taken from that folder: a custom sandbox tool
replayed without its handler is handler_missing, an agent that cannot be loaded is
agent_unavailable, a malformed agent field is invalid_request at its pointer
(spec/replay.md 8, spec/driver-protocol.md 2.5.2). ts/test/agentConformance.test.ts runs the
same data."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from threads_cases.core.canonical import canonical_line
from threads_cases.core.strictjson import parse
from threads_cases.protocol.server import serve

DATA = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "agent"
TESTS = json.loads((DATA / "refusals.json").read_text())["tests"]


def answer(request: dict[str, Any]) -> dict[str, Any]:
    out = io.BytesIO()
    serve(io.BytesIO(canonical_line(request) + b"\n"), out)
    (line,) = out.getvalue().splitlines()
    result: dict[str, Any] = parse(line)
    return result


@pytest.mark.parametrize("test", TESTS, ids=[t["description"] for t in TESTS])
def test_each_refusal_is_answered_as_the_data_says(
    test: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(DATA)
    got = answer(test["request"])
    assert got["ok"] is False and got["id"] == 1, got
    assert (got["error"]["code"], got["error"].get("pointer")) == (test["code"], test["pointer"])
    if test["message"] is not None:
        assert got["error"]["message"] == test["message"]


def test_the_data_pins_the_refusals_of_section_8() -> None:
    codes = {t["code"] for t in TESTS}
    assert codes == {"handler_missing", "agent_unavailable", "invalid_request"}
    assert (DATA / "cases" / "counts-stock" / "case.json").is_file()
