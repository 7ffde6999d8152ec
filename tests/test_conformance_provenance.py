"""The data-only tests of spec/conformance/provenance/ (spec/conformance.md 2.16, spec/replay.md
11.11) on the Python runtime, in process and through its subprocess driver;
ts/test/replay.test.ts runs the same file on the TypeScript runtime;
tools/make_provenance_tests.py writes it."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import CONFORMANCE, ROOT

from threads_cases.core.strictjson import read_json_file
from threads_cases.protocol.client import DriverImplementation
from threads_cases.protocol.server import PythonImplementation

DOC = read_json_file(ROOT / "spec" / "conformance" / "provenance" / "answers.json")
TESTS = DOC["tests"]


def prepared(test: dict[str, Any], folder: Path) -> Path:
    """The test's case copied into ``folder``, its replies cut to ``keep_replies`` and its
    stubs dropped when ``drop_stubs`` (spec/conformance.md 2.16)."""
    case = folder / test["case"]
    shutil.copytree(CONFORMANCE / test["case"], case)
    if test["keep_replies"] is not None:
        model = json.loads((case / "model.json").read_text("utf-8"))
        model["replies"] = model["replies"][: test["keep_replies"]]
        (case / "model.json").write_text(json.dumps(model), "utf-8")
    if test["drop_stubs"]:
        (case / "stubs.json").write_text('{"calls": [], "format": 1}\n', "utf-8")
    return case


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
