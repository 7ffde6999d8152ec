"""Conformance levels (spec/conformance.md section 9, spec/conformance/levels.json): the
level each implementation reaches in a conformance run and what blocks the next one, in the
terminal view and the JSON report's footer."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

from threads_cases.harness.check.conformance import AREAS
from threads_cases.harness.check.levels import levels_of, read_levels
from threads_cases.harness.run.runner import CaseResult

LEVELS = read_levels()


def result(case: str, verdict: str, impl: str = "x") -> CaseResult:
    return CaseResult(case, case, impl, verdict)


def test_the_shipped_levels_are_reader_replayer_writer_live() -> None:
    assert [lv["name"] for lv in LEVELS] == ["reader", "replayer", "writer", "live"]
    assert LEVELS[0]["areas"] == ["canonical", "reduce", "match", "driver-requests"]


def test_a_level_needs_every_test_of_its_areas_to_pass() -> None:
    results = [result("reduce/001", "pass"), result("cases/a", "pass"), result("cases/b", "fail")]
    got = levels_of(results, ["x"], LEVELS, AREAS, AREAS)["x"]
    assert got == {"level": "reader", "next": "replayer", "blocked_by": ["cases/b"]}


def test_a_known_failure_does_not_count_as_passing() -> None:
    results = [result("reduce/001", "xfail")]
    got = levels_of(results, ["x"], LEVELS, AREAS, AREAS)["x"]
    assert got == {"level": None, "next": "reader", "blocked_by": ["reduce/001"]}


def test_an_area_left_out_blocks_its_level() -> None:
    got = levels_of([result("reduce/001", "pass")], ["x"], LEVELS, ["reduce"], AREAS)["x"]
    assert got["level"] is None
    assert got["blocked_by"] == ["canonical: not run", "match: not run", "driver-requests: not run"]


def test_blockers_are_listed_up_to_five() -> None:
    results = [result(f"match/{n:03}", "fail") for n in range(9)]
    got = levels_of(results, ["x"], LEVELS, AREAS, AREAS)["x"]
    assert got["blocked_by"] == [f"match/{n:03}" for n in range(5)]


def test_the_report_and_the_terminal_show_each_level(tmp_path: Path) -> None:
    args = ("conformance", "--area", "canonical", "--area", "reduce", "--impl", "threads-py")
    proc = cli(*args, "--format", "json", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]
    footer = json.loads(proc.stdout.splitlines()[-1])
    assert footer["levels"] == {
        "threads-py": {
            "level": None,
            "next": "reader",
            "blocked_by": ["match: not run", "driver-requests: not run"],
        }
    }
    proc = cli(*args, cwd=tmp_path)
    assert (
        "threads-py: level none; reader is blocked by match: not run, driver-requests: not run"
        in proc.stdout
    )


def test_the_compliance_page_shows_the_levels_of_a_conformance_report(tmp_path: Path) -> None:
    args = ("conformance", "--area", "canonical", "--impl", "threads-py", "--format", "json")
    proc = cli(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-2000:]
    (tmp_path / "r.jsonl").write_text(proc.stdout)
    proc = cli("report", "html", "r.jsonl", "-o", "page", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    page = (tmp_path / "page" / "index.html").read_text()
    assert "Conformance levels (r.jsonl)" in page
    assert (
        '<tr><th scope="row">threads-py</th><td>none</td><td>reader</td>'
        "<td>reduce: not run, match: not run, driver-requests: not run</td></tr>"
    ) in page
