"""The reporters of a finished run (threads_cases/harness/report/reporters.py, issue 33): each
output behind one interface, handed the same run once."""

from __future__ import annotations

import io
import json
from pathlib import Path

from threads_cases.harness.report.reporters import (
    THIS_RUN,
    FinishedRun,
    Html,
    JsonLines,
    JUnit,
    LastReport,
    Reporter,
    ReportFiles,
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


def test_the_page_of_a_run_is_the_page_of_its_report_file(tmp_path: Path) -> None:
    """The HTML page is a reporter like the others: handed the finished run, it writes the
    page ``report html`` writes from that run's report file (:class:`ReportFiles`), the
    report's name aside."""
    run = _finished(run_suite([CASES / "weather-stub", CASES / "unknown-tool"], ["threads-py"]))
    kept = tmp_path / "report.jsonl"
    said: list[str] = []
    reporters: list[Reporter] = [LastReport(kept), Html(tmp_path / "now", wrote=said.append)]
    report_all(reporters, run)
    Html(tmp_path / "later", wrote=said.append).report(ReportFiles([kept]))
    now = (tmp_path / "now" / "index.html").read_text(encoding="utf-8")
    later = (tmp_path / "later" / "index.html").read_text(encoding="utf-8")
    assert THIS_RUN in now and str(kept) in later and str(kept) not in now
    assert now.replace(THIS_RUN, str(kept)) == later
    assert said == [
        f"wrote {tmp_path / where / 'index.html'}: 2 case(s) x 1 implementation(s): 2 pass"
        for where in ("now", "later")
    ]
