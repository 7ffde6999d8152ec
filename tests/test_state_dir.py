"""Where `run` keeps its last report (spec/reports.md 2.2): never inside a case. A run from a
case's own folder wrote `.threads-cases/last-report.jsonl` into the case, and `validate` then
refused the case (an unknown file, a stale fingerprint)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.core.statedir import project_home, state_path


def test_project_home_is_the_current_folder_outside_cases(tmp_path: Path) -> None:
    (tmp_path / "cases").mkdir()
    assert project_home(tmp_path / "cases") == tmp_path / "cases"
    assert state_path("last-report.jsonl", tmp_path) == Path(".threads-cases/last-report.jsonl")


def test_project_home_from_inside_a_case(saved_case: Path, tmp_path: Path) -> None:
    inner = saved_case / "artifacts"
    inner.mkdir(exist_ok=True)
    # no project marker above: the folder holding the case
    for here in (saved_case, inner):
        assert project_home(here) == saved_case.parent
    assert state_path("r.jsonl", saved_case) == Path("../.threads-cases/r.jsonl")
    # the project's folder: the nearest one above holding threads-cases.toml, a
    # pyproject.toml with [tool.threads-cases], or .git (core/statedir.py)
    for marker, text in (
        ("pyproject.toml", "[tool.threads-cases]\n"),
        ("threads-cases.toml", ""),
        (".git", ""),
    ):
        (tmp_path / marker).write_text(text)
        assert project_home(inner) == tmp_path
        assert state_path("r.jsonl", inner) == Path("../../../.threads-cases/r.jsonl")
        (tmp_path / marker).unlink()
    # a pyproject.toml without that table does not make a project folder
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n')
    assert project_home(inner) == saved_case.parent


def test_run_stale_and_last_failed_from_a_case_folder(saved_case: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.threads-cases]\n')
    before = sorted(p.name for p in saved_case.iterdir())
    p = cli("run", ".", "--impl", "threads-py", cwd=saved_case)
    assert p.returncode == 0, p.stdout + p.stderr
    assert sorted(p.name for p in saved_case.iterdir()) == before
    report = tmp_path / ".threads-cases" / "last-report.jsonl"
    results = [json.loads(x) for x in report.read_text().splitlines()]
    assert any(r.get("kind") == "result" and r["verdict"] == "pass" for r in results)
    p = cli("validate", ".", cwd=saved_case)
    assert p.returncode == 0, p.stdout + p.stderr
    p = cli("stale", ".", cwd=saved_case)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "../../.threads-cases/last-report.jsonl" in p.stdout
    p = cli("run", ".", "--impl", "threads-py", "--last-failed", cwd=saved_case)
    assert p.returncode == 0 and "no failures in the last report" in p.stderr, p.stderr
    assert sorted(x.name for x in saved_case.iterdir()) == before
    # from the project's folder, the same report: its paths are as the run found them (".",
    # from the case's folder), read from the folder its header records (cwd), so it covers
    # cases/sample from here too
    p = cli("stale", "cases", cwd=tmp_path)
    assert p.returncode == 0 and "no case left a reply or stub unused" in p.stdout, p.stderr


def test_init_ignores_the_report_of_a_run_from_any_folder(saved_case: Path, tmp_path: Path) -> None:
    """`init`'s ignore rule covers `.threads-cases/` wherever `run` keeps it (a run from
    `cases/` keeps it in the project's folder, the one holding .git), the baseline
    excepted."""
    git = shutil.which("git")
    if git is None:
        pytest.skip("git is not installed")
    subprocess.run([git, "init", "-q", str(tmp_path)], check=True)
    assert cli("init", ".", cwd=tmp_path).returncode == 0
    for where in (tmp_path, tmp_path / "cases", saved_case):
        p = cli("run", ".", "--impl", "threads-py", cwd=where)
        assert p.returncode == 0, p.stdout + p.stderr
    assert (tmp_path / ".threads-cases" / "last-report.jsonl").is_file()
    assert not (tmp_path / "cases" / ".threads-cases").exists()
    (tmp_path / ".threads-cases" / "baseline.json").write_text("{}")
    status = subprocess.run(
        [git, "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert [x for x in status if ".threads-cases" in x] == ["?? .threads-cases/baseline.json"]


def test_the_default_baseline_is_never_inside_a_case(
    saved_case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from threads_cases.harness.baseline.file import locate_baseline

    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\n[tool.threads-cases]\n')
    monkeypatch.chdir(saved_case)
    assert locate_baseline() == Path("../../.threads-cases/baseline.json")
    monkeypatch.chdir(tmp_path)
    assert locate_baseline() == Path(".threads-cases/baseline.json")


@pytest.mark.parametrize(
    "where",
    [
        ["import", "claude-code", "t.jsonl", "-o", "cases/sample/x.jsonl"],
        ["import", "claude-code", "t.jsonl", "-o", "cases/sample/artifacts/x.jsonl"],
        ["run", "cases", "--impl", "threads-py", "--junit", "cases/sample/junit.xml"],
    ],
)
def test_an_output_file_inside_a_case_is_refused(
    saved_case: Path, tmp_path: Path, where: list[str]
) -> None:
    """The user's report: `import ... -o cases/<case>/x.jsonl` wrote into the case (exit 0)
    and made it invalid. Every -o/--junit file is refused inside a case, before anything
    runs, and the case stays valid."""
    example = Path(__file__).resolve().parents[1] / "examples" / "sessions"
    shutil.copy(example / "claude-code-session.jsonl", tmp_path / "t.jsonl")
    before = sorted(p.relative_to(saved_case) for p in saved_case.rglob("*"))
    p = cli(*where, cwd=tmp_path)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "error[invalid_request]: " in p.stderr and "is inside the case directory" in p.stderr
    assert "hint: write it outside the case" in p.stderr
    assert sorted(p.relative_to(saved_case) for p in saved_case.rglob("*")) == before
    assert cli("validate", "cases/sample", cwd=tmp_path).returncode == 0
    # beside the case, the same command writes
    assert cli(*where[:-1], "beside.out", cwd=tmp_path).returncode == 0


@pytest.mark.parametrize("cases", ["/tmp/elsewhere", "../x", "cases/../../x"])
def test_init_refuses_cases_outside_the_repository(tmp_path: Path, cases: str) -> None:
    """`init --cases /tmp/elsewhere` wrote `tmp/elsewhere/**/*.json` into .gitattributes, a
    pattern git never matches: refused, with nothing written."""
    repo = tmp_path / "repo"
    repo.mkdir()
    p = cli("init", "--cases", cases, cwd=repo)
    assert p.returncode == 2, p.stdout + p.stderr
    assert f"error[invalid_request]: --cases {cases} is outside the repository" in p.stderr
    assert "hint: pass the folder of cases relative to the repository" in p.stderr
    assert not (repo / ".gitattributes").exists()


def test_init_takes_an_absolute_cases_folder_inside_the_repository(tmp_path: Path) -> None:
    p = cli("init", "--cases", str(tmp_path / "sub" / "cases"), cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    text = (tmp_path / ".gitattributes").read_text()
    assert "sub/cases/**/*.json diff=threads-cases" in text and "tmp" not in text
