"""Interrupted turns are recorded faithfully (spec/case-format.md 3.4.1, spec/replay.md 3.9):
the case keeps the interruption point and the recorded turn_failed, a replay ends the turn
there with the same error, so the case passes on both implementations; a turn whose
recording simply stops is refused with turn_incomplete."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from conftest import cli as shared_cli

from threads_cases.case.turns import draft_matchers, list_turns
from threads_cases.core.log import read_log
from threads_cases.harness.run.runner import run_case
from threads_cases.save_log import save_log


def cli(cwd: Path, *args: str | Path) -> subprocess.CompletedProcess[str]:
    return shared_cli(*args, cwd=cwd)


SAMPLES = Path(__file__).parent / "importers"
INTERRUPTED = [
    ("claude-code", "claude-code-sidechain.jsonl", 2),
    ("codex", "codex-rollout-parallel.jsonl", 2),
    ("codex", "codex-exec-failed.jsonl", 2),
]


@pytest.mark.parametrize(("fmt", "name", "turn"), INTERRUPTED)
def test_an_interrupted_turn_saves_and_passes_on_both_implementations(
    tmp_path: Path, fmt: str, name: str, turn: int
) -> None:
    r = save_log(
        SAMPLES / name, from_format=fmt, name="c", dir=tmp_path, turn=turn, secrets="allow"
    )
    assert r.ok, r.error
    model = json.loads((tmp_path / "c" / "model.json").read_text())
    interruption = model["interruption"]
    assert interruption["after"] in (
        "model_responded",
        "tool_called",
        "tool_result",
        "model_requested",
        "turn_started",
    )
    meta = json.loads((tmp_path / "c" / "case.json").read_text())
    code = interruption["error"]["code"]
    assert {"type": "turn_failed", "data": {"error": {"code": code}}} in meta["expect"]["must"]
    for impl in ("threads-py", "threads-ts"):
        res = run_case(tmp_path / "c", impl)
        assert res.verdict == "pass", (impl, res.to_json())
        assert res.stop is None


def test_a_completed_turn_has_no_interruption(tmp_path: Path) -> None:
    r = save_log(
        SAMPLES / "claude-code-sidechain.jsonl",
        from_format="claude-code",
        name="c",
        dir=tmp_path,
        turn=1,
        secrets="allow",
    )
    assert r.ok, r.error
    assert "interruption" not in json.loads((tmp_path / "c" / "model.json").read_text())


def test_a_recording_that_stops_mid_turn_is_turn_incomplete(tmp_path: Path) -> None:
    r = save_log(
        SAMPLES / "claude-code-sidechain.jsonl",
        from_format="claude-code",
        name="c",
        dir=tmp_path,
        turn=2,
        secrets="allow",
    )
    assert r.ok
    src = tmp_path / "t.jsonl"
    cli(tmp_path, "import", "claude-code", SAMPLES / "claude-code-sidechain.jsonl", "-o", src)
    events = list(read_log(src))
    turns = list_turns(events)
    cut = next(i for i, e in enumerate(events) if e["event_id"] == turns[1]["terminal"])
    src.write_text("".join(json.dumps(e) + "\n" for e in events[:cut]))
    assert [t["status"] for t in list_turns(read_log(src))][:2] == ["completed", "open"]
    p = cli(
        tmp_path, "save", src, "--turn", "2", "--dir", "cases", "--name", "x", "--allow-secrets"
    )
    assert p.returncode == 2
    assert "error[turn_incomplete]" in p.stderr and "hint:" in p.stderr
    p = cli(tmp_path, "turns", src)
    assert "open" in p.stdout or "incomplete" in p.stdout, p.stdout


def test_draft_proposes_a_must_on_the_ending() -> None:
    from threads_cases.importers import import_events

    events = import_events("claude-code", SAMPLES / "claude-code-sidechain.jsonl")
    assert draft_matchers(events, 2)["must"][-1] == {
        "type": "turn_failed",
        "data": {"error": {"code": "interrupted"}},
    }
