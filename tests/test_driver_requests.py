"""Driver requests are checked, not trusted (spec/driver-protocol.md, "Checked messages"):
the data-only tests of spec/conformance/driver-requests/ through the Python server loop,
and every answer is a canonical line. ts/test/driverRequests.test.ts runs the same data."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest

from threads_cases.core.canonical import canonical_line
from threads_cases.core.strictjson import parse
from threads_cases.protocol.server import serve

DATA = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "driver-requests"
TESTS = [t for f in sorted(DATA.glob("*.json")) for t in json.loads(f.read_text())["tests"]]


def answers(*requests: Any) -> list[bytes]:
    out = io.BytesIO()
    serve(io.BytesIO(b"".join(canonical_line(r) + b"\n" for r in requests)), out)
    return out.getvalue().splitlines()


@pytest.mark.parametrize("test", TESTS, ids=[t["description"] for t in TESTS])
def test_a_malformed_request_is_invalid_request_with_its_pointer(test: dict[str, Any]) -> None:
    if "request_text" in test:  # a line no canonical value writes (1.0, 1e16): sent as is
        out = io.BytesIO()
        serve(io.BytesIO(test["request_text"].encode("utf-8") + b"\n"), out)
        (line,) = out.getvalue().splitlines()
    else:
        (line,) = answers(test["request"])
    answer = parse(line)
    assert answer["ok"] is False
    assert (answer["error"]["code"], answer["error"].get("pointer")) == (
        test["code"],
        test["pointer"],
    ), answer
    assert answer["id"] == test.get("answer_id", test.get("request", {}).get("id"))


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


class _Pipe(io.BytesIO):
    """A stream that cannot be read twice (as stdin)."""

    def seekable(self) -> bool:
        return False


@pytest.mark.parametrize("seekable", [True, False])
def test_a_duplicate_event_id_is_reported_at_the_earliest_repeating_line(seekable: bool) -> None:
    from threads_cases.core.errors import CaseError
    from threads_cases.core.log import read_log

    base = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"
    log = (base / "multi-turn-prefix" / "log.threads-py.jsonl").read_bytes().splitlines()
    events = [parse(line) for line in log]
    assert len(events) >= 3
    events[2]["event_id"] = events[1]["event_id"]  # line 3 repeats line 2
    data = b"".join(canonical_line(e) + b"\n" for e in events)
    stream = io.BytesIO(data) if seekable else _Pipe(data)
    with pytest.raises(CaseError) as info:
        list(read_log(stream))
    assert (info.value.code, info.value.location.line, info.value.location.pointer) == (
        "log_invalid",
        3,
        "/event_id",
    )
