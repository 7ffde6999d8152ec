"""VCR cassettes of the Anthropic Messages, OpenAI Chat Completions and Responses APIs as
threads (spec/importers.md section 6).

tests/importers/vcr/ holds cassettes written for these tests in vcrpy's YAML style (every id,
text and number invented): non-streamed and streamed calls of each API, parallel tool calls
answered out of order, call ids reused across responses and prefixed with their response id,
arguments encoded twice, an overloaded error retried by the SDK, a stream cut short and a
structured-output tool. Each right value is asserted here; every turn of every cassette (and
of its gzipped copy) is saved and replayed on both implementations.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from conftest import cli
from imported_cases import IMPLEMENTATIONS, run_both, save_turns

from threads_cases.case.turns import draft_matchers, fork_point, list_turns
from threads_cases.core.errors import CaseError
from threads_cases.core.strictjson import parse
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.reference.thread import Thread

HERE = Path(__file__).resolve().parent
VCR = HERE / "importers" / "vcr"


def imported(path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events("vcr", path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def replies(events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    return [e["data"]["message"]["content"] for e in of_type(events, "model_responded")]


def pairs(events: list[dict[str, Any]]) -> list[tuple[Any, Any]]:
    """(tool input, result content) of each call, paired by the importer."""
    calls = {}
    out = []
    for e in events:
        if e["type"] == "tool_called":
            calls[e["data"]["tool_use_id"]] = e["data"]["input"]
        elif e["type"] == "tool_result":
            out.append((calls[e["data"]["tool_use_id"]], e["data"]["content"]))
    return out


def write_cassette(path: Path, interactions: list[dict[str, Any]]) -> Path:
    doc = {"interactions": interactions, "version": 1}
    path.write_text(yaml.safe_dump(doc, default_flow_style=False), encoding="utf-8")
    return path


# ------------------------------------------------------------------ Anthropic Messages
def test_anthropic_prefix_parallel_results_by_id_retry_and_reused_ids() -> None:
    events, stats = imported(VCR / "anthropic-messages-tools.yaml")
    turns = list_turns(events)
    # the first request's messages before its last user message are the thread's prefix
    assert [t["text"] for t in turns] == ["Hi", "Weather in Paris and Rome?", "And Oslo?"]
    assert [t["status"] for t in turns] == ["completed"] * 3
    assert replies(events)[0] == [{"type": "text", "text": "Hello! Ask me about the weather."}]
    # results came back Rome first: paired by id, never by position; toolu_01 is reused by
    # the third response and pairs with its own call
    assert pairs(events) == [
        ({"city": "Paris"}, [{"type": "text", "text": "Paris: 18C"}]),
        ({"city": "Rome"}, "Rome: 24C"),
        ({"city": "Oslo"}, "Oslo: 5C"),
    ]
    # the 529 was retried with the same request: kept, but it does not end the turn
    (err,) = of_type(events, "x_vcr.error")
    assert err["data"] == {"status": 529, "message": "529 overloaded_error: Overloaded"}
    assert of_type(events, "turn_failed") == []
    started = of_type(events, "thread_started")[0]["data"]
    assert started["agent"]["system"] == "You answer weather questions."
    assert [t["name"] for t in started["agent"]["tools"]] == ["get_weather"]
    assert started["metadata"] == {
        "source": "vcr",
        "session_id": "anthropic-messages-tools",
        "api": "anthropic-messages",
    }
    assert of_type(events, "model_responded")[1]["data"]["usage"] == {
        "input_tokens": 120,
        "output_tokens": 40,
    }
    assert of_type(events, "user_message")[1]["ts"] == "2026-03-02T09:00:01.000Z"  # Date
    assert stats.warnings == []


def test_an_error_that_is_not_retried_ends_the_turn_with_provider_error(tmp_path: Path) -> None:
    doc = yaml.safe_load((VCR / "anthropic-messages-tools.yaml").read_text())
    del doc["interactions"][3:]  # the 529 is the last thing recorded
    src = write_cassette(tmp_path / "overloaded.yaml", doc["interactions"])
    events, _ = imported(src)
    assert [t["status"] for t in list_turns(events)] == ["completed", "completed", "failed"]
    assert of_type(events, "turn_failed")[0]["data"]["error"] == {
        "code": "provider_error",
        "message": "529 overloaded_error: Overloaded",
    }


def test_anthropic_stream_is_reassembled_into_one_reply() -> None:
    events, _ = imported(VCR / "anthropic-messages-stream.yaml")
    assert replies(events) == [
        [
            {"type": "text", "text": "I'll read it."},
            {
                "type": "tool_use",
                "id": "toolu_S1",
                "name": "read_file",
                "input": {"path": "setup.cfg", "limit": 40},
            },
        ],
        [{"type": "text", "text": "flake8 allows lines up to 100 characters."}],
    ]
    usage = of_type(events, "model_responded")[0]["data"]["usage"]
    assert (usage["input_tokens"], usage["output_tokens"]) == (50, 12)
    assert pairs(events) == [
        ({"path": "setup.cfg", "limit": 40}, "[flake8]\nmax-line-length = 100\n")
    ]


def test_a_stream_cut_short_is_an_interrupted_turn_with_a_note() -> None:
    events, stats = imported(VCR / "anthropic-messages-stream-cut.yaml")
    (turn,) = list_turns(events)
    assert turn["status"] == "failed"
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert replies(events)[-1] == [{"type": "text", "text": "flake8 allows lines "}]
    assert any("stops before its end" in n for n in stats.notes)


def test_a_forced_structured_output_tool_is_the_answer_not_an_external_call() -> None:
    events, _ = imported(VCR / "anthropic-structured-output.yaml")
    assert of_type(events, "tool_called") == []
    answer = {"title": "Release 2.1", "bullets": ["faster import", "fewer bugs"]}
    assert replies(events) == [
        [{"type": "text", "text": json.dumps(answer, separators=(",", ":"))}]
    ]
    (kept,) = of_type(events, "x_vcr.structured_output")
    assert kept["data"] == {"name": "record_summary", "input": answer}
    assert [t["status"] for t in list_turns(events)] == ["completed"]


def test_parsed_bodies_and_an_output_tool_under_a_required_tool_choice() -> None:
    """Bodies kept as YAML mappings (``parsed_body``); with ``tool_choice: any`` the
    conversation can only end on a call: the unanswered last one is the answer."""
    events, stats = imported(VCR / "anthropic-parsed-body-output-tool.yaml")
    assert [e["data"]["name"] for e in of_type(events, "tool_called")] == ["get_user_country"]
    assert pairs(events) == [({}, "Portugal")]
    assert replies(events)[-1] == [{"type": "text", "text": '{"city":"Lisbon"}'}]
    (kept,) = of_type(events, "x_vcr.structured_output")
    assert kept["data"] == {"name": "final_result", "input": {"city": "Lisbon"}}
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert of_type(events, "user_message")[0]["data"]["content"] == (
        "Which is the biggest city where I live?"
    )
    assert stats.warnings == []


# ------------------------------------------------------------------ OpenAI
def test_chat_completions_arguments_decoded_once_results_by_id() -> None:
    events, stats = imported(VCR / "openai-chat-tools.yaml")
    assert pairs(events) == [({"ticket": 7}, "ticket 7: closed"), ({"ticket": 8}, "ticket 8: open")]
    assert [(w.line, w.code, w.reason) for w in stats.warnings] == [
        (2, "import_repaired", "double_encoded")
    ]
    assert "interaction 1 response" in stats.warnings[0].message
    started = of_type(events, "thread_started")[0]["data"]["agent"]
    assert started["system"] == "You look things up."
    assert started["model"] == "gpt-4o-mini"
    usage = of_type(events, "model_responded")[0]["data"]["usage"]
    assert usage == {"input_tokens": 60, "output_tokens": 30}


def test_chat_completions_stream_reassembles_tool_arguments_and_usage() -> None:
    events, stats = imported(VCR / "openai-chat-stream.yaml")
    first, second = of_type(events, "model_responded")
    assert first["data"]["message"]["content"] == [
        {"type": "tool_use", "id": "call_s1", "name": "lookup", "input": {"ticket": 9}}
    ]
    assert first["data"]["usage"] == {"input_tokens": 40, "output_tokens": 9}
    assert second["data"]["message"]["content"] == [{"type": "text", "text": "Ticket 9 is merged."}]
    assert pairs(events) == [({"ticket": 9}, "ticket 9: merged")]
    assert stats.warnings == []


def test_responses_call_ids_scoped_to_their_response_and_prefixed_ids() -> None:
    """Both responses call ``call_0``; the second result names ``resp_2:call_0``."""
    events, _ = imported(VCR / "openai-responses-tools.yaml")
    assert pairs(events) == [
        ({"cmd": "pytest -q"}, "12 passed"),
        ({"cmd": "ruff check"}, "All checks passed!"),
    ]
    assert replies(events)[0][0] == {"type": "thinking", "thinking": "Run the tests first."}
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    agent = of_type(events, "thread_started")[0]["data"]["agent"]
    assert agent["system"] == "You are a careful engineer."


def test_responses_stream_uses_the_completed_response() -> None:
    events, _ = imported(VCR / "openai-responses-stream.yaml")
    assert replies(events) == [
        [{"type": "tool_use", "id": "call_S1", "name": "run", "input": {"cmd": "make"}}],
        [{"type": "text", "text": "The build succeeded."}],
    ]
    assert pairs(events) == [({"cmd": "make"}, "ok")]


def test_typed_bodies_recorded_at_and_a_history_prefix_with_a_call() -> None:
    """Bodies written ``{type: json, content}``, the time from ``recorded_at``; the first
    request's history (a call and its result before the repeated question) is a prefix
    turn that stops before the model answered its result; ``tool_choice: required`` makes
    the unanswered call the answer."""
    events, stats = imported(VCR / "openai-responses-typed-bodies.yaml")
    turns = list_turns(events)
    assert [t["status"] for t in turns] == ["failed", "completed"]
    assert turns[0]["tools"] == ["get_user_country"] and turns[1]["tools"] == []
    assert pairs(events) == [({}, "Chile")]
    assert replies(events)[-1] == [{"type": "text", "text": '{"city":"Santiago"}'}]  # no thinking
    assert of_type(events, "model_responded")[-1]["ts"] == "2026-03-02T11:30:00.250Z"
    assert of_type(events, "model_responded")[-1]["data"]["usage"] == {
        "input_tokens": 103,
        "output_tokens": 41,
    }
    assert stats.warnings == []


def test_chat_legacy_function_results_pair_by_name_in_call_order(tmp_path: Path) -> None:
    """Two identical-named calls, results with only the name: by occurrence, not position
    in the request (the first unanswered call of that name)."""

    def call(cid: str, n: int) -> dict[str, Any]:
        return {
            "id": cid,
            "type": "function",
            "function": {"name": "f", "arguments": f'{{"n": {n}}}'},
        }

    msgs = [{"role": "user", "content": "twice"}]
    first = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [call("a", 1), call("b", 2)],
                },
                "finish_reason": "tool_calls",
            }
        ]
    }
    hist = [
        *msgs,
        first["choices"][0]["message"],
        {"role": "function", "name": "f", "content": "one"},
        {"role": "function", "name": "f", "content": "two"},
    ]
    done = {
        "choices": [{"message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}]
    }
    uri = "https://api.openai.com/v1/chat/completions"

    def inter(body: Any, resp: Any) -> dict[str, Any]:
        return {
            "request": {"method": "POST", "uri": uri, "body": json.dumps(body)},
            "response": {"status": {"code": 200}, "body": {"string": json.dumps(resp)}},
        }

    src = write_cassette(
        tmp_path / "legacy.yaml",
        [
            inter({"model": "m", "messages": msgs}, first),
            inter({"model": "m", "messages": hist}, done),
        ],
    )
    events, _ = imported(src)
    assert pairs(events) == [({"n": 1}, "one"), ({"n": 2}, "two")]


# ------------------------------------------------------------------ damaged input
def test_damaged_interactions_are_skipped_with_a_warning_and_strict_refuses(tmp_path: Path) -> None:
    doc = yaml.safe_load((VCR / "openai-chat-tools.yaml").read_text())
    broken = {
        "request": {
            "method": "POST",
            "uri": doc["interactions"][0]["request"]["uri"],
            "body": "{not json",
        }
    }
    token = {
        "request": {"method": "GET", "uri": "https://api.openai.com/v1/models"},
        "response": {},
    }
    src = write_cassette(tmp_path / "c.yaml", [token, broken, *doc["interactions"]])
    events, stats = imported(src)
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert [(w.code, w.reason) for w in stats.warnings][:1] == [("import_skipped", "invalid_line")]
    assert "interaction 2: has no response mapping" in stats.warnings[0].message
    assert stats.skipped["interaction that is not a model call"] == 1
    with pytest.raises(CaseError) as exc:
        imported(src, strict=True)
    assert exc.value.code == "import_invalid" and "interaction 2" in exc.value.message


@pytest.mark.parametrize(
    ("body", "says"),
    [
        (b"interactions: [\n", "before its first interaction ends (cut short)"),
        (b"interactions:\n  - 1\n bad: 2\nversion: 1\n", "not YAML: line 3 column 2"),
        (b"- 1\n- 2\n", "not a VCR cassette"),
        (b"version: 1\n", "not a VCR cassette"),
        (b"interactions: []\nversion: 1\n", "no interaction is a model call"),
    ],
)
def test_a_file_that_is_no_cassette_is_refused_cleanly(
    tmp_path: Path, body: bytes, says: str
) -> None:
    src = tmp_path / "x.yaml"
    src.write_bytes(body)
    with pytest.raises(CaseError) as exc:
        imported(src)
    assert exc.value.code == "import_invalid" and says in exc.value.message
    p = cli("import", "vcr", src, "-o", tmp_path / "t.jsonl", cwd=tmp_path)
    assert p.returncode == 1 and p.stderr.startswith("error[import_invalid]: ")
    assert "Traceback" not in p.stderr and not (tmp_path / "t.jsonl").exists()


# ------------------------------------------------------------------ end to end
def cassettes() -> list[Path]:
    return sorted(VCR.glob("*.yaml"))


def test_gzipped_cassettes_read_as_the_plain_ones(tmp_path: Path) -> None:
    for src in cassettes():
        gz = tmp_path / f"{src.name}.gz"
        gz.write_bytes(gzip.compress(src.read_bytes()))
        plain, _ = imported(src)
        packed, _ = imported(gz)
        assert packed == plain, src.name


def test_every_turn_of_every_cassette_saves_and_passes_on_both_implementations(
    tmp_path: Path,
) -> None:
    saved = []
    for src in cassettes():
        log = tmp_path / f"{src.stem}.jsonl"
        import_to_file("vcr", src, log)
        saved += save_turns(log, tmp_path / "cases", f"{src.stem[:40]}-")
    assert len(saved) >= 10
    verdicts = run_both(tmp_path / "cases", tmp_path)
    for name in saved:
        for impl in IMPLEMENTATIONS:
            assert verdicts[(name, impl)]["verdict"] == "pass", verdicts[(name, impl)]


def test_cli_import_and_save_from_vcr(tmp_path: Path) -> None:
    gz = tmp_path / "anthropic.yaml.gz"
    gz.write_bytes(gzip.compress((VCR / "anthropic-messages-tools.yaml").read_bytes()))
    p = cli("import", "vcr", gz, "-o", "t.jsonl", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert (out["turns"], out["warnings"]) == (3, [])
    p = cli(
        "save",
        "--from",
        "vcr",
        gz,
        "--turn",
        "2",
        "--name",
        "weather",
        "--dir",
        "cases",
        "--draft",
        "--allow-secrets",
        cwd=tmp_path,
    )
    assert p.returncode == 0, p.stderr
    stubs = json.loads((tmp_path / "cases" / "weather" / "stubs.json").read_text())
    assert [c["input"] for c in stubs["calls"]] == [{"city": "Paris"}, {"city": "Rome"}]
    p = cli("run", "cases", "--impl", "threads-py", "--impl", "threads-ts", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr


# ------------------------------------------------------------------ more shapes, inline
def sse_body(events: list[dict[str, Any]], *, named: bool = True) -> str:
    if named:
        return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events)
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events)


def call_of(uri: str, body: Any, resp: Any, *, status: int = 200, **headers: str) -> dict[str, Any]:
    text = resp if isinstance(resp, str) else json.dumps(resp)
    return {
        "request": {"method": "POST", "uri": uri, "body": json.dumps(body)},
        "response": {
            "status": {"code": status},
            "headers": {k.replace("_", "-"): [v] for k, v in headers.items()},
            "body": {"string": text},
        },
    }


ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
CHAT_URI = "https://api.openai.com/v1/chat/completions"
RESPONSES_URI = "https://api.openai.com/v1/responses"


def test_cut_and_failed_streams_of_each_api(tmp_path: Path) -> None:
    """A Chat stream without finish_reason and a Responses stream without its completed
    event are interrupted turns; an Anthropic error event and a Responses
    ``response.failed`` are provider errors, never replies."""
    user = [{"role": "user", "content": "go"}]
    chat_cut = sse_body(
        [{"id": "c", "choices": [{"index": 0, "delta": {"content": "Half an ans"}}]}],
        named=False,
    )
    resp_cut = sse_body(
        [
            {"type": "response.created", "response": {"id": "resp_x", "model": "m"}},
            {"type": "response.output_text.delta", "delta": "Partly"},
        ]
    )
    anth_err = sse_body(
        [
            {"type": "message_start", "message": {"id": "msg_e", "model": "m", "usage": {}}},
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
        ]
    )
    resp_failed = sse_body(
        [
            {
                "type": "response.failed",
                "response": {"id": "r", "error": {"code": "server_error", "message": "boom"}},
            }
        ]
    )
    cases = [
        (CHAT_URI, {"model": "m", "stream": True, "messages": user}, chat_cut, "interrupted"),
        (RESPONSES_URI, {"model": "m", "stream": True, "input": "go"}, resp_cut, "interrupted"),
        (
            ANTHROPIC_URI,
            {"model": "m", "stream": True, "messages": user},
            anth_err,
            "provider_error",
        ),
        (
            RESPONSES_URI,
            {"model": "m", "stream": True, "input": "go"},
            resp_failed,
            "provider_error",
        ),
    ]
    for k, (uri, body, stream, code) in enumerate(cases):
        src = write_cassette(
            tmp_path / f"s{k}.yaml", [call_of(uri, body, stream, content_type="text/event-stream")]
        )
        events, _ = imported(src)
        assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == code, k
        if code == "provider_error":
            assert of_type(events, "model_responded") == [], k
        assert set(save_and_run(tmp_path / f"run{k}", src).values()) == {"pass"}, k


def save_and_run(tmp_path: Path, src: Path) -> dict[tuple[str, str], str]:
    log = tmp_path / "log.jsonl"
    import_to_file("vcr", src, log)
    events = [parse(x) for x in log.read_bytes().splitlines()]
    thread = Thread.open(events)
    for t in list_turns(events):
        result = thread.save_case(
            f"t{t['index']}",
            expect=draft_matchers(events, t["index"]),
            at=fork_point(events, t["index"]),
            dir=tmp_path / "cases",
            secrets="allow",
        )
        assert result.ok, result.error
    args: list[str | Path] = ["run", tmp_path / "cases", "--format", "json"]
    for impl in IMPLEMENTATIONS:
        args += ["--impl", impl]
    p = cli(*args, cwd=tmp_path)
    lines = [json.loads(x) for x in p.stdout.splitlines() if x.strip()]
    return {
        (r["case"], r["implementation"]): r["verdict"] for r in lines if r.get("kind") == "result"
    }


def test_a_gzipped_binary_body_and_repeated_identical_calls_by_occurrence(tmp_path: Path) -> None:
    """A response body kept compressed as ``!!binary`` (content-encoding gzip); one reply
    calling the same tool with the same input twice, answered by id: the case's stubs answer
    them by occurrence and the saved turn passes."""
    same = {"path": "a.txt"}
    blocks = [
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": same},
        {"type": "tool_use", "id": "toolu_2", "name": "read", "input": same},
    ]
    first = {"id": "m1", "model": "m", "content": blocks, "stop_reason": "tool_use", "usage": {}}
    msgs = [{"role": "user", "content": "read it twice"}]
    later = [
        *msgs,
        {"role": "assistant", "content": blocks},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "second"},
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "first"},
            ],
        },
    ]
    done = {"id": "m2", "model": "m", "content": [{"type": "text", "text": "ok"}], "usage": {}}
    one = call_of(ANTHROPIC_URI, {"model": "m", "messages": msgs}, first)
    one["response"]["body"]["string"] = gzip.compress(json.dumps(first).encode())
    one["response"]["headers"] = {"content-encoding": ["gzip"]}
    src = write_cassette(
        tmp_path / "bin.yaml",
        [one, call_of(ANTHROPIC_URI, {"model": "m", "messages": later}, done)],
    )
    assert "!!binary" in src.read_text()
    events, _ = imported(src)
    assert [r for _, r in pairs(events)] == ["first", "second"]
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_a_request_that_does_not_continue_starts_a_turn_with_a_warning(tmp_path: Path) -> None:
    a = {"id": "m1", "model": "m", "content": [{"type": "text", "text": "A"}], "usage": {}}
    b = {"id": "m2", "model": "m", "content": [{"type": "text", "text": "B"}], "usage": {}}
    src = write_cassette(
        tmp_path / "two.yaml",
        [
            call_of(
                ANTHROPIC_URI, {"model": "m", "messages": [{"role": "user", "content": "one"}]}, a
            ),
            call_of(
                ANTHROPIC_URI, {"model": "m", "messages": [{"role": "user", "content": "two"}]}, b
            ),
        ],
    )
    events, stats = imported(src)
    assert [t["text"] for t in list_turns(events)] == ["one", "two"]
    assert [(w.code, w.reason) for w in stats.warnings] == [("import_repaired", "not_continued")]


def test_a_background_response_is_answered_by_its_last_retrieve(tmp_path: Path) -> None:
    """Responses background mode: the POST answers ``queued``, the client polls ``GET
    /v1/responses/<id>`` until it completes; the reply is the last poll's, and a response
    never completed in the cassette is a reply cut short with ``not_completed``
    (spec/importers.md 6.3)."""
    call = {"type": "function_call", "call_id": "c1", "name": "get_weather",
            "arguments": '{"city": "Paris"}'}  # fmt: skip
    said = {"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "Sunny."}]}  # fmt: skip

    def state(rid: str, status: str, output: list[Any]) -> dict[str, Any]:
        return {"id": rid, "object": "response", "model": "m", "background": True,
                "status": status, "output": output,
                "usage": {"input_tokens": 5, "output_tokens": 2} if output else None}  # fmt: skip

    def poll(rid: str, body: dict[str, Any]) -> dict[str, Any]:
        got = call_of(f"{RESPONSES_URI}/{rid}?stream=false", None, body)
        got["request"].update(method="GET", body=None)
        return got

    ask = [{"role": "user", "content": "Weather in Paris?"}]
    result = {"type": "function_call_output", "call_id": "c1", "output": "sunny"}
    later = {"model": "m", "background": True, "input": [*ask, call, result]}
    interactions = [
        call_of(RESPONSES_URI, {"model": "m", "background": True, "input": ask},
                state("resp_1", "queued", [])),
        poll("resp_1", state("resp_1", "completed", [call])),
        call_of(RESPONSES_URI, later, state("resp_2", "queued", [])),
        poll("resp_2", state("resp_2", "in_progress", [])),
        poll("resp_2", state("resp_2", "completed", [said])),
    ]  # fmt: skip
    src = write_cassette(tmp_path / "background.yaml", interactions)
    events, stats = imported(src)
    assert pairs(events) == [({"city": "Paris"}, "sunny")]
    assert replies(events)[-1] == [{"type": "text", "text": "Sunny."}]
    assert stats.warnings == []
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}
    src = write_cassette(tmp_path / "pending.yaml", interactions[:4])
    events, stats = imported(src)
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert [(w.code, w.reason) for w in stats.warnings] == [("import_repaired", "not_completed")]
    assert set(save_and_run(tmp_path / "cut", src).values()) == {"pass"}


def test_anthropic_on_bedrock_and_vertex_is_the_messages_api(tmp_path: Path) -> None:
    """Bedrock's invoke of an ``anthropic.`` model id (escaped ``:`` included) and Vertex
    AI's rawPredict of a publishers/anthropic model carry the Messages API's body and answer
    (spec/importers.md 6.2); another model's invoke is not a model call of ours."""
    body = {"anthropic_version": "bedrock-2023-05-31", "max_tokens": 50,
            "messages": [{"role": "user", "content": "Say hi"}]}  # fmt: skip
    answer = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-x",
              "content": [{"type": "text", "text": "hi"}], "stop_reason": "end_turn",
              "usage": {"input_tokens": 3, "output_tokens": 1}}  # fmt: skip
    uris = [
        "https://bedrock-runtime.eu-central-1.amazonaws.com/model/eu.anthropic.claude-x-v1%3A0/invoke",
        "https://us-east5-aiplatform.googleapis.com/v1/projects/p/locations/us-east5/"
        "publishers/anthropic/models/claude-x@20250101:rawPredict",
    ]
    for k, uri in enumerate(uris):
        src = write_cassette(tmp_path / f"cloud{k}.yaml", [call_of(uri, body, answer)])
        events, _ = imported(src)
        assert [t["text"] for t in list_turns(events)] == ["Say hi"], uri
        assert replies(events) == [[{"type": "text", "text": "hi"}]]
        assert set(save_and_run(tmp_path / f"run{k}", src).values()) == {"pass"}
    llama = (
        "https://bedrock-runtime.us-east-1.amazonaws.com/model/meta.llama3-8b-instruct-v1:0/invoke"
    )
    src = write_cassette(tmp_path / "llama.yaml", [call_of(llama, body, answer)])
    with pytest.raises(CaseError) as refused:
        imported(src)
    assert refused.value.code == "import_invalid"


