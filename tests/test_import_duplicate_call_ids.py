"""Two tool calls of one reply with the same id (spec/importers.md section 4, "Duplicate call
ids"): in every importer that pairs results with calls by id, the results pair by
occurrence within the reply (the first result with id X answers the first call with id X,
the second the second), each call keeps its own result, the later calls are written as
``X-dup2``... (so the thread, whose results name their call by id alone, tells the calls
apart), and an ``import_repaired``
warning ``duplicate_call_id`` names the place and the id; ``--strict`` refuses it.

Every recording here is written for these tests (ids, paths and texts invented); the
OpenHands and Codex ones are the repository's own fixtures with one id made to repeat.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from imported_cases import IMPLEMENTATIONS, run_both, save_turns

from threads_cases.case.turns import list_turns
from threads_cases.core.errors import CaseError
from threads_cases.importers import Stats, import_events, import_to_file

HERE = Path(__file__).resolve().parent / "importers"
ANTHROPIC_URI = "https://api.anthropic.com/v1/messages"
CHAT_URI = "https://api.openai.com/v1/chat/completions"
RESPONSES_URI = "https://api.openai.com/v1/responses"


def imported(fmt: str, path: Path, **kw: Any) -> tuple[list[dict[str, Any]], Stats]:
    stats = Stats()
    return import_events(fmt, path, stats=stats, **kw), stats


def calls_and_results(events: list[dict[str, Any]]) -> list[tuple[str, Any, Any]]:
    """``(tool_use_id, input, result content)`` of each call, in call order."""
    out: dict[str, list[Any]] = {}
    for e in events:
        d = e["data"]
        if e["type"] == "tool_called":
            out[d["tool_use_id"]] = [d["input"], None]
        elif e["type"] == "tool_result":
            out[d["tool_use_id"]][1] = d["content"]
    return [(cid, v[0], v[1]) for cid, v in out.items()]


def duplicates(stats: Stats) -> list[str]:
    return [w.message for w in stats.warnings if w.reason == "duplicate_call_id"]


def refused_in_strict(fmt: str, path: Path, *needles: str) -> None:
    with pytest.raises(CaseError) as refused:
        import_events(fmt, path, strict=True)
    assert refused.value.code == "import_invalid"
    for needle in needles:
        assert needle in refused.value.message, refused.value.message


def saves_and_passes(fmt: str, src: Path, tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    import_to_file(fmt, src, log)
    names = save_turns(log, tmp_path / "cases", completed=True)
    assert names
    verdicts = run_both(tmp_path / "cases", tmp_path)
    for name in names:
        for impl in IMPLEMENTATIONS:
            assert verdicts[(name, impl)]["verdict"] == "pass", verdicts[(name, impl)]


# ------------------------------------------------------------------ VCR
def interaction(uri: str, body: Any, resp: Any) -> dict[str, Any]:
    return {
        "request": {"method": "POST", "uri": uri, "body": json.dumps(body)},
        "response": {"status": {"code": 200}, "headers": {}, "body": {"string": json.dumps(resp)}},
    }


def cassette(path: Path, interactions: list[dict[str, Any]]) -> Path:
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}), "utf-8")
    return path


def anthropic_cassette(path: Path, *, answered: bool = True) -> Path:
    """One response calling ``read`` twice with the id toolu_1; the next request answers
    both, B's result first in the message only by its position: they pair in order."""
    calls = [
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.txt"}},
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "b.txt"}},
    ]
    first = {
        "id": "msg_1",
        "model": "m",
        "content": calls,
        "stop_reason": "tool_use",
        "usage": {"input_tokens": 5, "output_tokens": 9},
    }
    ask = [{"role": "user", "content": "Read a.txt and b.txt"}]
    results = [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "A says hi"},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "B says bye"},
    ]
    later = [*ask, {"role": "assistant", "content": calls}, {"role": "user", "content": results}]
    done = {
        "id": "msg_2",
        "model": "m",
        "content": [{"type": "text", "text": "Hi, then bye."}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 9, "output_tokens": 4},
    }
    inters = [interaction(ANTHROPIC_URI, {"model": "m", "messages": ask}, first)]
    if answered:
        inters.append(interaction(ANTHROPIC_URI, {"model": "m", "messages": later}, done))
    return cassette(path, inters)


