"""Errors name where the problem is: a repeated key or an integer too large in a JSON
document gives its line and the pointer of the key (spec/strict-json.md section 2), and
`validate` prints each hint under the error it belongs to: every error has one, also where
other commands' hint is to run `validate` (a case.json that is not valid JSON)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.cli.log_commands import print_problems
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
    print_problems(
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
        "error[case_invalid]: case.json:3: /x: fourth",  # validate's own hint in place
        "  hint: fix it there: every file of a case follows spec/case-format.md",
    ]


@pytest.mark.parametrize("file", ["case.json", "log.threads-py.jsonl"])
def test_cli_validate_hints_at_a_json_syntax_error(tmp_path: Path, file: str) -> None:
    case = tmp_path / "cases" / "c"
    shutil.copytree(CASES / "reads-notes", case)
    text = (case / file).read_text()
    if file == "case.json":  # a trailing comma before the closing brace
        body = text.rstrip().removesuffix("}").rstrip()
        (case / file).write_text(body + ",\n}\n")
        n = len(body.splitlines())
        where = f"cases/c/case.json:{n}: "
    else:  # a cut last line
        (case / file).write_text(text + '{"seq": 9,\n')
        n = len(text.splitlines()) + 1
        where = f"cases/c/log.threads-py.jsonl:{n}: "
    code = "case_invalid" if file == "case.json" else "log_invalid"
    shown = cli("show", "cases/c", cwd=tmp_path)  # another command: the error with a hint
    assert shown.returncode == 1
    assert f"error[{code}]: {where}not valid JSON: " in shown.stderr, shown.stderr
    p = cli("validate", "cases/c", cwd=tmp_path)
    assert p.returncode == 1
    lines = p.stderr.splitlines()
    errors = [i for i, line in enumerate(lines) if line.startswith("error[")]
    assert lines[errors[0]].startswith(f"error[{code}]: {where}not valid JSON: "), p.stderr
    assert lines[errors[0] + 1] == (
        "  hint: write strict JSON (spec/strict-json.md): no trailing comma, comment, single "
        "quote or NaN; fix it where shown"
    )
    for i in errors:  # every error: its hint right under it
        assert lines[i + 1].startswith("  hint: "), p.stderr
    assert "threads-cases validate" not in p.stderr  # not the hint to run itself
