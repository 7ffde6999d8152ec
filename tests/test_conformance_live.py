"""The data-only tests of spec/conformance/live/ (live turns, spec/replay.md section 11) on the
Python runtime, in process and through its subprocess driver, by the harness's own runner
(threads_cases/harness/check/conformance_turns.py, the code ``threads-cases conformance --area
live`` runs); ts/test/liveConformance.test.ts runs the same file on the TypeScript runtime."""

from __future__ import annotations

import sys
from typing import Any

import pytest
from conftest import ROOT

from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.check.conformance import load_skips, load_tests, run_test
from threads_cases.harness.check.conformance_turns import live_test
from threads_cases.protocol.client import DriverImplementation
from threads_cases.protocol.server import PythonImplementation

FILE = ROOT / "spec" / "conformance" / "live" / "turns.json"
TESTS = read_json_file(FILE)["tests"]


@pytest.mark.parametrize("test", TESTS, ids=[t["description"][:60] for t in TESTS])
def test_in_process(test: dict[str, Any]) -> None:
    check = live_test(test, PythonImplementation(), FILE)
    assert check.result == "pass", check.message


def test_through_the_subprocess_driver() -> None:
    """The same answers through model_call / model_answer lines give the same turns."""
    impl = DriverImplementation(
        "threads-py",
        [sys.executable, "-m", "threads_cases.protocol.driver"],
        dialect="threads-py",
        validate_protocol=True,
    )
    try:
        suite = ROOT / "spec" / "conformance"
        for t in load_tests(suite, ["live"]):
            r = run_test(t, impl, load_skips(suite, "threads-py"))
            assert r.verdict == "pass", (t.name, r.message, r.checks)
    finally:
        impl.close()