def test_vcr_anthropic_results_pair_with_repeated_ids_by_occurrence(tmp_path: Path) -> None:
    src = anthropic_cassette(tmp_path / "dup.yaml")
    events, stats = imported("vcr", src)
    assert calls_and_results(events) == [
        ("toolu_1", {"path": "a.txt"}, "A says hi"),
        ("toolu_1-dup2", {"path": "b.txt"}, "B says bye"),
    ]
    # the reply's content names the calls as their events do
    reply = next(e for e in events if e["type"] == "model_responded")
    assert [b["id"] for b in reply["data"]["message"]["content"]] == ["toolu_1", "toolu_1-dup2"]
    (message,) = duplicates(stats)
    assert message.startswith("interaction 1 response: 2 tool calls of one reply have the id")
    assert "'toolu_1'" in message and "'toolu_1-dup2'" in message
    assert [w.code for w in stats.warnings] == ["import_repaired"]
    assert [t["status"] for t in list_turns(events)] == ["completed"]
    refused_in_strict("vcr", src, "interaction 1 response", "'toolu_1'")
    saves_and_passes("vcr", src, tmp_path)


def test_vcr_unanswered_repeated_ids_import_as_an_interrupted_turn(tmp_path: Path) -> None:
    """No result for either call: the turn stops at the first call, as a replay does
    (spec/importers.md 1), and the reply's content still tells its two calls apart."""
    events, stats = imported("vcr", anthropic_cassette(tmp_path / "open.yaml", answered=False))
    assert [(c, r) for c, _, r in calls_and_results(events)] == [("toolu_1", None)]
    reply = next(e for e in events if e["type"] == "model_responded")
    assert [b["id"] for b in reply["data"]["message"]["content"]] == ["toolu_1", "toolu_1-dup2"]
    assert [t["status"] for t in list_turns(events)] == ["failed"]
    assert len(duplicates(stats)) == 1


def test_vcr_openai_chat_and_responses_repeated_call_ids(tmp_path: Path) -> None:
    def chat_call(n: int) -> dict[str, Any]:
        return {
            "id": "call_x",
            "type": "function",
            "function": {"name": "lookup", "arguments": json.dumps({"ticket": n})},
        }

    msg = {"role": "assistant", "content": None, "tool_calls": [chat_call(7), chat_call(8)]}
    ask = [{"role": "user", "content": "Tickets 7 and 8?"}]
    later = [
        *ask,
        msg,
        {"role": "tool", "tool_call_id": "call_x", "content": "7: closed"},
        {"role": "tool", "tool_call_id": "call_x", "content": "8: open"},
    ]
    chat = cassette(
        tmp_path / "chat.yaml",
        [
            interaction(
                CHAT_URI,
                {"model": "m", "messages": ask},
                {"choices": [{"message": msg, "finish_reason": "tool_calls"}]},
            ),
            interaction(
                CHAT_URI,
                {"model": "m", "messages": later},
                {
                    "choices": [
                        {
                            "message": {"role": "assistant", "content": "One each."},
                            "finish_reason": "stop",
                        }
                    ]
                },
            ),
        ],
    )
    events, stats = imported("vcr", chat)
    assert calls_and_results(events) == [
        ("call_x", {"ticket": 7}, "7: closed"),
        ("call_x-dup2", {"ticket": 8}, "8: open"),
    ]
    assert len(duplicates(stats)) == 1

    def fc(cmd: str) -> dict[str, Any]:
        return {
            "type": "function_call",
            "call_id": "call_0",
            "name": "run",
            "arguments": json.dumps({"cmd": cmd}),
        }

    def out(text: str) -> dict[str, Any]:
        return {"type": "function_call_output", "call_id": "call_0", "output": text}

    first = {"id": "resp_1", "status": "completed", "output": [fc("make"), fc("make test")]}
    done = {
        "id": "resp_2",
        "status": "completed",
        "output": [
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Built and tested."}],
            }
        ],
    }
    responses = cassette(
        tmp_path / "responses.yaml",
        [
            interaction(RESPONSES_URI, {"model": "m", "input": "Build and test"}, first),
            interaction(
                RESPONSES_URI,
                {
                    "model": "m",
                    "previous_response_id": "resp_1",
                    "input": [out("built"), out("3 passed")],
                },
                done,
            ),
        ],
    )
    events, stats = imported("vcr", responses)
    assert calls_and_results(events) == [
        ("call_0", {"cmd": "make"}, "built"),
        ("call_0-dup2", {"cmd": "make test"}, "3 passed"),
    ]
    assert len(duplicates(stats)) == 1
    saves_and_passes("vcr", responses, tmp_path / "r")


