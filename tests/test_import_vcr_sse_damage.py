"""A streamed body (SSE) with an event whose data is not JSON (spec/importers.md 6.3): a body
that ends inside an event's data is a stream cut short (``cut_record``, the turn
interrupted); an event whose data is whole (a blank line ends it) but not JSON is damaged,
not cut: skipped with an ``import_skipped`` warning, reason ``invalid_line``, naming the
interaction and the event, and the events after it are read (a reply whose stream goes on
to its end completes). ``--strict`` refuses both. Every cassette is written here (texts and
ids invented); the saved turns replay ``pass`` on both implementations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_import_vcr import (
    ANTHROPIC_URI,
    CHAT_URI,
    call_of,
    imported,
    of_type,
    replies,
    save_and_run,
    write_cassette,
)

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError

SSE = {"content_type": "text/event-stream"}
ASK = {"model": "m", "stream": True, "max_tokens": 64,
       "messages": [{"role": "user", "content": "Say hi."}]}  # fmt: skip


def anthropic_events() -> list[tuple[str, str]]:
    """``(event name, data)`` of an Anthropic stream saying "Hi there."."""
    evs: list[dict[str, Any]] = [
        {"type": "message_start", "message": {"id": "msg_1", "model": "m",
                                              "usage": {"input_tokens": 5}}},
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hi"}},
        {"type": "content_block_delta", "index": 0,
         "delta": {"type": "text_delta", "text": " there."}},
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"output_tokens": 3}},
        {"type": "message_stop"},
    ]  # fmt: skip
    return [(e["type"], json.dumps(e)) for e in evs]


def body_of(evs: list[tuple[str, str]]) -> str:
    return "".join(f"event: {n}\ndata: {d}\n\n" for n, d in evs)


def cassette(tmp_path: Path, body: str, uri: str = ANTHROPIC_URI) -> Path:
    ask = ASK if uri == ANTHROPIC_URI else {**ASK, "max_tokens": None}
    return write_cassette(tmp_path / "c.yaml", [call_of(uri, ask, body, **SSE)])


def test_an_event_whose_data_is_not_json_followed_by_more_is_skipped_not_a_cut(
    tmp_path: Path,
) -> None:
    evs = anthropic_events()
    evs[3] = (evs[3][0], "{not json")  # the second delta, whole (a blank line ends it)
    src = cassette(tmp_path, body_of(evs))
    events, stats = imported(src)
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert replies(events) == [[{"type": "text", "text": "Hi"}]]
    [w] = stats.warnings
    assert (w.code, w.reason) == ("import_skipped", "invalid_line")
    assert w.message == (
        "interaction 1 response: streamed event 4 (content_block_delta) is whole but its data "
        "is not JSON ('{not json'): skipped, the events after it read"
    )
    assert w.line == 2  # the interaction's `- request:` line
    assert not any("interrupted" in n for n in stats.notes)
    with pytest.raises(CaseError) as exc:
        imported(src, strict=True)
    assert exc.value.code == "import_invalid"
    assert exc.value.message == f"invalid_line: {w.message}"
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_body_that_ends_inside_an_events_data_is_a_stream_cut_short(tmp_path: Path) -> None:
    evs = anthropic_events()[:4]
    body = body_of(evs[:3]) + f"event: {evs[3][0]}\ndata: {evs[3][1][:30]}"  # no blank line
    src = cassette(tmp_path, body)
    events, stats = imported(src)
    assert [t["status"] for t in list_turns(events)] == ["failed"]
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert replies(events) == [[{"type": "text", "text": "Hi"}]]
    assert [(w.code, w.reason) for w in stats.warnings] == [("import_repaired", "cut_record")]
    assert "stops before its end (no message_stop)" in stats.warnings[0].message
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_damaged_last_event_is_named_and_the_stream_without_its_end_is_cut(
    tmp_path: Path,
) -> None:
    """The last event whole but not JSON: it is named (skipped), and the stream, which never
    says it ended, is a reply cut short: both warnings, each about what it saw."""
    evs = anthropic_events()
    evs[-1] = ("message_stop", '{"type": "message_stop"')
    src = cassette(tmp_path, body_of(evs))
    events, stats = imported(src)
    assert sorted(w.reason for w in stats.warnings) == ["cut_record", "invalid_line"]
    assert any("streamed event 7 (message_stop)" in w.message for w in stats.warnings)
    assert [t["status"] for t in list_turns(events)] == ["failed"]


def test_chat_done_is_no_damage_and_a_damaged_chunk_is_named(tmp_path: Path) -> None:
    chunks = [
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": "Hi"}}]},
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {"content": " you"}}]},
        {"id": "c1", "model": "m", "choices": [{"index": 0, "delta": {},
                                                "finish_reason": "stop"}]},
    ]  # fmt: skip
    data = [json.dumps(c) for c in chunks]
    whole = "".join(f"data: {d}\n\n" for d in [*data, "[DONE]"])
    events, stats = imported(cassette(tmp_path, whole, CHAT_URI))
    assert stats.warnings == [] and replies(events) == [[{"type": "text", "text": "Hi you"}]]
    data[1] = data[1][:-5]
    damaged = "".join(f"data: {d}\n\n" for d in [*data, "[DONE]"])
    events, stats = imported(cassette(tmp_path, damaged, CHAT_URI))
    assert [w.reason for w in stats.warnings] == ["invalid_line"]
    assert "streamed event 2 (message)" in stats.warnings[0].message
    assert replies(events) == [[{"type": "text", "text": "Hi"}]]
    assert [t["status"] for t in list_turns(events)] == ["completed"]
