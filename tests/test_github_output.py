"""`--format github` for `run` and `conformance`: annotations, escaping, the job summary."""

from __future__ import annotations

import io
import shutil
from pathlib import Path

from conftest import cli

from threads_cases.core.canonical import canonical_document
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.check.checks import Check
from threads_cases.harness.report.github import (
    annotation,
    escape_data,
    escape_property,
    markdown_summary,
    write_github,
)
from threads_cases.harness.run.runner import CaseResult, SuiteResult

ROOT = Path(__file__).resolve().parent.parent
CASES = ROOT / "spec" / "conformance" / "cases"


def test_escaping_follows_github_rules() -> None:
    assert escape_data("50% done\r\nnext: a,b") == "50%25 done%0D%0Anext: a,b"
    assert escape_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_annotation_is_one_command_line() -> None:
    r = CaseResult(
        "c1",
        "cases/c1",
        "threads-py",
        "fail",
        ["state_mismatch"],
        [Check("state", "fail", "1 difference(s)\nsecond line", "state_mismatch")],
        message="100% broken: a, b",
    )
    line = annotation(r)
    assert line is not None and "\n" not in line
    assert line.startswith("::error file=cases/c1/case.json,title=c1 [threads-py] state_mismatch::")
    assert "100%25 broken: a, b" in line
    assert annotation(CaseResult("c1", "cases/c1", "threads-py", "pass")) is None
    drift = annotation(CaseResult("c1", "cases/c1", "threads-py", "drifted", ["reply_unused"]))
    assert drift is not None and drift.startswith("::warning ")
    buf = io.StringIO()
    write_github(SuiteResult([r], ["threads-py"]), "case", out=buf)
    assert (
        buf.getvalue()
        .splitlines()[-1]
        .startswith("threads-cases: 1 case on 1 implementation, 1 result: 1 fail in ")
    )
    md = markdown_summary(SuiteResult([r], ["threads-py"]), "case")
    assert "| c1 | ❌ fail `state_mismatch` |" in md


def test_run_format_github_annotations_and_summary(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    for name in ("weather-stub", "reads-notes", "writes-summary"):
        shutil.copytree(CASES / name, cases / name)
    model = cases / "weather-stub" / "model.json"
    doc = read_json_file(model)
    doc["replies"].pop()  # the replay runs out of replies: fail model_exhausted
    model.write_bytes(canonical_document(doc))
    model = cases / "reads-notes" / "model.json"
    doc = read_json_file(model)
    doc["replies"].append(doc["replies"][-1])  # one reply never used: drifted
    model.write_bytes(canonical_document(doc))
    summary = tmp_path / "summary.md"
    summary.write_text("previous step\n")

    p = cli(
        "run",
        "--impl",
        "threads-py",
        "--format",
        "github",
        "cases",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
        cwd=tmp_path,
    )
    assert p.returncode == 3, p.stderr
    lines = p.stdout.splitlines()
    errors = [x for x in lines if x.startswith("::error ")]
    warnings = [x for x in lines if x.startswith("::warning ")]
    assert len(errors) == 1 and len(warnings) == 1, p.stdout
    assert errors[0].startswith(
        "::error file=cases/weather-stub/case.json,"
        "title=weather-stub [threads-py] model_exhausted::"
    )
    assert "model_exhausted at model%3A1" not in errors[0]  # ':' is only escaped in properties
    assert "model_exhausted at model:1" in errors[0]
    assert warnings[0].startswith(
        "::warning file=cases/reads-notes/case.json,title=reads-notes [threads-py] reply_unused::"
    )
    assert lines[-1].startswith(
        "threads-cases: 3 cases on 1 implementation, 3 results: 1 pass, 1 drifted, 1 fail in "
    )
    md = summary.read_text()
    assert md.startswith("previous step\n### threads-cases: cases")
    assert "| case | threads-py |" in md
    assert "| weather-stub | ❌ fail `model_exhausted` |" in md
    assert "| reads-notes | ⚠️ drifted `reply_unused` |" in md
    assert "| writes-summary | ✅ pass |" in md
    assert (
        "3 cases on 1 implementation, 3 results: **1 pass · 1 drifted · 1 fail · 0 error · 0 skip**"
        in md
    )


def test_conformance_format_github(tmp_path: Path) -> None:
    summary = tmp_path / "summary.md"
    p = cli(
        "conformance",
        ROOT / "spec" / "conformance",
        "--impl",
        "threads-py",
        "--format",
        "github",
        "-k",
        "cases/weather",
        env={"GITHUB_STEP_SUMMARY": str(summary)},
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stdout + p.stderr
    assert not [x for x in p.stdout.splitlines() if x.startswith("::")]
    assert p.stdout.splitlines()[-1].startswith(
        "threads-cases: 1 case on 1 implementation, 1 result: 1 pass in "
    )
    assert "| cases/weather-stub | ✅ pass |" in summary.read_text()


def test_an_error_with_a_known_line_points_the_annotation_at_it(tmp_path: Path) -> None:
    """A trailing comma at case.json line N: `file=.../case.json,line=N`; a broken log line
    points at the log; an error whose file does not exist (a missing model.json) falls back
    to case.json without a line."""
    cases = tmp_path / "cases"
    for name in ("reads-notes", "weather-stub", "writes-summary"):
        shutil.copytree(CASES / name, cases / name)
    text = (cases / "reads-notes" / "case.json").read_text().rstrip()
    (cases / "reads-notes" / "case.json").write_text(text[:-1].rstrip() + ",\n}\n")
    comma = text.count("\n")  # the line the trailing comma is on (the last before "}")
    (cases / "weather-stub" / "model.json").unlink()
    log = cases / "writes-summary" / "log.threads-py.jsonl"
    log.write_bytes(log.read_bytes()[:-5])  # the last line cut short
    lines = log.read_bytes().count(b"\n") + 1
    p = cli("run", "cases", "--impl", "threads-py", "--format", "github", cwd=tmp_path)
    assert p.returncode == 3, p.stderr
    out = {x.split("title=")[1].split(" ")[0]: x for x in p.stdout.splitlines() if "title=" in x}
    assert out["reads-notes"].startswith(
        f"::error file=cases/reads-notes/case.json,line={comma},title=reads-notes [threads-py] "
    )
    assert out["weather-stub"].startswith(
        "::error file=cases/weather-stub/case.json,title=weather-stub [threads-py] case_invalid"
    )
    assert out["writes-summary"].startswith(
        f"::error file=cases/writes-summary/log.threads-py.jsonl,line={lines},title="
    )


def test_annotation_line_from_the_result_location(tmp_path: Path) -> None:
    from threads_cases.core.errors import Location

    case = tmp_path / "c1"
    case.mkdir()
    (case / "case.json").write_text("{}\n")
    r = CaseResult("c1", str(case), "threads-py", "error", ["case_invalid"])
    r.location = Location(str(case / "case.json"), 58)
    line = annotation(r)
    assert line is not None and ",line=58,title=c1 [threads-py] case_invalid::" in line
    r.location = Location(str(case / "case.json"), None, "/input")
    assert ",line=" not in (annotation(r) or "")
