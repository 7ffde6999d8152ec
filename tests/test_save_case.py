"""Saving a turn as a case: the content of every file, idempotence, and every refusal code."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from conftest import EXPECT, SYSTEM, WEATHER_CALLS, build_thread, new_thread

from threads_cases._version import __version__
from threads_cases.case import directory as case_mod
from threads_cases.case.directory import CaseExpectation
from threads_cases.case.loader import open_case
from threads_cases.case.requests import expand_records
from threads_cases.case.save import save_case
from threads_cases.core.canonical import canonical_document, canonical_line
from threads_cases.core.dialects import get_dialect
from threads_cases.core.errors import CaseError
from threads_cases.core.log import read_log
from threads_cases.core.reducer import reduce
from threads_cases.core.request import request_sha256
from threads_cases.reference.agent import ToolResult, ToolSpec
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.sandbox import DirectorySandbox
from threads_cases.reference.thread import Thread

TS_ENVELOPE = {
    "event_id": "eventId",
    "thread_id": "threadId",
    "actor_kind": "actorKind",
    "branch_id": "branchId",
}
TS_STATE = {
    "thread_id": "threadId",
    "branch_id": "branchId",
    "last_seq": "lastSeq",
    "last_event_id": "lastEventId",
    "current_turn": "currentTurn",
    "pending_tool_calls": "pendingToolCalls",
}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tool_sha(tool: ToolSpec) -> str:
    """The fingerprint of a tool's definition in case.json's agent summary."""
    return hashlib.sha256(canonical_line(tool.to_json())).hexdigest()


def files_of(path: Path) -> dict[str, bytes]:
    return {
        p.relative_to(path).as_posix(): p.read_bytes()
        for p in sorted(path.rglob("*"))
        if p.is_file()
    }


def jsonl(data: bytes) -> list[dict[str, Any]]:
    assert data.endswith(b"\n")
    return [json.loads(line) for line in data.decode("utf-8").splitlines()]


# --------------------------------------------------------------------------- content


def test_saved_case_files_hold_exactly_the_recorded_turn(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    assert WEATHER_CALLS == [{"city": "Oslo"}]  # the external handler really ran live
    events = t.events
    idx = next(i for i, e in enumerate(events) if e["event_id"] == at)
    prefix, turn = events[: idx + 1], events[idx + 1 :]
    r = t.save_case("sample", at=at, expect=EXPECT, dir=tmp_path)
    assert r.ok and r.value is not None, r.error
    assert r.value.outcome == "created" and r.value.portable is True
    assert r.value.path == tmp_path / "sample"
    files = files_of(tmp_path / "sample")

    # every file is present, nothing else
    note_sha = sha(b"buy milk\n")
    todo_sha = sha(b"- ship it\n")
    assert set(files) == {
        "case.json",
        "log.threads-py.jsonl",
        "log.threads-ts.jsonl",
        "expected.threads-py.json",
        "expected.threads-ts.json",
        "model.json",
        "stubs.json",
        "sandbox.json",
        f"artifacts/{note_sha}",
        f"artifacts/{todo_sha}",
    }
    # every JSON document is canonical
    for name, data in files.items():
        if name.endswith(".json"):
            assert data == canonical_document(json.loads(data)), name

    # case.json
    meta = json.loads(files["case.json"])
    assert meta == {
        "format": 2,
        "name": "sample",
        "input": "Read notes.txt, check Oslo weather, write report.txt",
        "expect": {"must": EXPECT.must, "expect": EXPECT.expect},
        "at": at,
        "external_effects": "stub",
        "dialects": ["threads-py", "threads-ts"],
        "portable": True,
        "agent": {
            "name": "test-agent",
            "model": "model-t",
            "system_sha256": hashlib.sha256(SYSTEM.encode("utf-8")).hexdigest(),
            # each tool with the fingerprint of its definition (case-format.md 3.1)
            "tools": [
                {
                    "name": tool.name,
                    "kind": tool.kind,
                    "effect": tool.effect,
                    "sha256": tool_sha(tool),
                }
                for tool in t.agent.tools
            ],
        },
        "fingerprint": r.value.fingerprint,
        "created_with": {"tool": "threads-cases", "version": __version__},
    }
    assert meta["fingerprint"].startswith("sha256:")
    assert meta["fingerprint"] == case_mod.computed_fingerprint(
        case_mod.read_case_files(tmp_path / "sample")
    )

    # the logs: the prefix up to and including at, in each dialect
    py_log = jsonl(files["log.threads-py.jsonl"])
    assert py_log == prefix
    assert py_log[-1]["event_id"] == at
    ts_log = jsonl(files["log.threads-ts.jsonl"])
    assert len(ts_log) == len(prefix)
    for ts_ev, ev in zip(ts_log, prefix, strict=True):
        for canon, spelled in TS_ENVELOPE.items():
            assert canon not in ts_ev and ts_ev[spelled] == ev[canon]
        assert {TS_ENVELOPE.get(k, k): v for k, v in ev.items()} == ts_ev
    assert (
        list(read_log(tmp_path / "sample" / "log.threads-ts.jsonl", dialect="threads-ts")) == prefix
    )

    # the expected states: the reduce of that log, state keys per dialect
    state = reduce(prefix)
    assert json.loads(files["expected.threads-py.json"]) == state
    assert state["sandbox"]["files"] == {"todo.md": todo_sha}
    ts_state = json.loads(files["expected.threads-ts.json"])
    for canon, spelled in TS_STATE.items():
        assert canon not in ts_state and ts_state[spelled] == state[canon]
    assert get_dialect("threads-ts").decode_state(ts_state) == state

    # model.json: one reply per model_responded, with the hash its model_requested recorded
    model = json.loads(files["model.json"])
    requested = [e["data"]["request_sha256"] for e in turn if e["type"] == "model_requested"]
    responded = [e["data"] for e in turn if e["type"] == "model_responded"]
    assert len(requested) == 3
    records = [r.pop("request") for r in model["replies"]]
    assert model == {
        "format": 1,
        "replies": [
            {
                "request_sha256": h,
                "message": d["message"],
                "stop_reason": d["stop_reason"],
                "usage": d["usage"],
            }
            for h, d in zip(requested, responded, strict=True)
        ],
    }
    # each reply's request record rebuilds the request whose hash it carries (case-format 3.4)
    model["replies"] = [
        {**r, "request": rec} for r, rec in zip(model["replies"], records, strict=True)
    ]
    rebuilt = expand_records(model["replies"])
    assert [request_sha256(req) for req in rebuilt if req is not None] == requested
    assert records[0]["keep"] == 0 and records[1]["keep"] > 0
    assert [len(r["message"]["content"]) for r in model["replies"]] == [3, 1, 1]
    assert [r["stop_reason"] for r in model["replies"]] == ["tool_use", "tool_use", "end_turn"]

    # stubs.json: the external call, with what the live handler answered
    assert json.loads(files["stubs.json"]) == {
        "format": 1,
        "calls": [
            {
                "tool": "get_weather",
                "input": {"city": "Oslo"},
                "result": {"content": "Oslo: 12°C, sunny", "is_error": False},
            }
        ],
    }

    # sandbox.json: the read of notes.txt (the write of report.txt is not a read)
    assert json.loads(files["sandbox.json"]) == {
        "format": 1,
        "reads": [{"path": "notes.txt", "sha256": note_sha, "artifact": "sha256:" + note_sha}],
    }

    # artifacts named by sha256 hex hold those bytes
    for name, data in files.items():
        if name.startswith("artifacts/"):
            assert name == "artifacts/" + sha(data)
    assert files[f"artifacts/{note_sha}"] == b"buy milk\n"
    assert files[f"artifacts/{todo_sha}"] == b"- ship it\n"


def test_binary_artifact_of_the_prefix_is_saved_byte_for_byte(tmp_path: Path) -> None:
    t = new_thread({"bin.dat": b"\x00\xff\xfe binary"})
    t.run_turn("list", ScriptedModel([tool_reply(("l1", "list_files", {})), text_reply("ok")]))
    at = t.events[-1]["event_id"]
    t.run_turn("again", ScriptedModel([text_reply("ok")]))
    r = t.save_case("bin", at=at, dir=tmp_path)
    assert r.ok, r.error
    data = (tmp_path / "bin" / "artifacts" / sha(b"\x00\xff\xfe binary")).read_bytes()
    assert data == b"\x00\xff\xfe binary"


def test_saving_twice_is_unchanged_and_byte_identical(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    first = t.save_case("same", at=at, expect=EXPECT, dir=tmp_path)
    before = files_of(tmp_path / "same")
    second = t.save_case("same", at=at, expect=EXPECT, dir=tmp_path)
    assert first.ok and second.ok
    assert second.value is not None and second.value.outcome == "unchanged"
    assert second.value.fingerprint == first.value.fingerprint  # type: ignore[union-attr]
    assert files_of(tmp_path / "same") == before
    # a second, independent recording of the same turn gives the same bytes too
    t2, at2 = build_thread()
    third = t2.save_case("same", at=at2, expect=EXPECT, dir=tmp_path / "again")
    assert third.ok
    assert files_of(tmp_path / "again" / "same") == before


def test_a_different_case_at_the_path_needs_overwrite(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    assert t.save_case("c", at=at, dir=tmp_path).ok
    old = files_of(tmp_path / "c")
    other = CaseExpectation(must=[{"type": "turn_completed"}])
    refused = t.save_case("c", at=at, expect=other, dir=tmp_path)
    assert not refused.ok and refused.error is not None
    assert refused.error.code == "case_exists"
    assert files_of(tmp_path / "c") == old
    replaced = t.save_case("c", at=at, expect=other, dir=tmp_path, overwrite=True)
    assert replaced.ok and replaced.value is not None
    assert replaced.value.outcome == "replaced"
    new = files_of(tmp_path / "c")
    assert new != old
    assert json.loads(new["case.json"])["expect"]["must"] == [{"type": "turn_completed"}]
    assert json.loads(new["case.json"])["fingerprint"] == replaced.value.fingerprint
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_a_file_at_the_case_path_is_case_exists(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    (tmp_path / "c").write_text("not a case")
    r = t.save_case("c", at=at, dir=tmp_path, overwrite=True)
    assert not r.ok and r.error is not None and r.error.code == "case_exists"
    assert (tmp_path / "c").read_text() == "not a case"


def test_a_write_that_fails_is_io_error_naming_the_path(
    recorded: tuple[Thread, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A disk that fails under the writer: io_error, the file the OS named, no errno text."""
    import errno

    from threads_cases.case import save as save_mod

    def full(directory: Path, name: str, *args: Any, **kwargs: Any) -> str:
        raise OSError(errno.ENOSPC, "No space left on device", str(directory / name / "x"))

    monkeypatch.setattr(save_mod, "write_case_dir", full)
    t, at = recorded
    r = t.save_case("c", at=at, dir=tmp_path)
    assert not r.ok and r.error is not None
    assert r.error.to_json() == {
        "code": "io_error",
        "message": "cannot write the case: No space left on device",
        "hint": "check that --dir is a folder you can write to",
        "file": str(tmp_path / "c" / "x"),
    }


