"""A reply paused with ``pause_turn`` goes on with the next model call (spec/replay.md 3.2,
step 8): Anthropic's Messages API pauses a long turn while its own server tools run, and the
client sends the conversation back with the paused reply as its last message. Imported
recordings keep both calls in one turn and replay them the same way on both implementations;
a recording that stops on a paused reply is an interrupted turn (spec/importers.md 1)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_import_vcr import ANTHROPIC_URI, call_of, imported, save_and_run, write_cassette

from threads_cases.case.turns import list_turns

SEARCH = {"type": "web_search_20250305", "name": "web_search", "max_uses": 5}
USER = {"role": "user", "content": "Look up the weather in Oslo and in Bergen, then compare."}


def answer(content: list[dict[str, Any]], stop: str, n: int) -> dict[str, Any]:
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "claude-x",
            "content": content, "stop_reason": stop,
            "usage": {"input_tokens": 10 * n, "output_tokens": n}}  # fmt: skip


def searched(n: int, query: str) -> list[dict[str, Any]]:
    """A server tool's call and result, both in the model's own reply (never a client call)."""
    found = [{"type": "web_search_result", "url": f"https://example.org/{n}", "title": query,
              "encrypted_content": f"enc{n}", "page_age": None}]  # fmt: skip
    call = {"type": "server_tool_use", "id": f"srvtoolu_{n}", "name": "web_search",
            "input": {"query": query}}  # fmt: skip
    result = {"type": "web_search_tool_result", "tool_use_id": f"srvtoolu_{n}", "content": found}
    return [call, result]


PAUSED = [{"type": "text", "text": "Searching."}, *searched(1, "Oslo weather")]
DONE = [*searched(2, "Bergen weather"), {"type": "text", "text": "Bergen is wetter."}]


def request(messages: list[dict[str, Any]]) -> dict[str, Any]:
    return {"model": "claude-x", "max_tokens": 500, "tools": [SEARCH], "messages": messages}


def test_a_paused_reply_and_its_continuation_are_one_turn_that_replays(tmp_path: Path) -> None:
    first = call_of(ANTHROPIC_URI, request([USER]), answer(PAUSED, "pause_turn", 1))
    again = [USER, {"role": "assistant", "content": PAUSED}]
    second = call_of(ANTHROPIC_URI, request(again), answer(DONE, "end_turn", 2))
    src = write_cassette(tmp_path / "paused.yaml", [first, second])
    events, _ = imported(src)
    assert [(t["status"], t["stop_reason"]) for t in list_turns(events)] == [
        ("completed", "end_turn")
    ]
    stops = [e["data"]["stop_reason"] for e in events if e["type"] == "model_responded"]
    assert stops == ["pause_turn", "end_turn"]
    assert [e["type"] for e in events if e["type"].startswith("turn_")] == [
        "turn_started",
        "turn_completed",
    ]
    assert set(save_and_run(tmp_path / "run", src).items()) == {
        (("t1", "threads-py"), "pass"),
        (("t1", "threads-ts"), "pass"),
    }


def test_a_recording_that_stops_on_a_paused_reply_is_an_interrupted_turn(tmp_path: Path) -> None:
    only = call_of(ANTHROPIC_URI, request([USER]), answer(PAUSED, "pause_turn", 1))
    src = write_cassette(tmp_path / "stopped.yaml", [only])
    events, _ = imported(src)
    failed = [e["data"] for e in events if e["type"] == "turn_failed"]
    assert failed == [
        {
            "turn_id": failed[0]["turn_id"],
            "error": {
                "code": "interrupted",
                "message": "the turn ended while the model's reply was paused",
            },
        }
    ]
    assert [t["status"] for t in list_turns(events)] == ["failed"]
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}
