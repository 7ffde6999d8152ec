"""The data-only secrets tests (spec/conformance/secrets/, spec/conformance.md 2.6): each
input's findings and redacted output, exactly, through the harness's runner (the ``secrets``
driver request, driver-protocol.md 2.8) in process and through the subprocess driver.
ts/test/secrets.test.ts runs the same files through the TypeScript functions."""

from __future__ import annotations

import pytest
from conformance_runs import area_tests, in_process, through_the_driver

from threads_cases.harness.check.conformance import ConformanceTest

TESTS = area_tests("secrets")


def test_the_suite_has_enough_tests() -> None:
    assert len(TESTS) >= 300


@pytest.mark.parametrize("test", TESTS, ids=[t.id for t in TESTS])
def test_secrets_conformance(test: ConformanceTest) -> None:
    assert in_process(test) == []


def test_through_the_subprocess_driver() -> None:
    assert through_the_driver("secrets") == []
