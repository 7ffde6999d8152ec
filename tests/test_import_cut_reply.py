"""A reply the recording stops inside (spec/importers.md section 1, "A reply cut short") says
so: its stop reason is ``interrupted`` in the thread log, in ``threads-cases show`` and in the
saved case's model.json, never ``end_turn``; the cut is an ``import_repaired`` warning
(reason ``cut_record``, messages counting interactions from 1) that ``--strict`` refuses;
and the interrupted turn saves and replays ``pass`` on both implementations.

The cassettes are hand-written: an Anthropic Messages stream without ``message_stop``, an
OpenAI Chat stream without ``finish_reason`` / ``[DONE]`` and an OpenAI Responses stream
without ``response.completed``, each after a whole first response that calls a tool.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from imported_cases import run_both

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events

HERE = Path(__file__).resolve().parent
VCR = HERE / "importers" / "vcr"
EXAMPLE = HERE.parent / "examples" / "sessions" / "claude-code-session.jsonl"

#: cassette, the line of its cut interaction, the event that would have ended the stream
CUT = [
    ("anthropic-messages-stream-cut.yaml", 87, "message_stop"),
    ("openai-chat-stream-cut.yaml", 40, "finish_reason"),
    ("openai-responses-stream-cut.yaml", 52, "response.completed"),
]


def imported(fmt: str, path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt, path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


@pytest.mark.parametrize(("name", "line", "end"), CUT)
def test_a_cut_stream_reply_says_interrupted_with_a_warning(name: str, line: int, end: str) -> None:
    events, stats = imported("vcr", VCR / name)
    first, cut = of_type(events, "model_responded")
    assert first["data"]["stop_reason"] == "tool_use"  # the whole response keeps its own
    assert cut["data"]["stop_reason"] == "interrupted"
    assert cut["data"]["message"]["content"]  # the text received is kept
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "interrupted"
    assert "interaction 2 stops before its end" in failed["data"]["error"]["message"]
    assert of_type(events, "turn_completed") == []
    (w,) = stats.warnings
    assert (w.line, w.code, w.reason) == (line, "import_repaired", "cut_record")
    assert w.message.startswith("interaction 2: ") and end in w.message


@pytest.mark.parametrize(("name", "line", "end"), CUT)
def test_strict_refuses_a_cut_stream_at_its_interaction(name: str, line: int, end: str) -> None:
    with pytest.raises(CaseError) as exc:
        imported("vcr", VCR / name, strict=True)
    err = exc.value
    assert err.code == "import_invalid" and err.location.line == line
    assert err.message.startswith("cut_record: interaction 2: ") and end in err.message
    assert "--strict" in (err.hint or "")


def test_a_whole_stream_still_ends_its_turn_normally() -> None:
    events, stats = imported("vcr", VCR / "openai-chat-stream.yaml")
    assert [e["data"]["stop_reason"] for e in of_type(events, "model_responded")] == [
        "tool_use",
        "end_turn",
    ]
    assert of_type(events, "turn_completed")[0]["data"]["stop_reason"] == "end_turn"
    assert stats.warnings == []


def test_the_cut_reply_saves_shows_and_replays_interrupted(tmp_path: Path) -> None:
    """`save --from vcr` of each cut cassette's turn: `show` lists the cut reply as
    interrupted, model.json holds it so, and the case passes on both implementations."""
    for k, (name, _, _) in enumerate(CUT):
        args = ["--from", "vcr", str(VCR / name), "--turn", "1", "--dir", "cases"]
        p = cli("save", *args, "--name", f"cut{k}", "--draft", "--allow-secrets", cwd=tmp_path)
        assert p.returncode == 0, p.stderr
        assert "warning[import_repaired]" in p.stderr and "cut_record" in p.stderr
        case = tmp_path / "cases" / f"cut{k}"
        model = json.loads((case / "model.json").read_text())
        assert [r["stop_reason"] for r in model["replies"]] == ["tool_use", "interrupted"]
        assert model["interruption"]["error"]["code"] == "interrupted"
        shown = cli("show", case, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        rows = [ln for ln in shown.stdout.splitlines() if ln.startswith("1 ")]
        assert any("interrupted" in r for r in rows), shown.stdout
        assert "end_turn" not in shown.stdout
    results = run_both(tmp_path / "cases", tmp_path)
    assert len(results) == 6
    assert {r["verdict"] for r in results.values()} == {"pass"}, results


def test_a_claude_code_reply_cut_with_no_stop_reason_says_interrupted(tmp_path: Path) -> None:
    """The transcript cut inside a line after a reply that wrote no stop reason: that reply
    may have gone on in the record cut, so it says interrupted; a reply whose line gave its
    final stop reason keeps it."""
    data = EXAMPLE.read_bytes()
    seen = 0
    for k in range(2000, len(data), 211):
        if data[k - 1 : k + 1].count(b"\n"):
            continue
        cut = tmp_path / "cut.jsonl"
        cut.write_bytes(data[:k])
        try:
            events, _ = imported("claude-code", cut)
        except CaseError:
            continue
        turns = list_turns(events)
        if not turns or turns[-1]["status"] == "completed":
            continue
        begin = next(i for i, e in enumerate(events) if e["event_id"] == turns[-1]["user_message"])
        replies = of_type(events[begin:], "model_responded")
        if not replies:
            continue
        last = replies[-1]["data"]
        assert last["stop_reason"] != "end_turn", k
        if last["stop_reason"] == "interrupted":
            seen += 1
    assert seen > 3


def test_a_codex_exec_stream_stopping_inside_its_turn_says_interrupted(tmp_path: Path) -> None:
    """``codex exec --json`` ends every turn with turn.completed: a stream without it stops
    inside the turn, and its last reply (no stop reason recorded) may have gone on."""
    lines = (HERE / "importers" / "codex-exec-basic.jsonl").read_bytes().splitlines(True)
    assert b"turn.completed" in lines[-1]
    whole, _ = imported("codex", HERE / "importers" / "codex-exec-basic.jsonl", prompt="go")
    assert of_type(whole, "model_responded")[-1]["data"]["stop_reason"] == "end_turn"
    src = tmp_path / "exec.jsonl"
    src.write_bytes(b"".join(lines[:-1]))
    events, stats = imported("codex", src, prompt="go")
    assert of_type(events, "model_responded")[-1]["data"]["stop_reason"] == "interrupted"
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert any("recorded as interrupted" in n for n in stats.notes)
