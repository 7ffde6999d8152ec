"""Every command that reads a report (`report html`, `report merge`, `stale --report`,
`conformance --diff`) refuses a file that is not a report the same way: exit 2,
`error[invalid_request]: FILE:1: is not a threads-cases report (...)` and the hint naming
what to pass, whatever the file holds (Python source, an empty file, JSON that is not a
header). A report whose header reads but a later line is cut is unreadable: exit 1,
`json_invalid` with that line (spec/reports.md 1.7)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli

REPORT = Path(__file__).resolve().parent / "data" / "compliance" / "report.jsonl"

COMMANDS = {
    "report html": ["report", "html", "{f}", "-o", "page"],
    "report merge": ["report", "merge", "{f}"],
    "stale": ["stale", "--report", "{f}"],
    "conformance --diff": ["conformance", "--diff", "{f}", str(REPORT)],
}
NOT_REPORTS = {
    "SOMEFILE.py": "from threads_cases import run_case\nfalse = 1\n",
    "empty.jsonl": "",
    "list.json": "[1, 2]\n",
    "result-first.jsonl": '{"kind": "result"}\n',
    "notes.txt": "todo: write a report\n",
}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_file_that_is_not_a_report_exits_2_with_one_message(tmp_path: Path, command: str) -> None:
    for name, text in NOT_REPORTS.items():
        (tmp_path / name).write_text(text)
        args = [a.replace("{f}", name) for a in COMMANDS[command]]
        p = cli(*args, cwd=tmp_path)
        assert p.returncode == 2, (name, p.stderr)
        first, hint = p.stderr.splitlines()[:2]
        assert first == (
            f"error[invalid_request]: {name}:1: is not a threads-cases report "
            "(its first line is not a report header)"
        ), name
        assert hint == (
            "  hint: pass JSON Lines reports of `threads-cases run` or `conformance` "
            "(--format json)"
        )


def test_a_cut_report_is_unreadable_exit_1(tmp_path: Path) -> None:
    header = REPORT.read_text().splitlines()[0]
    (tmp_path / "cut.jsonl").write_text(header + '\n{"kind": "resu\n')
    p = cli("report", "html", "cut.jsonl", "-o", "page", cwd=tmp_path)
    assert p.returncode == 1
    assert p.stderr.startswith("error[json_invalid]: cut.jsonl:2: ")
