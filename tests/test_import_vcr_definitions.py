"""VCR cassettes: the tools a request defines keep their description and input schema
(spec/importers.md 6, ``thread_started``), and consecutive assistant items of a request's
history are one reply (6.4), so a history the provider holds as several items replays.

Every cassette here is written for these tests (ids, texts and numbers invented); the
history shape is the one of a public pydantic-ai cassette (a conversation id named by a
request whose history holds two assistant messages in a row, one from another provider),
rebuilt by hand.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from imported_cases import IMPLEMENTATIONS, run_both, save_turns

from threads_cases.case.turns import list_turns
from threads_cases.importers import Stats, import_events, import_to_file

ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
CHAT_URI = "https://api.openai.com/v1/chat/completions"
RESPONSES_URI = "https://api.openai.com/v1/responses"
WEATHER_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"],
}


def interaction(uri: str, body: Any, resp: Any, method: str = "POST") -> dict[str, Any]:
    return {
        "request": {"method": method, "uri": uri, "body": json.dumps(body)},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": json.dumps(resp)}},
    }


def cassette(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}), "utf-8")
    return path


def imported(path: Path) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("vcr", path, stats=stats), stats


def agent_tools(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    tools = events[0]["data"]["agent"]["tools"]
    return {t["name"]: {k: v for k, v in t.items() if k != "name"} for t in tools}


def saves_and_passes(src: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    import_to_file("vcr", src, log)
    names = save_turns(log, tmp_path / "cases")
    verdicts = run_both(tmp_path / "cases", tmp_path)
    for name in names:
        for impl in IMPLEMENTATIONS:
            assert verdicts[(name, impl)]["verdict"] == "pass", verdicts[(name, impl)]


def said(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": text}],
    }


def responses_answer(rid: str, *output: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": rid,
        "model": "gpt-x",
        "status": "completed",
        "output": list(output),
        "usage": {"input_tokens": 20, "output_tokens": 3},
    }


# ------------------------------------------------------------------ tool definitions
def test_anthropic_tools_keep_description_and_schema(tmp_path: Path) -> None:
    """A server tool (no input_schema) keeps the default schema; a later request's second
    definition of a tool does not replace the first; a tool only called gets the defaults;
    a big integer in a schema is read as section 4 reads one."""
    tools = [
        {
            "name": "get_weather",
            "description": "Weather for a city",
            "input_schema": WEATHER_SCHEMA,
        },
        {"type": "web_search_20250305", "name": "web_search", "max_uses": 2},
        {
            "name": "count",
            "description": "Counts",
            "input_schema": {
                "type": "object",
                "properties": {"n": {"type": "integer", "maximum": 9007199254740993}},
            },
        },
    ]
    call = {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}
    other = {"type": "tool_use", "id": "toolu_2", "name": "undeclared", "input": {}}
    ask = [{"role": "user", "content": "Weather in Oslo?"}]
    first = {
        "id": "m1",
        "model": "claude-x",
        "content": [call, other],
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }
    results = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "5 C"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "?"},
    ]
    later = [
        *ask,
        {"role": "assistant", "content": [call, other]},
        {"role": "user", "content": results},
    ]
    redefined = [{**tools[0], "description": "changed"}, *tools[1:]]
    done = {
        "id": "m2",
        "model": "claude-x",
        "content": [{"type": "text", "text": "5 C."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 12, "output_tokens": 2},
    }
    src = cassette(
        tmp_path / "tools.yaml",
        [
            interaction(
                ANTHROPIC_URI, {"model": "claude-x", "tools": tools, "messages": ask}, first
            ),
            interaction(
                ANTHROPIC_URI, {"model": "claude-x", "tools": redefined, "messages": later}, done
            ),
        ],
    )
    events, stats = imported(src)
    got = agent_tools(events)
    assert list(got) == ["get_weather", "web_search", "count", "undeclared"]
    assert got["get_weather"] == {
        "description": "Weather for a city",
        "input_schema": WEATHER_SCHEMA,
        "kind": "external",
        "effect": "write",
    }
    assert got["web_search"]["description"] == ""
    assert got["web_search"]["input_schema"] == {"type": "object"}
    assert got["undeclared"]["input_schema"] == {"type": "object"}
    big = got["count"]["input_schema"]["properties"]["n"]["maximum"]
    assert big == "9007199254740992"  # the JavaScript number, as a string (section 4)
    assert [(w.reason, "interaction 1 request" in w.message) for w in stats.warnings] == [
        ("big_integer", True)
    ]
    saves_and_passes(src, tmp_path)


def test_openai_chat_and_responses_tools_keep_description_and_parameters(
    tmp_path: Path,
) -> None:
    chat_tools = [
        {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": "Weather for a city",
                "parameters": WEATHER_SCHEMA,
            },
        },
        {"type": "function", "function": {"name": "ping"}},
    ]
    msg = {"role": "assistant", "content": "Sunny."}
    chat = cassette(
        tmp_path / "chat.yaml",
        [
            interaction(
                CHAT_URI,
                {
                    "model": "gpt-x",
                    "tools": chat_tools,
                    "messages": [{"role": "user", "content": "Weather?"}],
                },
                {"choices": [{"message": msg, "finish_reason": "stop"}]},
            )
        ],
    )
    events, _ = imported(chat)
    got = agent_tools(events)
    assert got["get_weather"]["description"] == "Weather for a city"
    assert got["get_weather"]["input_schema"] == WEATHER_SCHEMA
    assert (got["ping"]["description"], got["ping"]["input_schema"]) == ("", {"type": "object"})

    resp_tools = [
        {
            "type": "function",
            "name": "get_weather",
            "description": "Weather for a city",
            "parameters": WEATHER_SCHEMA,
            "strict": True,
        },
        {"type": "web_search_preview"},
    ]
    responses = cassette(
        tmp_path / "responses.yaml",
        [
            interaction(
                RESPONSES_URI,
                {"model": "gpt-x", "tools": resp_tools, "input": "Weather?"},
                responses_answer("resp_1", said("Sunny.")),
            )
        ],
    )
    events, _ = imported(responses)
    got = agent_tools(events)
    assert list(got) == ["get_weather"]
    assert got["get_weather"]["input_schema"] == WEATHER_SCHEMA
    assert got["get_weather"]["description"] == "Weather for a city"
    saves_and_passes(responses, tmp_path)


# ------------------------------------------------------------------ history items
def test_two_assistant_messages_in_a_row_are_one_reply_and_the_turn_replays(
    tmp_path: Path,
) -> None:
    """A request naming a conversation the cassette created, its history holding two
    assistant messages in a row (no user message between them): one reply of two text
    blocks, so the prefix turn replays (two replies calling no tool cannot: the runtime ends
    the turn at the first, leaving the second unused)."""
    history = [
        {"role": "user", "content": "The code is C-42."},
        {"role": "assistant", "content": "Understood."},
        {"role": "assistant", "content": "Other conversation acknowledged."},
        {"role": "user", "content": "What is the code?"},
    ]
    src = cassette(
        tmp_path / "mismatched.yaml",
        [
            interaction(
                "https://api.openai.com/v1/conversations",
                {},
                {"id": "conv_1", "object": "conversation", "metadata": {}},
            ),
            interaction(
                RESPONSES_URI,
                {
                    "model": "gpt-x",
                    "conversation": "conv_1",
                    "instructions": "Answer with the code only.",
                    "input": history,
                },
                responses_answer("resp_1", said("C-42")),
            ),
            interaction(
                "https://api.openai.com/v1/conversations/conv_1",
                {},
                {"id": "conv_1", "deleted": True},
                method="DELETE",
            ),
        ],
    )
    events, stats = imported(src)
    assert [t["text"] for t in list_turns(events)] == ["The code is C-42.", "What is the code?"]
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed"]
    replies = [e["data"]["message"]["content"] for e in events if e["type"] == "model_responded"]
    assert replies == [
        [
            {"type": "text", "text": "Understood."},
            {"type": "text", "text": "Other conversation acknowledged."},
        ],
        [{"type": "text", "text": "C-42"}],
    ]
    assert stats.warnings == []
    saves_and_passes(src, tmp_path)


def test_a_history_reply_given_as_several_items_is_one_reply(tmp_path: Path) -> None:
    """The Responses API gives one response's output items (reasoning, a message, each
    function_call) as input items of their own: in a history they are one reply."""
    history = [
        {"role": "user", "content": "List and count."},
        {"type": "reasoning", "id": "rs_1", "summary": []},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "Listing first."}],
        },
        {"type": "function_call", "call_id": "c1", "name": "ls", "arguments": "{}"},
        {"type": "function_call", "call_id": "c2", "name": "wc", "arguments": '{"f": "a"}'},
        {"type": "function_call_output", "call_id": "c2", "output": "3"},
        {"type": "function_call_output", "call_id": "c1", "output": "a"},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "One file, 3 lines."}],
        },
        {"role": "user", "content": "Thanks"},
    ]
    src = cassette(
        tmp_path / "items.yaml",
        [
            interaction(
                RESPONSES_URI,
                {"model": "gpt-x", "input": history},
                responses_answer("resp_9", said("Welcome.")),
            )
        ],
    )
    events, _ = imported(src)
    replies = [e["data"]["message"]["content"] for e in events if e["type"] == "model_responded"]
    assert [[b["type"] for b in r] for r in replies] == [
        ["text", "tool_use", "tool_use"],
        ["text"],
        ["text"],
    ]
    results = [
        (e["data"]["tool_use_id"], e["data"]["content"])
        for e in events
        if e["type"] == "tool_result"
    ]
    assert results == [("c1", "a"), ("c2", "3")]
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed"]
    saves_and_passes(src, tmp_path)
