"""`stale PATH` answers only for the cases its report checked: a report of other cases (or
of only some of them) is never a clean bill for the cases asked about."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import cli

from threads_cases.review import unchecked_cases


def two_folders(saved_case: Path) -> Path:
    """cases/mixed/{a,b} and cases/other/c, copies of the saved case; returns cases/."""
    root = saved_case.parent
    for rel in ("mixed/a", "mixed/b", "other/c"):
        shutil.copytree(saved_case, root / rel)
    shutil.rmtree(saved_case)
    return root


def test_unchecked_cases_counts_only_results_that_ran(saved_case: Path) -> None:
    root = two_folders(saved_case)
    a, b = str(root / "mixed" / "a"), str(root / "mixed" / "b")
    results = [
        {"path": a, "verdict": "pass"},
        {"path": b, "verdict": "error"},  # never replayed: not checked
        {"path": b, "verdict": "skip"},
    ]
    assert unchecked_cases(results, root / "mixed") == ([b], 1)
    assert unchecked_cases([], root / "mixed") == ([a, b], 0)


def test_stale_with_a_report_of_other_cases(saved_case: Path, tmp_path: Path) -> None:
    two_folders(saved_case)
    p = cli("run", "cases/other", "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli("stale", "cases/mixed", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no case left" not in p.stdout
    assert "holds no checked result for the 2 case(s) under cases/mixed" in p.stderr
    assert "run `threads-cases run cases/mixed` first" in p.stderr
    assert cli("stale", "cases/other", cwd=tmp_path).returncode == 0


def test_stale_with_a_report_of_some_of_the_cases(saved_case: Path, tmp_path: Path) -> None:
    two_folders(saved_case)
    p = cli("run", "cases/mixed/a", "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli("stale", "cases/mixed", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "1 case(s) under cases/mixed have no checked result" in p.stderr
    assert "cases/mixed/b" in p.stderr
    assert "(see the warning)" in p.stdout
    p = cli("stale", "cases/mixed", "--format", "json", cwd=tmp_path)
    assert p.returncode == 1
    assert json.loads(p.stdout)["unchecked"] == ["cases/mixed/b"]
    p = cli("run", "cases/mixed", "--impl", "threads-py", cwd=tmp_path)
    p = cli("stale", "cases/mixed", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0 and json.loads(p.stdout)["unchecked"] == []


def test_stale_under_a_folder_without_cases(saved_case: Path, tmp_path: Path) -> None:
    cli("run", "cases", "--impl", "threads-py", cwd=tmp_path)
    (tmp_path / "empty").mkdir()
    p = cli("stale", "empty", cwd=tmp_path)
    assert p.returncode == 2 and "no cases under empty" in p.stderr
