"""The incremental request hash (threads_cases.core.request) always equals the hash of
the whole request, whatever the reducer did to the messages in between."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from threads_cases.core.dialects import get_dialect
from threads_cases.core.reducer import Reducer
from threads_cases.core.request import (
    ModelRequest,
    RequestHasher,
    build_request,
    request_sha256,
)

ROOT = Path(__file__).resolve().parent.parent
REDUCE = [
    p
    for p in sorted((ROOT / "spec" / "conformance" / "reduce").glob("*.json"))
    if "log" in json.loads(p.read_text("utf-8"))  # the others hold raw text that is refused
]


def _full(state: dict[str, Any]) -> str:
    return request_sha256(dict(build_request(state)))


@pytest.mark.parametrize("path", REDUCE, ids=lambda p: p.stem)
def test_matches_the_full_hash_after_every_event_of_the_conformance_logs(path: Path) -> None:
    doc = json.loads(path.read_text("utf-8"))
    dialect = get_dialect(doc["dialect"])
    reducer = Reducer()
    hasher = RequestHasher()
    for ev in doc["log"]:
        try:
            reducer.apply(dialect.decode_event(ev))
        except Exception:  # a log that is refused on purpose: compare up to there
            break
        assert hasher.sha256(reducer.state) == _full(reducer.state)


_text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_block = st.fixed_dictionaries({"type": st.just("text"), "text": _text})
_op = st.one_of(
    st.tuples(st.just("append"), st.sampled_from(["user", "assistant"]), st.lists(_block)),
    st.tuples(st.just("extend"), _block),
    st.tuples(st.just("restore"), st.integers(min_value=0, max_value=8)),
    st.tuples(st.just("agent"), _text),
    st.tuples(st.just("hash"), st.none()),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_op, max_size=40))
def test_matches_the_full_hash_under_appends_extensions_and_restores(
    ops: list[tuple[str, Any, Any] | tuple[str, Any]],
) -> None:
    """Appends, in-place extension of the last message, a replaced list (a restore, possibly to
    a shorter one) and a replaced agent: the incremental hash never goes stale."""
    state: dict[str, Any] = {
        "agent": {"model": "m", "system": "s", "tools": []},
        "messages": [],
    }
    hasher = RequestHasher()
    for op in ops:
        kind = op[0]
        if kind == "append":
            state["messages"].append({"role": op[1], "content": list(op[2])})
        elif kind == "extend" and state["messages"]:
            state["messages"][-1]["content"].append(op[1])
        elif kind == "restore":
            state["messages"] = copy.deepcopy(state["messages"][: op[1]])
        elif kind == "agent":
            state["agent"] = {"model": "m", "system": op[1], "tools": []}
        assert hasher.sha256(state) == _full(state)


def test_a_model_request_carries_its_hash() -> None:
    state = {"agent": None, "messages": [{"role": "user", "content": "hi"}]}
    req = RequestHasher().request(state)
    assert isinstance(req, ModelRequest)
    assert req.sha256 == request_sha256(dict(req)) == request_sha256(req)