def test_a_responses_request_naming_an_earlier_conversation_continues_it(tmp_path: Path) -> None:
    """The Responses API's ``conversation`` holds the history on the provider's side, so a
    later request naming it sends only what is new: a tool result pairs with its call and a
    user message starts the next turn, with no ``not_continued`` warning; a conversation no
    earlier request named still warns (spec/importers.md 6.4)."""
    call = {"type": "function_call", "call_id": "c1", "name": "get_weather",
            "arguments": '{"city": "Oslo"}'}  # fmt: skip

    def answer(rid: str, output: dict[str, Any]) -> dict[str, Any]:
        return {"id": rid, "model": "m", "status": "completed", "output": [output],
                "usage": {"input_tokens": 3, "output_tokens": 2}}  # fmt: skip

    def said(text: str) -> dict[str, Any]:
        return {"type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": text}]}  # fmt: skip

    tools = [{"type": "function", "name": "get_weather", "parameters": {}}]

    def ask(conversation: Any, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {"model": "m", "conversation": conversation, "input": items, "tools": tools}

    created = {"id": "conv_1", "object": "conversation", "metadata": {}}
    result = {"type": "function_call_output", "call_id": "c1", "output": "12 C, rain"}
    src = write_cassette(
        tmp_path / "conversation.yaml",
        [
            call_of("https://api.openai.com/v1/conversations", {}, created),
            call_of(RESPONSES_URI, ask("conv_1", [{"role": "user", "content": "Weather?"}]),
                    answer("resp_1", call)),
            call_of(RESPONSES_URI, ask({"id": "conv_1"}, [result]),
                    answer("resp_2", said("Rain."))),
            call_of(RESPONSES_URI, ask("conv_1", [{"role": "user", "content": "Thanks"}]),
                    answer("resp_3", said("Welcome."))),
            call_of(RESPONSES_URI, ask("conv_2", [{"role": "user", "content": "Other"}]),
                    answer("resp_4", said("New."))),
        ],
    )  # fmt: skip
    events, stats = imported(src)
    assert [t["text"] for t in list_turns(events)] == ["Weather?", "Thanks", "Other"]
    assert pairs(events) == [({"city": "Oslo"}, "12 C, rain")]
    assert [(w.code, w.reason) for w in stats.warnings] == [("import_repaired", "not_continued")]
    assert "interaction 5" in stats.warnings[-1].message
    assert set(save_and_run(tmp_path / "run", src).values()) == {"pass"}


def test_an_unreadable_response_is_a_cut_turn_and_an_html_error_a_provider_error(
    tmp_path: Path,
) -> None:
    msgs = [{"role": "user", "content": "hi"}]
    html = "<html><body>Bad gateway</body></html>"
    src = write_cassette(
        tmp_path / "garbled.yaml", [call_of(ANTHROPIC_URI, {"model": "m", "messages": msgs}, html)]
    )
    events, stats = imported(src)
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert [(w.code, w.reason) for w in stats.warnings] == [("import_skipped", "invalid_line")]
    assert set(save_and_run(tmp_path / "a", src).values()) == {"pass"}
    src = write_cassette(
        tmp_path / "502.yaml",
        [call_of(ANTHROPIC_URI, {"model": "m", "messages": msgs}, html, status=502)],
    )
    events, _ = imported(src)
    assert of_type(events, "turn_failed")[0]["data"]["error"] == {
        "code": "provider_error",
        "message": "502: the provider returned an error",
    }


def test_a_big_integer_in_a_tool_input_becomes_the_javascript_number(tmp_path: Path) -> None:
    """As section 4 reads one in a transcript: never a refusal of the whole cassette."""
    block = {"type": "tool_use", "id": "t1", "name": "get", "input": {"post": 1234567890123456789}}
    first = {"id": "m1", "model": "m", "content": [block], "stop_reason": "tool_use", "usage": {}}
    src = write_cassette(
        tmp_path / "big.yaml",
        [
            call_of(
                ANTHROPIC_URI, {"model": "m", "messages": [{"role": "user", "content": "x"}]}, first
            )
        ],
    )
    events, stats = imported(src)
    assert of_type(events, "tool_called")[0]["data"]["input"] == {"post": "1234567890123456800"}
    assert [(w.reason, "interaction 1 response" in w.message) for w in stats.warnings] == [
        ("big_integer", True)
    ]
