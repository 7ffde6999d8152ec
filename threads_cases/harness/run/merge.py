"""Merging the reports of a sharded run into one (spec/reports.md 1.6).

``run --shard K/N`` on N machines gives N reports, each with ``"shard": {"index": K,
"count": N}`` in its header. :func:`merge_reports` checks that they are the N shards of one
run (same command and implementations, every index 1..N exactly once, no case and
implementation twice, each case in the shard its name hashes to) and returns the lines of
the report a single serial run would have written: results in case-path order, then
implementation order; counts recomputed. Timings differ: ``duration_ms`` is the longest
shard's, ``started_at`` the earliest.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ...core.errors import CaseError
from ..report.suite import iter_report
from .pool import shard_of
from .runner import VERDICTS

#: weakest first: a merged implementation gets the weakest isolation any shard ran it under
_STRENGTH = ("none", "guard", "netns")


def _read(path: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]], Any]:
    lines = [v for _, v in iter_report(path)]
    last = lines[-1]
    if len(lines) < 2 or not isinstance(last, dict) or last.get("kind") != "footer":
        raise CaseError(
            "invalid_request",
            "is not a whole threads-cases report (a header line, results, a footer line): "
            "its footer is missing",
            file=str(path),
            hint="a shard's run was cut short: run that shard again",
        )
    results = [v for v in lines[1:-1] if isinstance(v, dict) and v.get("kind") == "result"]
    return lines[0], results, last


def _shard(head: dict[str, Any], path: str | os.PathLike[str]) -> tuple[int, int]:
    shard = head.get("shard")
    if not isinstance(shard, dict):
        raise CaseError(
            "invalid_request",
            "the report is not a shard (its header has no shard)",
            file=str(path),
            hint="merge the reports of `run --shard K/N`",
        )
    return int(shard["index"]), int(shard["count"])


def _check_shards(heads: Sequence[dict[str, Any]], paths: Sequence[Any]) -> int:
    shards = [_shard(h, p) for h, p in zip(heads, paths, strict=True)]
    count = shards[0][1]
    first = heads[0]
    for (k, n), h, p in zip(shards, heads, paths, strict=True):
        if n != count:
            raise CaseError("invalid_request", f"shard {k}/{n} is not of {count}", file=str(p))
        for key in ("command", "implementations"):
            if h.get(key) != first.get(key):
                raise CaseError(
                    "invalid_request",
                    f"its {key} differs from {paths[0]}'s: not the same run",
                    file=str(p),
                )
    seen: dict[int, Any] = {}
    for (k, _), p in zip(shards, paths, strict=True):
        if k in seen:
            raise CaseError("invalid_request", f"shard {k}/{count} is given twice", file=str(p))
        seen[k] = p
    missing = [k for k in range(1, count + 1) if k not in seen]
    if missing:
        raise CaseError(
            "invalid_request",
            f"shard(s) {', '.join(f'{k}/{count}' for k in missing)} missing",
            hint="pass every shard's report",
        )
    return count


def merge_reports(paths: Sequence[str | os.PathLike[str]]) -> list[dict[str, Any]]:
    """The lines of the merged report (see the module docstring).

    Raises ``CaseError("invalid_request")`` naming the report for a missing or repeated
    shard, reports of different runs, a case and implementation in two shards, or a case in
    a shard it does not hash to; ``json_invalid`` for a report that is not strict JSON Lines."""
    if not paths:
        raise CaseError("invalid_request", "no report to merge")
    read = [_read(p) for p in paths]
    heads = [h for h, _, _ in read]
    count = _check_shards(heads, paths)
    impls: list[str] = list(heads[0]["implementations"])
    owner: dict[tuple[str, str], Any] = {}
    results: list[dict[str, Any]] = []
    for (head, rows, _), p in zip(read, paths, strict=True):
        k = int(head["shard"]["index"])
        for r in rows:
            key = (r["path"], r["implementation"])
            if key in owner:
                raise CaseError(
                    "invalid_request",
                    f"{key[0]} on {key[1]} is in two shards ({owner[key]} and {p})",
                    file=str(p),
                )
            if shard_of(Path(r["path"]).name, count) != k:
                raise CaseError(
                    "invalid_request",
                    f"{r['path']} does not belong to shard {k}/{count}",
                    file=str(p),
                )
            owner[key] = p
            results.append(r)
    order = {name: n for n, name in enumerate(impls)}
    results.sort(key=lambda r: (Path(r["path"]), order.get(r["implementation"], len(order))))
    return [_header(heads, impls), *results, _footer([f for _, _, f in read], results)]


def _header(heads: Sequence[dict[str, Any]], impls: list[str]) -> dict[str, Any]:
    isolation = {}
    for name in impls:
        modes = [h.get("isolation", {}).get(name, "none") for h in heads]
        isolation[name] = min(modes, key=lambda m: _STRENGTH.index(m) if m in _STRENGTH else 0)
    out = {k: v for k, v in heads[0].items() if k not in ("shard", "cwd")}
    out["isolation"] = isolation
    out["started_at"] = min(h["started_at"] for h in heads)
    # the folder the shards ran from, when they all say the same one: shards run from
    # different folders (machines) leave no one folder their paths are read from
    folders = {h.get("cwd") for h in heads}
    if len(folders) == 1 and None not in folders:
        out["cwd"] = heads[0]["cwd"]
    return out


def _footer(footers: Sequence[dict[str, Any]], results: list[dict[str, Any]]) -> dict[str, Any]:
    counts = dict.fromkeys(VERDICTS, 0)
    for r in results:
        counts[r["verdict"]] += 1
    out: dict[str, Any] = {
        "kind": "footer",
        "counts": counts,
        "total": len(results),
        "duration_ms": max(float(f.get("duration_ms", 0)) for f in footers),
        "exit_status": max(int(f.get("exit_status", 0)) for f in footers),
        "not_started": sum(int(f.get("not_started", 0)) for f in footers),
    }
    lives = [f["live"] for f in footers if isinstance(f.get("live"), dict)]
    if lives:
        out["live"] = _live_totals(lives)
    _summed(out, footers)
    return out


def _summed(out: dict[str, Any], footers: Sequence[dict[str, Any]]) -> None:
    """The shards' ``repeat`` totals (replay.md 11.9: the runs and rate of the first, the
    counts summed) and ``answers`` counts (11.11, summed) into ``out``."""
    repeats = [f["repeat"] for f in footers if isinstance(f.get("repeat"), dict)]
    if repeats:
        out["repeat"] = {
            "runs": repeats[0]["runs"],
            "fail_under_rate": repeats[0]["fail_under_rate"],
            **{k: sum(int(t[k]) for t in repeats) for k in ("results", "flipped", "below_rate")},
        }
    answers = [f["answers"] for f in footers if isinstance(f.get("answers"), dict)]
    if answers:
        out["answers"] = {
            part: {
                k: sum(int(a[part][k]) for a in answers) for k in ("recorded", "supplied", "live")
            }
            for part in ("model", "tools")
        }


def _live_sum(values: list[Any]) -> Any:
    """The sum of shard values, or None when a shard's is unknown (null)."""
    return None if any(v is None for v in values) else round(sum(values), 6)


def _live_totals(lives: list[dict[str, Any]]) -> dict[str, Any]:
    """Live shards' totals summed (each shard had its own budgets, spec/replay.md 11.4)."""
    return {
        "provenance": {
            k: sum(int(t["provenance"][k]) for t in lives) for k in ("reused", "supplied", "live")
        },
        "calls": sum(int(t["calls"]) for t in lives),
        "cost_usd": _live_sum([t["cost_usd"] for t in lives]),
        "budget": sum(int(t["budget"]) for t in lives),
        "max_cost_usd": _live_sum([t["max_cost_usd"] for t in lives]),
        # the first shard's reason (each shard's spend stands apart)
        "spend_unknown": next((t["spend_unknown"] for t in lives if t.get("spend_unknown")), None),
    }
