"""Running one conformance area through the harness's own runner (threads_cases/harness/
conformance.py, the code ``threads-cases conformance --area AREA`` runs), on the Python
runtime in process and through its subprocess driver: the test files of the data-only areas
call these instead of reading the data themselves."""

from __future__ import annotations

import sys
from pathlib import Path

from threads_cases.harness.check.conformance import (
    ConformanceTest,
    load_skips,
    load_tests,
    run_test,
)
from threads_cases.protocol.client import DriverImplementation, Implementation
from threads_cases.protocol.server import PythonImplementation

SUITE = Path(__file__).resolve().parent.parent / "spec" / "conformance"


def area_tests(area: str) -> list[ConformanceTest]:
    return load_tests(SUITE, [area])


def failures(tests: list[ConformanceTest], impl: Implementation) -> list[str]:
    """``<test>: <verdict> <message>`` for each test that did not pass on ``impl``."""
    out = []
    for t in tests:
        r = run_test(t, impl, load_skips(SUITE, impl.name))
        if r.verdict != "pass":
            out.append(f"{t.name}: {r.verdict} {r.message} {[c.message for c in r.checks]}")
    return out


def in_process(test: ConformanceTest) -> list[str]:
    return failures([test], PythonImplementation())


def through_the_driver(area: str) -> list[str]:
    """Every test of ``area`` through ``python -m threads_cases.protocol.driver``, its
    messages checked against their schemas."""
    impl = DriverImplementation(
        "threads-py",
        [sys.executable, "-m", "threads_cases.protocol.driver"],
        dialect="threads-py",
        validate_protocol=True,
    )
    try:
        return failures(area_tests(area), impl)
    finally:
        impl.close()
