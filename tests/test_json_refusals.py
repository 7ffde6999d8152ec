"""`import`, `stale`, `coverage`, `validate` and `list` refuse under --format json as `run`,
`conformance` and `baseline` do: the one line `{"code", "message"}` on stdout, the message led
by the location, nothing on stderr, and the exit status they give the same refusal in the
pretty format (usage errors and unreadable inputs alike; spec/reports.md 5.2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "spec" / "conformance" / "cases"
JOINED = ROOT / "tests" / "importers" / "trials" / "11b-two-records-joined.jsonl"
REPORT = ROOT / "tests" / "data" / "compliance" / "report.jsonl"

#: name -> (arguments without --format, reason code, exit status, start of the message)
REFUSALS = {
    "import-missing-file": (
        ["import", "claude-code", "nope.jsonl", "-o", "out.jsonl"],
        "invalid_request",
        2,
        "nope.jsonl: no such file or folder",
    ),
    "import-unknown-option": (
        ["import", "claude-code", "t.jsonl", "-o", "out.jsonl", "--no-such-option"],
        "invalid_request",
        2,
        "unknown option",
    ),
    "import-output-in-a-case": (
        ["import", "claude-code", "t.jsonl", "-o", "cases/reads-notes/out.jsonl"],
        "invalid_request",
        2,
        "cases/reads-notes/out.jsonl: is inside the case directory",
    ),
    "import-strict-malformed-line": (
        ["import", "claude-code", "t.jsonl", "-o", "out.jsonl", "--strict"],
        "import_invalid",
        1,
        "t.jsonl:8: user: not valid JSON",
    ),
    "stale-no-report": (
        ["stale", "--report", "nope.jsonl"],
        "invalid_request",
        2,
        "no report at nope.jsonl",
    ),
    "stale-missing-folder": (
        ["stale", "nofolder", "--report", "r.jsonl"],
        "invalid_request",
        2,
        "nofolder: no such file or folder",
    ),
    "stale-not-a-report": (
        ["stale", "--report", "cases/reads-notes/case.json"],
        "invalid_request",
        2,
        "cases/reads-notes/case.json:1: is not a threads-cases report",
    ),
    "stale-cut-report": (["stale", "--report", "cut.jsonl"], "json_invalid", 1, "cut.jsonl:2: "),
    "coverage-unknown-impl": (
        ["coverage", "cases", "--impl", "nope"],
        "invalid_request",
        2,
        "unknown implementation 'nope'",
    ),
    "coverage-missing-folder": (
        ["coverage", "nofolder"],
        "invalid_request",
        2,
        "nofolder: no such file or folder",
    ),
    "coverage-bad-fail-under": (
        ["coverage", "cases", "--fail-under", "200"],
        "invalid_request",
        2,
        "--fail-under",
    ),
    "conformance-diff-missing-report": (
        ["conformance", "--diff", "nope.jsonl", "r.jsonl"],
        "invalid_request",
        2,
        "nope.jsonl",
    ),
    "conformance-diff-cut-report": (
        ["conformance", "--diff", "r.jsonl", "cut.jsonl"],
        "json_invalid",
        1,
        "cut.jsonl:2: ",
    ),
    "coverage-unknown-isolation": (
        ["coverage", "cases", "--isolation", "jail"],
        "invalid_request",
        2,
        "",
    ),
    # validate and list: a CI script reading stdout as JSON gets the refusal there too
    "validate-missing-path": (
        ["validate", "nope"],
        "invalid_request",
        2,
        "nope: no such file or folder",
    ),
    "validate-a-case-json": (
        ["validate", "cases/reads-notes/case.json"],
        "invalid_request",
        2,
        "cases/reads-notes/case.json: is a case's case.json, not a thread log",
    ),
    "validate-unknown-option": (
        ["validate", "cases", "--no-such-option"],
        "invalid_request",
        2,
        "unknown option",
    ),
    "validate-no-path": (["validate"], "invalid_request", 2, "missing argument"),
    "validate-unknown-dialect": (
        ["validate", "t.jsonl", "--dialect", "nope"],
        "dialect_unknown",
        2,
        'unknown dialect "nope"',
    ),
    "validate-path-too-long": (
        ["validate", "a" * 300],
        "invalid_request",
        2,
        "a path component is longer than 255 bytes",
    ),
    "list-missing-folder": (
        ["list", "nofolder"],
        "invalid_request",
        2,
        "nofolder: no such file or folder",
    ),
    "list-a-file": (["list", "t.jsonl"], "invalid_request", 2, "t.jsonl: is a file"),
    "list-unknown-option": (
        ["list", "cases", "--no-such-option"],
        "invalid_request",
        2,
        "unknown option",
    ),
}


def _inputs(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    shutil.copy(JOINED, tmp_path / "t.jsonl")
    shutil.copy(REPORT, tmp_path / "r.jsonl")
    header = REPORT.read_text().splitlines()[0]
    (tmp_path / "cut.jsonl").write_text(header + '\n{"kind": "resu\n')


@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_refusal_under_json_is_one_line_on_stdout(tmp_path: Path, name: str) -> None:
    args, code, status, message = REFUSALS[name]
    _inputs(tmp_path)
    pretty = cli(*args, cwd=tmp_path)
    assert pretty.returncode == status, pretty.stdout + pretty.stderr
    assert pretty.stdout == ""
    assert pretty.stderr.startswith(f"error[{code}]: {message}"), pretty.stderr
    assert "\n  hint: " in pretty.stderr
    for fmt in (["--format", "json"], ["--format=json"]):
        p = cli(*args, *fmt, cwd=tmp_path)
        assert p.returncode == status, p.stdout + p.stderr
        assert p.stderr == ""
        [line] = p.stdout.splitlines()
        doc = json.loads(line)
        assert set(doc) == {"code", "message"} and doc["code"] == code, doc
        assert doc["message"].startswith(message), doc
    assert not (tmp_path / "out.jsonl").exists()  # a refused import writes nothing
