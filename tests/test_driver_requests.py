"""Driver requests are checked, not trusted (spec/driver-protocol.md, "Checked messages"):
the data-only tests of spec/conformance/driver-requests/ through the Python server loop,
and every answer is a canonical line. ts/test/driverRequests.test.ts runs the same data."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from threads_cases.core.strictjson import canonical_line, parse
from threads_cases.protocol.server import serve

DATA = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "driver-requests"
TESTS = [t for f in sorted(DATA.glob("*.json")) for t in json.loads(f.read_text())["tests"]]


def answers(*requests: Any) -> list[bytes]:
    out = io.BytesIO()
    serve(io.BytesIO(b"".join(canonical_line(r) + b"\n" for r in requests)), out)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("test", TESTS, ids=[t["description"] for t in TESTS])
def test_a_malformed_request_is_invalid_request_with_its_pointer(test: dict[str, Any]) -> None:
    (line,) = answers(test["request"])
    answer = parse(line)
    assert answer["ok"] is False
    assert (answer["error"]["code"], answer["error"].get("pointer")) == (
        test["code"],
        test["pointer"],
    ), answer
    assert answer["id"] == test["request"].get("id")


def test_every_answer_is_a_canonical_line() -> None:
    lines = answers(
        {"id": 1, "cmd": "hello", "protocol": 1},
        {"id": 2, "cmd": "canonicalize", "value": {"b": [1.5, "é"], "a": 1}},
        {"id": 3, "cmd": "match", "matcher": {"type": "x"}, "event": {"type": "x", "data": {}}},
        {"id": 4, "cmd": "reduce", "log": "x"},
    )
    assert len(lines) == 4
    for line in lines:
        assert canonical_line(parse(line)) == line
    assert len(TESTS) >= 14
