"""Forks share their parent's log prefix, ids and state (issue 20): a property test that any
program of turns, snapshots, restores and forks (recorded on parents and forks alike, in any
order) gives every thread the same log, state and sandbox as the deep-copy fork it replaced."""

from __future__ import annotations

import copy
from typing import Any

from conftest import make_agent
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.case.artifacts import ArtifactStore
from threads_cases.core.log import encode_log
from threads_cases.core.reducer import reduce
from threads_cases.reference.branching import MAX_DEPTH, IdIndex
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply
from threads_cases.reference.runtime import Clock
from threads_cases.reference.sandbox import FakeSandbox
from threads_cases.reference.thread import Thread


def deep_copy_fork(t: Thread, at: str, branch: str) -> Thread:
    """What Thread.fork did before issue 20: copy the prefix, reduce it again, copy the ids."""
    events = list(t._events)
    idx = next(i for i, e in enumerate(events) if e["event_id"] == at)
    prefix = copy.deepcopy(events[: idx + 1])
    assert isinstance(t.sandbox, FakeSandbox)
    sandbox = FakeSandbox(t._files_at(idx, reduce(prefix)))  # type: ignore[arg-type]
    child = Thread(
        prefix,
        sandbox=sandbox,
        artifacts=ArtifactStore(t.artifacts.blobs),
        thread_id=t.thread_id,
        clock=t.clock,
        agent=t.agent,
    )
    child._ids = IdIndex(dict(t._ids._entries(len(events) + 1)))
    child._next_branch = branch
    child._recorder.append("forked", {"from_event_id": at, "branch_id": branch})
    child._next_branch = None
    return child


def turn(t: Thread, n: int, write: bool) -> None:
    call = ("write_file", {"path": "f.txt", "content": f"v{n}"}) if write else None
    read = ("read_file", {"path": "f.txt"})
    name, inp = call or read
    t.run_turn(f"q{n}", ScriptedModel([tool_reply((f"tu{n}", name, inp)), text_reply(f"a{n}")]))


OP = st.one_of(
    st.tuples(st.just("turn"), st.integers(0, 9), st.booleans()),
    st.tuples(st.just("snapshot"), st.integers(0, 9), st.just(False)),
    st.tuples(st.just("restore"), st.integers(0, 9), st.integers(0, 9)),
    st.tuples(st.just("fork"), st.integers(0, 9), st.integers(0, 99)),
)


def run(program: list[tuple[str, int, Any]], fork: Any) -> list[Thread]:
    first = Thread.create(
        agent=make_agent(), sandbox=FakeSandbox({"f.txt": "v0"}), thread_id="t", clock=Clock(0)
    )
    threads = [first]
    for n, (op, which, arg) in enumerate(program):
        t = threads[which % len(threads)]
        if op == "turn" and t.state["status"] != "in_turn":  # a fork made mid-turn stays there
            turn(t, n, arg)
        elif op == "snapshot":
            t.snapshot()
        elif op == "restore" and t.state["snapshots"] and t.state["status"] != "in_turn":
            snaps = t.state["snapshots"]
            t.restore(snaps[arg % len(snaps)])
        elif op == "fork":
            at = t.events[arg % len(t.events)]["event_id"] if arg % 3 else t.events[-1]["event_id"]
            threads.append(fork(t, at, f"b{n}"))
    return threads


@settings(max_examples=30, deadline=None)
@given(st.lists(OP, min_size=1, max_size=12))
def test_a_shared_fork_equals_the_deep_copy_fork(program: list[tuple[str, int, Any]]) -> None:
    new = run(program, lambda t, at, b: t.fork(at, branch_id=b))
    old = run(program, deep_copy_fork)
    assert len(new) == len(old)
    for a, b in zip(new, old, strict=True):
        assert encode_log(a.events) == encode_log(b.events)
        assert a.state == b.state == reduce(copy.deepcopy(list(a.events)))
        assert a.sandbox.files == b.sandbox.files  # type: ignore[attr-defined]


def test_a_chain_of_forks_deeper_than_the_sharing_limit_is_flattened() -> None:
    t = Thread.create(agent=make_agent(), sandbox=FakeSandbox({"f.txt": "v0"}), clock=Clock(0))
    chain = [t]
    for n in range(MAX_DEPTH * 2 + 3):
        turn(chain[-1], n, n % 2 == 0)
        ends = [e["event_id"] for e in chain[-1].events if e["type"] == "turn_completed"]
        at = ends[-1 - n % 2] if len(ends) > 1 else ends[-1]  # the end, or the turn before
        chain.append(chain[-1].fork(at, branch_id=f"b{n}"))
    assert max(c._events._depth for c in chain) <= MAX_DEPTH
    assert max(c._ids._depth for c in chain) <= MAX_DEPTH
    for c in chain:
        events = list(c.events)
        assert c.state == reduce(copy.deepcopy(events))
        for i in (0, len(events) // 2, len(events) - 1):
            assert c.fork(events[i]["event_id"]).events[: i + 1] == events[: i + 1]
        assert len({e["event_id"] for e in events}) == len(events)
