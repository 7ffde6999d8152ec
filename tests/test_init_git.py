"""``init`` writes .gitattributes patterns git matches for any folder name (a space, a
quote, glob characters: escaped, C-quoted), checked with ``git check-attr``; and a
repository git cannot read (a corrupt .git/config) is an error naming git's complaint,
exit 1, with nothing written, not "not a git work tree" and exit 0."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import cli

from threads_cases.review.setup import attribute_pattern, init_project

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def _diff_attr(repo: Path, path: str) -> str:
    out = _git(repo, "check-attr", "-z", "diff", "--", path)
    return out.split("\0")[2]


@pytest.mark.parametrize(
    "folder",
    [
        "we ird",
        'a"b',
        "x*y",
        "#h",
        "!n",
        "t\tab",
        "a\\b",
        "[ab]",
        " lead",
        "ü ber",
        "zero\u200bwidth",
    ],
)
def test_git_matches_the_pattern_of_any_folder_name(tmp_path: Path, folder: str) -> None:
    _git(tmp_path, "init", "-q")
    init_project(tmp_path, folder)
    for name in ("case.json", "log.threads-py.jsonl"):
        (tmp_path / folder / "c").mkdir(parents=True, exist_ok=True)
        assert _diff_attr(tmp_path, f"{folder}/c/{name}") == "threads-cases", (
            tmp_path / ".gitattributes"
        ).read_text()
    for other in ("we", "ird", "a", "xzy", "h", "n", "b"):
        assert _diff_attr(tmp_path, f"{other}/c/case.json") == "unspecified"
    assert [s.status for s in init_project(tmp_path, folder)][:2] == ["present", "present"]


def test_a_folder_with_a_space_is_quoted_on_the_command_line(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q")
    p = cli("init", "--cases", "we ird", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    assert '"we ird/**/*.json" diff=threads-cases' in (tmp_path / ".gitattributes").read_text()
    (tmp_path / "we ird" / "c").mkdir(parents=True)
    (tmp_path / "we ird" / "c" / "case.json").write_text("{}")
    assert _git(tmp_path, "check-attr", "-a", "--", "we ird/c/case.json") == (
        "we ird/c/case.json: diff: threads-cases\n"
    )


def test_plain_names_are_written_as_before() -> None:
    assert attribute_pattern("cases", "**/*.json") == "cases/**/*.json"
    assert attribute_pattern("suite/cases", "**/*.jsonl") == "suite/cases/**/*.jsonl"


@pytest.mark.parametrize("garbage", ["garbage", "[garbage"])
def test_a_repository_git_cannot_read_is_an_error_and_nothing_is_written(
    tmp_path: Path, garbage: str
) -> None:
    _git(tmp_path, "init", "-q")
    (tmp_path / ".git" / "config").write_text(garbage + "\n")
    p = cli("init", cwd=tmp_path)
    assert p.returncode == 1, p.stdout + p.stderr
    first = p.stderr.splitlines()[0]
    assert first.startswith(
        f"error[io_error]: git could not read the repository of {tmp_path.resolve()}: "
    ), p.stderr
    assert first.split(": ", 2)[2].startswith(("error: ", "fatal: ")), first
    assert "not a git work tree" not in p.stdout + p.stderr
    assert p.stdout == ""
    assert not (tmp_path / ".gitattributes").exists()
    assert not (tmp_path / ".gitignore").exists()


def test_outside_a_repository_init_still_skips_the_git_step(tmp_path: Path) -> None:
    p = cli("init", cwd=tmp_path, env={"GIT_CEILING_DIRECTORIES": str(tmp_path.parent)})
    assert p.returncode == 0, p.stdout + p.stderr
    assert "skipped  git config diff.threads-cases.command: not a git work tree" in p.stdout


@pytest.mark.parametrize("which", [".gitattributes", ".gitignore"])
@pytest.mark.parametrize("kind", ["symlink", "dangling-symlink", "fifo", "folder"])
def test_init_refuses_to_write_through_a_link_or_into_a_special_file(
    tmp_path: Path, which: str, kind: str
) -> None:
    """One line, exit 1, nothing written anywhere: not through a link to a file outside the
    repository, and never blocked on a FIFO (the CLI helper fails a command that hangs)."""
    import os

    repo, outside = tmp_path / "repo", tmp_path / "outside.txt"
    repo.mkdir()
    outside.write_text("keep\n")
    target = repo / which
    if kind == "symlink":
        target.symlink_to(outside)
    elif kind == "dangling-symlink":
        target.symlink_to(tmp_path / "nowhere")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.mkdir()
    p = cli("init", cwd=repo, env={"GIT_CEILING_DIRECTORIES": str(tmp_path)})
    assert p.returncode == 1, p.stdout + p.stderr
    lines = p.stderr.strip().splitlines()  # the error's line and its hint, nothing more
    assert len(lines) == 2 and lines[0].startswith(f"error[io_error]: {which}: it is "), p.stderr
    assert lines[0].endswith(": init writes only to a regular file"), lines[0]
    assert lines[1].strip().startswith(f"hint: replace {which} with a regular file"), lines[1]
    assert p.stdout == ""
    assert outside.read_text() == "keep\n" and not (tmp_path / "nowhere").exists()
    other = ".gitignore" if which == ".gitattributes" else ".gitattributes"
    assert not (repo / other).exists()  # both are checked before anything is written
