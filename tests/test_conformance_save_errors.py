"""The data-only save-refusal tests (spec/conformance/save-errors/, spec/conformance.md 2.11):
a recorded thread saved with options that make the save refuse, and the refusal's code and
hint, the same text in every implementation. ts/test/saveErrors.test.ts runs the same files;
here the harness's runner sends each as ``save_case`` requests (driver-protocol.md 2.12);
tools/make_save_errors_tests.py writes them."""

from __future__ import annotations

import pytest
from conformance_runs import area_tests, in_process, through_the_driver

from threads_cases.harness.check.conformance import ConformanceTest

TESTS = area_tests("save-errors")


def test_the_suite_covers_the_refusals() -> None:
    assert len(TESTS) >= 12


@pytest.mark.parametrize("test", TESTS, ids=[t.id for t in TESTS])
def test_save_errors_conformance(test: ConformanceTest) -> None:
    """The harness's runner (``threads-cases conformance --area save-errors``), in process."""
    assert in_process(test) == []


def test_through_the_subprocess_driver() -> None:
    assert through_the_driver("save-errors") == []
