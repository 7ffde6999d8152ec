"""Counts say what happened: `fmt` names the cases it refused ("0 file(s) formatted in 6
case(s)" hid two refusals), and `stale` on a valid report with no results (an empty shard)
says the report cannot tell, not that it is "not a report of `run`"."""

from __future__ import annotations

import shutil
from pathlib import Path

from conftest import cli

from threads_cases.harness.run.pool import shard_of

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


def test_fmt_counts_the_refused_cases(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / name)
    for name in ("a", "b"):
        (tmp_path / "cases" / name / "notes.txt").write_text("stray\n")
    p = cli("fmt", "cases", cwd=tmp_path)
    assert p.returncode == 1
    assert "0 file(s) formatted in 3 case(s), 2 case(s) refused (not formatted)" in p.stdout
    p = cli("fmt", "--check", "cases", cwd=tmp_path)
    assert p.returncode == 1 and "2 of 3 case(s) refused (not checked)" in p.stderr


def test_stale_on_an_empty_shard_report(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    empty = next(k for k in (1, 2, 3) if shard_of("reads-notes", 3) != k)
    p = cli(
        "run", "cases", "--impl", "threads-py", "--shard", f"{empty}/3", "--format", "json",
        cwd=tmp_path,
    )  # fmt: skip
    assert p.returncode == 0 and '"kind":"header"' in p.stdout
    # said on stderr, and the last report (none yet) is not replaced by an empty one
    assert f"shard {empty}/3 holds none of the cases found: nothing was checked" in p.stderr
    assert not (tmp_path / ".threads-cases" / "last-report.jsonl").exists()
    (tmp_path / "s.jsonl").write_text(p.stdout)
    for args in ((), ("cases",)):
        p = cli("stale", *args, "--report", "s.jsonl", cwd=tmp_path)
        assert p.returncode == 2, p.stderr
        assert "not a report" not in p.stderr
        assert "error[invalid_request]: s.jsonl: the report holds no results" in p.stderr
        assert "hint: " in p.stderr
