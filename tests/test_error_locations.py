"""Errors name where the problem is: a repeated key or an integer too large in a JSON
document gives its line and the pointer of the key (spec/strict-json.md section 2), and
`validate` prints each hint under the error it belongs to."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.cli.log_commands import _print_problems
from threads_cases.core.errors import CaseError, Location, Problem
from threads_cases.core.strictjson import parse

CASES = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"


@pytest.mark.parametrize(
    ("text", "line", "pointer", "message"),
    [
        ('{\n  "format": 1,\n  "format": 1\n}', 3, "/format", "duplicate key 'format'"),
        ('{"a": [1, {"b": {"k": 1, "k": 2}}]}', 1, "/a/1/b/k", "duplicate key 'k'"),
        ('{\n "t": "a:b",\n "format": 123456789012345678901234}', 3, "/format", "integer 1"),
        ("[1,\n 2,\n 9007199254740992]", 3, "/2", "integer 9007199254740992 is outside"),
        ('{"a": {"b": -9007199254740993}}', 1, "/a/b", "integer -9007199254740993"),
    ],
)
def test_a_value_refusal_gives_the_line_and_the_pointer(
    text: str, line: int, pointer: str, message: str
) -> None:
    with pytest.raises(CaseError) as err:
        parse(text.encode(), file="f.json")
    assert (err.value.location.line, err.value.location.pointer) == (line, pointer)
    assert err.value.message.startswith(message)


def test_a_jsonl_line_keeps_its_own_number() -> None:
    with pytest.raises(CaseError) as err:
        parse(b'{"a": 1, "a": 2}', code="log_invalid", file="x.jsonl", line=7)
    assert (err.value.location.line, err.value.location.pointer) == (7, "/a")


def _case(tmp_path: Path, edit: str, new: str) -> Path:
    case = tmp_path / "cases" / "c"
    shutil.copytree(CASES / "reads-notes", case)
    text = (case / "case.json").read_text()
    assert edit in text
    (case / "case.json").write_text(text.replace(edit, new, 1))
    return case


def test_cli_validate_a_case_json_with_a_duplicate_key(tmp_path: Path) -> None:
    case = _case(tmp_path, '  "format": 2,\n', '  "format": 2,\n  "format": 2,\n')
    n = (case / "case.json").read_text().splitlines().index('  "format": 2,') + 2
    p = cli("validate", "cases/c", cwd=tmp_path)
    assert p.returncode == 1
    assert f"error[case_invalid]: cases/c/case.json:{n}: /format: duplicate key" in p.stderr
    assert "threads-cases validate" not in p.stderr  # no hint to run the command itself


def test_cli_validate_a_case_json_with_an_integer_too_large(tmp_path: Path) -> None:
    _case(tmp_path, '  "format": 2,\n', '  "format": 123456789012345678901234,\n')
    p = cli("validate", "cases/c", cwd=tmp_path)
    assert p.returncode == 1
    assert "case.json:" in p.stderr and ": /format: integer 1234" in p.stderr, p.stderr


def test_validate_prints_each_hint_under_its_own_error(capsys: pytest.CaptureFixture[str]) -> None:
    where = Location("case.json", 3, "/x")
    _print_problems(
        [
            Problem("case_invalid", "first", where, hint="do A"),
            Problem("fingerprint_stale", "second", where, hint="do B"),
            Problem("case_invalid", "third", where, hint="do A"),
            Problem("case_invalid", "fourth", where, hint="run `threads-cases validate CASE`"),
        ]
    )
    assert capsys.readouterr().err.splitlines() == [
        "error[case_invalid]: case.json:3: /x: first",
        "  hint: do A",
        "error[fingerprint_stale]: case.json:3: /x: second",
        "  hint: do B",
        "error[case_invalid]: case.json:3: /x: third",
        "error[case_invalid]: case.json:3: /x: fourth",
    ]
