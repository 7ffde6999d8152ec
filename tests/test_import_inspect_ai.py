"""inspect-ai eval logs (.eval archives and .json logs) as threads (spec/importers.md
section 11).

tests/importers/inspect-ai/ holds two logs written for these tests from inspect-ai's log
schema (every id, text and number invented): ``react-agent.eval``, an archive of three
samples (a react agent whose later model inputs are ``input_refs`` into the message pool,
parallel calls answered out of order, the same command twice, a submit() call with
arguments encoded twice, a scorer's model call; a rate-limit error mid-turn; a message
limit), and ``chat-log.json``, a .json log of two turns with an attachment. Each right value
is asserted here; every completed turn of every sample, and of logs cut short, is saved and
replayed on both implementations.
"""

from __future__ import annotations

import io
import json
import zipfile
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

HERE = Path(__file__).resolve().parent
LOGS = HERE / "importers" / "inspect-ai"
EVAL = LOGS / "react-agent.eval"
CHAT = LOGS / "chat-log.json"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("inspect-ai", path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def test_pooled_inputs_results_by_id_and_the_submit_call_as_the_answer() -> None:
    events, stats = imported(EVAL)
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    calls = [e["data"] for e in of_type(events, "tool_called")]
    assert [c["tool_use_id"] for c in calls] == ["call_1", "call_2", "call_3", "call_4", "call_5"]
    results = {
        e["data"]["tool_use_id"]: e["data"]["content"] for e in of_type(events, "tool_result")
    }
    # the tool events came back call_3 first: each result is its own call's
    assert results["call_2"].startswith("[project]") and results["call_3"] == "Python 3.12.1\n"
    # the same command twice: two calls, each answered once
    assert calls[3]["input"] == calls[4]["input"] and results["call_4"] == results["call_5"]
    last = of_type(events, "model_responded")[-1]["data"]
    assert last["stop_reason"] == "end_turn"
    assert last["message"]["content"][-1] == {"type": "text", "text": '{"answer":">=3.10"}'}
    (sub,) = of_type(events, "x_inspect.submission")
    assert sub["data"] == {"name": "submit", "input": {"answer": ">=3.10"}, "result": ">=3.10"}
    assert [w.reason for w in stats.warnings] == ["double_encoded"]
    assert "#/events/12" in stats.warnings[0].message
    # the scorer's model call is not the agent's
    assert (
        len(of_type(events, "model_responded")) == 5
        and stats.skipped["scoring or sub-agent event"] == 3
    )
    started = events[0]["data"]
    assert started["agent"]["system"].startswith("You are a careful engineer")
    assert started["metadata"]["sample_id"] == "1" and started["metadata"]["epoch"] == 1
    assert len(of_type(events, "x_inspect.sandbox")) == 1
    assert any("holds 3 samples" in n for n in stats.notes)


def test_a_provider_error_mid_turn_is_no_reply() -> None:
    events, _ = imported(EVAL, sample="1", epoch=2)
    assert len(of_type(events, "model_responded")) == 1
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "provider_error"
    assert "429" in failed["data"]["error"]["message"]
    assert of_type(events, "x_inspect.model_error")[0]["data"]["model"].endswith("sonnet-4-5")


def test_a_limit_fails_the_turn_with_its_type() -> None:
    events, _ = imported(EVAL, sample="count-lines", epoch=1)
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "message_limit"
    (res,) = of_type(events, "tool_result")
    assert res["data"]["is_error"] is True and "timed out" in res["data"]["content"]


def test_an_unknown_sample_is_refused_listing_the_samples() -> None:
    with pytest.raises(CaseError) as exc:
        imported(EVAL, sample="nope")
    assert exc.value.code == "invalid_request"
    assert "count-lines (epoch 1)" in exc.value.message
    assert exc.value.message.startswith("no sample nope in the log; it holds "), exc.value.message
    with pytest.raises(CaseError) as exc:
        imported(CHAT, sample="s1", epoch=1, branch="x")
    assert exc.value.code == "invalid_request"
    with pytest.raises(CaseError) as exc:
        import_events("swe-agent", CHAT, sample="s1")
    assert exc.value.code == "invalid_request"


def test_json_log_turns_and_attachments() -> None:
    events, stats = imported(CHAT)
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed"]
    first = of_type(events, "user_message")[0]["data"]["content"]
    assert first.startswith("Summarise this file:\ndef main():")
    assert events[0]["data"]["agent"]["model"] == "openai/gpt-4.1-mini"
    assert not stats.notes and not stats.warnings


def _cut_archive(tmp_path: Path, keep: float) -> Path:
    """The archive with its central directory gone and its data stopped at ``keep``."""
    data = EVAL.read_bytes()
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        first = zf.infolist()[1]  # samples/1_epoch_1.json, after the journal
        end = first.header_offset + 30 + len(first.filename) + int(first.compress_size * keep)
    path = tmp_path / f"cut-{keep}.eval"
    path.write_bytes(data[:end])
    return path


@pytest.mark.parametrize("keep", [0.5, 0.8, 0.97])
def test_an_archive_cut_short_is_an_interrupted_turn(tmp_path: Path, keep: float) -> None:
    path = _cut_archive(tmp_path, keep)
    assert detect_format(path) == "inspect-ai"
    events, stats = imported(path)
    turns = list_turns(events)
    assert turns[-1]["status"] == "failed"
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == "interrupted"
    assert any(w.reason == "cut_record" for w in stats.warnings)
    with pytest.raises(CaseError) as exc:
        imported(path, strict=True)
    assert exc.value.code == "import_invalid"


@pytest.mark.parametrize("fraction", [0.3, 0.55, 0.75, 0.9])
def test_a_json_log_cut_short_imports(tmp_path: Path, fraction: float) -> None:
    data = CHAT.read_bytes()
    path = tmp_path / "cut.json"
    path.write_bytes(data[: int(len(data) * fraction)])
    events, stats = imported(path)
    assert of_type(events, "turn_failed")[-1]["data"]["error"]["code"] == "interrupted"
    assert any("recorded as interrupted" in n for n in stats.notes)
    out = tmp_path / "cut.jsonl"
    import_to_file("inspect-ai", path, out)
    assert validate_log(out) == []


def test_damaged_events_are_skipped_with_a_pointer_and_strict_refuses(tmp_path: Path) -> None:
    doc = json.loads(CHAT.read_text())
    doc["samples"][0]["events"].insert(1, "not an event")
    doc["samples"][0]["events"][0]["input_refs"] = [[0, 99]]
    path = tmp_path / "damaged.json"
    path.write_text(json.dumps(doc))
    events, stats = imported(path)
    reasons = [(w.reason, w.message.split(":")[0]) for w in stats.warnings]
    assert ("invalid_line", "/samples/0#/events/1") in reasons
    assert len(of_type(events, "model_responded")) == 2
    with pytest.raises(CaseError) as exc:
        imported(path, strict=True)
    assert exc.value.code == "import_invalid" and exc.value.location.pointer == "/events/1"


@pytest.mark.parametrize(
    "body",
    [b"", b"{not json", b"[1, 2]", b'{"samples": []}', b"PK\x03\x04 truncated"],
)
def test_not_a_log_is_refused_cleanly(tmp_path: Path, body: bytes) -> None:
    src = tmp_path / "x.eval"
    src.write_bytes(body)
    out = tmp_path / "out.jsonl"
    p = cli("import", "inspect-ai", src, "-o", out, cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    assert p.stderr.startswith(f"error[import_invalid]: {src}"), p.stderr
    assert "Traceback" not in p.stderr and not out.exists()


def test_cli_import_picks_a_sample_and_auto_detects(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    p = cli(
        "import", "auto", EVAL, "-o", out, "--sample", "count-lines", "--epoch", "1", cwd=tmp_path
    )
    assert p.returncode == 0, p.stderr
    assert "read as inspect-ai" in p.stderr
    p = cli("import", "inspect-ai", EVAL, "-o", out, "--sample", "9", cwd=tmp_path)
    assert p.returncode == 2 and "error[invalid_request]" in p.stderr, p.stderr
    p = cli("import", "codex", EVAL, "-o", out, "--sample", "1", cwd=tmp_path)
    assert p.returncode == 2, p.stderr


def test_every_completed_turn_saves_and_passes_on_both_implementations(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    sources: list[tuple[Path, dict[str, Any]]] = [
        (EVAL, {"sample": "1", "epoch": 1}),
        (EVAL, {"sample": "1", "epoch": 2}),
        (EVAL, {"sample": "count-lines", "epoch": 1}),
        (CHAT, {}),
        (_cut_archive(tmp_path, 0.8), {}),
    ]
    cut = tmp_path / "cut.json"
    cut.write_bytes(CHAT.read_bytes()[: int(CHAT.stat().st_size * 0.75)])
    sources.append((cut, {}))
    names = []
    for k, (src, kw) in enumerate(sources):
        log = tmp_path / f"log{k}.jsonl"
        import_to_file("inspect-ai", src, log, **kw)
        names += save_turns(log, cases, f"s{k}")
    assert len(names) >= 7
    results = run_both(cases, tmp_path)
    for name in names:
        for impl in IMPLEMENTATIONS:
            assert results[(name, impl)]["verdict"] == "pass", (name, impl, results[(name, impl)])


def test_a_sub_agent_inside_a_tool_call_is_not_the_threads(tmp_path: Path) -> None:
    doc = json.loads(CHAT.read_text())
    events = doc["samples"][0]["events"]
    first = events[0]
    sub = {
        **first,
        "span_id": "sp-sub",
        "input": [{"role": "user", "content": "Research the file (sub-agent)."}],
    }
    spans = [
        {"event": "span_begin", "id": "sp-tool", "type": "tool", "name": "research"},
        {
            "event": "span_begin",
            "id": "sp-sub",
            "parent_id": "sp-tool",
            "type": "agent",
            "name": "r",
        },
    ]
    doc["samples"][0]["events"] = [first, *spans, sub, *events[1:]]
    path = tmp_path / "sub.json"
    path.write_text(json.dumps(doc))
    events_out, stats = imported(path)
    assert len(of_type(events_out, "model_responded")) == 2
    assert stats.skipped["scoring or sub-agent event"] == 1
    assert [t["status"] for t in list_turns(events_out)] == ["completed", "completed"]


def test_older_log_shapes(tmp_path: Path) -> None:
    """Events under transcript.events with tc:// content, the pool as message_pool, two user
    messages in a row as one input, and a sample recording only its messages."""
    doc = json.loads(CHAT.read_text())
    sample = doc["samples"][0]
    events = sample.pop("events")
    first = events[0]
    first["input"] = [
        {"role": "system", "content": "tc://s1"},
        {"role": "user", "content": "Read this:"},
        {"role": "user", "content": "tc://u1"},
    ]
    second = events[1]
    second["input"], second["input_refs"] = [], [[0, 2]]
    sample["message_pool"] = [
        {"role": "user", "content": "old"},
        dict(events[0]["output"]["choices"][0]["message"]),
    ]
    sample["transcript"] = {
        "events": events,
        "content": {"s1": "You summarise code.", "u1": "x = 1"},
    }
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    got, stats = imported(path)
    assert [u["data"]["content"] for u in of_type(got, "user_message")] == ["Read this:\n\nx = 1"]
    assert got[0]["data"]["agent"]["system"] == "You summarise code."
    assert len(of_type(got, "model_responded")) == 2 and not stats.warnings

    del sample["transcript"]
    sample["messages"] = [
        {"role": "user", "content": "What is 2 + 2?"},
        {"role": "assistant", "content": "4"},
    ]
    path.write_text(json.dumps(doc))
    got, _ = imported(path)
    assert [t["status"] for t in list_turns(got)] == ["completed"]


def test_a_sample_with_no_model_event_is_a_turn_of_its_input(tmp_path: Path) -> None:
    """A solver that never called the model: the turn is the sample's input (its user
    message), interrupted before a reply, and it saves and passes on both implementations
    (spec/importers.md 11); it had no user_message, so turns listed none of it."""
    sample = {"id": "s1", "epoch": 1, "input": "What is 2+2?", "target": "4",
              "messages": [{"role": "user", "content": "What is 2+2?"}], "output": {},
              "events": [{"event": "sample_init", "sample": {"input": "What is 2+2?"}},
                         {"event": "tool", "id": "c1", "function": "bash",
                          "arguments": {"cmd": "expr 2 + 2"}, "result": "4\n"}]}  # fmt: skip
    log = {"version": 2, "status": "success", "eval": {"task": "math", "model": "openai/gpt-x"},
           "samples": [sample]}  # fmt: skip
    path = tmp_path / "nomodel.json"
    path.write_text(json.dumps(log))
    events = import_events("inspect-ai", path)
    assert [e["type"] for e in events][:3] == ["thread_started", "user_message", "turn_started"]
    turns = list_turns(events)
    assert [(t["text"], t["status"]) for t in turns] == [("What is 2+2?", "failed")]
    log_file = tmp_path / "log.jsonl"
    import_to_file("inspect-ai", path, log_file)
    names = save_turns(log_file, tmp_path / "cases")
    results = run_both(tmp_path / "cases", tmp_path)
    assert {results[(n, impl)]["verdict"] for n in names for impl in IMPLEMENTATIONS} == {"pass"}
