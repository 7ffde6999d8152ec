"""A recording that stops after a reply making parallel calls, none answered (a test that
records one response, a run killed while its tools ran): the turn is interrupted right after
the first call's ``tool_called``, as a replay interrupts (spec/importers.md 1, replay.md
3.9), so the turn saves and replays on both implementations. Recording every call as called
wrote a log no replay gives: the replay stopped at the first call with missing_stub."""

from __future__ import annotations

from pathlib import Path

from test_import_vcr import CHAT_URI, call_of, imported, save_and_run, write_cassette

CITY = {"type": "object", "properties": {"city": {"type": "string"}}}
WEATHER = {"name": "get_weather", "description": "Weather", "parameters": CITY}
TOOLS = [{"type": "function", "function": WEATHER}]


def call(n: int, city: str) -> dict[str, object]:
    args = '{"city": "' + city + '"}'
    return {"id": f"call_{n}", "type": "function",
            "function": {"name": "get_weather", "arguments": args}}  # fmt: skip


def chat(calls: list[dict[str, object]]) -> dict[str, object]:
    message = {"role": "assistant", "content": None, "tool_calls": calls}
    return {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-x",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 12}}  # fmt: skip


ASK = {"role": "user", "content": "Weather in Oslo and in Bergen?"}


def test_parallel_calls_left_unanswered_interrupt_after_the_first(tmp_path: Path) -> None:
    body = {"model": "gpt-x", "messages": [ASK], "tools": TOOLS}
    both = [call(1, "Oslo"), call(2, "Bergen")]
    src = write_cassette(tmp_path / "calls.yaml", [call_of(CHAT_URI, body, chat(both))])
    events, _ = imported(src)
    types = [e["type"] for e in events]
    assert types[-3:] == ["model_responded", "tool_called", "turn_failed"]
    assert [e["data"]["tool_use_id"] for e in events if e["type"] == "tool_called"] == ["call_1"]
    reply = next(e for e in events if e["type"] == "model_responded")["data"]["message"]
    assert [b["id"] for b in reply["content"]] == ["call_1", "call_2"]  # the reply is whole
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_later_call_answered_alone_is_not_recorded_after_the_interruption(
    tmp_path: Path,
) -> None:
    """The second call's result is in the next request but the first call's is not: the
    turn stops at the first call (its result is what the next request lacks), and the next
    request's user message starts the next turn."""
    body = {"model": "gpt-x", "messages": [ASK], "tools": TOOLS}
    both = [call(1, "Oslo"), call(2, "Bergen")]
    first = call_of(CHAT_URI, body, chat(both))
    history = [ASK, chat(both)["choices"][0]["message"],  # type: ignore[index]
               {"role": "tool", "tool_call_id": "call_2", "content": "rain"},
               {"role": "user", "content": "Never mind."}]  # fmt: skip
    answer = {"id": "chatcmpl-2", "object": "chat.completion", "model": "gpt-x",
              "choices": [{"index": 0, "finish_reason": "stop",
                           "message": {"role": "assistant", "content": "OK."}}],
              "usage": {"prompt_tokens": 40, "completion_tokens": 2}}  # fmt: skip
    second = call_of(CHAT_URI, {"model": "gpt-x", "messages": history, "tools": TOOLS}, answer)
    src = write_cassette(tmp_path / "partial.yaml", [first, second])
    events, _ = imported(src)
    called = [e["data"]["tool_use_id"] for e in events if e["type"] == "tool_called"]
    results = [e["data"]["tool_use_id"] for e in events if e["type"] == "tool_result"]
    assert (called, results) == (["call_1"], [])
    assert [e["type"] for e in events].count("turn_failed") == 1
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}
