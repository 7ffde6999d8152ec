"""OpenHands V1 events (software-agent SDK) and the event-store folder (spec/importers.md
12.2 and 12.3).

tests/importers/openhands/v1/ holds two conversations written for these tests from the SDK's
event classes and their serialised field names (every id, path and text invented):
``conversation.json`` (a JSON list: two calls of one LLM response answered in the other
order, a failing test run, the same command twice under two call ids, a finish call, an
agent message turn, then an AgentErrorEvent answering a call and a rate-limit
ConversationErrorEvent) and ``store/`` (a conversation folder: ``base_state.json`` and
``events/event-<n>-<id>.json``: two identical calls of one response, a rejected call).
Each right value is asserted here; every completed turn, and those of conversations cut
short, is saved and replayed on both implementations.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from imported_cases import IMPLEMENTATIONS, run_both, save_turns

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.core.log import validate_log
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.importers.detect import detect_format

V1 = Path(__file__).resolve().parent / "importers" / "openhands" / "v1"
CONV = V1 / "conversation.json"
STORE = V1 / "store"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("openhands", path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def results(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {e["data"]["tool_use_id"]: e["data"] for e in of_type(events, "tool_result")}


def test_a_completed_turn_with_several_calls_pairs_results_by_action_id() -> None:
    events, stats = imported(CONV)
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed", "failed"]
    replies = [e["data"]["message"]["content"] for e in of_type(events, "model_responded")]
    # the two calls of one LLM response are one reply, after its thought
    assert [b["type"] for b in replies[0]] == ["text", "tool_use", "tool_use"]
    assert replies[0][0]["text"] == "Let me look at the files and the code."
    calls = [e["data"] for e in of_type(events, "tool_called")]
    assert [c["tool_use_id"] for c in calls] == [f"toolu_v1_0{n}" for n in (1, 2, 3, 4, 5, 7)]
    assert calls[3]["input"]["new_str"] == "a + b"  # the arguments, decoded once
    got = results(events)
    # the second call was answered first: each result still goes to its own call
    assert got["toolu_v1_01"]["content"] == "calc.py\ntest_calc.py\n"
    assert got["toolu_v1_02"]["content"].startswith("     1\tdef add")
    assert got["toolu_v1_03"]["is_error"] is True and "1 failed" in got["toolu_v1_03"]["content"]
    assert got["toolu_v1_05"]["is_error"] is False and "1 passed" in got["toolu_v1_05"]["content"]
    assert replies[4] == [{"type": "text", "text": "Fixed add() in calc.py; the tests pass."}]
    finish = of_type(events, "x_openhands.finish")[0]["data"]
    assert finish == {"message": "Fixed add() in calc.py; the tests pass."}
    assert replies[5] == [{"type": "text", "text": "Only calc.py: add() now returns a + b."}]
    agent = events[0]["data"]["agent"]
    assert agent["system"].startswith("You are OpenHands agent")
    assert agent["model"] == "anthropic/claude-sonnet-4-5-20250929"
    assert [t["name"] for t in agent["tools"]] == ["terminal", "file_editor"]
    assert stats.warnings == [] and stats.skipped["finish observation"] == 1


def test_an_agent_error_is_an_error_result_and_a_rate_limit_fails_the_turn() -> None:
    events, _ = imported(CONV)
    got = results(events)["toolu_v1_07"]
    assert got["is_error"] is True and got["content"].startswith("Error validating args")
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "provider_error"
    assert failed["data"]["error"]["message"].startswith("LLMRateLimitError: litellm.")
    assert of_type(events, "x_openhands.error")[0]["data"]["code"] == "LLMRateLimitError"


def test_a_call_id_reused_by_a_later_response_pairs_with_its_own_call(tmp_path: Path) -> None:
    doc = json.loads(CONV.read_text())
    # the second test run reuses the first run's call id, and its observation names no action
    second = next(k for k, e in enumerate(doc) if e.get("tool_call_id") == "toolu_v1_05")
    for ev in (doc[second], doc[second + 1]):
        ev["tool_call_id"] = "toolu_v1_03"
    doc[second]["tool_call"]["id"] = "toolu_v1_03"
    del doc[second + 1]["action_id"]
    path = tmp_path / "reused.json"
    path.write_text(json.dumps(doc))
    events, _ = imported(path)
    got = [
        (e["data"]["content"][:6], e["data"]["is_error"])
        for e in of_type(events, "tool_result")
        if e["data"]["tool_use_id"] == "toolu_v1_03"
    ]
    assert got == [("F\nFAIL", True), (".\n1 pa", False)]


def test_a_folder_reads_as_one_conversation_in_file_order() -> None:
    for path in (STORE, STORE / "events"):
        assert detect_format(path) == "openhands"
        events, stats = imported(path)
        assert [t["status"] for t in list_turns(events)] == ["completed", "completed"]
        assert stats.warnings == []
        got = results(events)
        # the same command twice in one response: two calls, each with its own result
        assert [c["data"]["input"]["command"] for c in of_type(events, "tool_called")] == [
            "cat notes.txt",
            "cat notes.txt",
            "rm notes.txt",
        ]
        assert got["call_a1"]["content"] == got["call_a2"]["content"] == "buy milk\n"
        assert got["call_a3"] == {
            **got["call_a3"],
            "content": "Action rejected: User rejected the action",
            "is_error": True,
        }
        assert events[0]["data"]["metadata"]["session_id"] == "store"
    assert imported(STORE)[0][0]["data"]["agent"]["model"] == "openai/gpt-5-mini"


def _store_copy(tmp_path: Path) -> tuple[Path, list[Path]]:
    conv = tmp_path / "conv"
    shutil.copytree(STORE, conv)
    return conv, sorted((conv / "events").glob("event-*.json"))


def test_a_folder_whose_last_file_is_cut_is_an_interrupted_turn(tmp_path: Path) -> None:
    conv, files = _store_copy(tmp_path)
    files[-1].write_bytes(files[-1].read_bytes()[:40])
    events, stats = imported(conv)
    assert [(w.line, w.reason) for w in stats.warnings] == [(len(files), "cut_record")]
    assert files[-1].name in stats.warnings[0].message
    assert [t["status"] for t in list_turns(events)] == ["completed", "failed"]
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == "interrupted"
    with pytest.raises(CaseError) as exc:
        imported(conv, strict=True)
    assert exc.value.code == "import_invalid" and files[-1].name in exc.value.message


def test_a_damaged_or_missing_file_in_a_folder_is_warned_and_strict_refuses(
    tmp_path: Path,
) -> None:
    conv, files = _store_copy(tmp_path)
    files[3].write_text("{not json")
    files[5].unlink()
    events, stats = imported(conv)
    assert [(w.line, w.code, w.reason) for w in stats.warnings] == [
        (4, "import_skipped", "invalid_line"),
        (6, "import_repaired", "missing_event"),
    ]
    assert files[3].name in stats.warnings[0].message
    assert len(list_turns(events)) == 2
    with pytest.raises(CaseError) as exc:
        imported(conv, strict=True)
    assert exc.value.code == "import_invalid" and files[3].name in exc.value.message


@pytest.mark.parametrize("fraction", [0.3, 0.55, 0.8, 0.97])
def test_a_conversation_cut_short_is_an_interrupted_turn(tmp_path: Path, fraction: float) -> None:
    path = tmp_path / "cut.json"
    path.write_bytes(CONV.read_bytes()[: int(CONV.stat().st_size * fraction)])
    assert detect_format(path) == "openhands"
    events, stats = imported(path)
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == "interrupted"
    assert [w.reason for w in stats.warnings if w.reason == "cut_record"] == ["cut_record"]
    with pytest.raises(CaseError) as exc:
        imported(path, strict=True)
    assert exc.value.code == "import_invalid"


def test_a_damaged_event_is_skipped_and_strict_refuses(tmp_path: Path) -> None:
    doc = json.loads(CONV.read_text())
    doc.insert(4, {"kind": "ActionEvent", "id": "x"})  # no tool_call_id nor tool_name
    doc.insert(2, ["not", "an", "event"])
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    events, stats = imported(path)
    assert [(w.line, w.reason) for w in stats.warnings] == [
        (3, "invalid_line"),
        (6, "invalid_line"),
    ]
    assert len(list_turns(events)) == 3
    with pytest.raises(CaseError) as exc:
        imported(path, strict=True)
    assert exc.value.code == "import_invalid" and exc.value.location.pointer == "/2"


def test_a_folder_imports_and_saves_from_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    p = cli("import", "auto", STORE, "-o", out, cwd=tmp_path)
    assert p.returncode == 0 and "read as openhands" in p.stderr, p.stderr
    p = cli(
        "save",
        "--from",
        "openhands",
        STORE,
        "--turn",
        "2",
        "--name",
        "rm",
        "--dir",
        "cases",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    assert (tmp_path / "cases" / "rm" / "case.json").is_file()
    empty = tmp_path / "empty"
    empty.mkdir()
    p = cli("import", "openhands", empty, "-o", tmp_path / "e.jsonl", cwd=tmp_path)
    # a folder that holds no event file is no transcript: refused before any import
    assert p.returncode == 2 and p.stderr.startswith("error[invalid_request]"), p.stderr
    assert "is a folder" in p.stderr and "Traceback" not in p.stderr


def test_every_completed_turn_saves_and_passes_on_both_implementations(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    conv, files = _store_copy(tmp_path)
    files[-1].write_bytes(files[-1].read_bytes()[:40])
    sources = [CONV, STORE, conv]
    for fraction in (0.55, 0.97):
        cut = tmp_path / f"cut-{fraction}.json"
        cut.write_bytes(CONV.read_bytes()[: int(CONV.stat().st_size * fraction)])
        sources.append(cut)
    names = []
    for k, src in enumerate(sources):
        log = tmp_path / f"log{k}.jsonl"
        import_to_file("openhands", src, log)
        assert validate_log(log) == []
        names += save_turns(log, cases, f"v{k}")
    assert len(names) >= 8
    verdicts = run_both(cases, tmp_path)
    for name in names:
        for impl in IMPLEMENTATIONS:
            assert verdicts[(name, impl)]["verdict"] == "pass", (name, impl, verdicts[(name, impl)])


@pytest.mark.parametrize(
    ("event", "code"),
    [
        (
            {"kind": "ConversationErrorEvent", "code": "MaxIterationsReached", "detail": "50"},
            "agent_error",
        ),
        (
            {
                "kind": "ConversationErrorEvent",
                "code": "QuotaExceeded",
                "detail": "out of credits",
                "classification": {"kind": "quota"},
            },
            "provider_error",
        ),
        ({"kind": "InterruptEvent"}, "interrupted"),
    ],
)
def test_how_the_last_turn_ends(tmp_path: Path, event: dict[str, Any], code: str) -> None:
    doc = json.loads(CONV.read_text())
    last = next(k for k, e in enumerate(doc) if e["kind"] == "ConversationErrorEvent")
    doc[last] = {**event, "id": "e-1", "timestamp": doc[last]["timestamp"], "source": "user"}
    pause = {
        "kind": "PauseEvent",
        "id": "p-1",
        "timestamp": doc[last]["timestamp"],
        "source": "user",
    }
    doc.insert(last, pause)
    path = tmp_path / "ends.json"
    path.write_text(json.dumps(doc))
    events, _ = imported(path)
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == code
    assert len(of_type(events, "x_openhands.pause")) == 1
