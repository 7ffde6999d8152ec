"""The data-only tests of spec/conformance/live/ (live turns, spec/replay.md section 11) on the
Python runtime, in process and through its subprocess driver; ts/test/liveConformance.test.ts
runs the same file on the TypeScript runtime."""

from __future__ import annotations

import hashlib
import sys
from typing import Any

import pytest
from conftest import CONFORMANCE, ROOT

from threads_cases.core.canonical import canonical_line
from threads_cases.core.strictjson import read_json_file
from threads_cases.protocol.client import DriverImplementation
from threads_cases.protocol.server import PythonImplementation

DOC = read_json_file(ROOT / "spec" / "conformance" / "live" / "turns.json")
TESTS = DOC["tests"]


def _run(impl: Any, test: dict[str, Any]) -> dict[str, Any]:
    asked: list[str] = []

    def ask(index: int, request: dict[str, Any], sha: str) -> dict[str, Any]:
        asked.append(sha)
        if index < len(test["answers"]):
            return dict(test["answers"][index])
        return {"stop": {**test["then"], "stop_key": f"model:{index}"}}

    message = {"cmd": "replay", "case": {"path": str(CONFORMANCE / test["case"])}}
    out = impl.request({**message, "live": test["live"]}, on_model_call=ask)
    lines = b"".join(canonical_line(e) + b"\n" for e in out["events"])
    return {
        "requests": asked,
        "stop": out["stop"],
        "event_types": [e["type"] for e in out["events"]],
        "events_sha256": hashlib.sha256(lines).hexdigest(),
    }


def _expected(test: dict[str, Any]) -> dict[str, Any]:
    return {k: test[k] for k in ("requests", "stop", "event_types", "events_sha256")}


@pytest.mark.parametrize("test", TESTS, ids=[t["description"][:60] for t in TESTS])
def test_in_process(test: dict[str, Any]) -> None:
    assert _run(PythonImplementation(), test) == _expected(test)


def test_through_the_subprocess_driver() -> None:
    """The same answers through model_call / model_answer lines give the same turns."""
    impl = DriverImplementation(
        "threads-py",
        [sys.executable, "-m", "threads_cases.protocol.driver"],
        dialect="threads-py",
        validate_protocol=True,
    )
    try:
        for test in TESTS:
            assert _run(impl, test) == _expected(test), test["description"]
    finally:
        impl.close()
