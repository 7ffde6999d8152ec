"""VCR repairs a new user found silent (spec/importers.md sections 4 and 6.3-6.4): an integer
beyond 64 bits in a tool input (orjson reads it as a double without a word), usage numbers
that are no token counts, a tool result that answers no call, a call whose id is empty.
Each is an ``import_repaired`` warning naming the interaction, and ``--strict`` refuses it.
The cassettes are written here, by hand."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events

URI = "https://api.anthropic.com/v1/messages"
ASK = {"role": "user", "content": "What is in notes.txt?"}


def call(body: dict[str, Any], resp: dict[str, Any]) -> dict[str, Any]:
    return {
        "request": {"method": "POST", "uri": URI, "body": json.dumps(body)},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": json.dumps(resp)}},
    }


def cassette(
    tmp_path: Path, use: dict[str, Any], result_id: str, usage: Any = None, before: Any = ()
) -> Path:
    """Two calls: a reply calling ``use``, then a request answering it with ``result_id``
    (the response bodies' text written by json.dumps, which keeps big integers); ``before``:
    blocks the first reply holds before the call."""
    first = {"id": "m1", "content": [*before, use], "stop_reason": "tool_use", "usage": usage or {}}
    result = {"type": "tool_result", "tool_use_id": result_id, "content": "buy milk"}
    history = [ASK, {"role": "assistant", "content": [use]}, {"role": "user", "content": [result]}]
    done = {"id": "m2", "content": [{"type": "text", "text": "milk"}], "stop_reason": "end_turn"}
    doc = {
        "interactions": [
            call({"model": "m", "messages": [ASK]}, first),
            call({"model": "m", "messages": history}, {**done, "usage": {"input_tokens": 3}}),
        ],
        "version": 1,
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def imported(path: Path) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("vcr", path, stats=stats), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e["data"] for e in events if e["type"] == t]


def strict_refusal(path: Path) -> str:
    with pytest.raises(CaseError) as err:
        import_events("vcr", path, strict=True)
    assert err.value.code == "import_invalid"
    return err.value.message


def test_an_integer_beyond_64_bits_in_a_tool_input_warns_big_integer(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "t1", "name": "get", "input": {"n": 2**70}}
    path = cassette(tmp_path, use, "t1")
    events, stats = imported(path)
    assert of_type(events, "tool_called")[0]["input"] == {"n": float(2**70)}
    assert [(w.reason, w.message.split(":")[0]) for w in stats.warnings] == [
        ("big_integer", "interaction 1 response")
    ]
    assert strict_refusal(path).startswith("big_integer: interaction 1 response: integer ")


@pytest.mark.parametrize("bad", [10**30, -5, 1.5e308, 2.5])
def test_a_usage_number_that_is_no_token_count_warns_and_counts_0(tmp_path: Path, bad: Any) -> None:
    use = {"type": "tool_use", "id": "t1", "name": "get", "input": {}}
    path = cassette(tmp_path, use, "t1", {"input_tokens": bad, "output_tokens": 4, "tier": "x"})
    events, stats = imported(path)
    assert of_type(events, "model_responded")[0]["usage"] == {"input_tokens": 0, "output_tokens": 4}
    assert [(w.code, w.reason, w.line) for w in stats.warnings] == [
        ("import_repaired", "invalid_usage", 2)
    ]
    assert f"input_tokens is {bad!r}" in stats.warnings[0].message
    assert strict_refusal(path).startswith("invalid_usage: the reply's usage input_tokens")


def test_a_result_whose_id_matches_no_call_warns_unmatched_result(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "toolu_abc", "name": "read_file", "input": {}}
    path = cassette(tmp_path, use, "toolu_OTHER")
    events, stats = imported(path)
    assert [(w.reason, "interaction 2 request" in w.message, "'toolu_OTHER'" in w.message)
            for w in stats.warnings] == [("unmatched_result", True, True)]  # fmt: skip
    assert of_type(events, "tool_result")[0]["is_error"] is True  # no result is recorded
    assert "unmatched_result: interaction 2 request" in strict_refusal(path)


def test_a_call_with_an_empty_id_gets_one_and_its_empty_id_result(tmp_path: Path) -> None:
    use = {"type": "tool_use", "id": "", "name": "read_file", "input": {"path": "notes.txt"}}
    path = cassette(tmp_path, use, "")
    events, stats = imported(path)
    called, result = of_type(events, "tool_called")[0], of_type(events, "tool_result")[0]
    assert called["tool_use_id"] == result["tool_use_id"] == "interaction-1-response-call1"
    assert (result["content"], result["is_error"]) == ("buy milk", False)
    assert [(w.code, w.reason) for w in stats.warnings] == [("import_repaired", "empty_call_id")]
    assert imported(path)[0] == events  # deterministic
    message = strict_refusal(path)
    assert message.startswith("empty_call_id: interaction 1 response: tool call 1 ('read_file')")
    assert "schema" not in message


def test_a_big_integer_in_a_block_kept_as_it_is_warns_too(tmp_path: Path) -> None:
    """A server tool's block (kept as the provider gave it) holds numbers as a tool input
    does: a big integer is the JavaScript number with a warning, not a schema refusal."""
    use = {"type": "tool_use", "id": "t1", "name": "get", "input": {}}
    server = {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"n": 2**70}}
    path = cassette(tmp_path, use, "t1", before=[server])
    events, stats = imported(path)
    assert of_type(events, "model_responded")[0]["message"]["content"][0]["input"] == {
        "n": 1.1805916207174113e21
    }
    assert [w.reason for w in stats.warnings] == ["big_integer"]


def test_a_swe_agent_object_argument_beyond_64_bits_warns_big_integer(tmp_path: Path) -> None:
    """A single-document format (read by cutjson) keeps the integer exact, so the
    arguments' section 4 rule sees it (orjson alone made it a double without a word)."""
    call_ = {"id": "call_1", "type": "function", "function": {"name": "bash", "arguments": {}}}
    history = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "count"},
        {"role": "assistant", "content": "ok", "tool_calls": [call_]},
        {"role": "tool", "content": "done", "tool_call_ids": ["call_1"]},
    ]
    doc = json.dumps({"history": history, "trajectory": [], "info": {}})
    doc = doc.replace('"arguments": {}', '"arguments": {"n": 1180591620717411303424}')
    path = tmp_path / "run.traj"
    path.write_text(doc, encoding="utf-8")
    stats = Stats()
    events = import_events("swe-agent", path, stats=stats)
    assert of_type(events, "tool_called")[0]["input"] == {"n": 1.1805916207174113e21}
    assert "big_integer" in [w.reason for w in stats.warnings]
