"""Deterministic recording and review of re-recorded or new cases (issue 16, steps 6 and 7).

Recording the same turn twice with a fixed thread id and clock gives byte-identical cases;
with another id and clock, ``diff`` says "re-recorded; no behavioural change" in one line
(``--all`` lists the id and timestamp changes); a behavioural change is still listed. A case
deleted since a commit is shown whole by ``diff --git``, and git's diff driver shows a
deleted file's content.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from conftest import cli
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases import AgentSpec, CaseExpectation, FakeSandbox, ScriptedModel, Thread
from threads_cases.reference.model import text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.review import diff_case_files, split_bookkeeping, walk_case
from threads_cases.review.diff import bookkeeping_line


def record(folder: Path, *, thread_id: str | None, start_ms: int | None, answer: str) -> Path:
    """The README's recording, with the id, clock and final answer given."""
    thread = Thread.create(
        agent=AgentSpec("notes-bot", "model-x-1", "Be brief."),
        sandbox=FakeSandbox({"notes.txt": "buy milk"}),
        thread_id=thread_id,
        clock=None if start_ms is None else Clock(start_ms=start_ms),
    )
    at = thread.events[-1]["event_id"]
    model = ScriptedModel(
        [tool_reply(("tu_1", "read_file", {"path": "notes.txt"})), text_reply(answer)]
    )
    thread.run_turn("What is on my list?", model)
    expect = CaseExpectation(must=[{"type": "tool_result", "data": {"is_error": False}}])
    saved = thread.save_case("reads-notes", at=at, expect=expect, dir=folder)
    assert saved.ok, saved.error
    return folder / "reads-notes"


def files_of(case: Path) -> dict[str, bytes]:
    return walk_case(case, strict=True)[0]


def test_the_same_turn_recorded_twice_gives_the_same_bytes(tmp_path: Path) -> None:
    a = record(tmp_path / "a", thread_id="thread-notes", start_ms=1_700_000_000_000, answer="Milk.")
    b = record(tmp_path / "b", thread_id="thread-notes", start_ms=1_700_000_000_000, answer="Milk.")
    assert files_of(a) == files_of(b)


@settings(max_examples=8, deadline=None)
@given(
    thread_id=st.from_regex(r"thread-[a-z0-9]{1,12}", fullmatch=True),
    start_ms=st.integers(min_value=1_600_000_000_000, max_value=1_900_000_000_000),
)
def test_another_id_and_clock_are_only_bookkeeping(thread_id: str, start_ms: int) -> None:
    root = Path(tempfile.mkdtemp())
    try:
        a = record(root / "a", thread_id="thread-notes", start_ms=1_700_000_000_000, answer="M.")
        b = record(root / "b", thread_id=thread_id, start_ms=start_ms, answer="M.")
        changes = diff_case_files(files_of(a), files_of(b))
        kept, hidden = split_bookkeeping(changes)
        assert kept == [], [c.render() for c in kept]
        if changes:
            assert bookkeeping_line(hidden, 0).startswith("re-recorded; no behavioural change")
    finally:
        shutil.rmtree(root)


def test_diff_groups_a_re_record_and_still_lists_a_behavioural_change(tmp_path: Path) -> None:
    a = record(tmp_path / "a", thread_id="thread-notes", start_ms=1_700_000_000_000, answer="M.")
    b = record(tmp_path / "b", thread_id=None, start_ms=None, answer="M.")  # random id, wall clock
    p = cli("diff", a, b, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[2].startswith("re-recorded; no behavioural change (")
    assert len(lines) == 3, p.stdout  # the labels and that one line
    every = cli("diff", "--all", a, b, cwd=tmp_path)
    assert "/thread_id" in every.stdout and "re-recorded" not in every.stdout

    # git's diff driver, one file at a time: says so for that file only
    log = "log.threads-py.jsonl"
    hexes = ("1" * 40, "100644", "2" * 40, "100644")
    one = cli("diff", "--git-driver", f"cases/x/{log}", a / log, hexes[0], hexes[1],
              b / log, hexes[2], hexes[3], cwd=tmp_path)  # fmt: skip
    assert one.returncode == 0, one.stderr
    assert one.stdout.splitlines()[1].startswith("  only ids and timestamps changed (")

    changed = record(tmp_path / "c", thread_id=None, start_ms=None, answer="Eggs.")
    kept, hidden = split_bookkeeping(diff_case_files(files_of(a), files_of(changed)))
    assert hidden and kept
    assert any(c.file == "model.json" for c in kept)
    assert any(c.pointer == "/fingerprint" for c in kept)  # it follows a real change


def _git(repo: Path, *args: str) -> str:
    env_args = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    out = subprocess.run(
        ["git", *env_args, *args], cwd=repo, capture_output=True, text=True, check=True
    )
    return out.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_a_deleted_case_is_shown_whole(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    case = record(repo / "cases", thread_id="thread-notes", start_ms=1, answer="Milk.")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "case")
    shutil.rmtree(case)
    p = cli("diff", "--git", "HEAD", "cases/reads-notes", cwd=repo)
    assert p.returncode == 1, p.stderr
    assert p.stdout.startswith("- cases/reads-notes: case deleted since HEAD\n")
    assert "input             What is on my list?" in p.stdout
    assert "model replies (2)" in p.stdout

    driver = f"{sys.executable} -m threads_cases diff --git-driver"
    (repo / ".gitattributes").write_text("cases/**/*.json diff=threads-cases\n")
    out = _git(repo, "-c", f"diff.threads-cases.command={driver}", "diff", "--", "cases")
    assert "diff --threads-cases a/cases/reads-notes/model.json" in out
    assert "  - deleted file\n" in out and "  - model replies (2)\n" in out
