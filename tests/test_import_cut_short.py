"""A transcript that stops inside a turn (spec/importers.md section 1): the turn it stops in is
``turn_failed`` with ``interrupted``, never a completed turn of half a reply.

What tells that the transcript stopped inside the turn: the file ends in a damaged record (its
last line was cut short, or is a block of NULs) while nothing recorded the turn's end (Claude
Code: a final stop reason on the last reply; Codex rollouts: ``task_complete``), or, in a
``codex exec --json`` stream (which ends every turn with ``turn.completed``), no end at all.
A ``stop_reason: null`` alone proves nothing: Claude Code writes it on lines of replies that
did complete.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from conftest import cli

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "sessions" / "claude-code-session.jsonl"
IMPORTERS = ROOT / "tests" / "importers"


def imported(fmt: str, path: Path) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt, path, stats=stats), stats


def ends(events: list[dict[str, Any]]) -> list[tuple[str, Any]]:
    return [
        (e["type"], e["data"].get("stop_reason") or e["data"]["error"]["code"])
        for e in events
        if e["type"] in ("turn_completed", "turn_failed")
    ]


def cuts(
    tmp_path: Path, offsets: Iterable[int]
) -> Iterator[tuple[int, list[dict[str, Any]], Stats]]:
    """``(offset, events, stats)`` of the example cut at each offset inside a line (a cut at
    a line boundary leaves no damaged record) whose prefix imports (not one with no
    conversation at all)."""
    data = EXAMPLE.read_bytes()
    cut = tmp_path / "cut.jsonl"
    for k in offsets:
        if data[k - 1 : k + 1].count(b"\n"):
            continue
        cut.write_bytes(data[:k])
        try:
            events, stats = imported("claude-code", cut)
        except CaseError:
            continue
        yield k, events, stats


def test_a_transcript_cut_in_the_middle_of_a_reply_fails_the_turn(tmp_path: Path) -> None:
    cut = tmp_path / "cut.jsonl"
    cut.write_bytes(EXAMPLE.read_bytes()[:3000])
    events, stats = imported("claude-code", cut)
    assert ends(events) == [("turn_failed", "interrupted")]
    assert [w.reason for w in stats.warnings] == ["cut_record"]
    assert any("recorded as interrupted" in n for n in stats.notes)


def test_every_cut_inside_a_line_leaves_no_half_turn_completed(tmp_path: Path) -> None:
    """Cut the example at many points inside its lines: a last turn listed as completed is
    the same turn, reply for reply, as in the whole file."""
    whole, _ = imported("claude-code", EXAMPLE)
    by_id = {e["event_id"]: e for e in whole}
    tried = 0
    for k, events, _ in cuts(tmp_path, range(200, len(EXAMPLE.read_bytes()), 173)):
        tried += 1
        turns = list_turns(events)
        if not turns or turns[-1]["status"] != "completed":
            continue
        last = [e for e in events if e["type"] == "model_responded"][-1]
        assert last["data"] == by_id[last["event_id"]]["data"], k
        assert last["data"]["stop_reason"] == "end_turn"
    assert tried > 20


def test_every_cut_that_fails_the_open_turn_notes_it(tmp_path: Path) -> None:
    """The note of section 1 comes whenever the cut is why the open turn did not complete:
    also when its last reply calls a tool or it has no reply yet (the user's report: at
    2000, 4000-7000, 9000 and 11000 bytes the turn failed with no note)."""
    noted = 0
    offsets = [*range(2000, 12000, 1000), *range(200, len(EXAMPLE.read_bytes()), 173)]
    for k, events, stats in cuts(tmp_path, offsets):
        last = list_turns(events)[-1] if list_turns(events) else None
        if last is None:  # cut before the first prompt: only the note that no turn is read
            assert [n[:22] for n in stats.notes] == ["the file holds no turn"], k
            continue
        if last["status"] == "completed":
            assert not stats.notes, k
            continue
        assert len([n for n in stats.notes if "recorded as interrupted" in n]) == 1, k
        noted += 1
    assert noted > 20


def test_cli_save_from_a_cut_transcript_prints_the_note(tmp_path: Path) -> None:
    """`save --from` imports in memory: it prints the note `import` prints."""
    (tmp_path / "cut.jsonl").write_bytes(EXAMPLE.read_bytes()[:4000])
    p = cli("import", "claude-code", "cut.jsonl", "-o", "log.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    notes = [ln for ln in p.stderr.splitlines() if ln.startswith("note: ")]
    assert len(notes) == 1 and "recorded as interrupted" in notes[0]
    args = ["--from", "claude-code", "cut.jsonl", "--turn", "1", "--dir", "cases"]
    p = cli("save", *args, "--name", "c", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [ln for ln in p.stderr.splitlines() if ln.startswith("note: ")] == notes


def test_a_null_stop_reason_without_damage_still_completes(tmp_path: Path) -> None:
    """Claude Code writes stop_reason null on lines of completed replies: a file cut at a
    line boundary gives no sign, and the trials whose replies carry no stop reason complete."""
    events, _ = imported(
        "claude-code", IMPORTERS / "trials" / "04b-old-cli-entry-level-usage.jsonl"
    )
    assert ends(events) == [("turn_completed", "end_turn")]
    events, _ = imported("claude-code", IMPORTERS / "realistic" / "cc-crash-damaged.jsonl")
    assert [t["status"] for t in list_turns(events)] == [
        "completed"
    ] * 3  # NUL block after end_turn


def test_a_damaged_record_after_a_final_stop_leaves_the_turn_completed(tmp_path: Path) -> None:
    lines = EXAMPLE.read_bytes().splitlines(keepends=True)
    src = tmp_path / "after-end.jsonl"
    src.write_bytes(b"".join(lines) + b'{"type":"user","message":{"role":"us')
    events, stats = imported("claude-code", src)
    whole, _ = imported("claude-code", EXAMPLE)
    assert ends(events) == ends(whole)
    assert stats.notes == []


def test_codex_exec_stream_without_turn_completed_fails_the_turn(tmp_path: Path) -> None:
    lines = (IMPORTERS / "codex-exec-basic.jsonl").read_text().splitlines()
    assert json.loads(lines[-1])["type"] == "turn.completed"
    src = tmp_path / "exec.jsonl"
    src.write_text("\n".join(lines[:-1]) + "\n")
    events, stats = imported("codex", src)
    assert ends(events)[-1] == ("turn_failed", "interrupted")
    assert any("turn.completed" in n for n in stats.notes)
    assert ends(imported("codex", IMPORTERS / "codex-exec-basic.jsonl")[0])[-1][0] == (
        "turn_completed"
    )


@pytest.mark.parametrize("task_complete", [False, True])
def test_codex_rollout_cut_at_the_end(tmp_path: Path, task_complete: bool) -> None:
    """A rollout file that ends in a damaged record fails its open turn, unless the turn's
    task_complete came before the damage."""
    data = (IMPORTERS / "codex-rollout-basic.jsonl").read_bytes()
    done = (
        b'{"timestamp":"2025-10-02T08:00:10.000Z","type":"event_msg",'
        b'"payload":{"type":"task_complete"}}\n'
    )
    src = tmp_path / "rollout.jsonl"
    src.write_bytes(data + (done if task_complete else b"") + b'{"timestamp":"2025-10-02T08:0')
    events, _ = imported("codex", src)
    want = "turn_completed" if task_complete else "turn_failed"
    assert ends(events)[-1][0] == want


def test_cli_import_turns_and_save_of_a_cut_transcript(tmp_path: Path) -> None:
    """The user's report, end to end: `head -c 3000` of the example, imported, listed and
    saved: the turn is failed/interrupted, the saved case records it and passes."""
    (tmp_path / "cut.jsonl").write_bytes(EXAMPLE.read_bytes()[:3000])
    p = cli("import", "claude-code", "cut.jsonl", "-o", "cut-log.jsonl", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "cut_record" in p.stderr and "recorded as interrupted" in p.stderr
    p = cli("turns", "cut-log.jsonl", cwd=tmp_path)
    (turn,) = json.loads(p.stdout)
    assert turn["status"] == "failed" and turn["stop_reason"] is None
    p = cli("save", "cut-log.jsonl", "--turn", "1", "--name", "cut", "--dir", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    case = json.loads((tmp_path / "cases" / "cut" / "case.json").read_text())
    assert case["expect"]["must"] == [
        {"type": "turn_failed", "data": {"error": {"code": "interrupted"}}}
    ]
    p = cli("run", "cases", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
