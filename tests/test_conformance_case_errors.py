"""The data-only case-loader tests (spec/conformance/case-errors/, spec/conformance.md 2.7):
a committed case with some files replaced, removed or made a folder or a symlink, and the
first problem ``open_case`` gives (code, file relative to the case, line, pointer, and the
message and hint where the test pins them), or none. ts/test/caseErrors.test.ts
runs the same files through ``openCase``; here the harness's runner sends each as an
``open_case`` request (driver-protocol.md 2.9)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conformance_runs import area_tests, in_process, through_the_driver

from threads_cases.harness.check.conformance import ConformanceTest

TESTS = area_tests("case-errors")


def test_the_suite_has_enough_tests() -> None:
    assert len(TESTS) >= 30


def test_a_case_json_that_is_not_a_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    """A folder, a FIFO or a symlink loop in case.json's place is not "missing"."""
    from threads_cases.case.loader import inspect_case

    made = {"folder": lambda p: p.mkdir(), "symlink": lambda p: os.symlink(p.name, p)}
    if hasattr(os, "mkfifo"):
        made["FIFO"] = os.mkfifo
    for kind, make in made.items():
        case = tmp_path / kind
        case.mkdir()
        make(case / "case.json")
        _, [problem] = inspect_case(case)
        assert (problem.code, problem.message) == (
            "case_invalid",
            f"case.json is a {kind}, not a file",
        )
        assert problem.location.file == str(case) and "regular file" in problem.hint
    _, [missing] = inspect_case(tmp_path / "folder" / "case.json")
    assert missing.message == "not a case directory: case.json is missing"


@pytest.mark.parametrize("test", TESTS, ids=[t.id for t in TESTS])
def test_case_errors_conformance(test: ConformanceTest) -> None:
    """The harness's runner (``threads-cases conformance --area case-errors``), in process."""
    assert in_process(test) == []


def test_through_the_subprocess_driver() -> None:
    assert through_the_driver("case-errors") == []
