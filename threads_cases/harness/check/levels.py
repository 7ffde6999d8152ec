"""Conformance levels (spec/conformance.md section 9): which of the levels of
``spec/conformance/levels.json`` an implementation reaches in a ``conformance`` run, and what
blocks the next one.

:func:`read_levels` reads the levels of a suite folder (``[]`` when it has none);
:func:`levels_of` judges the results of a run: ``{impl: {"level": name | None, "next": name |
None, "blocked_by": [str, ...]}}``, ``blocked_by`` naming at most :data:`MAX_BLOCKERS`
tests that did not pass, ``"<area>: not run"`` for an area the run left out (``--area``,
``-k``) and ``"<area>: not sent to drivers by this version"`` for one the command cannot run.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ...core.resources import conformance_dir
from ...core.strictjson import read_json_file
from ..run.runner import CaseResult

#: What ``blocked_by`` lists at most: the first tests, in run order.
MAX_BLOCKERS = 5


def read_levels(root: str | Path | None = None) -> list[dict[str, Any]]:
    """The levels of a suite (``levels.json``), in order; ``[]`` when the suite has none.
    Raises ``CaseError("case_invalid")`` for a file that is not ``{"format": 1, "levels":
    [{"name", "description", "areas": [str]}, ...]}``."""
    path = (Path(root) if root is not None else conformance_dir()) / "levels.json"
    if not path.is_file():
        return []
    doc = read_json_file(path, code="case_invalid")
    levels = doc.get("levels") if isinstance(doc, dict) else None
    if (
        doc.get("format") != 1
        or not isinstance(levels, list)
        or not all(
            isinstance(lv, dict)
            and isinstance(lv.get("name"), str)
            and isinstance(lv.get("areas"), list)
            and all(isinstance(a, str) for a in lv["areas"])
            for lv in levels
        )
    ):
        raise CaseError(
            "case_invalid",
            'levels.json must be {"format": 1, "levels": [{"name", "description", "areas"}]}',
            file=str(path),
        )
    return levels


def _blockers(
    level: dict[str, Any], mine: list[CaseResult], run_areas: set[str], known: set[str]
) -> list[str]:
    """What keeps ``level`` from being reached by these results (empty: it is reached)."""
    out = [
        f"{area}: not run" if area in known else f"{area}: not sent to drivers by this version"
        for area in level["areas"]
        if area not in run_areas
    ]
    for r in mine:
        area = r.case.split("/", 1)[0]
        if area in level["areas"] and r.verdict != "pass":
            out.append(r.case)
    return out


def levels_of(
    results: Sequence[CaseResult],
    implementations: Sequence[str],
    levels: Sequence[dict[str, Any]],
    run_areas: Sequence[str],
    known_areas: Sequence[str],
) -> dict[str, dict[str, Any]]:
    """Each implementation's level. A level is reached when the level before it is and the
    run ran each of its areas and every test there passed (``pass``; a known failure,
    ``xfail``, does not count as passing)."""
    areas = set(run_areas)
    out: dict[str, dict[str, Any]] = {}
    for impl in implementations:
        mine = [r for r in results if r.implementation == impl]
        reached: str | None = None
        judged: dict[str, Any] = {"level": None, "next": None, "blocked_by": []}
        for level in levels:
            blockers = _blockers(level, mine, areas, set(known_areas))
            if blockers:
                judged = {"level": reached, "next": level["name"], "blocked_by": blockers}
                break
            reached = level["name"]
            judged = {"level": reached, "next": None, "blocked_by": []}
        judged["blocked_by"] = judged["blocked_by"][:MAX_BLOCKERS]
        out[impl] = judged
    return out


def level_lines(levels: dict[str, dict[str, Any]]) -> list[str]:
    """One terminal line per implementation: its level and what blocks the next."""
    lines = []
    for impl, lv in levels.items():
        text = f"{impl}: level {lv['level'] or 'none'}"
        if lv["next"] is not None:
            text += f"; {lv['next']} is blocked by {', '.join(lv['blocked_by'])}"
        lines.append(text)
    return lines
