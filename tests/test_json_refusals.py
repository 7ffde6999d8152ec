"""`import`, `stale`, `coverage`, `validate`, `list`, `diff`, `accept` and `save` refuse under
--format json as `run`, `conformance` and `baseline` do: the one line `{"code", "message",
"hint"}` on stdout, the message led by the location and the hint the text prints under it,
nothing on stderr, and the exit status they give the same refusal in the pretty format (usage
errors and unreadable inputs alike; spec/reports.md 5.2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.canonical import canonical_line

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
    # diff: a bad case path, a case.json that is a folder, a usage error
    "diff-missing-case": (
        ["diff", "cases/reads-notes", "nope"],
        "invalid_request",
        2,
        "nope: no such file or folder",
    ),
    "diff-log-and-case": (
        ["diff", "t.jsonl", "cases/reads-notes"],
        "invalid_request",
        2,
        "cannot compare a thread log (t.jsonl) with a case directory (cases/reads-notes)",
    ),
    "diff-case-json-a-folder": (
        ["diff", "folder-case", "cases/reads-notes"],
        "invalid_request",
        2,
        "folder-case: case.json is a folder, not a file",
    ),
    "diff-one-case": (
        ["diff", "cases/reads-notes"],
        "invalid_request",
        2,
        "diff takes two case directories",
    ),
    "diff-unknown-option": (
        ["diff", "cases/reads-notes", "cases/reads-notes", "--no-such-option"],
        "invalid_request",
        2,
        "unknown option",
    ),
    "accept-unknown-option": (
        ["accept", "cases", "--no-such-option"],
        "invalid_request",
        2,
        "unknown option",
    ),
    "accept-no-cases": (["accept", "t.jsonl"], "invalid_request", 2, "no cases found"),
    "save-unknown-option": (
        ["save", "t.jsonl", "--no-such-option"],
        "invalid_request",
        2,
        "unknown option",
    ),
    "save-missing-log": (
        ["save", "nope.jsonl", "--turn", "1", "--name", "x", "--dir", "out"],
        "invalid_request",
        2,
        "nope.jsonl: no such file or folder",
    ),
}


def _inputs(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    shutil.copy(JOINED, tmp_path / "t.jsonl")
    shutil.copy(REPORT, tmp_path / "r.jsonl")
    header = REPORT.read_text().splitlines()[0]
    (tmp_path / "cut.jsonl").write_text(header + '\n{"kind": "resu\n')
    (tmp_path / "folder-case" / "case.json").mkdir(parents=True)


@pytest.mark.parametrize("name", list(REFUSALS))
def test_a_refusal_under_json_is_one_line_on_stdout(tmp_path: Path, name: str) -> None:
    args, code, status, message = REFUSALS[name]
    _inputs(tmp_path)
    pretty = cli(*args, cwd=tmp_path)
    assert pretty.returncode == status, pretty.stdout + pretty.stderr
    assert pretty.stdout == ""
    assert pretty.stderr.startswith(f"error[{code}]: {message}"), pretty.stderr
    first, hint = pretty.stderr.splitlines()
    assert hint.startswith("  hint: ") and hint != "  hint: ", pretty.stderr
    for fmt in (["--format", "json"], ["--format=json"]):
        p = cli(*args, *fmt, cwd=tmp_path)
        assert p.returncode == status, p.stdout + p.stderr
        assert p.stderr == ""
        assert p.stdout.count("\n") == 1 and p.stdout.endswith("\n"), p.stdout
        doc = json.loads(p.stdout)
        assert p.stdout == canonical_line(doc).decode() + "\n"  # canonical, on one line
        assert set(doc) == {"code", "message", "hint"} and doc["code"] == code, doc
        assert doc["message"].startswith(message), doc
        # the same words as the text refusal: its message and its hint line
        assert first == f"error[{code}]: {doc['message']}", (first, doc)
        assert doc["hint"] == hint.removeprefix("  hint: "), (hint, doc)
    assert not (tmp_path / "out.jsonl").exists()  # a refused import writes nothing


def test_a_refusal_without_a_hint_has_no_hint_key(
    capfdbinary: pytest.CaptureFixture[bytes],
) -> None:
    """The text prints no hint line for an empty hint; the JSON line then has no ``hint``."""
    from threads_cases.cli.app import print_refusal
    from threads_cases.core.errors import CaseError

    print_refusal(CaseError("invalid_request", "m", file="f.json", line=3, hint=""))
    out = capfdbinary.readouterr()
    assert out.out == b'{"code":"invalid_request","message":"f.json:3: m"}\n' and out.err == b""
    print_refusal(CaseError("invalid_request", "m", pointer="/a", hint="do this"))
    got = capfdbinary.readouterr().out
    assert got == b'{"code":"invalid_request","hint":"do this","message":"/a: m"}\n'
