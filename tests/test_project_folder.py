"""One rule finds the project's folder (core/statedir.py, spec/driver-protocol.md 5.3): the
settings, the default baseline and ``.threads-cases/`` all come from the nearest folder
upward holding ``threads-cases.toml``, a ``pyproject.toml`` with ``[tool.threads-cases]``, or
``.git``. A run from a case's folder, or from ``cases/``, read the settings of the current
folder only: the project's implementations were dropped without a word, and from ``cases/``
its baseline too."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

from conftest import CONFORMANCE, cli

from threads_cases.core.canonical import canonical_document
from threads_cases.core.statedir import project_home
from threads_cases.core.strictjson import read_json_file
from threads_cases.harness.baseline.file import locate_baseline
from threads_cases.harness.run.registry import configured

IMPL = '[tool.threads-cases.implementations.my-impl]\ncommand = ["./my-driver"]\n'


def _project(root: Path, settings: str = IMPL) -> Path:
    """``root`` with pyproject.toml holding ``settings``, a working ``./my-driver`` (the
    Python driver) and the conformance case reads-notes under cases/."""
    (root / "pyproject.toml").write_text('[project]\nname = "p2"\n' + settings)
    driver = root / "my-driver"
    driver.write_text(f"#!/bin/sh\nexec {sys.executable} -m threads_cases.protocol.driver\n")
    driver.chmod(0o755)
    case = root / "cases" / "reads-notes"
    case.parent.mkdir(parents=True, exist_ok=True)
    shutil.copytree(CONFORMANCE / "reads-notes", case)
    return case


def test_the_project_folder_is_the_nearest_with_settings_or_git(tmp_path: Path) -> None:
    deep = tmp_path / "pkg" / "cases"
    deep.mkdir(parents=True)
    assert project_home(deep) == deep  # nothing above: the current folder
    (tmp_path / "pkg" / "pyproject.toml").write_text('[project]\nname = "pkg"\n')
    assert project_home(deep) == deep  # a pyproject.toml without the table does not count
    (tmp_path / "pyproject.toml").write_text("[tool.threads-cases]\nstrict = true\n")
    assert project_home(deep) == tmp_path
    (tmp_path / "pkg" / ".git").mkdir()
    assert project_home(deep) == tmp_path / "pkg"
    (tmp_path / "pkg" / "cases" / "threads-cases.toml").write_text("")
    assert project_home(deep) == deep


def test_settings_and_baseline_are_read_from_the_project_folder(tmp_path: Path) -> None:
    case = _project(tmp_path, IMPL + '[tool.threads-cases]\nbaseline = "known.json"\n')
    for here in (tmp_path, tmp_path / "cases", case):
        impls = configured(here)
        assert list(impls) == ["my-impl"]
        # a relative program path is the configuration file's folder's
        assert impls["my-impl"]["command"] == [str(tmp_path / "my-driver")]
        assert locate_baseline(start=here) == tmp_path / "known.json"


def test_a_run_from_a_case_folder_runs_the_configured_implementation(tmp_path: Path) -> None:
    case = _project(tmp_path)
    for here in (tmp_path, tmp_path / "cases", case):
        p = cli("run", ".", "--impl", "threads-py", "--impl", "my-impl", cwd=here)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "my-impl" in p.stdout and "2 pass" in p.stdout, p.stdout
        p = cli("run", ".", "--format", "json", cwd=here)
        impls = {x.get("implementation") for x in map(json.loads, p.stdout.splitlines())}
        assert "my-impl" in impls, p.stdout
    assert not (tmp_path / "cases" / ".threads-cases").exists()
    assert (tmp_path / ".threads-cases" / "last-report.jsonl").is_file()


def test_a_run_from_the_cases_folder_uses_the_project_baseline(tmp_path: Path) -> None:
    case = _project(tmp_path, "[tool.threads-cases]\nstrict = false\n")
    doc = read_json_file(case / "case.json")
    doc["expect"]["must"][0]["data"] = {"never": "there"}
    (case / "case.json").write_bytes(canonical_document(doc))
    entry = {"case": "reads-notes", "implementation": "threads-py", "reason": "known"}
    state = tmp_path / ".threads-cases"
    state.mkdir()
    (state / "baseline.json").write_text(json.dumps({"format": 1, "entries": [entry]}))
    for here in (tmp_path, tmp_path / "cases", case):
        p = cli("run", ".", "--impl", "threads-py", cwd=here)
        assert p.returncode == 0, p.stdout + p.stderr
        assert "1 xfail" in p.stdout, p.stdout
