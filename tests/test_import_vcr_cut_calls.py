"""A streamed reply cut short while a tool call was still streaming (spec/importers.md 6.3,
6.4): rebuilt from the later request that sends the call back with its result, else an
interrupted turn whose note names the dropped call; and the import's turn count is the
count ``turns`` lists (spec/importers.md 5). Every cassette is written here (ids, texts and
numbers invented); every saved turn replays ``pass`` on both implementations.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from conftest import cli
from test_import_vcr import (
    ANTHROPIC_URI,
    CHAT_URI,
    RESPONSES_URI,
    call_of,
    imported,
    of_type,
    pairs,
    replies,
    save_and_run,
    sse_body,
    write_cassette,
)

from threads_cases.case.turns import list_turns
from threads_cases.core.strictjson import parse
from threads_cases.importers import import_to_file

SSE = {"content_type": "text/event-stream"}
ASK = [{"role": "user", "content": "What time is it in Paris?"}]
TOOLS = [{"type": "function", "name": "clock", "parameters": {"type": "object"}}]
#: the call as the client sends it back, and its result
CALL = {"type": "function_call", "id": "fc_9", "call_id": "call_k",
        "name": "clock", "arguments": '{"tz": "Europe/Paris"}'}  # fmt: skip
OUTPUT = {"type": "function_call_output", "call_id": "call_k", "output": "13:05"}


def responses_cut() -> str:
    """A Responses stream that stops before ``function_call_arguments.done``: its only item
    a call whose arguments arrived in two deltas."""
    added = {"type": "function_call", "id": "fc_9", "call_id": "call_k", "name": "clock",
             "arguments": "", "status": "in_progress"}  # fmt: skip
    return sse_body(
        [
            {"type": "response.created", "response": {"id": "resp_a", "model": "m"}},
            {"type": "response.output_item.added", "output_index": 0, "item": added},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_9",
             "delta": '{"tz": '},
            {"type": "response.function_call_arguments.delta", "item_id": "fc_9",
             "delta": '"Europe/Paris"}'},
        ]
    )  # fmt: skip


def responses_done(text: str) -> dict[str, Any]:
    said = {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": text}]}  # fmt: skip
    return {"id": "resp_b", "model": "m", "status": "completed", "output": [said],
            "usage": {"input_tokens": 9, "output_tokens": 3}}  # fmt: skip


def first_call() -> dict[str, Any]:
    body = {"model": "m", "stream": True, "input": ASK, "tools": TOOLS}
    return call_of(RESPONSES_URI, body, responses_cut(), **SSE)


def reported_and_listed(tmp_path: Path, src: Path) -> tuple[int, int]:
    log = tmp_path / "count.jsonl"
    report = import_to_file("vcr", src, log)
    return report.turns, len(list_turns(parse(x) for x in log.read_bytes().splitlines()))


def test_a_call_still_streaming_is_rebuilt_from_the_request_that_sends_it_back(
    tmp_path: Path,
) -> None:
    later = {"model": "m", "stream": False, "input": [*ASK, CALL, OUTPUT], "tools": TOOLS}
    src = write_cassette(
        tmp_path / "resp.yaml",
        [first_call(), call_of(RESPONSES_URI, later, responses_done("It is 13:05."))],
    )
    events, stats = imported(src)
    assert replies(events)[0] == [
        {"type": "tool_use", "id": "call_k", "name": "clock", "input": {"tz": "Europe/Paris"}}
    ]
    assert of_type(events, "model_responded")[0]["data"]["stop_reason"] == "tool_use"
    assert pairs(events) == [({"tz": "Europe/Paris"}, "13:05")]
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert of_type(events, "turn_failed") == []
    [w] = stats.warnings
    assert (w.code, w.reason, w.line) == ("import_repaired", "cut_record", 2)
    assert "call clock (call_k) still streamed: rebuilt from interaction 2's request" in (w.message)
    assert reported_and_listed(tmp_path, src) == (1, 1)
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_call_still_streaming_nobody_sends_back_is_named_in_the_interrupted_turn(
    tmp_path: Path,
) -> None:
    """Only the cut response: nothing but the call was received, and no reply is left; the
    turn is interrupted and its note and the warning say which call was dropped."""
    src = write_cassette(tmp_path / "alone.yaml", [first_call()])
    events, stats = imported(src)
    assert of_type(events, "model_responded") == []
    [failed] = of_type(events, "turn_failed")
    assert failed["data"]["error"] == {
        "code": "interrupted",
        "message": "the response of interaction 1 stops before its end, its call clock "
        "(call_k) still streaming (dropped)",
    }
    assert any("call clock (call_k) still streaming (dropped)" in n for n in stats.notes)
    [w] = stats.warnings
    assert w.reason == "cut_record" and "(call clock (call_k) still streaming dropped)" in (
        w.message
    )
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_later_request_with_another_call_id_proves_nothing_and_counts_agree(
    tmp_path: Path,
) -> None:
    """The next request sends a call of another id (a different call, not this response's),
    or this call without its result: the cut reply is not rebuilt. The reply that follows
    has no user message before it (a turn without user input, never listed nor saved): the
    import reports the turns ``turns`` lists, never one more."""
    other = {**CALL, "call_id": "call_z"}
    cases = {
        "other_id": [*ASK, other, {**OUTPUT, "call_id": "call_z"}],
        "no_result": [*ASK, CALL],
    }
    for name, items in cases.items():
        later = {"model": "m", "input": items, "tools": TOOLS}
        src = write_cassette(
            tmp_path / f"{name}.yaml",
            [first_call(), call_of(RESPONSES_URI, later, responses_done("Done."))],
        )
        events, _ = imported(src)
        turns = list_turns(events)
        assert [t["status"] for t in turns] == ["failed"], name
        assert of_type(events, "turn_failed")[0]["data"]["error"]["message"].endswith(
            "its call clock (call_k) still streaming (dropped)"
        ), name
        assert reported_and_listed(tmp_path, src) == (1, 1), name
        log = tmp_path / f"{name}.jsonl"
        p = cli("import", "auto", src, "-o", log, cwd=tmp_path)
        assert p.returncode == 0 and f"wrote {log}: " in p.stdout, p.stderr
        assert p.stdout.rstrip().endswith(" 1 turn(s)"), p.stdout
        p = cli("turns", log, "--format", "json", cwd=tmp_path)
        assert [t["index"] for t in json.loads(p.stdout)] == [1], p.stdout
        assert set(save_and_run(tmp_path / f"run_{name}", src).values()) == {"pass"}, name


def test_a_chat_stream_cut_is_rebuilt_from_the_calls_the_next_request_answers(
    tmp_path: Path,
) -> None:
    """A Chat stream cut before its finish_reason: no chunk says a call's arguments are
    whole (call 0's look complete, call 1's stop mid-way), so all are dropped; the next
    request sends both back with their results (in the other order) and proves them."""

    def chunk(delta: dict[str, Any]) -> dict[str, Any]:
        return {"id": "cc_1", "model": "m", "choices": [{"index": 0, "delta": delta}]}

    def named(i: int, cid: str) -> dict[str, Any]:
        return {"index": i, "id": cid, "type": "function", "function": {"name": "weather"}}

    def piece(i: int, args: str) -> dict[str, Any]:
        return {"index": i, "function": {"arguments": args}}

    stream = sse_body(
        [
            chunk({"role": "assistant", "content": "Checking. "}),
            chunk({"tool_calls": [named(0, "c_o")]}),
            chunk({"tool_calls": [named(1, "c_l")]}),
            chunk({"tool_calls": [piece(0, '{"city": "Oslo"}')]}),
            chunk({"tool_calls": [piece(1, '{"city":')]}),
        ],
        named=False,
    )
    ask = [{"role": "user", "content": "Weather in Oslo and Lima?"}]
    sent = [
        {"id": cid, "type": "function", "function": {"name": "weather", "arguments": a}}
        for cid, a in (("c_o", '{"city": "Oslo"}'), ("c_l", '{"city": "Lima"}'))
    ]
    history = [
        *ask,
        {"role": "assistant", "content": "Checking. ", "tool_calls": sent},
        {"role": "tool", "tool_call_id": "c_l", "content": "22C"},
        {"role": "tool", "tool_call_id": "c_o", "content": "-3C"},
    ]
    done = {"id": "cc_2", "model": "m", "usage": {"prompt_tokens": 7, "completion_tokens": 2},
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "Cold; warm."}}]}  # fmt: skip
    src = write_cassette(
        tmp_path / "chat.yaml",
        [
            call_of(CHAT_URI, {"model": "m", "stream": True, "messages": ask}, stream, **SSE),
            call_of(CHAT_URI, {"model": "m", "messages": history}, done),
        ],
    )
    events, stats = imported(src)
    assert [b.get("text") or b["input"] for b in replies(events)[0]] == [
        "Checking. ",
        {"city": "Oslo"},
        {"city": "Lima"},
    ]
    assert pairs(events) == [({"city": "Oslo"}, "-3C"), ({"city": "Lima"}, "22C")]
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert "calls weather (c_o), weather (c_l) still streamed" in stats.warnings[0].message
    assert reported_and_listed(tmp_path, src) == (1, 1)
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_an_anthropic_tool_use_block_never_stopped_is_rebuilt_too(tmp_path: Path) -> None:
    start = {"type": "message_start", "message": {"id": "msg_1", "model": "m", "usage": {}}}
    block = {"type": "tool_use", "id": "toolu_7", "name": "clock", "input": {}}
    stream = sse_body(
        [
            start,
            {"type": "content_block_start", "index": 0, "content_block": block},
            {"type": "content_block_delta", "index": 0,
             "delta": {"type": "input_json_delta", "partial_json": '{"tz": "UT'}},
        ]
    )  # fmt: skip
    ask = [{"role": "user", "content": "Time in UTC?"}]
    history = [
        *ask,
        {"role": "assistant", "content": [{**block, "input": {"tz": "UTC"}}]},
        {"role": "user",
         "content": [{"type": "tool_result", "tool_use_id": "toolu_7", "content": "12:00"}]},
    ]  # fmt: skip
    said = [{"type": "text", "text": "Noon."}]
    done = {"id": "msg_2", "model": "m", "content": said, "stop_reason": "end_turn",
            "usage": {"input_tokens": 4, "output_tokens": 1}}  # fmt: skip
    src = write_cassette(
        tmp_path / "anthropic.yaml",
        [
            call_of(ANTHROPIC_URI, {"model": "m", "stream": True, "messages": ask}, stream, **SSE),
            call_of(ANTHROPIC_URI, {"model": "m", "messages": history}, done),
        ],
    )
    events, _ = imported(src)
    assert pairs(events) == [({"tz": "UTC"}, "12:00")]
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}
