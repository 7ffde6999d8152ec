"""Turns of a thread log: listing them and drafting matchers for one.

A *turn* here is a ``user_message`` followed by its ``turn_started`` and the events up to
its ``turn_completed`` or ``turn_failed``; turns are numbered from 1 in log order (a turn
without user input, which cannot be saved as a case, is not numbered). :func:`list_turns`
returns, per turn::

    {"index": 1, "text": "first words of the user input", "tools": ["Read", "Glob"],
     "fork_point": "<event_id before the user_message: the --at of `save`>",
     "user_message": "<event_id>", "terminal": "<event_id>" | null,
     "status": "completed" | "failed" | "open", "stop_reason": str | null,
     "turn_id": str}

:func:`draft_matchers` proposes ``{"must": [...], "expect": [...]}`` for a turn: a must for
each successful ``tool_result`` (``{"type": "tool_result", "data": {"name", "is_error":
false}}``, repeats dropped) and one for the terminal event (``{"type": "turn_completed",
"data": {"stop_reason"}}`` or ``{"type": "turn_failed", "data": {"error": {"code"}}}``),
and as expect the turn's ``tool_called`` events in order
(``{"type": "tool_called", "data": {"name"}}``).

Refusals: ``CaseError("invalid_request")`` for a turn number out of range or a turn with
no terminal event; ``log_invalid`` from reading the log.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..core.errors import CaseError

TEXT_WORDS = 12


def first_words(content: Any, words: int = TEXT_WORDS) -> str:
    """The first ``words`` words of a user input (text blocks joined), ``…`` if cut."""
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text = " ".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
        if not text and content:
            text = f"[{', '.join(str(b.get('type')) for b in content if isinstance(b, dict))}]"
    else:
        text = ""
    parts = text.split()
    out = " ".join(parts[:words])
    return out + (" …" if len(parts) > words else "")


def list_turns(
    events: Iterable[dict[str, Any]], *, keep_events: bool = False
) -> list[dict[str, Any]]:
    """The turns of a log (module docstring). Streams: it holds one turn's summary at a time
    (plus, with ``keep_events``, the turn's events under ``"events"``)."""
    turns: list[dict[str, Any]] = []
    prev_id: str | None = None
    cur: dict[str, Any] | None = None
    for ev in events:
        t = ev["type"]
        if t == "user_message":
            cur = {
                "index": len(turns) + 1,
                "text": first_words(ev["data"]["content"]),
                "tools": [],
                "fork_point": prev_id,
                "user_message": ev["event_id"],
                "terminal": None,
                "status": "open",
                "stop_reason": None,
                "turn_id": None,
            }
            if keep_events:
                cur["events"] = [ev]
            turns.append(cur)
        elif cur is not None and cur["status"] == "open" and not t.startswith("x_"):
            if keep_events:
                cur["events"].append(ev)
            if t == "turn_started" and cur["turn_id"] is None:
                cur["turn_id"] = ev["data"]["turn_id"]
            elif t == "tool_called":
                cur["tools"].append(ev["data"]["name"])
            elif t in ("turn_completed", "turn_failed") and ev["data"]["turn_id"] == cur["turn_id"]:
                cur["terminal"] = ev["event_id"]
                cur["status"] = "completed" if t == "turn_completed" else "failed"
                cur["stop_reason"] = ev["data"].get("stop_reason")
        prev_id = ev["event_id"]
    return turns


#: the hint of a turn out of range (save_log words it for a recording given with --from)
LIST_TURNS_HINT = "list them with `threads-cases turns LOG`"


def turn_events(
    events: Sequence[dict[str, Any]], n: int
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Turn ``n`` (1-based) of ``events`` and its events (user_message .. terminal, no ``x_``).

    Raises ``CaseError("invalid_request")`` when there is no such turn.
    """
    turns = list_turns(events, keep_events=True)
    if not 1 <= n <= len(turns):
        raise CaseError(
            "invalid_request",
            f"--turn {n} is out of range: the log has {len(turns)} turn(s)",
            hint=LIST_TURNS_HINT,
        )
    turn = turns[n - 1]
    return turn, turn.pop("events")


def fork_point(events: Sequence[dict[str, Any]], n: int) -> str:
    """The ``--at`` of turn ``n``: the event just before its user_message."""
    turn, _ = turn_events(events, n)
    if turn["fork_point"] is None:
        raise CaseError("invalid_request", f"turn {n} has no event before its user input")
    return str(turn["fork_point"])


def draft_matchers(events: Sequence[dict[str, Any]], n: int) -> dict[str, list[dict[str, Any]]]:
    """Proposed ``{"must": [...], "expect": [...]}`` for turn ``n`` (module docstring).

    Raises ``CaseError("invalid_request")`` for a turn out of range or one that never ended.
    """
    turn, evs = turn_events(events, n)
    if turn["terminal"] is None:
        raise CaseError(
            "invalid_request",
            f"turn {n} has no turn_completed or turn_failed",
            hint="only a finished turn can be saved as a case",
        )
    return draft_turn(evs)


def draft_turn(evs: Iterable[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """The proposed matchers of one turn's events (user_message .. terminal event, no
    ``x_``; module docstring), as ``draft`` and a save without matchers draft them."""
    must: list[dict[str, Any]] = []
    expect: list[dict[str, Any]] = []
    for ev in evs:
        t, d = ev["type"], ev["data"]
        if t == "tool_result" and d["is_error"] is False:
            m = {"type": "tool_result", "data": {"name": d["name"], "is_error": False}}
            if m not in must:
                must.append(m)
        elif t == "tool_called":
            expect.append({"type": "tool_called", "data": {"name": d["name"]}})
        elif t == "turn_completed":
            must.append({"type": "turn_completed", "data": {"stop_reason": d["stop_reason"]}})
        elif t == "turn_failed":
            # the replay ends an interrupted turn with the same code (replay.md 3.8)
            must.append({"type": "turn_failed", "data": {"error": {"code": d["error"]["code"]}}})
    return {"must": must, "expect": expect}
