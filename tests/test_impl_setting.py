"""The ``impl`` setting (spec/reports.md 3.2): the implementations ``run``, ``coverage``,
``baseline update`` and the pytest plugin use when no ``--impl`` is given, so that a project
whose agent is written in one language is not an ``error`` (``handler_missing``) on the
other implementation by default; ``--impl`` still wins, and each one listed counts as named."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.harness.run.registry import default_implementations, impl_setting

pytest_plugins = ["pytester"]

CASES = Path(__file__).resolve().parents[1] / "spec" / "conformance" / "cases"


def project(root: Path, settings: str) -> Path:
    shutil.copytree(CASES / "reads-notes", root / "cases" / "reads-notes")
    (root / "threads-cases.toml").write_text(settings)
    return root


def ran(root: Path, *args: str) -> list[str]:
    p = cli("run", "cases", "--format", "json", *args, cwd=root)
    assert p.returncode == 0, p.stderr
    rows = [json.loads(line) for line in p.stdout.splitlines()]
    return [r["implementation"] for r in rows if "verdict" in r]


def test_the_setting_is_the_default_of_run_and_impl_still_wins(tmp_path: Path) -> None:
    root = project(tmp_path, 'impl = ["threads-py"]\n')
    assert impl_setting(root) == ["threads-py"]
    assert ran(root) == ["threads-py"]
    assert ran(root, "--impl", "threads-ts") == ["threads-ts"]


def test_without_the_setting_every_available_implementation_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = project(tmp_path, "strict = false\n")
    assert impl_setting(root) is None
    monkeypatch.chdir(root)
    assert default_implementations() == ["threads-py", "threads-ts"]
    assert sorted(ran(root)) == ["threads-py", "threads-ts"]


def test_coverage_and_baseline_update_take_it_too(tmp_path: Path) -> None:
    # a configured implementation that cannot start: run by default, left out by the setting
    mine = '[implementations.mine]\ncommand = ["./no-such-driver"]\n'
    root = project(tmp_path, f'impl = ["threads-ts"]\n{mine}')
    p = cli("coverage", "cases", "--format", "json", cwd=root)
    assert p.returncode == 0, p.stderr
    assert list(json.loads(p.stdout)["implementations"]) == ["threads-ts"]
    p = cli("baseline", "update", "cases", "--json", cwd=root)
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["unavailable"] == []
    (root / "threads-cases.toml").write_text(mine)
    p = cli("baseline", "update", "cases", "--json", cwd=root)
    assert json.loads(p.stdout)["unavailable"] == ["mine"]


def test_a_listed_implementation_is_named_so_one_that_cannot_start_is_an_error(
    tmp_path: Path,
) -> None:
    root = project(
        tmp_path,
        'impl = ["mine"]\n[implementations.mine]\ncommand = ["./no-such-driver"]\n',
    )
    p = cli("run", "cases", "--format", "json", cwd=root)
    assert p.returncode == 3, p.stderr
    (row,) = [json.loads(line) for line in p.stdout.splitlines() if '"verdict"' in line]
    assert (row["implementation"], row["verdict"]) == ("mine", "error")


def test_the_pytest_plugin_takes_the_setting(pytester: pytest.Pytester) -> None:
    project(pytester.path, 'impl = ["threads-ts"]\n')
    result = pytester.runpytest(
        "--threads-cases", "cases", "--collect-only", "-q", "-p", "no:cacheprovider"
    )
    items = [line for line in result.stdout.lines if "::" in line]
    assert items and all(line.endswith("[threads-ts]") for line in items), items
