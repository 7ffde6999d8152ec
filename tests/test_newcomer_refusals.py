"""Refusals a newcomer meets first, in the command line's words (issue 38): ``diff --git REV``
on a folder of cases says diff takes one case and names them (spec/reports.md 8); a case path
that does not exist is ``no such file or folder`` from ``run_case`` as from ``run``
(spec/case-format.md 8.1 item 0; ts/test/newcomer.test.ts for ``openCase``)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli
from golden import assert_golden

from threads_cases import run_case

CASES = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"


def _git(repo: Path, *args: str) -> None:
    who = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", *who, *args], cwd=repo, capture_output=True, check=True)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_diff_git_on_a_folder_of_cases_says_it_takes_one_case(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    for name in ("weather-stub", "reads-notes"):
        shutil.copytree(CASES / name, repo / "cases" / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "cases")
    p = cli("diff", "--git", "HEAD", "cases", cwd=repo)
    assert p.returncode == 2, p.stdout + p.stderr
    assert "no case.json in HEAD" not in p.stderr
    js = cli("diff", "--git", "HEAD", "cases", "--format", "json", cwd=repo)
    refusal = json.loads(js.stdout)
    assert refusal["code"] == "invalid_request" and js.returncode == 2
    # a folder of cases only at REV (moved away since) is refused the same way
    shutil.move(repo / "cases", repo / "moved")
    (repo / "cases").mkdir()
    gone = cli("diff", "--git", "HEAD", "cases", cwd=repo)
    assert gone.returncode == 2 and gone.stderr == p.stderr
    # one case still diffs
    back = cli("diff", "--git", "HEAD", "moved/reads-notes", cwd=repo)
    assert back.returncode == 1  # added since HEAD: shown whole
    assert_golden("diff-git-folder.txt", p.stderr)


def test_run_case_on_a_missing_folder_uses_the_cli_words(tmp_path: Path) -> None:
    result = run_case(tmp_path / "cases" / "nothere")
    assert (result.verdict, result.reasons) == ("error", ["invalid_request"])
    assert (
        result.message
        == f"error[invalid_request]: {tmp_path}/cases/nothere: no such file or folder"
    )
    assert "case.json is missing" not in result.message
    p = cli("run", "cases/nothere", cwd=tmp_path)
    assert "cases/nothere: no such file or folder" in p.stderr
    # a folder that is there but holds no case.json keeps saying so
    (tmp_path / "cases" / "empty").mkdir(parents=True)
    empty = run_case(tmp_path / "cases" / "empty")
    assert empty.message.endswith("not a case directory: case.json is missing")
