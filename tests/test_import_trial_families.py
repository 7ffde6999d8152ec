"""The four trial families (tests/importers/trials/README.md: 19a, 20d, 25a, 29a), each right
value asserted on the trial file and on other forms of the same fault written here
(spec/importers.md sections 2-4): provider errors are never model replies, a Codex turn
completes only when the recording says so, arguments are decoded exactly once, and a reused
uuid never loses a record.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import cli
from imported_cases import run_both, save_turns

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events, import_to_file
from threads_cases.importers.arguments import decode_arguments
from threads_cases.importers.lenient import Note

HERE = Path(__file__).resolve().parent
TRIALS = HERE / "importers" / "trials"


def imported(fmt: str, path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt, path, stats=stats, **kw), stats


def of_type(events: list[dict[str, Any]], t: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == t]


def write(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def save_and_run(tmp_path: Path, fmt: str, src: Path) -> dict[tuple[str, str], str]:
    """Save every turn that has a terminal event, run them on both implementations; the
    verdict per (case, implementation)."""
    log = tmp_path / "log.jsonl"
    import_to_file(fmt, src, log)
    names = save_turns(log, tmp_path / "cases")
    got = {k: str(r["verdict"]) for k, r in run_both(tmp_path / "cases", tmp_path).items()}
    assert {k[0] for k in got} == set(names)
    return got


# ------------------------------------------------------------------ Claude Code records
SESSION = "5e55aaaa-0000-4000-8000-000000000001"


def cc_user(uid: str, parent: str | None, content: Any, ts: str) -> dict[str, Any]:
    return {
        "type": "user",
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": ts,
        "isSidechain": False,
        "message": {"role": "user", "content": content},
    }


def cc_reply(
    uid: str, parent: str, blocks: list[dict[str, Any]], ts: str, *, mid: str, stop: str
) -> dict[str, Any]:
    return {
        "type": "assistant",
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": ts,
        "isSidechain": False,
        "message": {
            "id": mid,
            "model": "claude-sonnet-4-5",
            "role": "assistant",
            "content": blocks,
            "stop_reason": stop,
            "usage": {"input_tokens": 10, "output_tokens": 5},
        },
    }


def cc_error(uid: str, parent: str, text: str, ts: str, **extra: Any) -> dict[str, Any]:
    rec = {
        "type": "assistant",
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": SESSION,
        "timestamp": ts,
        "isSidechain": False,
        "message": {
            "id": f"synthetic-{uid}",
            "model": "<synthetic>",
            "role": "assistant",
            "content": [{"type": "text", "text": text}],
            "stop_reason": "stop_sequence",
            "usage": {"input_tokens": 0, "output_tokens": 0},
        },
    }
    rec.update(extra)
    return rec


# ------------------------------------------------------------------ 19a: provider errors
def test_19a_a_provider_error_ends_the_turn_failed_with_its_text_and_status() -> None:
    events, stats = imported("claude-code", TRIALS / "19a-api-error-mid-turn.jsonl")
    texts = [
        b.get("text", "")
        for e in of_type(events, "model_responded")
        for b in e["data"]["message"]["content"]
    ]
    assert not any("API Error" in t for t in texts)  # never a model reply
    assert len(of_type(events, "model_responded")) == 1  # the Read call only
    (turn,) = list_turns(events)
    assert turn["status"] == "failed" and turn["tools"] == ["Read"]
    (failed,) = of_type(events, "turn_failed")
    assert failed["data"]["error"]["code"] == "provider_error"
    assert failed["data"]["error"]["message"].startswith("API Error: 529 ")
    (kept,) = of_type(events, "x_claude_code.api_error")
    assert kept["data"]["status"] == 529
    assert kept["data"]["error_type"] == "overloaded_error"
    assert kept["data"]["text"] == failed["data"]["error"]["message"]
    assert stats.warnings == []


def test_19a_the_failed_turn_saves_as_a_case_that_replays_the_failure(tmp_path: Path) -> None:
    verdicts = save_and_run(tmp_path, "claude-code", TRIALS / "19a-api-error-mid-turn.jsonl")
    assert set(verdicts.values()) == {"pass"}
    case = json.loads((tmp_path / "cases" / "t1" / "case.json").read_text())
    assert {"type": "turn_failed", "data": {"error": {"code": "provider_error"}}} in case["expect"][
        "must"
    ]


def test_19a_other_forms_first_reply_older_cli_and_outside_a_turn(tmp_path: Path) -> None:
    """The error as the turn's first reply (an older CLI: only ``<synthetic>`` and the
    ``API Error`` text, no flag), a rate-limit record with the CLI's ``error`` label, an
    error outside any turn; the turn after an error is a turn of its own and completes."""
    a, b = "aaaa0000-0000-4000-8000-0000000000", "bbbb0000-0000-4000-8000-0000000000"
    src = write(
        tmp_path / "s.jsonl",
        [
            cc_error(f"{a}00", "", "API Error (Request timed out.)", "2026-03-02T09:00:00Z"),
            cc_user(f"{a}01", None, "Hello", "2026-03-02T09:00:01Z"),
            cc_error(
                f"{a}02",
                f"{a}01",
                "API Error: 500 Internal server error",
                "2026-03-02T09:00:02Z",
            ),
            cc_user(f"{b}03", f"{a}02", "continue", "2026-03-02T09:00:03Z"),
            cc_reply(
                f"{b}04",
                f"{b}03",
                [{"type": "text", "text": "Hi."}],
                "2026-03-02T09:00:04Z",
                mid="msg_1",
                stop="end_turn",
            ),
            cc_user(f"{b}05", f"{b}04", "Again", "2026-03-02T09:00:05Z"),
            cc_error(
                f"{b}06",
                f"{b}05",
                "API Error: Rate limit reached",
                "2026-03-02T09:00:06Z",
                isApiErrorMessage=True,
                error="rate_limit",
            ),
        ],
    )
    src.write_text(src.read_text().replace('"parentUuid": ""', '"parentUuid": null'))
    events, _ = imported("claude-code", src)
    assert [t["status"] for t in list_turns(events)] == ["failed", "completed", "failed"]
    assert [e["data"]["error"]["code"] for e in of_type(events, "turn_failed")] == [
        "provider_error",
        "provider_error",
    ]
    errors = [e["data"] for e in of_type(events, "x_claude_code.api_error")]
    assert [e.get("status") for e in errors] == [None, 500, None]
    assert errors[2]["error"] == "rate_limit"
    assert [len(e["data"]["message"]["content"]) for e in of_type(events, "model_responded")] == [1]
    assert set(save_and_run(tmp_path, "claude-code", src).values()) == {"pass"}


def rollout(records: list[tuple[str, dict[str, Any]]], *, version: str = "0.120.0") -> list[Any]:
    lines: list[dict[str, Any]] = [
        {
            "timestamp": "2026-03-02T09:00:00.000Z",
            "type": "session_meta",
            "payload": {"id": "0199ffff-0000-7000-8000-000000000001", "cli_version": version},
        },
        {
            "timestamp": "2026-03-02T09:00:00.100Z",
            "type": "turn_context",
            "payload": {"model": "gpt-5.1-codex", "cwd": "/w"},
        },
    ]
    for k, (t, payload) in enumerate(records):
        ts = f"2026-03-02T09:00:{k + 1:02d}.000Z"
        lines.append({"timestamp": ts, "type": t, "payload": payload})
    return lines


def user(text: str) -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "message", "role": "user", "content": text})


def said(text: str) -> tuple[str, dict[str, Any]]:
    content = [{"type": "output_text", "text": text}]
    return ("response_item", {"type": "message", "role": "assistant", "content": content})


def event(t: str, **kw: Any) -> tuple[str, dict[str, Any]]:
    return ("event_msg", {"type": t, **kw})


def call(call_id: str, arguments: Any) -> tuple[str, dict[str, Any]]:
    payload = {"type": "function_call", "name": "get", "arguments": arguments, "call_id": call_id}
    return ("response_item", payload)


def output(call_id: str, text: str = "ok") -> tuple[str, dict[str, Any]]:
    return ("response_item", {"type": "function_call_output", "call_id": call_id, "output": text})


def test_19a_a_codex_error_event_after_the_model_output_fails_the_turn(tmp_path: Path) -> None:
    src = write(
        tmp_path / "rollout.jsonl",
        rollout(
            [
                user("one"),
                said("working"),
                event("error", message="unexpected status 500: upstream overloaded"),
                user("two"),
                event("error", message="stream disconnected"),
                said("done after a retry"),
                event("task_complete", last_agent_message="done after a retry"),
                user("three"),
                said("on it"),
                event("error", message="unexpected status 429: rate limited"),
                event("task_complete", last_agent_message=None),
            ]
        ),
    )
    events, _ = imported("codex", src)
    turns = list_turns(events)
    assert [t["status"] for t in turns] == ["failed", "completed", "failed"]
    assert of_type(events, "turn_failed")[1]["data"]["error"]["code"] == "provider_error"
    assert of_type(events, "turn_failed")[0]["data"]["error"] == {
        "code": "provider_error",
        "message": "unexpected status 500: upstream overloaded",
    }
    assert len(of_type(events, "x_codex.error")) == 3  # all kept


# ------------------------------------------------------------------ 20d: turn ends
def test_20d_a_rollout_stopping_before_task_complete_is_an_interrupted_turn() -> None:
    events, stats = imported("codex", TRIALS / "20d-rollout-no-task-complete.jsonl")
    (turn,) = list_turns(events)
    assert turn["status"] == "failed"
    assert of_type(events, "turn_failed")[0]["data"]["error"]["code"] == "interrupted"
    assert any("before its task_complete event" in n for n in stats.notes)
    # the last reply may have gone on past the end of the file: it says so, not end_turn
    assert [e["data"]["stop_reason"] for e in of_type(events, "model_responded")][-1] == (
        "interrupted"
    )


def test_20d_the_interrupted_turn_saves_and_passes(tmp_path: Path) -> None:
    src = TRIALS / "20d-rollout-no-task-complete.jsonl"
    assert set(save_and_run(tmp_path, "codex", src).values()) == {"pass"}


def test_20d_other_forms_mid_file_and_writers_that_show_it(tmp_path: Path) -> None:
    """A turn without task_complete before the next turn; a file of an old version that
    writes task_started (its writer records turn ends); an old writer that records neither,
    read as its lines say."""
    body = [user("a"), said("partial"), user("b"), said("full"), event("task_complete")]
    src = write(tmp_path / "mid.jsonl", rollout(body))
    events, stats = imported("codex", src)
    assert [t["status"] for t in list_turns(events)] == ["failed", "completed"]
    assert any("the next turn starts before its task_complete event" in n for n in stats.notes)
    # the file goes on after that turn: its reply was not cut
    assert [e["data"]["stop_reason"] for e in of_type(events, "model_responded")] == [
        "end_turn",
        "end_turn",
    ]

    body = [event("task_started"), user("a"), said("partial")]
    src = write(tmp_path / "started.jsonl", rollout(body, version="0.44.0"))
    events, _ = imported("codex", src)
    assert [t["status"] for t in list_turns(events)] == ["failed"]

    src = write(tmp_path / "old.jsonl", rollout([user("a"), said("whole")], version="0.44.0"))
    events, stats = imported("codex", src)
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert stats.notes == []


def test_20d_the_cli_lists_the_turn_as_interrupted_with_a_note(tmp_path: Path) -> None:
    src = TRIALS / "20d-rollout-no-task-complete.jsonl"
    p = cli("import", "codex", src, "-o", "t.jsonl", "--format", "json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert len(out["notes"]) == 1 and "task_complete" in out["notes"][0]


# ------------------------------------------------------------------ 25a: arguments
def test_25a_arguments_are_decoded_exactly_once_and_twice_encoded_ones_warned() -> None:
    events, stats = imported("codex", TRIALS / "25a-rollout-string-and-double.jsonl")
    inputs = [e["data"]["input"] for e in of_type(events, "tool_called")]
    assert inputs[:2] == [{"city": "Bengaluru"}, {"city": "Pune"}]
    assert inputs[2]["input"].startswith("*** Begin Patch")  # a custom tool's text input
    assert [(w.line, w.code, w.reason) for w in stats.warnings] == [
        (7, "import_repaired", "double_encoded")
    ]
    assert "call_w2" in stats.warnings[0].message


@pytest.mark.parametrize(
    ("arguments", "expected", "reasons"),
    [
        ('{"city": "Pune"}', {"city": "Pune"}, []),
        ({"city": "Pune"}, {"city": "Pune"}, []),  # already an object
        ("", {}, []),  # a call without arguments
        (json.dumps(json.dumps({"a": 1})), {"a": 1}, ["double_encoded"]),
        # a string value holding JSON is the tool's own: decoded once, never further
        ('{"q": "{\\"a\\": 1}"}', {"q": '{"a": 1}'}, []),
        ("city=Pune", {"arguments": "city=Pune"}, ["arguments_not_json"]),
        ('"just text"', {"arguments": '"just text"'}, ["arguments_not_json"]),
        ("[1, 2]", {"arguments": "[1, 2]"}, ["arguments_not_json"]),
        # three encodings: decoded twice at most, then kept as the text it was
        (
            json.dumps(json.dumps(json.dumps({"a": 1}))),
            {"arguments": json.dumps(json.dumps(json.dumps({"a": 1})))},
            ["arguments_not_json"],
        ),
        ('{"a": 1, "a": 2}', {"a": 2}, ["duplicate_key"]),
        (json.dumps('{"a": 1, "a": 2}'), {"a": 2}, ["duplicate_key", "double_encoded"]),
    ],
)
def test_25a_decode_arguments(arguments: Any, expected: Any, reasons: list[str]) -> None:
    notes: list[Note] = []
    assert decode_arguments(arguments, notes) == expected
    assert [n.reason for n in notes] == reasons


def test_25a_other_forms_in_a_rollout_and_an_exec_stream(tmp_path: Path) -> None:
    body = [
        user("go"),
        call("c1", json.dumps(json.dumps({"id": 7}))),
        output("c1"),
        call("c2", "id=7"),
        output("c2"),
        said("done"),
        event("task_complete"),
    ]
    events, stats = imported("codex", write(tmp_path / "r.jsonl", rollout(body)))
    assert [e["data"]["input"] for e in of_type(events, "tool_called")] == [
        {"id": 7},
        {"arguments": "id=7"},
    ]
    assert [(w.line, w.reason) for w in stats.warnings] == [
        (4, "double_encoded"),
        (6, "arguments_not_json"),
    ]
    item = {
        "id": "item_1",
        "type": "mcp_tool_call",
        "server": "tracker",
        "tool": "get",
        "arguments": json.dumps(json.dumps({"ticket": 3})),
        "result": {"content": [{"type": "text", "text": "ok"}]},
        "status": "completed",
    }
    src = write(
        tmp_path / "codex-exec.jsonl",
        [
            {"type": "thread.started", "thread_id": "th-1"},
            {"type": "turn.started"},
            {"type": "item.completed", "item": item},
            {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "ok"}},
            {"type": "turn.completed", "usage": {"input_tokens": 5, "output_tokens": 2}},
        ],
    )
    events, stats = imported("codex", src, prompt="get it")
    assert of_type(events, "tool_called")[0]["data"]["input"] == {"ticket": 3}
    assert [(w.line, w.reason) for w in stats.warnings] == [(3, "double_encoded")]


# ------------------------------------------------------------------ 29a: reused ids
def test_29a_a_reused_uuid_keeps_both_prompts_as_turns_of_their_own() -> None:
    events, stats = imported("claude-code", TRIALS / "29a-cc-uuid-reused.jsonl")
    turns = list_turns(events)
    assert [t["text"] for t in turns] == [
        "First question: what is 2+2?",
        "Second question: what is 3+3?",
    ]
    assert [t["status"] for t in turns] == ["completed", "completed"]
    replies = [
        e["data"]["message"]["content"][0]["text"] for e in of_type(events, "model_responded")
    ]
    assert replies == ["4", "6"]  # each reply in its own turn
    (w,) = stats.warnings
    assert (w.line, w.code, w.reason) == (3, "import_repaired", "reused_id")
    assert "of line 1 " in w.message  # names both lines
    # --strict refuses whatever the lenient reading warns about, at the line it names
    with pytest.raises(CaseError) as exc:
        imported("claude-code", TRIALS / "29a-cc-uuid-reused.jsonl", strict=True)
    assert exc.value.code == "import_invalid" and exc.value.location.line == 3
    assert "reused_id" in exc.value.message


def test_29a_every_turn_saves_and_passes(tmp_path: Path) -> None:
    verdicts = save_and_run(tmp_path, "claude-code", TRIALS / "29a-cc-uuid-reused.jsonl")
    assert len(verdicts) == 4 and set(verdicts.values()) == {"pass"}


def test_29a_other_forms_a_reused_reply_uuid_and_a_resume_copy(tmp_path: Path) -> None:
    """A tool-result line reusing the reply's uuid keeps its result (the call is answered,
    the turn completes); a line copied by a resume (same uuid, type and time) is still
    dropped as a copy, with no warning."""
    u, r, x = (f"cccc0000-0000-4000-8000-0000000000{k:02d}" for k in (1, 2, 3))
    call_block = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"p": "a"}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A"}
    first = cc_user(u, None, "Read a", "2026-03-02T09:00:01Z")
    records = [
        first,
        cc_reply(r, u, [call_block], "2026-03-02T09:00:02Z", mid="m1", stop="tool_use"),
        cc_user(r, r, [result], "2026-03-02T09:00:03Z"),  # reuses the reply's uuid
        cc_reply(
            x,
            r,
            [{"type": "text", "text": "It says A."}],
            "2026-03-02T09:00:04Z",
            mid="m2",
            stop="end_turn",
        ),
        first,  # a resume's copy
    ]
    events, stats = imported("claude-code", write(tmp_path / "s.jsonl", records))
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    assert of_type(events, "tool_result")[0]["data"]["content"] == "A"
    assert [(w.line, w.reason) for w in stats.warnings] == [(3, "reused_id")]
    assert stats.skipped["line repeating an earlier uuid"] == 1


@pytest.mark.parametrize(
    ("fmt", "name", "turn", "end"),
    [
        ("claude-code", "19a-api-error-mid-turn.jsonl", 1, "provider_error"),
        ("codex", "20d-rollout-no-task-complete.jsonl", 1, "interrupted"),
        ("codex", "25a-rollout-string-and-double.jsonl", 1, None),
        ("claude-code", "29a-cc-uuid-reused.jsonl", 2, None),
    ],
)
def test_the_cli_saves_each_trial_from_its_transcript(
    tmp_path: Path, fmt: str, name: str, turn: int, end: str | None
) -> None:
    """``save --from FORMAT`` (and ``--from auto``) saves the trial's turn with drafted
    matchers; the case passes on both implementations."""
    src = TRIALS / name
    for k, how in enumerate((fmt, "auto")):
        p = cli(
            "save",
            "--from",
            how,
            src,
            "--turn",
            str(turn),
            "--name",
            f"c{k}",
            "--dir",
            "cases",
            cwd=tmp_path,
        )
        assert p.returncode == 0, p.stderr
    must = json.loads((tmp_path / "cases" / "c0" / "case.json").read_text())["expect"]["must"]
    if end is not None:
        assert {"type": "turn_failed", "data": {"error": {"code": end}}} in must
    p = cli("run", "cases", "--impl", "threads-py", "--impl", "threads-ts", cwd=tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
