"""Where each answer of a run came from (spec/replay.md 11.11): every model reply and every
tool result of a ``--supply`` or ``--live`` run is ``recorded``, ``supplied`` or ``live``.

The implementation reports its own (the replay answer's ``provenance``, both
implementations: :func:`threads_cases.reference.replay.answer_provenance` and replay.ts);
on a live turn the harness answered the model calls, so their provenance is the ledger's
(``reused`` is ``recorded``). A result line carries ``answers`` ``{"model": [...], "tools":
[...]}``; the footer and the terminal count them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

KINDS = ("recorded", "supplied", "live")


def answers_of(
    given: dict[str, Any] | None, ledger: Sequence[dict[str, Any]] | None = None
) -> dict[str, list[str]]:
    """A result's ``answers`` from the implementation's ``provenance`` (``given``; None from
    a driver that sent none: nothing known) and, on a live turn, the ledger's replies."""
    given = given or {}
    model = list(given.get("model") or [])
    if ledger is not None:
        model = ["recorded" if e["provenance"] == "reused" else e["provenance"] for e in ledger]
    return {"model": model, "tools": list(given.get("tools") or [])}


def _count(values: Sequence[str]) -> dict[str, int]:
    return {k: sum(1 for v in values if v == k) for k in KINDS}


def answer_totals(results: Sequence[Any]) -> dict[str, dict[str, int]] | None:
    """The footer's ``answers``: each kind counted over the results that carry answers
    (``{"model": {recorded, supplied, live}, "tools": {...}}``), or None when none does."""
    carried = [r.answers for r in results if getattr(r, "answers", None) is not None]
    if not carried:
        return None
    return {part: _count([v for a in carried for v in a[part]]) for part in ("model", "tools")}


def answer_lines(results: Sequence[Any]) -> list[str]:
    """``answers: model replies recorded R, supplied S, live L; tool results recorded R,
    supplied S, live L`` (one line), or none when no result carries answers."""
    totals = answer_totals(results)
    if totals is None:
        return []
    m, t = totals["model"], totals["tools"]
    return [
        f"answers: model replies recorded {m['recorded']}, supplied {m['supplied']}, live "
        f"{m['live']}; tool results recorded {t['recorded']}, supplied {t['supplied']}, "
        f"live {t['live']}"
    ]