@pytest.mark.parametrize("inside", [".", "artifacts", "artifacts/deeper"])
def test_a_dir_that_is_or_lies_inside_a_case_is_refused(
    recorded: tuple[Thread, str], tmp_path: Path, inside: str
) -> None:
    """A user's report: saving into a case's folder (or below it) wrote one more folder into
    it and made it invalid. Refused as invalid_request, as a result, the case untouched."""
    t, at = recorded
    assert t.save_case("outer", at=at, dir=tmp_path / "cases").ok
    case = tmp_path / "cases" / "outer"
    before = sorted(p.relative_to(case) for p in case.rglob("*"))
    dir = case / inside
    r = t.save_case("nested", at=at, dir=dir)
    assert not r.ok and r.error is not None and r.error.code == "invalid_request", r
    where = "is the case directory" if inside == "." else "is inside the case directory"
    assert r.error.message == f"{dir}: {where} {case}"
    assert r.error.hint.startswith("write it outside the case: a case holds only the files")
    assert sorted(p.relative_to(case) for p in case.rglob("*")) == before
    assert open_case(case).name == "outer"


def test_a_dir_that_is_a_file_or_below_one_is_refused(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    """Was io_error "File exists" (and "Not a directory" below a file): a bad argument."""
    t, at = recorded
    afile = tmp_path / "afile"
    afile.write_text("x")
    r = t.save_case("c", at=at, dir=afile)
    assert not r.ok and r.error is not None and r.error.code == "invalid_request", r
    assert r.error.message == f"{afile}: is a file, not a folder"
    assert r.error.hint == "expected the folder to create the case in (it is created when missing)"
    r = t.save_case("c", at=at, dir=str(afile / "sub"))
    assert not r.ok and r.error is not None and r.error.code == "invalid_request", r
    assert r.error.message == f"{afile / 'sub'}: {afile} is a file, not a folder"
    assert afile.read_text() == "x"


def test_dialects_choose_the_files(recorded: tuple[Thread, str], tmp_path: Path) -> None:
    t, at = recorded
    r = t.save_case("py-only", at=at, dir=tmp_path, dialects=["threads-py"])
    assert r.ok, r.error
    names = set(files_of(tmp_path / "py-only"))
    assert "log.threads-py.jsonl" in names and "log.threads-ts.jsonl" not in names
    meta = json.loads((tmp_path / "py-only" / "case.json").read_bytes())
    assert meta["dialects"] == ["threads-py"] and "implementations" not in meta
    assert meta["format"] == 2


def test_forbid_without_external_calls_saves(tmp_path: Path) -> None:
    t = new_thread({"a.txt": "A"})
    at = t.events[-1]["event_id"]
    t.run_turn(
        "read", ScriptedModel([tool_reply(("r", "read_file", {"path": "a.txt"})), text_reply("A")])
    )
    r = t.save_case("forbid-ok", at=at, dir=tmp_path, external_effects="forbid")
    assert r.ok, r.error
    meta = json.loads((tmp_path / "forbid-ok" / "case.json").read_bytes())
    assert meta["external_effects"] == "forbid"
    assert json.loads((tmp_path / "forbid-ok" / "stubs.json").read_bytes())["calls"] == []


# --------------------------------------------------------------------------- refusals


def code_of(result: Any) -> str:
    assert not result.ok, result
    assert result.error is not None and result.error.message
    return str(result.error.code)


@pytest.mark.parametrize(
    "name",
    [
        "",
        "x" * 65,
        "a/b",
        "..",
        ".",
        "CON",
        "nul.txt",
        "Com1.log",
        "LPT9",
        "a b",
        "é",
        ".hidden",
        ".c.tmp-1-abcd",
        None,
        7,
    ],
)
def test_bad_names_are_invalid_request(
    recorded: tuple[Thread, str], tmp_path: Path, name: Any
) -> None:
    t, at = recorded
    assert code_of(t.save_case(name, at=at, dir=tmp_path)) == "invalid_request"
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("name", ["x" * 64, "a", "a.b", "CONSOLE", "com10", "my_case-1.v2"])
def test_good_names_save(recorded: tuple[Thread, str], tmp_path: Path, name: str) -> None:
    t, at = recorded
    r = t.save_case(name, at=at, dir=tmp_path)
    assert r.ok, r.error
    assert (tmp_path / name / "case.json").is_file()


@pytest.mark.parametrize("effects", ["", "allow", "STUB", None])
def test_bad_external_effects(recorded: tuple[Thread, str], tmp_path: Path, effects: Any) -> None:
    t, at = recorded
    assert (
        code_of(t.save_case("c", at=at, dir=tmp_path, external_effects=effects))
        == "invalid_request"
    )


@pytest.mark.parametrize(
    "impls", [[], ["threads-py", "threads-py"], ["no-such-dialect"], "threads-py"]
)
def test_bad_dialects(recorded: tuple[Thread, str], tmp_path: Path, impls: Any) -> None:
    t, at = recorded
    assert code_of(t.save_case("c", at=at, dir=tmp_path, dialects=impls)) == "invalid_request"
    assert not (tmp_path / "c").exists()


def test_a_must_that_cannot_pass_names_matcher_and_nearest_event(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    must = {"type": "tool_result", "data": {"name": "get_weather", "content": "Oslo: snow"}}
    r = t.save_case("c", at=at, dir=tmp_path, expect=CaseExpectation(must=[must]))
    assert code_of(r) == "invalid_request"
    msg = r.error.message  # type: ignore[union-attr]
    assert "must[0]" in msg
    assert '"Oslo: snow"' in msg  # the matcher
    weather_result = next(
        e for e in t.events if e["type"] == "tool_result" and e["data"]["name"] == "get_weather"
    )
    assert weather_result["event_id"] in msg  # the nearest event
    assert "/data/content" in msg
    assert not (tmp_path / "c").exists()


@pytest.mark.parametrize(
    "expect",
    [
        CaseExpectation(must=[{"typo": "turn_completed"}]),
        CaseExpectation(expect=[{"type": 3}]),
        {"must": ["not an object"]},
        "turn_completed",
    ],
)
def test_an_invalid_matcher_is_invalid_request(
    recorded: tuple[Thread, str], tmp_path: Path, expect: Any
) -> None:
    t, at = recorded
    assert code_of(t.save_case("c", at=at, dir=tmp_path, expect=expect)) == "invalid_request"


def test_forbid_with_an_external_call_is_invalid_request(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    r = t.save_case("c", at=at, dir=tmp_path, external_effects="forbid")
    assert code_of(r) == "invalid_request"
    assert "get_weather" in r.error.message  # type: ignore[union-attr]


def test_unknown_at_is_event_not_found(recorded: tuple[Thread, str], tmp_path: Path) -> None:
    t, _ = recorded
    assert code_of(t.save_case("c", at="no-such-event", dir=tmp_path)) == "event_not_found"
    assert code_of(t.save_case("c", at="", dir=tmp_path)) == "invalid_request"


def test_at_the_last_event_is_no_turn_after_fork(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, _ = recorded
    r = t.save_case("c", at=t.events[-1]["event_id"], dir=tmp_path)
    assert code_of(r) == "no_turn_after_fork"


def test_at_followed_by_a_non_user_event_is_no_turn_after_fork(tmp_path: Path) -> None:
    t = new_thread()
    at = t.events[-1]["event_id"]
    t.snapshot()
    t.run_turn("hi", ScriptedModel([text_reply("hello")]))
    assert code_of(t.save_case("c", at=at, dir=tmp_path)) == "no_turn_after_fork"
    # inside a turn: after turn_started comes model_requested
    started = next(e for e in t.events if e["type"] == "turn_started")
    assert code_of(t.save_case("c", at=started["event_id"], dir=tmp_path)) == "no_turn_after_fork"


def _hand_log(*extra: tuple[str, str, dict[str, Any]]) -> list[dict[str, Any]]:
    agent = {"name": "a", "model": "m", "system": "", "tools": []}
    types = [("thread_started", "system", {"agent": agent, "metadata": {}}), *extra]
    return [
        {
            "event_id": f"e{i}",
            "thread_id": "t",
            "seq": i,
            "type": ty,
            "actor_kind": actor,
            "epoch": 0,
            "branch_id": "main",
            "critical": False,
            "ts": f"2026-01-01T00:00:00.{i:03d}Z",
            "data": data,
        }
        for i, (ty, actor, data) in enumerate(types)
    ]


def test_a_turn_that_never_completes_is_turn_incomplete(tmp_path: Path) -> None:
    events = _hand_log(
        ("user_message", "user", {"content": "hi"}),
        ("turn_started", "system", {"turn_id": "t1"}),
        ("model_requested", "system", {"turn_id": "t1", "model": "m", "request_sha256": "0" * 64}),
    )
    t = Thread.open(events)
    r = t.save_case("c", at="e0", dir=tmp_path)
    assert code_of(r) == "turn_incomplete"
    assert not (tmp_path / "c").exists()


def test_user_input_without_a_turn_is_turn_incomplete(tmp_path: Path) -> None:
    t = Thread.open(_hand_log(("user_message", "user", {"content": "hi"})))
    assert code_of(t.save_case("c", at="e0", dir=tmp_path)) == "turn_incomplete"
    t = Thread.open(
        _hand_log(
            ("user_message", "user", {"content": "hi"}),
            ("snapshot_taken", "system", {"snapshot_id": "s"}),
        )
    )
    assert code_of(t.save_case("c", at="e0", dir=tmp_path)) == "turn_incomplete"


def test_a_directory_sandbox_is_egress_policy_unsupported(tmp_path: Path) -> None:
    box = tmp_path / "box"
    box.mkdir()
    (box / "a.txt").write_text("A")
    t = Thread.create(agent=new_thread().agent, sandbox=DirectorySandbox(box))  # type: ignore[arg-type]
    at = t.events[-1]["event_id"]
    out = t.run_turn(
        "read", ScriptedModel([tool_reply(("r", "read_file", {"path": "a.txt"})), text_reply("A")])
    )
    assert out.status == "completed"
    r = t.save_case("c", at=at, dir=tmp_path / "cases")
    assert code_of(r) == "egress_policy_unsupported"
    assert "DirectorySandbox" in r.error.message  # type: ignore[union-attr]
    assert not (tmp_path / "cases" / "c").exists()


def test_opening_a_broken_log_is_log_invalid(tmp_path: Path) -> None:
    t, _ = build_thread()
    t.write_log(tmp_path / "log.jsonl")
    lines = (tmp_path / "log.jsonl").read_bytes().splitlines(keepends=True)
    broken = tmp_path / "broken.jsonl"
    broken.write_bytes(b"".join(lines[:2] + lines[3:]))  # a seq gap
    with pytest.raises(CaseError) as exc:
        Thread.open(broken)
    assert exc.value.code == "log_invalid"
    events = copy.deepcopy(t.events)
    events[1]["seq"] = 7
    with pytest.raises(CaseError) as exc:
        Thread.open(events)
    assert exc.value.code == "log_invalid"
    # a reducer rule: a tool_result with no call
    bad = _hand_log(
        ("user_message", "user", {"content": "hi"}),
        ("turn_started", "system", {"turn_id": "t1"}),
        (
            "tool_result",
            "tool",
            {"turn_id": "t1", "tool_use_id": "x", "name": "n", "content": "c", "is_error": False},
        ),
    )
    with pytest.raises(CaseError) as exc:
        Thread.open(bad)
    assert exc.value.code == "log_invalid"


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), 2**60, -(2**53)])
def test_an_unwritable_external_result_stops_the_turn_and_save_refuses(
    tmp_path: Path, bad: Any
) -> None:
    tool = ToolSpec(
        "probe",
        "returns a number",
        {"type": "object"},
        "external",
        "read",
        lambda inp: [{"type": "text", "text": "n", "value": bad}],
    )
    t = new_thread(extra=(tool,))
    at = t.events[-1]["event_id"]
    out = t.run_turn("probe it", ScriptedModel([tool_reply(("p1", "probe", {})), text_reply("ok")]))
    assert out.status == "stopped"
    assert out.stop is not None
    assert out.stop["code"] == "unsafe_value" and out.stop["stop_key"] == "tool:probe"
    assert "/content/0/value" in out.stop["message"]
    assert out.events[-1]["type"] == "turn_failed"
    assert out.events[-1]["data"]["error"]["code"] == "unsafe_value"
    # the value never entered the log: it is still a valid, writable log
    t.write_log(tmp_path / "log.jsonl")
    assert list(read_log(tmp_path / "log.jsonl")) == t.events
    assert t.state["status"] == "failed"
    r = t.save_case("c", at=at, dir=tmp_path / "cases")
    assert code_of(r) == "unsafe_value"
    assert not (tmp_path / "cases" / "c").exists()
    # the thread goes on: a next turn runs and can be saved
    at2 = t.events[-1]["event_id"]
    assert t.run_turn("again", ScriptedModel([text_reply("fine")])).status == "completed"
    assert t.save_case("c2", at=at2, dir=tmp_path / "cases").ok


def test_an_unwritable_tool_result_object_is_refused_too(tmp_path: Path) -> None:
    tool = ToolSpec(
        "probe",
        "",
        {"type": "object"},
        "external",
        "read",
        lambda inp: ToolResult([{"type": "text", "text": "x", 1: "int key"}]),
    )
    t = new_thread(extra=(tool,))
    at = t.events[-1]["event_id"]
    out = t.run_turn("probe", ScriptedModel([tool_reply(("p1", "probe", {})), text_reply("ok")]))
    assert out.stop is not None and out.stop["code"] == "unsafe_value"
    assert code_of(t.save_case("c", at=at, dir=tmp_path)) == "unsafe_value"


def test_an_unwritable_model_reply_stops_the_turn(tmp_path: Path) -> None:
    t = new_thread()
    at = t.events[-1]["event_id"]
    reply = text_reply("done", output_tokens=2**60)
    out = t.run_turn("go", ScriptedModel([reply]))
    assert out.status == "stopped"
    assert out.stop is not None
    assert out.stop["code"] == "unsafe_value" and out.stop["stop_key"] == "model:0"
    assert [e["type"] for e in out.events][-2:] == ["model_requested", "turn_failed"]
    assert code_of(t.save_case("c", at=at, dir=tmp_path)) == "unsafe_value"


def test_save_case_on_raw_events_holding_nan_is_unsafe_value(
    recorded: tuple[Thread, str], tmp_path: Path
) -> None:
    t, at = recorded
    events = copy.deepcopy(t.events)
    events[0]["data"]["metadata"] = {"score": float("nan")}
    r = save_case(
        events, sandbox=t.sandbox, store=t.artifacts, name="c", expect=None, at=at, dir=tmp_path
    )
    assert code_of(r) == "unsafe_value"
    assert not (tmp_path / "c").exists()


def test_unsafe_user_input_is_refused_before_anything_is_recorded() -> None:
    t = new_thread()
    before = t.events
    with pytest.raises(CaseError) as exc:
        t.run_turn(
            [{"type": "text", "text": "x", "n": float("inf")}], ScriptedModel([text_reply("ok")])
        )
    assert exc.value.code == "unsafe_value"
    assert t.events == before


def test_a_missing_artifact_is_refused(recorded: tuple[Thread, str], tmp_path: Path) -> None:
    t, at = recorded
    t.artifacts.blobs.clear()
    r = t.save_case("c", at=at, dir=tmp_path)
    assert code_of(r) == "invalid_request"
    assert "artifact" in r.error.message  # type: ignore[union-attr]


# --------------------------------------------------------------------------- conformance


def _authoring_tool() -> Any:
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "tools" / "make_conformance_cases.py"
    spec = importlib.util.spec_from_file_location("make_conformance_cases", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_re_authoring_the_conformance_cases_gives_the_committed_bytes(tmp_path: Path) -> None:
    tool = _authoring_tool()
    committed = Path(__file__).resolve().parent.parent / "spec" / "conformance" / "cases"
    assert sorted(tool.CASES) == sorted(p.name for p in committed.iterdir())
    for round_ in ("one", "two"):
        for name, build in tool.CASES.items():
            thread, at, expect, effects = build()
            r = thread.save_case(
                name, expect=expect, at=at, dir=tmp_path / round_, external_effects=effects
            )
            assert r.ok, (name, r.error)
    for name in tool.CASES:
        got = files_of(tmp_path / "one" / name)
        assert got == files_of(tmp_path / "two" / name), name  # byte-stable authoring
        assert got == files_of(committed / name), name


@pytest.mark.parametrize(
    ("log", "code", "message"),
    [
        (None, "invalid_request", "the log must be a list of events, not None"),
        (
            "/nonexistent/thread.jsonl",
            "invalid_request",
            "the log must be a list of events, not str",
        ),
        ([{"foo": 1}], "log_invalid", "event /0/event_id: event_id must be a string, not null"),
        (["line"], "log_invalid", "event /0: an event must be an object, not str"),
    ],
)
def test_a_log_of_the_wrong_shape_is_refused_not_raised(
    tmp_path: Path, log: Any, code: str, message: str
) -> None:
    # as the TypeScript saveCase (ts/test/saveArguments.test.ts): a refusal, never a TypeError
    thread = new_thread()
    r = save_case(
        log,
        sandbox=thread.sandbox,
        store=thread.artifacts,
        name="x",
        expect=None,
        at="e1",
        dir=tmp_path,
    )
    assert not r.ok and r.error is not None
    assert (r.error.code, r.error.message) == (code, message)
    assert "thread.events" in r.error.hint
