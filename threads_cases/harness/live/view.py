"""The terminal lines of a live run (spec/replay.md 11.6): per case and implementation, the
provenance counts, the live calls and their cost; then the run's totals against the limits."""

from __future__ import annotations

from typing import Any

from ...core.shapes import LiveProvenance
from ..run.runner import SuiteResult


def _cost(value: Any) -> str:
    return "cost unknown" if value is None else f"${value:.6f}"


def _provenance(p: LiveProvenance) -> str:
    return f"reused {p['reused']}, supplied {p['supplied']}, live {p['live']}"


def live_lines(suite: SuiteResult) -> list[str]:
    """One line per live result, then a total line; empty when the run was not live."""
    if suite.live is None:
        return []
    out = []
    for r in suite.results:
        if r.live is not None:
            out.append(
                f"live {r.case} on {r.implementation}: {_provenance(r.live['provenance'])}; "
                f"{r.live['calls']} call(s), {_cost(r.live['cost_usd'])}"
            )
    t = suite.live
    limit = "" if t["max_cost_usd"] is None else f" of ${t['max_cost_usd']:g}"
    out.append(
        f"live total: {_provenance(t['provenance'])}; {t['calls']} of {t['budget']} "
        f"call(s), {_cost(t['cost_usd'])}{limit}"
    )
    if t.get("spend_unknown"):
        out.append(f"live spend unknown since {t['spend_unknown']}")
    return out
