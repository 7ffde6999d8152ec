"""`-q` keeps the promise `--help` makes on every command: "Print only results and errors
(no warnings or notes)". Each command below prints a warning or a note without -q (checked,
so the test cannot pass by printing nothing at all) and nothing on stderr with it, in the
pretty and the JSON formats; its results and exit status do not change."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.harness.baseline.file import TODO_REASON, Entry, write_baseline

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "spec" / "conformance" / "cases"
JOINED = ROOT / "tests" / "importers" / "trials" / "11b-two-records-joined.jsonl"


def _todo_baseline(tmp_path: Path) -> None:
    write_baseline(tmp_path / "b.json", [Entry("reads-notes", "threads-py", TODO_REASON)])


def _edited_case(tmp_path: Path) -> None:
    """A case edited by hand since it was saved (fingerprint_stale)."""
    p = tmp_path / "cases" / "reads-notes" / "case.json"
    doc = json.loads(p.read_text())
    doc["expect"]["must"] = doc["expect"]["must"][:1]
    p.write_text(json.dumps(doc))


def _half_checked(tmp_path: Path) -> None:
    """A last report that checked one of the two cases under cases/ (stale warns)."""
    shutil.copytree(CASES / "lists-files", tmp_path / "cases" / "lists-files")
    assert cli("run", "cases/reads-notes", "--impl", "threads-py", cwd=tmp_path).returncode == 0


#: name -> (arguments, what stderr shows without -q, how to prepare tmp_path)
COMMANDS = {
    "import": (["import", "claude-code", str(JOINED), "-o", "j.jsonl"], "warning[import_r", None),
    "save-from": (
        ["save", str(JOINED), "--from", "claude-code", "--turn", "1", "--name", "j", "--dir", "c"],
        "warning[import_r",
        None,
    ),
    "run": (["run", "cases", "--impl", "threads-py", "--isolation", "none"], "warning:", None),
    "run-json": (
        ["run", "cases", "--impl", "threads-py", "--isolation", "none", "--format", "json"],
        "warning:",
        None,
    ),
    "run-todo-baseline": (
        ["run", "cases", "--impl", "threads-py", "--baseline", "b.json", "--format", "json"],
        "warning: 1 baseline entry",
        _todo_baseline,
    ),
    "run-fingerprint-stale": (
        ["run", "cases", "--impl", "threads-py"],
        "changed since they were saved",
        _edited_case,
    ),
    "stale-unchecked": (["stale", "cases"], "have no checked result", _half_checked),
    "show-values": (["show", "cases/reads-notes", "--values"], "warning", None),
    "fmt-no-case-files": (["fmt", "--check", "notes.txt"], "no case files", None),
}


@pytest.mark.parametrize("name", list(COMMANDS))
def test_quiet_prints_no_warning_or_note(tmp_path: Path, name: str) -> None:
    args, shown, prepare = COMMANDS[name]
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    (tmp_path / "notes.txt").write_text("not a case\n")
    if prepare is not None:
        prepare(tmp_path)
    loud = cli(*args, cwd=tmp_path)
    assert shown in loud.stderr, loud.stderr
    assert "warning:" not in loud.stdout, loud.stdout  # warnings never go to stdout
    shutil.rmtree(tmp_path / "c", ignore_errors=True)  # the second run writes them again
    (tmp_path / "j.jsonl").unlink(missing_ok=True)
    quiet = cli(*args, "-q", cwd=tmp_path)
    assert quiet.stderr == "", quiet.stderr
    assert quiet.returncode == loud.returncode
    if "--format" in args and name != "run-todo-baseline":
        assert _stable(quiet.stdout) == _stable(loud.stdout)


def _stable(out: str) -> list[object]:
    """JSON output without the parts that change from run to run (times)."""
    try:
        return [json.loads(out)]
    except json.JSONDecodeError:  # JSON Lines: a report
        docs = [json.loads(x) for x in out.splitlines() if x.strip()]
        return [d.get("verdict", d.get("type")) for d in docs]


def test_quiet_still_prints_errors(tmp_path: Path) -> None:
    p = cli("import", "claude-code", "missing.jsonl", "-o", "j.jsonl", "-q", cwd=tmp_path)
    assert p.returncode != 0 and "error[" in p.stderr


def test_import_json_says_each_note_and_warning_once(tmp_path: Path) -> None:
    """Under ``import --format json`` the notes and warnings are part of the result on stdout
    (spec/importers.md section 4): they are not printed on stderr as well, so a terminal
    showing both streams shows each once."""
    p = cli("import", "claude-code", JOINED, "-o", "j.jsonl", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["warnings"], doc
    assert p.stderr == "", p.stderr
    plain = cli("import", "claude-code", JOINED, "-o", "k.jsonl", cwd=tmp_path)
    for w in doc["warnings"]:  # the same warnings, on stderr, without --format json
        assert plain.stderr.count(f"{w['reason']}: {w['message']}") == 1, plain.stderr
