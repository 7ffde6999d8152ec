"""Property: no case written by `save` fails its own first run (spec/case-format.md 5.10).

Random turns (reads of present and missing files, writes, external calls, an interruption
by the user) are recorded with the reference runtime, saved with drafted matchers, and run
on threads-py: every saved case passes (or drifts only on request hashes); a refused save
writes nothing."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from conftest import new_thread
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from threads_cases.case.directory import CaseExpectation
from threads_cases.case.turns import draft_matchers, list_turns
from threads_cases.case.verify import acceptable
from threads_cases.harness.run.runner import run_case
from threads_cases.reference.model import ScriptedModel, text_reply, tool_reply

NAMES = st.sampled_from(["a.txt", "b.md", "missing.txt", "dir/c.txt"])
CALL = st.one_of(
    st.builds(lambda p: ("read_file", {"path": p}), NAMES),
    st.builds(lambda p, c: ("write_file", {"path": p, "content": c}), NAMES, st.text(max_size=8)),
    st.builds(lambda c: ("get_weather", {"city": c}), st.sampled_from(["Oslo", "Lima"])),
    st.just(("list_files", {})),
    st.just(("delete_file", {"path": "a.txt"})),
)
STEPS = st.lists(st.lists(CALL, min_size=1, max_size=3), max_size=3)


def record(steps: list[list[tuple[str, dict[str, Any]]]], cut: bool) -> tuple[Any, str]:
    t = new_thread({"a.txt": "alpha\n", "b.md": "# b\n", "dir/c.txt": "c"})
    at = t.events[-1]["event_id"]
    replies = [
        tool_reply(*((f"tu_{i}_{j}", n, inp) for j, (n, inp) in enumerate(step)))
        for i, step in enumerate(steps)
    ]
    if not cut:
        replies.append(text_reply("done"))
    t.run_turn("Do the steps", ScriptedModel(replies))  # cut: ends in model_exhausted
    return t, at


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=STEPS, cut=st.booleans())
def test_a_saved_case_never_fails_its_first_run(
    steps: list[list[tuple[str, dict[str, Any]]]], cut: bool
) -> None:
    t, at = record(steps, cut)
    n = len(list_turns(t.events))
    proposed = draft_matchers(list(t.events), n)
    with tempfile.TemporaryDirectory() as d:
        r = t.save_case("p", at=at, dir=d, expect=CaseExpectation(**proposed))
        if not r.ok:
            assert r.error is not None and r.error.code != "internal_error"
            assert not (Path(d) / "p").exists()
            return
        res = run_case(Path(d) / "p")
        assert acceptable(res.verdict, res.reasons), res.to_json()
