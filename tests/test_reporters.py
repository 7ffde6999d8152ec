"""The reporters of a finished run (threads_cases/harness/report/reporters.py, issue 33): each
output behind one interface, handed the same run once."""

from __future__ import annotations

import io
import json
from pathlib import Path

from threads_cases.harness.report.reporters import (
    FinishedRun,
    JsonLines,
    JUnit,
    LastReport,
    Reporter,
    report_all,
)
from threads_cases.harness.report.suite import report_lines
from threads_cases.harness.run.runner import SuiteResult, run_suite

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


def _finished(suite: SuiteResult) -> FinishedRun:
    return FinishedRun(suite, list(report_lines(suite, "run")), "run", "case")


def test_the_json_lines_on_stdout_are_the_bytes_of_the_kept_report(tmp_path: Path) -> None:
    run = _finished(run_suite([CASES / "weather-stub"], ["threads-py"]))
    out = io.BytesIO()
    kept = tmp_path / "state" / "last-report.jsonl"
    notes: list[str] = []
    reporters: list[Reporter] = [
        JsonLines(out),
        JUnit(tmp_path / "j" / "r.xml"),
        LastReport(kept, notes.append),
    ]
    report_all(reporters, run)
    assert out.getvalue() == kept.read_bytes()
    kinds = [json.loads(line)["kind"] for line in out.getvalue().splitlines()]
    assert kinds == ["header", "result", "footer"]
    junit = (tmp_path / "j" / "r.xml").read_bytes()
    assert b'tests="1" failures="0" errors="0"' in junit and b'name="weather-stub' in junit
    assert notes == []


def test_a_run_without_results_leaves_the_last_report_and_says_so(tmp_path: Path) -> None:
    kept = tmp_path / "last-report.jsonl"
    kept.write_bytes(b"before\n")
    notes: list[str] = []
    empty = SuiteResult(results=[], implementations=["threads-py"])
    LastReport(kept, notes.append).report(_finished(empty))
    assert kept.read_bytes() == b"before\n"
    assert notes == [
        f"no case was run: nothing was checked; the last report ({kept}) is left as it was"
    ]