def test_vcr_ids_reused_by_other_replies_are_no_duplicates(tmp_path: Path) -> None:
    """The scoping that already held: an id reused by a later response is that response's
    own call, written as it is, with no warning."""
    events, stats = imported("vcr", HERE / "vcr" / "anthropic-messages-tools.yaml")
    assert duplicates(stats) == []
    assert not any(c.endswith("-dup2") for c, _, _ in calls_and_results(events))


def test_a_suffix_the_reply_already_holds_is_skipped(tmp_path: Path) -> None:
    calls = [
        {"type": "tool_use", "id": "t", "name": "f", "input": {"n": 1}},
        {"type": "tool_use", "id": "t-dup2", "name": "f", "input": {"n": 2}},
        {"type": "tool_use", "id": "t", "name": "f", "input": {"n": 3}},
    ]
    first = {"id": "m1", "model": "m", "content": calls, "stop_reason": "tool_use", "usage": {}}
    ask = [{"role": "user", "content": "go"}]
    res = [
        {"type": "tool_result", "tool_use_id": i, "content": c}
        for i, c in (("t", "one"), ("t-dup2", "two"), ("t", "three"))
    ]
    later = [*ask, {"role": "assistant", "content": calls}, {"role": "user", "content": res}]
    done = {"id": "m2", "model": "m", "content": [{"type": "text", "text": "ok"}], "usage": {}}
    src = cassette(
        tmp_path / "taken.yaml",
        [
            interaction(ANTHROPIC_URI, {"model": "m", "messages": ask}, first),
            interaction(ANTHROPIC_URI, {"model": "m", "messages": later}, done),
        ],
    )
    events, _ = imported("vcr", src)
    assert calls_and_results(events) == [
        ("t", {"n": 1}, "one"),
        ("t-dup2", {"n": 2}, "two"),
        ("t-dup3", {"n": 3}, "three"),
    ]


# ------------------------------------------------------------------ Claude Code
def _cc(uid: str, parent: str | None, kind: str, message: dict[str, Any], sec: int) -> str:
    return json.dumps(
        {
            "parentUuid": parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": "/w",
            "sessionId": "s-dup",
            "version": "1.0.113",
            "type": kind,
            "uuid": uid,
            "timestamp": f"2026-01-05T10:00:{sec:02d}.000Z",
            "message": message,
        }
    )


def test_claude_code_two_calls_of_one_record_with_one_id(tmp_path: Path) -> None:
    calls = [
        {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "/w/a"}},
        {"type": "tool_use", "id": "toolu_9", "name": "Read", "input": {"file_path": "/w/b"}},
    ]

    def result(text: str) -> dict[str, Any]:
        return {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": text}],
        }

    lines = [
        _cc("u1", None, "user", {"role": "user", "content": "Read a and b"}, 1),
        _cc(
            "u2",
            "u1",
            "assistant",
            {
                "id": "msg_1",
                "role": "assistant",
                "model": "claude-x",
                "content": calls,
                "stop_reason": "tool_use",
                "usage": {"input_tokens": 3, "output_tokens": 5},
            },
            2,
        ),
        _cc("u3", "u2", "user", result("alpha"), 3),
        _cc("u4", "u3", "user", result("beta"), 4),
        _cc(
            "u5",
            "u4",
            "assistant",
            {
                "id": "msg_2",
                "role": "assistant",
                "model": "claude-x",
                "content": [{"type": "text", "text": "alpha, beta"}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 5},
            },
            5,
        ),
    ]
    src = tmp_path / "dup.jsonl"
    src.write_text("\n".join(lines) + "\n", "utf-8")
    events, stats = imported("claude-code", src)
    assert calls_and_results(events) == [
        ("toolu_9", {"file_path": "/w/a"}, "alpha"),
        ("toolu_9-dup2", {"file_path": "/w/b"}, "beta"),
    ]
    (message,) = duplicates(stats)
    assert message.startswith("assistant record of message msg_1: ")
    assert [w.line for w in stats.warnings] == [2]
    refused_in_strict("claude-code", src, "'toolu_9'")
    saves_and_passes("claude-code", src, tmp_path)


