"""A run schema-checks each case file once, in the case loader (issue 20): the in-process
implementation replays and reduces the case the runner loaded instead of reading and checking
its files again. Counted by wrapping every schema validator the package builds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.loader import inspect_case
from threads_cases.core import log, schemas
from threads_cases.harness.run.runner import run_suite

CASE = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases" / "reads-notes"


class _Counting:
    def __init__(self, inner: Any, key: str, calls: Counter[str]) -> None:
        self._inner, self._key, self._calls = inner, key, calls

    def is_valid(self, value: Any) -> bool:
        self._calls[self._key] += 1
        return bool(self._inner.is_valid(value))


@pytest.fixture
def schema_calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    calls: Counter[str] = Counter()
    real = schemas.fast_validator

    def counting(name: str, definition: str | None = None) -> _Counting:
        key = name if definition is None else f"{name}#{definition}"
        return _Counting(real(name, definition), key, calls)

    monkeypatch.setattr(schemas, "fast_validator", counting)
    monkeypatch.setattr(log, "fast_validator", counting)
    return calls


def test_a_run_checks_each_case_file_once_in_the_loader(schema_calls: Counter[str]) -> None:
    case, problems = inspect_case(CASE)
    assert case is not None and not problems
    by_loader = Counter(schema_calls)
    # every case file: case.json, the three recordings and each line of each log
    assert {"case.schema.json", "model.schema.json", "stubs.schema.json"} <= set(by_loader)
    events = sum(len(evs) for evs in case.logs.values())
    assert by_loader["event.schema.json#event.threads-py"] == events > 0
    schema_calls.clear()

    report = run_suite([CASE], ["threads-py"])
    assert [r.verdict for r in report.results] == ["pass"]
    case_files = Counter({k: n for k, n in schema_calls.items() if not k.startswith("driver/")})
    assert case_files == by_loader  # a second check anywhere would double a count
    # the only other checks are of the two protocol requests (tiny messages, not files)
    assert {k for k in schema_calls if k.startswith("driver/")} == {
        "driver/reduce.request.schema.json",
        "driver/replay.request.schema.json",
    }
