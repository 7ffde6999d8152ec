"""Property tests of the reducer (spec/reducer.md) and of canonical JSON (spec/strict-json.md)."""

from __future__ import annotations

import copy
import io
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import threads_cases
from threads_cases import CaseError, Reducer, canonical_document, canonical_line, parse_json
from threads_cases.core.canonical import MAX_SAFE_INTEGER
from threads_cases.core.reducer import RESTORED_KEYS
from threads_cases.core.schemas import validator

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
HEX = "0123456789abcdef"
AGENT = {
    "name": "a",
    "model": "m",
    "system": "s",
    "tools": [
        {
            "name": "read_file",
            "description": "",
            "input_schema": {"type": "object"},
            "kind": "sandbox",
            "effect": "read",
        }
    ],
}
PATHS = ["a.txt", "dir/b.txt", "c d/e.md"]


class Builder:
    """Builds a valid log step by step, tracking what the reducer will allow next."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.epoch = 0
        self.branch = "main"
        self.counter = 0
        self.model: dict[str, Any] = {
            "started": False,
            "turn": None,
            "pending": [],
            "files": set(),
            "artifacts": {},
        }
        self.saved: dict[str, dict[str, Any]] = {}

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def add(self, etype: str, data: dict[str, Any], actor: str = "system") -> None:
        seq = len(self.events)
        self.events.append(
            {
                "event_id": f"ev-{seq}",
                "thread_id": "th",
                "seq": seq,
                "type": etype,
                "actor_kind": actor,
                "epoch": self.epoch,
                "branch_id": self.branch,
                "critical": False,
                "ts": f"2026-01-01T00:00:{seq % 60:02d}.{seq % 1000:03d}Z",
                "data": data,
            }
        )

    def options(self, allow_snapshots: bool) -> list[str]:
        m = self.model
        if not m["started"]:
            return ["start", "x"]
        opts = ["x", "read", "write", "artifact", "fork"]
        if m["files"]:
            opts.append("delete")
        if allow_snapshots:
            opts.append("snapshot")
            if self.saved:
                opts.append("restore")
        if m["turn"] is None:
            opts += ["user", "user_blocks", "turn"]
        else:
            opts += ["request", "respond", "call", "fail"]
            if m["pending"]:
                opts.append("result")
            else:
                opts.append("complete")
        return opts

    def step(self, draw: Any, allow_snapshots: bool) -> None:
        m = self.model
        op = draw(st.sampled_from(self.options(allow_snapshots)))
        sha = draw(st.sampled_from(HEX)) * 64
        size = draw(st.integers(0, 10_000))
        if op == "start":
            m["started"] = True
            self.add("thread_started", {"agent": copy.deepcopy(AGENT), "metadata": {}})
        elif op == "x":
            self.add(
                "x_" + draw(st.sampled_from(["note", "ui.hint", "a:b"])),
                {"n": draw(st.integers(-5, 5))},
            )
        elif op == "user":
            self.add("user_message", {"content": draw(st.text(max_size=5))}, "user")
        elif op == "user_blocks":
            self.add("user_message", {"content": [{"type": "text", "text": "t"}]}, "user")
        elif op == "turn":
            m["turn"] = self.fresh("turn-")
            self.add("turn_started", {"turn_id": m["turn"]})
        elif op == "request":
            self.add(
                "model_requested", {"turn_id": m["turn"], "model": "m", "request_sha256": "0" * 64}
            )
        elif op == "respond":
            self.add(
                "model_responded",
                {
                    "turn_id": m["turn"],
                    "message": {"role": "assistant", "content": [{"type": "text", "text": "r"}]},
                    "stop_reason": "end_turn",
                    "usage": {
                        "input_tokens": draw(st.integers(0, 1000)),
                        "output_tokens": draw(st.integers(0, 1000)),
                    },
                },
                "model",
            )
        elif op == "call":
            tu = self.fresh("tu-")
            m["pending"].append(tu)
            self.add(
                "tool_called",
                {
                    "turn_id": m["turn"],
                    "tool_use_id": tu,
                    "name": "read_file",
                    "input": {},
                    "kind": "sandbox",
                    "effect": "read",
                },
                "model",
            )
        elif op == "result":
            tu = draw(st.sampled_from(m["pending"]))
            m["pending"].remove(tu)
            self.add(
                "tool_result",
                {
                    "turn_id": m["turn"],
                    "tool_use_id": tu,
                    "name": "read_file",
                    "content": "ok",
                    "is_error": draw(st.booleans()),
                },
                "tool",
            )
        elif op == "complete":
            self.add(
                "turn_completed",
                {
                    "turn_id": m["turn"],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 0, "output_tokens": 0},
                },
            )
            m["turn"] = None
        elif op == "fail":
            self.add(
                "turn_failed",
                {"turn_id": m["turn"], "error": {"code": "boom", "message": "failed"}},
            )
            m["turn"] = None
            m["pending"] = []
        elif op in ("read", "write"):
            path = draw(st.sampled_from(PATHS))
            art = None
            if m["artifacts"] and draw(st.booleans()):
                art = draw(st.sampled_from(sorted(m["artifacts"])))
                sha, size = art[len("sha256:") :], m["artifacts"][art]
            m["files"].add(path)
            self.add(
                "sandbox_read" if op == "read" else "sandbox_wrote",
                {"path": path, "sha256": sha, "size": size, "artifact": art},
                "sandbox",
            )
        elif op == "delete":
            path = draw(st.sampled_from(sorted(m["files"])))
            m["files"].discard(path)
            self.add(
                "sandbox_wrote",
                {"path": path, "sha256": None, "size": 0, "artifact": None},
                "sandbox",
            )
        elif op == "artifact":
            aid = "sha256:" + sha
            size = m["artifacts"].get(aid, size)
            m["artifacts"][aid] = size
            self.add(
                "artifact_added",
                {"artifact_id": aid, "media_type": "text/plain", "size": size},
                "sandbox",
            )
        elif op == "fork":
            old = self.events[-1]["event_id"]
            self.branch = self.fresh("branch-")
            self.add("forked", {"from_event_id": old, "branch_id": self.branch}, "user")
        elif op == "snapshot":
            sid = self.fresh("snap-")
            self.add("snapshot_taken", {"snapshot_id": sid})
            self.saved[sid] = copy.deepcopy(m)
        elif op == "restore":
            sid = draw(st.sampled_from(sorted(self.saved)))
            self.epoch += 1
            saved = copy.deepcopy(self.saved[sid])
            # artifacts come back too, so only keep what the snapshot knew
            self.model = saved
            self.add("restored", {"snapshot_id": sid})


@st.composite
def valid_logs(
    draw: Any, allow_snapshots: bool = True, max_steps: int = 40
) -> list[dict[str, Any]]:
    b = Builder()
    for _ in range(draw(st.integers(0, max_steps))):
        b.step(draw, allow_snapshots)
    return b.events


FEW = settings(SETTINGS, max_examples=25)


@FEW
@given(valid_logs())
def test_valid_logs_reduce(events: list[dict[str, Any]]) -> None:
    state = threads_cases.reduce(events)
    assert state["last_seq"] == (len(events) - 1 if events else None)
    errors = list(validator("state.schema.json", "state.threads-py").iter_errors(state))
    assert not errors, errors[0].message
    # the same log read from its canonical bytes reduces to the same state
    assert threads_cases.reduce(io.BytesIO(threads_cases.encode_log(events))) == state
    # and the same events in the threads-ts spelling too
    ts = threads_cases.get_dialect("threads-ts")
    assert threads_cases.reduce([ts.encode_event(e) for e in events], dialect="threads-ts") == state


def _expect_log_invalid(events: list[dict[str, Any]], must_fail: bool) -> None:
    try:
        threads_cases.reduce(events)
    except CaseError as exc:
        assert exc.code == "log_invalid", exc.render()
        return
    assert not must_fail, "a broken log was accepted"


@SETTINGS
@given(valid_logs(max_steps=25).filter(lambda e: len(e) >= 2), st.data())
def test_dropping_an_event_is_refused(events: list[dict[str, Any]], data: Any) -> None:
    i = data.draw(st.integers(0, len(events) - 2))
    _expect_log_invalid(events[:i] + events[i + 1 :], must_fail=True)


@SETTINGS
@given(valid_logs(max_steps=25).filter(lambda e: len(e) >= 2), st.data())
def test_swapping_two_events_is_refused(events: list[dict[str, Any]], data: Any) -> None:
    i = data.draw(st.integers(0, len(events) - 2))
    j = data.draw(st.integers(i + 1, len(events) - 1))
    events[i], events[j] = events[j], events[i]
    _expect_log_invalid(events, must_fail=True)


@SETTINGS
@given(valid_logs(max_steps=25).filter(lambda e: len(e) >= 1), st.data())
def test_changing_a_seq_is_refused(events: list[dict[str, Any]], data: Any) -> None:
    i = data.draw(st.integers(0, len(events) - 1))
    new = data.draw(st.integers(-3, len(events) + 3).filter(lambda s: s != i))
    events[i]["seq"] = new
    _expect_log_invalid(events, must_fail=True)


json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-MAX_SAFE_INTEGER, MAX_SAFE_INTEGER)
    | st.floats(
        allow_nan=False, allow_infinity=False, min_value=-(2.0**53) + 1, max_value=2.0**53 - 1
    )
    | st.text(max_size=8)
)
json_values = st.recursive(
    json_scalars,
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=20,
)


@SETTINGS
@given(valid_logs(max_steps=20).filter(lambda e: len(e) >= 1), st.data())
def test_random_field_changes_raise_only_log_invalid(
    events: list[dict[str, Any]], data: Any
) -> None:
    i = data.draw(st.integers(0, len(events) - 1))
    ev = events[i]
    target = ev if data.draw(st.booleans()) else ev["data"]
    keys = sorted(target)
    if keys and data.draw(st.booleans()):
        key = data.draw(st.sampled_from(keys))
        if data.draw(st.booleans()):
            del target[key]
        else:
            target[key] = data.draw(json_values)
    else:
        target[data.draw(st.text(min_size=1, max_size=5))] = data.draw(json_values)
    _expect_log_invalid(events, must_fail=False)


@FEW
@given(valid_logs(allow_snapshots=False), st.data())
def test_prefix_then_resume_equals_whole(events: list[dict[str, Any]], data: Any) -> None:
    whole = threads_cases.reduce(events)
    k = data.draw(st.integers(0, len(events)))
    prefix_state = threads_cases.reduce(events[:k])
    r = Reducer(prefix_state)
    for ev in events[k:]:
        r.apply(copy.deepcopy(ev))
    assert r.state == whole


@given(st.integers(0, 5))
def test_x_prefix_then_resume_accepts_thread_started(n: int) -> None:
    b = Builder()
    for _ in range(n):
        b.add("x_note", {})
    b.add("thread_started", {"agent": AGENT, "metadata": {}})
    prefix = threads_cases.reduce(b.events[:n])
    r = Reducer(prefix)
    r.apply(b.events[n])
    assert r.state == threads_cases.reduce(b.events)


@SETTINGS
@given(json_values)
def test_canonical_line_round_trip_is_a_fixed_point(value: Any) -> None:
    line = canonical_line(value)
    again = parse_json(line)
    assert canonical_line(again) == line
    doc = canonical_document(value)
    assert doc.endswith(b"\n")
    parsed = parse_json(doc)
    assert canonical_line(parsed) == line
    assert canonical_document(parsed) == doc


class _DeepCopyReducer(Reducer):
    """The plain algorithm the reducer's shared snapshots must agree with: deep copies of every
    restored key at each snapshot and at each restore."""

    def __init__(self) -> None:
        super().__init__()
        self._copies: dict[str, dict[str, Any]] = {}

    def _on_snapshot_taken(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        super()._on_snapshot_taken(ev, data)
        self._copies[data["snapshot_id"]] = copy.deepcopy({k: self.state[k] for k in RESTORED_KEYS})

    def _on_restored(self, ev: dict[str, Any], data: dict[str, Any]) -> None:
        super()._on_restored(ev, data)
        for k, v in self._copies[data["snapshot_id"]].items():
            self.state[k] = copy.deepcopy(v)


@SETTINGS
@given(valid_logs(max_steps=60))
def test_shared_snapshots_restore_exactly_what_deep_copies_restore(
    events: list[dict[str, Any]],
) -> None:
    """Snapshots share messages and turns with the live state (spec/reducer.md, "Cost"); after
    every event the state equals the one a reducer that deep-copies everything reaches."""
    shared, plain = Reducer(), _DeepCopyReducer()
    for ev in events:
        shared.apply(copy.deepcopy(ev))
        plain.apply(copy.deepcopy(ev))
        assert shared.state == plain.state


def test_a_snapshot_between_two_merged_tool_results_restores_one_result() -> None:
    """The second result of a reply is merged into the message that holds the first; a snapshot
    taken between them still restores the message with one result."""
    b = Builder()
    b.add("thread_started", {"agent": copy.deepcopy(AGENT), "metadata": {}})
    b.add("user_message", {"content": "go"}, "user")
    b.add("turn_started", {"turn_id": "t1"})
    for tid in ("a", "b"):
        call = {"turn_id": "t1", "tool_use_id": tid, "name": "read_file", "input": {}}
        b.add("tool_called", {**call, "kind": "sandbox", "effect": "read"}, "model")
    result = {"turn_id": "t1", "name": "read_file", "content": "x", "is_error": False}
    b.add("tool_result", {**result, "tool_use_id": "a"}, "tool")
    b.add("snapshot_taken", {"snapshot_id": "s"})
    b.add("tool_result", {**result, "tool_use_id": "b"}, "tool")
    b.epoch += 1
    b.add("restored", {"snapshot_id": "s"})
    state = threads_cases.reduce(b.events)
    assert [blk["tool_use_id"] for blk in state["messages"][-1]["content"]] == ["a"]
    assert state["pending_tool_calls"] == ["b"]
