"""A conformance test that needs a capability is sent only to a driver announcing it
(spec/conformance.md 5.1, driver-protocol.md 2.5.1, 2.5.2, 2.8): on one that does not, the
test is ``error`` and its request never leaves the harness (the held-back Go trial found
agent/ and live/ requests sent to a driver announcing neither)."""

from __future__ import annotations

from typing import Any

import pytest
from conformance_runs import SUITE, area_tests

from threads_cases.harness.check.conformance import load_skips, run_test
from threads_cases.protocol.server import PythonImplementation


class ReaderOnly(PythonImplementation):
    """threads-py announcing only the reader's commands and replay; it records each request."""

    def __init__(self) -> None:
        super().__init__()
        self.sent: list[str] = []

    def hello(self) -> dict[str, Any]:
        out = super().hello()
        return {**out, "capabilities": ["reduce", "match", "canonicalize", "replay"]}

    def request(self, message: dict[str, Any], on_model_call: Any = None) -> dict[str, Any]:
        self.sent.append(message["cmd"])
        return super().request(message, on_model_call)

    def exchange_line(self, line: bytes) -> Any:
        self.sent.append("line")
        return super().exchange_line(line)


@pytest.mark.parametrize(
    ("area", "code"),
    [
        ("agent", "agent_unavailable"),
        ("live", "invalid_request"),
        ("thread-api", "invalid_request"),
        ("drafts", "invalid_request"),
        ("secrets", "invalid_request"),
        ("save-errors", "invalid_request"),
        ("sandbox-bytes", "invalid_request"),
    ],
)
def test_a_test_needing_a_capability_not_announced_is_an_error_and_not_sent(
    area: str, code: str
) -> None:
    impl = ReaderOnly()
    test = area_tests(area)[0]
    r = run_test(test, impl, load_skips(SUITE, impl.name))
    assert (r.verdict, r.reasons) == ("error", [code]), r.message
    assert "capability" in r.message
    assert impl.sent == []


def test_open_case_needs_only_replay() -> None:
    """A replayer's case loader is checked at the replayer level (case-errors/)."""
    impl = ReaderOnly()
    r = run_test(area_tests("case-errors")[0], impl, load_skips(SUITE, impl.name))
    assert r.verdict == "pass", r.message
    assert impl.sent == ["open_case"]