# ------------------------------------------------------------------ Codex
def test_codex_rollout_a_second_call_with_an_id_of_its_reply(tmp_path: Path) -> None:
    """The parallel fixture with its second call's id made the first's: both calls are kept
    (the second one was dropped) and the outputs answer them in order. A call repeating one
    of its reply whole stays a copy, written once."""
    text = (HERE / "codex-rollout-parallel.jsonl").read_text("utf-8").replace("call_B2", "call_B1")
    src = tmp_path / "rollout.jsonl"
    src.write_text(text, "utf-8")
    events, stats = imported("codex", src)
    every = len(calls_and_results(events))
    got = calls_and_results(events)[:2]
    assert [(c, i["command"]) for c, i, _ in got] == [
        ("call_B1", ["cat", "package.json"]),
        ("call_B1-dup2", ["cat", "pyproject.toml"]),
    ]
    # the pyproject output comes first in the file: by occurrence it answers the first call
    assert ["version = " in str(r) for _, _, r in got] == [True, False]
    assert len(duplicates(stats)) == 1
    refused_in_strict("codex", src, "'call_B1'")

    lines = text.splitlines()
    copy = next(k for k, ln in enumerate(lines) if '"call_id":"call_B1"' in ln)
    lines.insert(copy + 1, lines[copy])
    src.write_text("\n".join(lines) + "\n", "utf-8")
    events, stats = imported("codex", src)
    assert len(calls_and_results(events)) == every  # the copy added no call
    assert len(duplicates(stats)) == 1


def test_codex_exec_two_completed_items_with_one_id(tmp_path: Path) -> None:
    def done(cmd: str, out: str) -> dict[str, Any]:
        return {
            "type": "item.completed",
            "item": {
                "id": "item_1",
                "type": "command_execution",
                "command": cmd,
                "aggregated_output": out,
                "exit_code": 0,
                "status": "completed",
            },
        }

    lines = [
        {"type": "thread.started", "thread_id": "0199-dup"},
        {"type": "turn.started"},
        done("ls", "a b"),
        done("pwd", "/w"),
        {
            "type": "item.completed",
            "item": {"id": "item_2", "type": "agent_message", "text": "Two files in /w."},
        },
        {"type": "turn.completed", "usage": {"input_tokens": 10, "output_tokens": 3}},
    ]
    src = tmp_path / "exec.jsonl"
    src.write_text("".join(json.dumps(x) + "\n" for x in lines), "utf-8")
    events, stats = imported("codex", src)
    assert [(c, r) for c, _, r in calls_and_results(events)] == [
        ("item_1", "a b"),
        ("item_1-dup2", "/w"),
    ]
    assert len(duplicates(stats)) == 1


# ------------------------------------------------------------------ SWE-agent
def test_swe_agent_tool_calls_of_one_message_with_one_id(tmp_path: Path) -> None:
    def call(cmd: str) -> dict[str, Any]:
        return {
            "id": "call_S",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": cmd})},
        }

    history = [
        {"role": "system", "content": "You fix bugs."},
        {"role": "user", "content": "Fix sizes.py"},
        {"role": "assistant", "content": "Look first.", "tool_calls": [call("ls"), call("cat a")]},
        {"role": "tool", "content": "a", "tool_call_ids": ["call_S"]},
        {"role": "tool", "content": "print(1)", "tool_call_ids": ["call_S"]},
        {
            "role": "assistant",
            "content": "Submit.",
            "tool_calls": [
                {
                    "id": "call_T",
                    "type": "function",
                    "function": {"name": "submit", "arguments": "{}"},
                }
            ],
        },
    ]
    src = tmp_path / "dup.traj"
    src.write_text(json.dumps({"history": history, "info": {"exit_status": "submitted"}}))
    events, stats = imported("swe-agent", src)
    assert calls_and_results(events) == [
        ("call_S", {"command": "ls"}, "a"),
        ("call_S-dup2", {"command": "cat a"}, "print(1)"),
    ]
    (message,) = duplicates(stats)
    assert message.startswith("history[2]: ")
    refused_in_strict("swe-agent", src, "history[2]")
    saves_and_passes("swe-agent", src, tmp_path)


# ------------------------------------------------------------------ OpenHands
def test_openhands_actions_of_one_response_with_one_tool_call_id(tmp_path: Path) -> None:
    """The function-calling fixture with its second call's id made the first's: each action
    takes its own tool call's arguments (the n-th of that id) and its observation (by
    ``cause``)."""
    doc = (HERE / "openhands" / "function-calling.json").read_text("utf-8")
    src = tmp_path / "oh.json"
    src.write_text(doc.replace("toolu_02", "toolu_01"), "utf-8")
    events, stats = imported("openhands", src)
    got = calls_and_results(events)[:2]
    assert [(c, i.get("command"), i.get("path")) for c, i, _ in got] == [
        ("toolu_01", "ls tests", None),
        ("toolu_01-dup2", "view", "/workspace/calc.py"),
    ]
    assert got[0][2] == "test_calc.py" and "def add" in str(got[1][2])
    assert [m.split(":")[0] for m in duplicates(stats)] == ["event 7 (/6)"]
    refused_in_strict("openhands", src, "'toolu_01'")


