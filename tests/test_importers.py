"""Mapping rules of the importers (threads_cases/importers/), on the sample transcripts of
tests/importers/ and on small transcripts written inline."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from threads_cases.case.turns import draft_matchers, first_words, fork_point, list_turns
from threads_cases.core.errors import CaseError
from threads_cases.core.log import check_events, read_log
from threads_cases.core.reducer import Reducer
from threads_cases.core.request import build_request, request_sha256
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.importers.common import PLACEHOLDER_PROMPT, parse_ts_ms, tool_effect

SAMPLES = Path(__file__).resolve().parent / "importers"
ALL = sorted(p.name for p in SAMPLES.glob("*.jsonl") if "malformed" not in p.name)
ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
TS = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z$")


def fmt_of(name: str) -> str:
    return "codex" if name.startswith("codex") else "claude-code"


def load(name: str, **kw: Any) -> list[dict[str, Any]]:
    return import_events(fmt_of(name), SAMPLES / name, **kw)


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def write_lines(path: Path, lines: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines), "utf-8")
    return path


def cc(
    uuid: str,
    parent: str | None,
    typ: str,
    content: Any,
    *,
    mid: str | None = None,
    stop: str | None = None,
    ts: str = "2025-01-01T00:00:00.000Z",
    **kw: Any,
) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": typ, "content": content}
    if typ == "assistant":
        msg.update(
            id=mid or f"m-{uuid}",
            model="claude-x",
            stop_reason=stop,
            usage={"input_tokens": 1, "output_tokens": 2},
        )
    return {
        "type": typ,
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s1",
        "timestamp": ts,
        "isSidechain": False,
        "message": msg,
        **kw,
    }


# --------------------------------------------------------------------------- every sample
@pytest.mark.parametrize("name", ALL)
def test_sample_is_a_valid_canonical_log(name: str) -> None:
    events = load(name)
    list(check_events(events))
    state = Reducer()
    for e in events:
        state.apply(e)
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert all(ID.match(e["event_id"]) and TS.match(e["ts"]) for e in events)
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)
    assert events[0]["type"] == "thread_started"
    assert all(t["kind"] == "external" for t in events[0]["data"]["agent"]["tools"])
    # deterministic: the same bytes twice
    assert load(name) == events


@pytest.mark.parametrize("name", ALL)
def test_request_sha256_matches_the_state(name: str) -> None:
    """The incremental hash equals request_sha256(build_request(state)) at every request."""
    events = load(name)
    r = Reducer()
    for e in events:
        if e["type"] == "model_requested":
            assert e["data"]["request_sha256"] == request_sha256(build_request(r.state))
            assert e["data"]["model"] == r.state["agent"]["model"]
        r.apply(e)


# --------------------------------------------------------------------------- claude-code
def test_split_reply_is_merged_with_the_last_usage() -> None:
    events = load("claude-code-parallel.jsonl")
    replies = of_type(events, "model_responded")
    first = replies[0]["data"]
    assert [b["type"] for b in first["message"]["content"]] == ["thinking", "text", "tool_use"]
    assert first["usage"]["output_tokens"] == 30  # the last line of the reply
    assert first["stop_reason"] == "tool_use"
    # msg_01B: two tool_use lines with a tool result between them -> one reply, two calls
    second = replies[1]["data"]["message"]["content"]
    assert [b["id"] for b in second] == ["toolu_02", "toolu_03"]
    assert len(replies) == 5


def test_parallel_results_and_tool_results_are_not_user_messages() -> None:
    events = load("claude-code-parallel.jsonl")
    users = of_type(events, "user_message")
    assert [first_words(u["data"]["content"], 3) for u in users] == [
        "Liste les notes …",
        "Now write a …",
    ]
    results = of_type(events, "tool_result")
    assert [r["data"]["tool_use_id"] for r in results] == [
        "toolu_01",
        "toolu_02",
        "toolu_03",
        "toolu_04",
    ]
    assert results[2]["data"]["content"][0]["text"].endswith("🚀 launch")
    state = Reducer()
    for e in events:
        state.apply(e)
    # the two parallel results went into one user message, as the runtime builds it
    msgs = state.state["messages"]
    assert [
        len(m["content"])
        for m in msgs
        if m["role"] == "user"
        and isinstance(m["content"], list)
        and m["content"][0]["type"] == "tool_result"
    ] == [1, 2, 1]
    done = of_type(events, "turn_completed")[0]["data"]
    assert done["stop_reason"] == "end_turn"
    assert done["usage"] == {"input_tokens": 10 + 40 + 90, "output_tokens": 30 + 44 + 60}


def test_kept_and_dropped_lines() -> None:
    stats = Stats()
    events = load("claude-code-parallel.jsonl", stats=stats)
    types = [e["type"] for e in events]
    assert {"x_claude_code.summary", "x_claude_code.meta", "x_claude_code.system"} <= set(types)
    assert stats.skipped == {
        "file-history-snapshot line": 1,
        "queue-operation line": 1,
        "progress line": 1,
        "unknown line type 'x-future-line'": 1,
    }
    meta = events[0]["data"]["metadata"]
    assert meta == {
        "source": "claude-code",
        "session_id": "a1b2c3d4-0000-4000-8000-000000000001",
        "cwd": "/home/dev/notes-app",
    }
    agent = events[0]["data"]["agent"]
    assert agent["model"] == "claude-sonnet-4-5-20250929"
    assert [(t["name"], t["effect"]) for t in agent["tools"]] == [
        ("Glob", "read"),
        ("Read", "read"),
        ("Write", "write"),
    ]


def test_fork_follows_the_newest_branch_by_default() -> None:
    stats = Stats()
    events = load("claude-code-fork.jsonl", stats=stats)
    texts = [u["data"]["content"] for u in of_type(events, "user_message")]
    assert texts == ["What is in config.toml?", "Change the port to 7070 instead"]
    assert stats.skipped["line of a branch not followed (fork)"] == 4
    assert events[0]["data"]["metadata"]["forks"] == 1


def test_branch_option_picks_the_branch_holding_a_uuid() -> None:
    # the uuid of the older branch's final reply
    events = load("claude-code-fork.jsonl", branch="22222222-0008-4000-8000-000000000008")
    texts = [u["data"]["content"] for u in of_type(events, "user_message")]
    assert texts == ["What is in config.toml?", "Change the port to 9090"]
    with pytest.raises(CaseError) as exc:
        load("claude-code-fork.jsonl", branch="missing")
    assert exc.value.code == "invalid_request"


def test_fork_ignores_branching_that_is_not_two_user_messages(tmp_path: Path) -> None:
    """Tool results hanging off the first line of a split reply are kept."""
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            cc("u1", None, "user", "go"),
            cc(
                "a1",
                "u1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}],
                mid="m1",
            ),
            cc(
                "a2",
                "a1",
                "assistant",
                [{"type": "tool_use", "id": "t2", "name": "Read", "input": {"x": 1}}],
                mid="m1",
            ),
            cc("r1", "a1", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "A"}]),
            cc("r2", "a2", "user", [{"type": "tool_result", "tool_use_id": "t2", "content": "B"}]),
            cc("a3", "r2", "assistant", [{"type": "text", "text": "done"}], stop="end_turn"),
        ],
    )
    events = import_events("claude-code", f)
    assert [e["type"] for e in events][-3:] == [
        "model_requested",
        "model_responded",
        "turn_completed",
    ]
    assert len(of_type(events, "tool_result")) == 2


def test_sidechain_lines_leave_the_main_thread() -> None:
    stats = Stats()
    events = load("claude-code-sidechain.jsonl", stats=stats)
    assert stats.skipped["sidechain line (not in the main thread)"] == 4
    names = [t["name"] for t in events[0]["data"]["agent"]["tools"]]
    assert "Grep" not in names and "Task" in names
    assert not any("Grep src/" in json.dumps(e["data"]) for e in of_type(events, "user_message"))


def test_sidechain_only_file_is_its_own_thread() -> None:
    events = load("claude-code-sidechain-only.jsonl")
    assert events[0]["thread_id"] == "a1b2c3d4-0000-4000-8000-000000000003:a7f3e9"
    assert events[0]["data"]["metadata"]["sidechain"] is True
    assert events[0]["data"]["agent"]["model"] == "claude-haiku-4-5-20251001"
    assert len(of_type(events, "user_message")) == 1
    assert of_type(events, "turn_completed")


def test_interrupted_turn_and_unanswered_command() -> None:
    events = load("claude-code-sidechain.jsonl")
    failed = of_type(events, "turn_failed")
    assert len(failed) == 1
    assert failed[0]["data"]["error"]["code"] == "interrupted"
    assert failed[0]["data"]["error"]["message"].startswith("[Request interrupted by user")
    cmd = of_type(events, "x_claude_code.command")
    assert "/clear" in cmd[0]["data"]["content"]
    turns = list_turns(events)
    assert [t["status"] for t in turns] == ["completed", "failed", "completed"]
    assert draft_matchers(events, 2)["must"] == [
        {"type": "turn_failed", "data": {"error": {"code": "interrupted"}}}
    ]


def test_transcript_ending_mid_turn_fails_it(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            cc("u1", None, "user", "run it", ts="2025-01-01T00:00:05.000Z"),
            cc(
                "a1",
                "u1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "make"}}],
                stop="tool_use",
                ts="2025-01-01T00:00:01+00:00",
            ),  # earlier: ts is clamped
        ],
    )
    events = import_events("claude-code", f)
    assert events[-1]["type"] == "turn_failed"
    assert events[-1]["data"]["error"]["code"] == "interrupted"
    assert of_type(events, "tool_called") and not of_type(events, "tool_result")
    assert {e["ts"] for e in events[1:]} == {"2025-01-01T00:00:05.000Z"}


def test_reply_going_on_without_a_result_gets_an_error_result(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            cc("u1", None, "user", "go"),
            cc(
                "a1",
                "u1",
                "assistant",
                [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}],
                stop="tool_use",
            ),
            cc("a2", "a1", "assistant", [{"type": "text", "text": "never mind"}], stop="end_turn"),
        ],
    )
    events = import_events("claude-code", f)
    res = of_type(events, "tool_result")[0]["data"]
    assert res["is_error"] is True and "no result" in res["content"]
    assert events[-1]["type"] == "turn_completed"


def test_unknown_fields_and_types_never_break(tmp_path: Path) -> None:
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            {"type": "brand-new-kind", "whatever": [1, {"a": None}]},
            {"no_type_at_all": True},
            {**cc("u1", None, "user", "hi"), "futureField": {"x": 1}},
            {
                **cc(
                    "a1",
                    "u1",
                    "assistant",
                    [
                        {"type": "text", "text": "hello", "citations": None},
                        {"type": "server_tool_use", "id": "s", "name": "w", "input": {}},
                    ],
                    stop="end_turn",
                ),
                "costUSD": 0.0012,
            },
        ],
    )
    stats = Stats()
    events = import_events("claude-code", f, stats=stats)
    assert events[-1]["type"] == "turn_completed"
    assert stats.skipped == {"unknown line type 'brand-new-kind'": 1, "line without a type": 1}


def test_malformed_line_is_refused_with_its_line_and_type(tmp_path: Path) -> None:
    with pytest.raises(CaseError) as exc:
        import_events("claude-code", SAMPLES / "claude-code-malformed.jsonl", strict=True)
    err = exc.value
    assert err.code == "import_invalid" and err.exit_status == 1
    assert err.location.line == 3 and err.message.startswith("assistant: ")
    assert err.hint
    # a line that parses but breaks the shape names its type too
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            cc("u1", None, "user", "go"),
            cc("a1", "u1", "assistant", [{"type": "tool_use", "id": "", "name": "X", "input": {}}]),
        ],
    )
    with pytest.raises(CaseError) as exc:
        import_events("claude-code", f, strict=True)
    assert exc.value.location.line == 2 and exc.value.message.startswith("assistant: message")
    # without strict the line is skipped, with a warning naming it
    stats = Stats()
    import_events("claude-code", f, stats=stats)
    assert [(w.line, w.code, w.reason) for w in stats.warnings] == [
        (2, "import_skipped", "invalid_line")
    ]


def test_import_to_file_is_atomic(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"old")
    with pytest.raises(CaseError):
        import_to_file("claude-code", SAMPLES / "claude-code-malformed.jsonl", out, strict=True)
    assert out.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]
    report = import_to_file("claude-code", SAMPLES / "claude-code-malformed.jsonl", out)
    assert report.stats.invalid == 1 and report.turns == 2
    assert len(list(read_log(out))) == report.events


def test_the_reported_turn_count_is_what_turns_lists(tmp_path: Path) -> None:
    """A reply before any user message is a turn without user input: written, but never
    listed nor saved, so the count an import reports (``wrote LOG: N events, M turn(s)``)
    leaves it out, for every format (spec/importers.md 5)."""
    text = [{"type": "text", "text": "resumed"}]
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            cc("a0", None, "assistant", text, stop="end_turn"),
            cc("u1", "a0", "user", "go on"),
            cc("a1", "u1", "assistant", [{"type": "text", "text": "done"}], stop="end_turn"),
        ],
    )
    out = tmp_path / "out.jsonl"
    report = import_to_file("claude-code", f, out)
    events = list(read_log(out))
    assert len(of_type(events, "turn_started")) == 2
    assert [t["text"] for t in list_turns(events)] == ["go on"]
    assert report.turns == 1


# --------------------------------------------------------------------------- codex
def test_codex_exec_prompt_and_placeholder() -> None:
    stats = Stats()
    events = load("codex-exec-basic.jsonl", stats=stats)
    assert of_type(events, "user_message")[0]["data"]["content"] == PLACEHOLDER_PROMPT
    assert any("no user prompt" in n for n in stats.notes)
    events = load("codex-exec-basic.jsonl", prompt="Résume")
    assert of_type(events, "user_message")[0]["data"]["content"] == "Résume"
    calls = of_type(events, "tool_called")
    assert [c["data"]["input"] for c in calls] == [
        {"command": "bash -lc ls"},
        {"command": "bash -lc 'cat README.md'"},
    ]
    done = of_type(events, "turn_completed")[0]["data"]
    assert done["usage"] == {"input_tokens": 24763, "output_tokens": 122}
    assert of_type(events, "x_codex.todo_list")


def test_codex_exec_failed_turn_and_tools() -> None:
    events = load("codex-exec-failed.jsonl")
    names = [c["data"]["name"] for c in of_type(events, "tool_called")]
    assert names == ["mcp__docs__lookup", "apply_patch", "shell", "shell"]
    results = of_type(events, "tool_result")
    assert [r["data"]["is_error"] for r in results] == [False, False, True]
    failed = of_type(events, "turn_failed")[0]["data"]["error"]
    assert failed == {"code": "turn_failed", "message": "stream disconnected before completion"}
    first = of_type(events, "model_responded")[0]["data"]["message"]["content"]
    assert first[0] == {"type": "web_search", "query": "python tomllib example"}
    assert draft_matchers(events, 1)["must"] == [
        {"type": "tool_result", "data": {"name": "mcp__docs__lookup", "is_error": False}},
        {"type": "tool_result", "data": {"name": "apply_patch", "is_error": False}},
        {"type": "turn_completed", "data": {"stop_reason": "end_turn"}},
    ]


def test_codex_rollout_mapping() -> None:
    events = load("codex-rollout-basic.jsonl")
    start = events[0]["data"]
    assert start["agent"]["model"] == "gpt-5-codex"
    assert start["metadata"]["cwd"] == "/work/demo"
    assert events[0]["thread_id"] == "0199a9f0-1111-7222-8333-444455556666"
    assert of_type(events, "x_codex.context")[0]["data"]["role"] == "user"
    call = of_type(events, "tool_called")[0]["data"]
    assert call["input"]["command"] == ["bash", "-lc", "wc -l main.py"]
    replies = of_type(events, "model_responded")
    assert replies[0]["data"]["usage"]["cached_input_tokens"] == 2048
    assert replies[1]["data"]["message"]["content"] == [
        {"type": "text", "text": "main.py fait 42 lignes."}
    ]


def test_codex_rollout_parallel_abort_and_custom_tools() -> None:
    events = load("codex-rollout-parallel.jsonl")
    replies = of_type(events, "model_responded")
    assert [b["id"] for b in replies[0]["data"]["message"]["content"]] == ["call_B1", "call_B2"]
    custom = next(
        c["data"] for c in of_type(events, "tool_called") if c["data"]["name"] == "apply_patch"
    )
    assert custom["input"]["input"].startswith("*** Begin Patch")
    turns = list_turns(events)
    assert [t["status"] for t in turns] == ["completed", "failed", "completed"]
    failed = of_type(events, "turn_failed")[0]["data"]["error"]
    assert failed == {"code": "interrupted", "message": "aborted: interrupted"}
    assert fork_point(events, 3) == of_type(events, "turn_failed")[0]["event_id"]


def test_not_a_codex_file(tmp_path: Path) -> None:
    f = write_lines(tmp_path / "t.jsonl", [{"hello": "world"}])
    with pytest.raises(CaseError) as exc:
        import_events("codex", f)
    assert exc.value.code == "import_invalid"


@pytest.mark.parametrize("fmt", ["claude-code", "codex"])
@pytest.mark.parametrize(
    ("text", "why"),
    [
        (b"", "the file is empty"),
        (b"\n  \n\r\n", "the file holds only blank lines"),
        (b'garbage\n\n{"a":\n', "no line of the file could be read as a JSON record"),
    ],
)
def test_a_transcript_with_no_record_says_why(
    tmp_path: Path, fmt: str, text: bytes, why: str
) -> None:
    f = tmp_path / "t.jsonl"
    f.write_bytes(text)
    with pytest.raises(CaseError) as exc:
        import_events(fmt, f)
    assert exc.value.code == "import_invalid"
    assert exc.value.message.startswith(f"{why}: "), exc.value.message
    assert exc.value.location.line is None


# --------------------------------------------------------------------------- helpers
def test_timestamps_and_effects() -> None:
    assert parse_ts_ms("1970-01-01T00:00:01.5Z") == 1500
    assert parse_ts_ms("1970-01-01T01:00:00.123456+01:00") == 123
    assert parse_ts_ms("1970-01-01T00:00:02Z") == 2000
    assert parse_ts_ms("yesterday") is None and parse_ts_ms(None) is None
    assert parse_ts_ms("2026-02-30T00:00:00Z") is None
    assert parse_ts_ms("0001-01-01T00:00:00Z") == -62_135_596_800_000
    assert parse_ts_ms(1_700_000_000) == 1_700_000_000_000
    assert tool_effect("Grep") == "read" and tool_effect("Bash") == "write"
    assert tool_effect("WebSearch") == "read" and tool_effect("mcp__x__y") == "write"


BAD_TIMESTAMPS = [
    ("2026-02-30T00:00:00.000Z", "is not a real calendar date"),
    ("10000-01-01T00:00:00.000Z", "four-digit year"),
    ("9999-12-31T23:30:00-01:00", "outside years 0001 to 9999"),
    ("2025-01-01T00:00:00+24:00", "offset +24:00 that does not exist"),
    ("yesterday", "is not an RFC 3339 time"),
    (True, "is not a time"),
    (1e17, "is not an epoch time"),
]


@pytest.mark.parametrize("strict", [False, True])
@pytest.mark.parametrize(("ts", "why"), BAD_TIMESTAMPS)
def test_bad_claude_timestamp_refused_at_its_line(
    tmp_path: Path, ts: Any, why: str, strict: bool
) -> None:
    """A present but impossible timestamp is refused (never replaced by the previous time),
    with or without --strict: log_invalid at the line, pointer /timestamp."""
    f = write_lines(
        tmp_path / "t.jsonl",
        [
            cc("u1", None, "user", "hi"),
            cc("a1", "u1", "assistant", [{"type": "text", "text": "yo"}], stop="end_turn", ts=ts),
        ],
    )
    with pytest.raises(CaseError) as exc:
        import_events("claude-code", f, strict=strict)
    err = exc.value
    assert err.code == "log_invalid" and why in err.message, err.message
    assert (err.location.line, err.location.pointer) == (2, "/timestamp")
    assert err.message.startswith("assistant: timestamp ")


@pytest.mark.parametrize("shape", ["exec", "rollout"])
def test_bad_codex_timestamp_refused_at_its_line(tmp_path: Path, shape: str) -> None:
    if shape == "exec":
        lines: list[Any] = [
            {"type": "thread.started", "thread_id": "t1"},
            {"type": "turn.started", "timestamp": "2026-02-30T10:00:00Z"},
        ]
    else:
        lines = [
            {"timestamp": "2025-01-01T00:00:00Z", "type": "session_meta", "payload": {"id": "s"}},
            {"timestamp": "10000-01-01T00:00:00Z", "type": "event_msg", "payload": {}},
        ]
    f = write_lines(tmp_path / "t.jsonl", lines)
    with pytest.raises(CaseError) as exc:
        import_events("codex", f)
    assert exc.value.code == "log_invalid" and exc.value.location.line == 2


def test_missing_or_null_timestamp_takes_the_previous_time(tmp_path: Path) -> None:
    second = cc("a1", "u1", "assistant", [{"type": "text", "text": "yo"}], stop="end_turn")
    second["timestamp"] = None
    f = write_lines(
        tmp_path / "t.jsonl", [cc("u1", None, "user", "hi", ts="2025-03-04T05:06:07.000Z"), second]
    )
    events = import_events("claude-code", f)
    assert {e["ts"] for e in events} == {"2025-03-04T05:06:07.000Z"}
