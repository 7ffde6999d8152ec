"""The data-only tests of spec/conformance/provenance/ (spec/conformance.md 2.16, spec/replay.md
11.11) on the Python runtime, in process and through its subprocess driver;
ts/test/replay.test.ts runs the same file on the TypeScript runtime;
tools/make_provenance_tests.py writes it."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from threads_cases.core.strictjson import read_json_file
from threads_cases.protocol.client import DriverImplementation
from threads_cases.protocol.server import PythonImplementation

DOC = read_json_file(ROOT / "spec" / "conformance" / "provenance" / "answers.json")
TESTS = DOC["tests"]


def _tool() -> Any:
    """tools/make_provenance_tests.py, which writes the data: its ``prepared`` copies and cuts
    a test's case (spec/conformance.md 2.16) for the data and for this test alike."""
    import importlib.util

    path = ROOT / "tools" / "make_provenance_tests.py"
    spec = importlib.util.spec_from_file_location("make_provenance_tests", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


prepared = _tool().prepared


def _run(impl: Any, test: dict[str, Any], tmp: Path) -> dict[str, Any]:
    case = prepared(test, tmp)
    out = impl.request(
        {"cmd": "replay", "case": {"path": str(case), "supply": {"calls": test["supply"]}}}
    )
    stop = out["stop"]
    return {"provenance": out["provenance"], "stop": None if stop is None else stop["code"]}


@pytest.mark.parametrize("test", TESTS, ids=[t["description"][:60] for t in TESTS])
def test_in_process(test: dict[str, Any], tmp_path: Path) -> None:
    want = {"provenance": test["provenance"], "stop": test["stop"]}
    assert _run(PythonImplementation(), test, tmp_path) == want


def test_through_the_subprocess_driver(tmp_path: Path) -> None:
    impl = DriverImplementation(
        "threads-py",
        [sys.executable, "-m", "threads_cases.protocol.driver"],
        dialect="threads-py",
        validate_protocol=True,
    )
    try:
        for k, test in enumerate(TESTS):
            want = {"provenance": test["provenance"], "stop": test["stop"]}
            assert _run(impl, test, tmp_path / str(k)) == want, test["description"]
    finally:
        impl.close()
