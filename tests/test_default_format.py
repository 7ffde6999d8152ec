"""The default output format follows one rule (spec/reports.md 5.4): the commands that only
print data (turns, reduce) print JSON when piped; validate, import and the rest print text
unless --format json, and their --help says so."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import cli

SESSION = Path(__file__).resolve().parent.parent / "examples" / "sessions"


def test_import_and_validate_print_text_when_piped_turns_and_reduce_json(tmp_path: Path) -> None:
    src = SESSION / "claude-code-session.jsonl"
    p = cli("import", "claude-code", src, "-o", "t.jsonl", cwd=tmp_path)  # piped: not a tty
    assert p.returncode == 0 and p.stdout.startswith("wrote t.jsonl: "), p.stdout
    v = cli("validate", "t.jsonl", cwd=tmp_path)
    assert v.returncode == 0 and v.stdout == "t.jsonl: valid\n"
    assert isinstance(json.loads(cli("turns", "t.jsonl", cwd=tmp_path).stdout), list)
    assert isinstance(json.loads(cli("reduce", "t.jsonl", cwd=tmp_path).stdout), dict)
    j = cli("validate", "t.jsonl", "--format", "json", cwd=tmp_path)
    assert json.loads(j.stdout)["valid"] is True


def test_help_says_the_default_each_command_has(tmp_path: Path) -> None:
    piped = "default: json when piped"
    for command in ("turns", "reduce"):
        assert piped in cli(command, "--help", cwd=tmp_path).stdout.replace("\n  ", " ")
    for command in ("validate", "import"):
        out = cli(command, "--help", cwd=tmp_path, env={"COLUMNS": "400"}).stdout
        assert piped not in " ".join(out.split()), command
