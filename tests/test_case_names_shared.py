"""Two case folders whose case.json give the same `name`: reports, `--last-failed` and the
baseline key results by name, so `validate` (on a folder), `run` and `list` warn, naming both
paths (stderr, silenced by -q; `validate --format json` carries the warning)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import cli

from threads_cases.case.directory import shared_names

CASES = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"


def _two_of_one_name(tmp_path: Path) -> None:
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-notes")
    shutil.copytree(CASES / "reads-notes", tmp_path / "cases" / "reads-copy")
    shutil.copytree(CASES / "weather-stub", tmp_path / "cases" / "weather-stub")


def test_shared_names_names_every_path(tmp_path: Path) -> None:
    _two_of_one_name(tmp_path)
    cases = sorted((tmp_path / "cases").iterdir())
    (warning,) = shared_names(cases)
    assert "'reads-notes'" in warning
    assert str(tmp_path / "cases" / "reads-copy") in warning
    assert str(tmp_path / "cases" / "reads-notes") in warning
    assert shared_names([tmp_path / "cases" / "weather-stub", cases[0]]) == []


def test_cli_validate_and_run_warn_about_a_shared_name(tmp_path: Path) -> None:
    _two_of_one_name(tmp_path)
    expected = "warning: the cases cases/reads-copy, cases/reads-notes share the name 'reads-notes'"
    p = cli("validate", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stderr  # a warning: the spec does not make names unique
    assert p.stderr.count(expected) == 1, p.stderr
    p = cli("run", "cases", "--impl", "threads-py", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stderr.count(expected) == 1, p.stderr
    p = cli("run", "--impl", "threads-py", cwd=tmp_path / "cases")
    assert "share the name 'reads-notes'" in p.stderr
    shutil.rmtree(tmp_path / "cases" / "reads-copy")
    p = cli("validate", "cases", cwd=tmp_path)
    assert "share the name" not in p.stderr


def test_cli_list_warns_about_a_shared_name_and_validate_json_carries_it(tmp_path: Path) -> None:
    _two_of_one_name(tmp_path)
    expected = "warning: the cases cases/reads-copy, cases/reads-notes share the name 'reads-notes'"
    for fmt in ("pretty", "json"):
        p = cli("list", "cases", "--format", fmt, cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert p.stderr.count(expected) == 1, p.stderr
        assert "share the name" not in p.stdout
        quiet = cli("list", "cases", "--format", fmt, "-q", cwd=tmp_path)
        assert quiet.returncode == 0 and quiet.stderr == "", quiet.stderr
        assert quiet.stdout == p.stdout
    p = cli("validate", "cases", "--format", "json", "-q", cwd=tmp_path)
    assert p.returncode == 0 and p.stderr == "", p.stderr
    doc = json.loads(p.stdout)
    assert doc["valid"] is True
    assert doc["warnings"] == [
        {
            "name": "reads-notes",
            "cases": ["cases/reads-copy", "cases/reads-notes"],
            "message": expected.removeprefix("warning: ") + " (case.json `name`); reports and "
            "the baseline key cases by name: give each its own",
        }
    ]
    shutil.rmtree(tmp_path / "cases" / "reads-copy")
    p = cli("list", "cases", cwd=tmp_path)
    assert p.returncode == 0 and "share the name" not in p.stderr
    assert (
        json.loads(cli("validate", "cases", "--format", "json", cwd=tmp_path).stdout)["warnings"]
        == []
    )
