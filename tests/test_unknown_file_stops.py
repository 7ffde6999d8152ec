"""A file a case does not name makes it invalid (spec/case-format.md 8.1 step 4, 8.2): `run`
(both implementations) and the pytest plugin give `error` `case_invalid`, as `validate` and
`fmt` refuse it. `run` used to pass such a case with only a `fingerprint_stale` warning."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.case.loader import UNKNOWN_FILE_HINT, inspect_case, open_case
from threads_cases.core.errors import CaseError

pytest_plugins = ["pytester"]

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"
QUIET = ("-p", "no:cacheprovider", "-p", "no:hypothesispytest")


def stray(base: Path) -> Path:
    case = base / "cases" / "reads-notes"
    shutil.copytree(CASES / "reads-notes", case)
    (case / "notes.txt").write_text("hi\n")
    return case


def test_the_loader_refuses_an_unknown_file(tmp_path: Path) -> None:
    case = stray(tmp_path)
    with pytest.raises(CaseError) as caught:
        open_case(case)
    err = caught.value
    assert err.code == "case_invalid" and err.location.file == str(case / "notes.txt")
    assert err.message == "unknown file notes.txt" and err.hint == UNKNOWN_FILE_HINT
    _, problems = inspect_case(case)
    assert [p.code for p in problems] == ["case_invalid", "fingerprint_stale"]


def test_run_validate_and_fmt_agree(tmp_path: Path) -> None:
    stray(tmp_path)
    p = cli("run", "cases", "--format", "json", cwd=tmp_path)
    table = cli("run", "cases", cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr
    rows = [json.loads(x) for x in p.stdout.splitlines()]
    got = {r["implementation"]: r for r in rows if r["kind"] == "result"}
    assert set(got) == {"threads-py", "threads-ts"}
    for r in got.values():
        assert r["verdict"] == "error" and r["reasons"] == ["case_invalid"]
        assert "unknown file notes.txt" in r["message"]
    # the stale-fingerprint advice does not send the case to fmt, which refuses it
    said = table.stdout + table.stderr
    assert "no longer load" in said and "`fmt` refuses" in said
    p = cli("validate", "cases", cwd=tmp_path)
    assert p.returncode == 1 and "unknown file notes.txt" in p.stderr
    p = cli("fmt", "cases", cwd=tmp_path)
    assert p.returncode == 1 and "not formatted" in p.stderr + p.stdout


def test_the_pytest_plugin_fails_it(pytester: pytest.Pytester) -> None:
    stray(pytester.path)
    result = pytester.runpytest(
        "--threads-cases", "cases", "--threads-cases-impl", "threads-py", *QUIET
    )
    result.assert_outcomes(failed=1)
    # the CLI's panel wraps the message at the terminal's width, wherever a long path ends
    text = re.sub(r"[│\s]+", " ", result.stdout.str())
    assert "unknown file notes.txt" in text