def test_openhands_v1_repeated_tool_call_id_by_action_id_and_by_occurrence(
    tmp_path: Path,
) -> None:
    """Two ActionEvents of one LLM response with one tool_call_id: an observation naming its
    action answers that action; one naming only the tool_call_id answers the first call of
    that id not answered yet."""
    events_doc = json.loads((HERE / "openhands" / "v1" / "conversation.json").read_text())
    text = json.dumps(events_doc).replace("toolu_v1_02", "toolu_v1_01")
    src = tmp_path / "v1.json"
    src.write_text(text, "utf-8")
    events, stats = imported("openhands", src)
    by_id = {c: r for c, _, r in calls_and_results(events)}
    assert "calc.py\ntest_calc.py" in str(by_id["toolu_v1_01"])  # the terminal's output
    assert "def add" in str(by_id["toolu_v1_01-dup2"])  # the editor's view
    assert len(duplicates(stats)) == 1

    doc = json.loads(text)
    for ev in doc:  # the observations name only the tool_call_id: by occurrence
        if ev.get("kind") == "ObservationEvent" and ev.get("tool_call_id") == "toolu_v1_01":
            ev.pop("action_id", None)
    src.write_text(json.dumps(doc), "utf-8")
    events, _ = imported("openhands", src)
    by_id = {c: r for c, _, r in calls_and_results(events)}
    # the editor's observation comes first in the file: it answers the first call
    assert "def add" in str(by_id["toolu_v1_01"])
    assert "calc.py\ntest_calc.py" in str(by_id["toolu_v1_01-dup2"])


# ------------------------------------------------------------------ inspect-ai
def test_inspect_ai_tool_events_with_one_id_in_one_reply(tmp_path: Path) -> None:
    def call(path: str) -> dict[str, Any]:
        return {
            "id": "tc1",
            "function": "read_file",
            "arguments": {"path": path},
            "type": "function",
        }

    task = [{"role": "user", "content": "Read a and b"}]
    reply = {"role": "assistant", "content": "", "tool_calls": [call("a"), call("b")]}

    def model(inp: list[Any], message: dict[str, Any], sec: int) -> dict[str, Any]:
        return {
            "timestamp": f"2026-03-05T08:00:0{sec}Z",
            "event": "model",
            "model": "m",
            "input": inp,
            "output": {
                "model": "m",
                "choices": [
                    {
                        "message": message,
                        "stop_reason": "tool_calls" if message.get("tool_calls") else "stop",
                    }
                ],
            },
        }

    def tool(result: str, sec: int) -> dict[str, Any]:
        return {
            "timestamp": f"2026-03-05T08:00:0{sec}Z",
            "event": "tool",
            "type": "function",
            "id": "tc1",
            "function": "read_file",
            "arguments": {},
            "result": result,
        }

    tool_msgs = [{"role": "tool", "tool_call_id": "tc1", "content": c} for c in ("A", "B")]
    events_list = [
        model(task, reply, 1),
        tool("A", 2),
        tool("B", 3),
        model([*task, reply, *tool_msgs], {"role": "assistant", "content": "A and B."}, 4),
    ]
    log = {
        "version": 2,
        "status": "success",
        "eval": {"task": "t", "model": "m", "created": "2026-03-05T08:00:00Z"},
        "samples": [
            {"id": "s1", "epoch": 1, "input": "Read a and b", "target": "", "events": events_list}
        ],
    }
    src = tmp_path / "dup.json"
    src.write_text(json.dumps(log), "utf-8")
    events, stats = imported("inspect-ai", src)
    assert calls_and_results(events) == [
        ("tc1", {"path": "a"}, "A"),
        ("tc1-dup2", {"path": "b"}, "B"),
    ]
    (message,) = duplicates(stats)
    assert "#/events/0: " in message
    refused_in_strict("inspect-ai", src, "'tc1'")
    saves_and_passes("inspect-ai", src, tmp_path)
