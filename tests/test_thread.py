"""The Thread handle: create, run_turn, fork, snapshot/restore, open, write_log."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
from conftest import SYSTEM, WEATHER_CALLS, build_thread, make_agent, new_thread

from threads_cases.case.sandbox import sha256_hex
from threads_cases.core.errors import CaseError
from threads_cases.core.log import read_log, reduce_log
from threads_cases.core.reducer import reduce
from threads_cases.reference.agent import ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import parse_ts
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread


def types(events: list[dict]) -> list[str]:  # type: ignore[type-arg]
    return [e["type"] for e in events]


def test_create_records_thread_started() -> None:
    t = Thread.create(agent=make_agent(), thread_id="thread-a", metadata={"user": "ana"})
    (ev,) = t.events
    assert ev["type"] == "thread_started" and ev["seq"] == 0 and ev["thread_id"] == "thread-a"
    assert ev["data"] == {"agent": make_agent().to_json(), "metadata": {"user": "ana"}}
    assert ev["branch_id"] == "main" and ev["epoch"] == 0
    assert t.state["agent"]["system"] == SYSTEM
    assert t.state["status"] == "idle"
    assert isinstance(t.sandbox, FakeSandbox)
    # events are a read-only view (deep copies are mutable), the state is a copy
    with pytest.raises(TypeError, match="read-only"):
        t.events[0]["type"] = "changed"
    with pytest.raises(TypeError, match="read-only"):
        t.events[0]["data"]["metadata"]["user"] = "changed"
    with pytest.raises(TypeError, match="read-only"):
        t.events[0]["data"]["agent"]["tools"].append({})
    mutable = copy.deepcopy(t.events)
    mutable[0]["type"] = "changed"
    t.state["agent"]["system"] = "changed"
    assert t.events[0]["type"] == "thread_started" and t.state["agent"]["system"] == SYSTEM


def test_events_is_a_snapshot_view_of_the_log() -> None:
    t, _ = build_thread()
    before = t.events
    n = len(before)
    t.run_turn("again", ScriptedModel([text_reply("done")]))
    assert len(before) == n and len(t.events) > n  # a view keeps the length it was taken at
    assert t.events[:n] == list(before) and before == t.events[:n]
    assert t.events[-1] is t.events[-1]  # each event is frozen once, not copied per access
    assert reduce(t.events) == t.state
    assert Thread.open(t.events).events == t.events
    assert isinstance(t.events[0], dict) and isinstance(t.events[0]["data"], dict)


def test_run_turn_records_the_turn_and_uses_the_sandbox() -> None:
    t, at = build_thread()
    assert WEATHER_CALLS == [{"city": "Oslo"}]
    events = t.events
    idx = next(i for i, e in enumerate(events) if e["event_id"] == at)
    turn = events[idx + 1 :]
    assert types(turn) == [
        "user_message",
        "turn_started",
        "model_requested",
        "model_responded",
        "tool_called",
        "artifact_added",
        "sandbox_read",
        "tool_result",
        "tool_called",
        "tool_result",
        "model_requested",
        "model_responded",
        "tool_called",
        "artifact_added",
        "sandbox_wrote",
        "tool_result",
        "model_requested",
        "model_responded",
        "turn_completed",
    ]
    assert [e["seq"] for e in events] == list(range(len(events)))
    assert len({e["event_id"] for e in events}) == len(events)
    ts = [parse_ts(e["ts"]) for e in events]
    assert ts == sorted(ts)
    results = {e["data"]["tool_use_id"]: e for e in turn if e["type"] == "tool_result"}
    assert results["tu_1"]["data"]["content"] == "buy milk\n"
    assert results["tu_2"]["data"]["content"] == "Oslo: 12°C, sunny"
    assert results["tu_2"]["critical"] is True  # an external result
    called = {e["data"]["tool_use_id"]: e for e in turn if e["type"] == "tool_called"}
    assert (called["tu_2"]["data"]["kind"], called["tu_2"]["data"]["effect"]) == (
        "external",
        "read",
    )
    assert called["tu_3"]["critical"] is True  # a write
    assert t.sandbox.read("report.txt") == b"milk; sunny"
    st = t.state
    assert st["sandbox"]["files"]["report.txt"] == sha256_hex(b"milk; sunny")
    assert st["usage"] == {"input_tokens": 5 + 9 + 20 + 30 + 40, "output_tokens": 2 + 3 + 8 + 9 + 6}
    assert st["turns"][-1]["status"] == "completed"
    assert turn[-1]["data"]["usage"] == {"input_tokens": 90, "output_tokens": 23}
    assert st == reduce(events)


def test_tools_without_handler_and_unknown_tools_answer_errors() -> None:
    t = new_thread(extra=(ToolSpec("no_handler", kind="external"),))
    out = t.run_turn(
        "go",
        ScriptedModel(
            [
                tool_reply(
                    ("a", "no_handler", {}),
                    ("b", "nope", {"x": 1}),
                    ("c", "read_file", {"path": "missing.txt"}),
                    ("d", "read_file", {}),
                ),
                text_reply("ok"),
            ]
        ),
    )
    assert out.status == "completed"
    res = {e["data"]["tool_use_id"]: e["data"] for e in out.events if e["type"] == "tool_result"}
    assert all(r["is_error"] for r in res.values())
    assert "no handler" in res["a"]["content"]
    assert "unknown tool" in res["b"]["content"]
    assert "no such file" in res["c"]["content"]
    called = {e["data"]["tool_use_id"]: e["data"] for e in out.events if e["type"] == "tool_called"}
    assert (called["b"]["kind"], called["b"]["effect"]) == ("external", "pure")


def test_fork_starts_a_branch_after_the_fork_point() -> None:
    t = new_thread({"plan.md": "plan A"})
    t.run_turn("hi", ScriptedModel([text_reply("hello")]))
    point = t.events[-1]["event_id"]
    t.run_turn(
        "use plan B",
        ScriptedModel(
            [
                tool_reply(("w", "write_file", {"path": "plan.md", "content": "plan B"})),
                text_reply("ok"),
            ]
        ),
    )
    parent_events = t.events
    f = t.fork(point, branch_id="retry-1")
    fev = f.events
    idx = next(i for i, e in enumerate(parent_events) if e["event_id"] == point)
    assert fev[: idx + 1] == parent_events[: idx + 1]
    forked = fev[idx + 1]
    assert forked["type"] == "forked"
    assert forked["data"] == {"from_event_id": point, "branch_id": "retry-1"}
    assert forked["branch_id"] == "retry-1" and forked["seq"] == idx + 1
    out = f.run_turn(
        "read plan",
        ScriptedModel([tool_reply(("r", "read_file", {"path": "plan.md"})), text_reply("it says")]),
    )
    assert out.status == "completed"
    assert all(e["branch_id"] == "retry-1" for e in f.events[idx + 1 :])
    assert f.state["branch_id"] == "retry-1"
    # its event ids: spec/conformance/thread-api/ (tests/test_conformance_thread_api.py)
    assert t.events == parent_events  # the parent is untouched
    assert f.state == reduce(f.events)
    # the fork's sandbox is a copy: its writes do not reach the parent
    f.run_turn(
        "write",
        ScriptedModel(
            [
                tool_reply(("w2", "write_file", {"path": "fork.txt", "content": "x"})),
                text_reply("ok"),
            ]
        ),
    )
    assert "fork.txt" in f.sandbox.files and "fork.txt" not in t.sandbox.files  # type: ignore[attr-defined]


def test_fork_refusals() -> None:
    t = new_thread()
    with pytest.raises(CaseError) as exc:
        t.fork("no-such-event")
    assert exc.value.code == "event_not_found"
    with pytest.raises(CaseError) as exc:
        t.fork(t.events[0]["event_id"], branch_id="a/b")
    assert exc.value.code == "invalid_request"
    f = t.fork(t.events[0]["event_id"])
    assert f.state["branch_id"].startswith("fork-")


def test_snapshot_and_restore_bring_the_sandbox_back() -> None:
    t = new_thread({"state.txt": "v1"})
    t.run_turn(
        "read",
        ScriptedModel([tool_reply(("r", "read_file", {"path": "state.txt"})), text_reply("v1")]),
    )
    sid = t.snapshot()
    assert t.events[-1]["type"] == "snapshot_taken"
    assert t.events[-1]["data"] == {"snapshot_id": sid}
    before = t.state
    t.run_turn(
        "overwrite",
        ScriptedModel(
            [
                tool_reply(
                    ("w", "write_file", {"path": "state.txt", "content": "v2"}),
                    ("n", "write_file", {"path": "new.txt", "content": "new"}),
                ),
                text_reply("done"),
            ]
        ),
    )
    assert t.sandbox.read("state.txt") == b"v2"
    t.restore(sid)
    last = t.events[-1]
    assert last["type"] == "restored" and last["data"] == {"snapshot_id": sid}
    assert last["epoch"] == 1 and t.state["epoch"] == 1
    assert t.sandbox.read("state.txt") == b"v1"
    with pytest.raises(FileNotFoundError):
        t.sandbox.read("new.txt")
    st = t.state
    for key in ("messages", "sandbox", "turns", "usage", "status"):
        assert st[key] == before[key], key
    # the next turn runs in epoch 1 and sees v1
    out = t.run_turn(
        "read again",
        ScriptedModel([tool_reply(("r2", "read_file", {"path": "state.txt"})), text_reply("v1")]),
    )
    assert all(e["epoch"] == 1 for e in out.events)
    assert next(e for e in out.events if e["type"] == "tool_result")["data"]["content"] == "v1"
    with pytest.raises(CaseError) as exc:
        t.restore("snap-unknown")
    assert exc.value.code == "invalid_request"


def test_restore_on_an_opened_thread_rebuilds_files_from_artifacts(tmp_path: Path) -> None:
    t = new_thread({"state.txt": "v1"})
    t.run_turn(
        "read",
        ScriptedModel([tool_reply(("r", "read_file", {"path": "state.txt"})), text_reply("v1")]),
    )
    sid = t.snapshot()
    t.run_turn(
        "write",
        ScriptedModel(
            [
                tool_reply(("w", "write_file", {"path": "state.txt", "content": "v2"})),
                text_reply("ok"),
            ]
        ),
    )
    t.write_log(tmp_path / "log.jsonl")
    t.write_artifacts(tmp_path / "arts")
    o = Thread.open(tmp_path / "log.jsonl", artifacts=tmp_path / "arts")
    assert o.sandbox.read("state.txt") == b"v2"
    o.restore(sid)
    assert o.sandbox.read("state.txt") == b"v1"
    assert o.state["epoch"] == 1


def test_open_from_a_path_a_list_and_a_stream(tmp_path: Path) -> None:
    t, _ = build_thread()
    t.write_log(tmp_path / "log.jsonl")
    t.write_artifacts(tmp_path / "arts")
    from_path = Thread.open(tmp_path / "log.jsonl", artifacts=tmp_path / "arts")
    from_list = Thread.open(t.events)
    with open(tmp_path / "log.jsonl", "rb") as fh:
        from_stream = Thread.open(fh)
    for o in (from_path, from_list, from_stream):
        assert o.events == t.events
        assert o.state == t.state
        assert o.thread_id == "thread-test"
        assert o.agent is not None and o.agent.to_json() == make_agent().to_json()
    # the sandbox is rebuilt from the files whose bytes are in the artifacts
    assert from_path.sandbox.files == {  # type: ignore[attr-defined]
        "todo.md": b"- ship it\n",
        "notes.txt": b"buy milk\n",
        "report.txt": b"milk; sunny",
    }
    assert from_list.sandbox.files == {}  # type: ignore[attr-defined]
    # an opened thread goes on: seq continues, time never goes back, built-ins still work
    out = from_path.run_turn(
        "read report",
        ScriptedModel([tool_reply(("r", "read_file", {"path": "report.txt"})), text_reply("ok")]),
    )
    assert out.status == "completed"
    assert out.events[0]["seq"] == len(t.events)
    assert parse_ts(out.events[0]["ts"]) > parse_ts(t.events[-1]["ts"])
    assert (
        next(e for e in out.events if e["type"] == "tool_result")["data"]["content"]
        == "milk; sunny"
    )
    assert from_path.state == reduce(from_path.events)


def test_open_a_threads_ts_log(tmp_path: Path) -> None:
    t, _ = build_thread()
    t.write_log(tmp_path / "ts.jsonl", dialect="threads-ts")
    first = (tmp_path / "ts.jsonl").read_bytes().split(b"\n", 1)[0]
    assert b'"eventId"' in first and b'"event_id"' not in first
    assert Thread.open(tmp_path / "ts.jsonl", dialect="threads-ts").events == t.events
    with pytest.raises(CaseError) as exc:
        Thread.open(tmp_path / "ts.jsonl")
    assert exc.value.code == "log_invalid"


def test_write_log_then_reduce_gives_the_same_state(tmp_path: Path) -> None:
    t, _ = build_thread()
    sid = t.snapshot()
    t.restore(sid)
    f = t.fork(t.events[-1]["event_id"], branch_id="b2")
    f.run_turn("more", ScriptedModel([text_reply("ok")]))
    f.write_log(tmp_path / "log.jsonl")
    assert reduce_log(tmp_path / "log.jsonl") == f.state
    assert list(read_log(tmp_path / "log.jsonl")) == f.events
    f.write_log(tmp_path / "again.jsonl")
    assert (tmp_path / "again.jsonl").read_bytes() == (tmp_path / "log.jsonl").read_bytes()


def test_step_limit_stops_the_turn() -> None:
    t = new_thread({"a.txt": "A"})
    looping = [tool_reply((f"r{i}", "read_file", {"path": "a.txt"})) for i in range(10)]
    out = t.run_turn("loop", ScriptedModel(looping), step_limit=3)
    assert out.status == "stopped"
    assert out.stop is not None and out.stop["code"] == "step_limit"
    assert out.stop["stop_key"] == "step_limit"
    assert types(out.events).count("model_requested") == 3
    assert out.events[-1]["type"] == "turn_failed"
    assert out.events[-1]["data"]["error"]["code"] == "step_limit"
    assert t.state["status"] == "failed" and t.state["pending_tool_calls"] == []
    assert t.state == reduce(t.events)


def test_an_exhausted_scripted_model_stops_a_live_turn() -> None:
    t = new_thread({"a.txt": "A"})
    out = t.run_turn("read", ScriptedModel([tool_reply(("r", "read_file", {"path": "a.txt"}))]))
    assert out.status == "stopped"
    assert out.stop is not None
    assert (out.stop["code"], out.stop["stop_key"]) == ("model_exhausted", "model:1")
    assert types(out.events)[-2:] == ["model_requested", "turn_failed"]
    assert out.events[-1]["data"]["error"]["code"] == "model_exhausted"
    assert t.state["turns"][-1]["status"] == "failed"
    # the thread can go on with a new turn
    assert t.run_turn("again", ScriptedModel([text_reply("ok")])).status == "completed"
    assert t.state == reduce(t.events)


def test_run_turn_needs_an_agent() -> None:
    t = Thread.open([])
    with pytest.raises(CaseError) as exc:
        t.run_turn("hi", ScriptedModel([text_reply("x")]))
    assert exc.value.code == "invalid_request"


def test_a_fork_gets_the_sandbox_as_it_was_at_the_fork_point() -> None:
    t = new_thread({"plan.md": "plan A", "unseen.txt": "u"})
    t.run_turn(
        "read",
        ScriptedModel([tool_reply(("r", "read_file", {"path": "plan.md"})), text_reply("plan A")]),
    )
    point = t.events[-1]["event_id"]
    t.run_turn(
        "change things",
        ScriptedModel(
            [
                tool_reply(
                    ("w1", "write_file", {"path": "plan.md", "content": "plan B"}),
                    ("w2", "write_file", {"path": "created.txt", "content": "new"}),
                    ("r2", "read_file", {"path": "unseen.txt"}),
                    ("d", "delete_file", {"path": "unseen.txt"}),
                ),
                text_reply("ok"),
            ]
        ),
    )
    assert t.sandbox.files == {"plan.md": b"plan B", "created.txt": b"new"}  # type: ignore[attr-defined]
    f = t.fork(point, branch_id="back")
    assert f.sandbox.files == {"plan.md": b"plan A", "unseen.txt": b"u"}  # type: ignore[attr-defined]
    out = f.run_turn(
        "read plan",
        ScriptedModel([tool_reply(("r3", "read_file", {"path": "plan.md"})), text_reply("A")]),
    )
    read = next(e for e in out.events if e["type"] == "sandbox_read")
    assert read["data"]["sha256"] == f.state["sandbox"]["files"]["plan.md"] == sha256_hex(b"plan A")
    assert t.sandbox.files["plan.md"] == b"plan B"  # type: ignore[attr-defined]
