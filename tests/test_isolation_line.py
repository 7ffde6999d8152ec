"""`run` prints its `isolation: ...` line when the run starts, never before a refusal: a run
refused before it started (exit 2) ran nothing under any isolation, and under --format json
a refusal leaves standard error empty (spec/reports.md 5.2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli

CASES = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"


def _suite(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    py_only = tmp_path / "cases" / "py-only"
    shutil.copytree(CASES / "lists-files", py_only)
    doc = json.loads((py_only / "case.json").read_text())
    doc["dialects"] = ["threads-py"]
    (py_only / "case.json").write_text(json.dumps(doc))
    for name in ("log.threads-ts.jsonl", "expected.threads-ts.json"):
        (py_only / name).unlink()  # a case holds only the dialects it lists
    assert cli("fmt", "cases/py-only", cwd=tmp_path).returncode == 0  # its fingerprint
    (tmp_path / "empty").mkdir()
    (tmp_path / ".threads-cases").mkdir()


REFUSED = {
    "impl-no-case-lists": ["cases", "-k", "lists-files", "--impl", "threads-ts"],
    "bad-shard": ["cases", "--shard", "3/2"],
    "shard-not-k-of-n": ["cases", "--shard", "x"],
    "folder-without-cases": ["empty"],
    "no-name-matches": ["cases", "-k", "no-such-case"],
    "last-failed-not-a-report": ["cases", "--last-failed"],
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_refused_run_prints_no_isolation_line(tmp_path: Path, name: str) -> None:
    _suite(tmp_path)
    (tmp_path / ".threads-cases" / "last-report.jsonl").write_text("not a report\n")
    p = cli("run", *REFUSED[name], cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr.startswith("error[invalid_request]: "), p.stderr
    assert "isolation:" not in p.stderr
    p = cli("run", *REFUSED[name], "--format", "json", cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert p.stderr == ""  # the refusal is the one line on stdout
    assert json.loads(p.stdout)["code"] == "invalid_request"


def test_a_run_that_starts_says_its_isolation_once(tmp_path: Path) -> None:
    _suite(tmp_path)
    p = cli("run", "cases", "--impl", "threads-py", "--isolation", "guard", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count("isolation: threads-py guard") == 1, p.stderr
    p = cli("run", "cases", "--shard", "1/1", "--isolation", "guard", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count("isolation: threads-py guard, threads-ts guard") == 1, p.stderr
