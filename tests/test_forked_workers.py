"""``--jobs N`` in forked harness workers (threads_cases/harness/run/forked.py): the same report as
``--jobs 1``, byte for byte once timings are set aside, in process and with a driver; a
worker that dies gives ``error`` for what it held and the run goes on; ``max_fail`` exact."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import orjson
import pytest

from threads_cases.harness.run.forked import forked_work
from threads_cases.harness.run.registry import open_implementation
from threads_cases.harness.run.runner import SuiteResult, run_suite

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"
PICK = ("reads-notes", "lists-files", "parallel-calls", "weather-stub", "unknown-tool")


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("forked")
    for name in PICK:
        shutil.copytree(CASES / name, base / name)
    return base


def report_bytes(suite: SuiteResult) -> bytes:
    """Every result line as the JSON report writes it, timings set to 0."""
    lines = []
    for r in suite.results:
        line = dict(r.to_json())
        line["duration_ms"] = 0
        lines.append(orjson.dumps(line, option=orjson.OPT_SORT_KEYS))
    return b"\n".join(lines)


@pytest.mark.parametrize("isolated", [False, True], ids=["in-process", "driver"])
def test_jobs_2_in_workers_gives_the_report_of_jobs_1(suite: Path, isolated: bool) -> None:
    def impl() -> object:
        return open_implementation("threads-py", isolated=isolated, isolation="guard")

    one = run_suite([suite], [impl()], jobs=1)  # type: ignore[list-item]
    two = run_suite([suite], [impl()], jobs=2)  # type: ignore[list-item]
    assert len(one.results) == len(PICK)
    assert report_bytes(one) == report_bytes(two)
    assert one.counts == two.counts and one.isolation == two.isolation


def test_a_worker_that_dies_gives_errors_for_what_it_held_and_the_run_goes_on() -> None:
    parent = os.getpid()

    def open_worker() -> tuple[object, object]:
        def run(item: int) -> tuple[int, int]:
            if item == 4:
                os._exit(9)  # as a worker killed mid-case
            return item, os.getpid()

        return run, lambda: None

    results = forked_work(
        list(range(12)),
        lambda item: item,
        open_worker,  # type: ignore[arg-type]
        workers=2,
        lost=lambda item: (item, -1),
        failed=lambda r: False,
    )
    assert [r[0] for r in results if r is not None] == list(range(12))
    assert results[4] == (4, -1)  # the lost item is an error of its own; the next ran
    assert all(r is not None and r[1] not in (parent, -1) for k, r in enumerate(results) if k != 4)


def test_max_fail_in_workers_keeps_what_a_serial_run_keeps() -> None:
    seen: list[int] = []
    results = forked_work(
        list(range(40)),
        lambda item: item // 2,  # two items a group, as two implementations of a case
        lambda: ((lambda item: item), lambda: None),  # type: ignore[arg-type,return-value]
        workers=2,
        lost=lambda item: item,
        failed=lambda r: r % 7 == 3,  # 3, 10, 17, ...
        max_fail=2,
        on_result=seen.append,
    )
    assert results == [*range(11), *([None] * 29)]
    assert set(range(11)) <= set(seen)


def test_the_report_lines_workers_encode_are_the_bytes_the_parent_would_write(
    suite: Path,
) -> None:
    """A worker encodes each result's report line (harness/run/encoded.py); the report written
    from them is canonical_line of every line, and a result changed in the parent after the
    worker encoded it (as the baseline's judgement changes it) is encoded again."""
    from threads_cases.core.canonical import canonical_line
    from threads_cases.harness.report.reporters import FinishedRun
    from threads_cases.harness.report.suite import report_lines

    def finished(s: SuiteResult) -> FinishedRun:
        return FinishedRun(s, list(report_lines(s)), "run", "case")

    impl = open_implementation("threads-py", isolated=False, isolation="guard")
    two = run_suite([suite], [impl], jobs=2)
    assert all(r.encoded is not None for r in two.results)  # encoded where they ran
    run = finished(two)
    assert run.encoded == [canonical_line(line) + b"\n" for line in run.lines]
    two.results[0].message = "changed in the parent"
    run = finished(two)
    assert b"changed in the parent" in run.encoded[1]
    assert run.encoded == [canonical_line(line) + b"\n" for line in run.lines]
    one = run_suite([suite], [impl], jobs=1)
    assert all(r.encoded is None for r in one.results)  # serial: encoded once, in the parent
