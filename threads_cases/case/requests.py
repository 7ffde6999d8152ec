"""Request records: the model requests of a recorded turn, kept in ``model.json`` so a run can
show *what* changed when a replayed request differs (spec/case-format.md 3.4).

Each reply of ``model.json`` may carry ``request``, the request of the model call it
answered, as a delta from the previous call's request::

    {"keep": k, "messages": [m_k, ...], "model": str, "system": str, "tools": [...]}

The call's messages are the first ``k`` messages of the previous call's request (none for
the first call) followed by ``messages``; ``k`` is the number of leading messages equal (as
canonical JSON) in both requests. ``model``, ``system`` and ``tools`` (each tool as
``{name, description, input_schema}``) are given whole. The request is the one the
reducer state just before the call's ``model_requested`` event asks for (thread-log.md
3.4), so its sha256 is the reply's ``request_sha256`` when the log was recorded by a
conforming runtime.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..core.canonical import canonical_line
from ..core.reducer import Reducer
from ..core.request import build_request


def turn_requests(
    prefix: Sequence[dict[str, Any]],
    turn: Sequence[dict[str, Any]],
    agent: dict[str, Any] | None = None,
    *,
    start: Reducer | None = None,
) -> list[dict[str, Any]]:
    """The whole request of every ``model_requested`` event of ``turn`` (canonical events),
    rebuilt from the state of ``prefix`` plus the turn's events before it. ``agent`` (a
    canonical agent) replaces the state's agent, as a replay of the user's own agent does.
    ``start``: a reducer already in the state of ``prefix`` (``Case.fork``, the loader's
    reduction), used instead of reducing ``prefix`` again."""
    reducer = start
    if reducer is None:
        reducer = Reducer()
        for ev in prefix:
            reducer.apply(ev)
    if agent is not None:
        reducer.state["agent"] = agent
    out = []
    for ev in turn:
        if ev["type"] == "model_requested":
            out.append(_frozen(build_request(reducer.state)))
        last = reducer.state["last_seq"]
        if last is not None and ev["seq"] > last + 1:
            # the saved turn leaves out its x_ extension events (an imported session's
            # compaction records, for one); reducers skip them, so only seq moves on
            reducer.state["last_seq"] = ev["seq"] - 1
        reducer.apply(ev)
    return out


def _frozen(request: dict[str, Any]) -> dict[str, Any]:
    """``request`` as it is now. The reducer never changes a message in place (it appends, or
    replaces the last one; spec/reducer.md "Cost"), so a copy of the list keeps the messages
    by reference, and :func:`_keep` sees an unchanged message as the same object. Copying
    the whole conversation per call made a turn's cost quadratic in its size."""
    return {**request, "messages": list(request["messages"])}


def _keep(previous: Sequence[Any], current: Sequence[Any]) -> int:
    k = 0
    for a, b in zip(previous, current, strict=False):
        if a is not b and canonical_line(a) != canonical_line(b):
            break
        k += 1
    return k


def delta_records(requests: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Whole requests -> the ``request`` records of ``model.json`` (module docstring)."""
    out = []
    previous: Sequence[Any] = []
    for req in requests:
        k = _keep(previous, req["messages"])
        out.append(
            {
                "keep": k,
                "messages": list(req["messages"][k:]),
                "model": req["model"],
                "system": req["system"],
                "tools": req["tools"],
            }
        )
        previous = req["messages"]
    return out


def expand_records(replies: Sequence[dict[str, Any]]) -> list[dict[str, Any] | None]:
    """The whole recorded request of each reply of ``model.json`` (``None`` from the first
    reply without a ``request`` record on: older cases hold only the hash)."""
    out: list[dict[str, Any] | None] = []
    previous: list[Any] | None = []
    for reply in replies:
        rec = reply.get("request")
        if rec is None or previous is None:
            previous = None
            out.append(None)
            continue
        messages = previous[: rec["keep"]] + list(rec["messages"])
        out.append(
            {
                "model": rec["model"],
                "system": rec["system"],
                "messages": messages,
                "tools": rec["tools"],
            }
        )
        previous = messages
    return out
