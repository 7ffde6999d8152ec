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


#: The hints that name where the agent setting lives, the same text in both languages.
AGENT_HINTS = ("agent_unavailable", "handler_missing")


def test_agent_hints_name_both_settings_files_in_both_languages() -> None:
    """The agent setting lives in threads-cases.toml or under [tool.threads-cases] of
    pyproject.toml (docs/reference/configuration.md); the examples use threads-cases.toml,
    so a hint naming only the pyproject table sent users to the wrong file."""
    from conftest import ROOT, ts_built

    from threads_cases.core.errors import REASON_HINTS

    where = "agent in threads-cases.toml or under [tool.threads-cases] of pyproject.toml"
    for code in AGENT_HINTS:
        assert where in REASON_HINTS[code], code
    if not ts_built():
        pytest.skip("the TypeScript driver is not built: run `nox -s ts`")
    errors = ROOT / "ts" / "dist" / "src" / "core" / "errors.js"
    script = (
        f"import({json.dumps(errors.as_uri())}).then((m) => "
        "process.stdout.write(JSON.stringify(m.REASON_HINTS)))"
    )
    node = subprocess.run(["node", "-e", script], capture_output=True, text=True, check=True)
    ts_hints = json.loads(node.stdout)
    assert {c: ts_hints[c] for c in AGENT_HINTS} == {c: REASON_HINTS[c] for c in AGENT_HINTS}


def test_diff_shows_each_file_once_with_the_fingerprint_under_its_case_json(
    tmp_path: Path,
) -> None:
    """A change of case.json and of model.json (as `accept` makes): the fingerprint change
    stays under case.json instead of coming after model.json under a second "case.json"."""
    old, new = tmp_path / "cases" / "old", tmp_path / "cases" / "new"
    shutil.copytree(CASES / "reads-notes", old)
    shutil.copytree(old, new)
    meta = json.loads((new / "case.json").read_text())
    meta["expect"]["must"].append({"type": "turn_completed"})
    (new / "case.json").write_text(json.dumps(meta))
    model = json.loads((new / "model.json").read_text())
    model["replies"][-1]["message"]["content"] = [{"type": "text", "text": "Milk."}]
    (new / "model.json").write_text(json.dumps(model))
    fmt = cli("fmt", "cases/new", cwd=tmp_path)
    assert fmt.returncode == 0, fmt.stderr
    p = cli("diff", "cases/old", "cases/new", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    headings = [line for line in p.stdout.splitlines() if not line.startswith((" ", "-", "+"))]
    assert headings.count("case.json") == 1, p.stdout
    assert_golden("diff-fingerprint-with-its-file.txt", p.stdout)
