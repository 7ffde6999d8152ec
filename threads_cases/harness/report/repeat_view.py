"""How the results of ``run --repeat N`` read (spec/replay.md 11.9): one terminal line per
repeated result, a total line, and the footer's ``repeat`` totals. The same lines go to the
GitHub job summary and the JUnit properties (:func:`junit_properties`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from ...core.shapes import RepeatSummary
from ..run.runner import CaseResult, SuiteResult


def rate_text(info: RepeatSummary) -> str:
    """``14/20 passed, rate 0.700 (Wilson 95% 0.481-0.855), pass^20 0.000, 7 flip(s) (flip
    rate 0.368)``; runs not judged (skipped, or cut by the live budget) are counted apart."""
    n, c = info["judged"], info["passes"]
    if n == 0:
        text = "no run judged"
    else:
        lo, hi = cast("list[float]", info["interval"])  # not None once a run is judged
        text = (
            f"{c}/{n} passed, rate {info['rate']:.3f} (Wilson 95% {lo:.3f}-{hi:.3f}), "
            f"pass^{n} {info['pass_k'][-1]:.3f}, {info['flips']} flip(s)"
        )
        if info["flip_rate"] is not None:
            text += f" (flip rate {info['flip_rate']:.3f})"
    left = info["runs"] - n
    return text + (
        f"; {left} run(s) not judged (skipped or cut by the live budget)" if left else ""
    )


def repeat_line(r: CaseResult) -> str:
    """One result's line: ``repeat <case> on <impl>: <rate_text>: <verdict>``."""
    assert r.repeat is not None
    return f"repeat {r.case} on {r.implementation}: {rate_text(r.repeat)}: {r.verdict}"


def repeat_totals(results: Sequence[CaseResult]) -> dict[str, Any] | None:
    """The footer's ``repeat``: ``{runs, fail_under_rate, results, flipped, below_rate}``
    (``flipped``: results whose runs both passed and did not; ``below_rate``: results that
    failed ``--fail-under-rate``), or None when nothing was repeated."""
    infos = [r for r in results if r.repeat is not None]
    if not infos:
        return None
    first = infos[0].repeat
    assert first is not None
    return {
        "runs": first["runs"],
        "fail_under_rate": first["fail_under_rate"],
        "results": len(infos),
        "flipped": sum(
            1 for r in infos if r.repeat and 0 < r.repeat["passes"] < r.repeat["judged"]
        ),
        "below_rate": sum(1 for r in infos if "pass_rate_below" in r.reasons),
    }


def _flipped(info: dict[str, Any] | None) -> bool:
    """Some judged runs passed and some did not."""
    return info is not None and 0 < info["passes"] < info["judged"]


def repeat_lines(suite: SuiteResult) -> list[str]:
    """One line per repeated result, then ``repeat total: ...``; empty without --repeat."""
    totals = repeat_totals(suite.results)
    if totals is None:
        return []
    out = [repeat_line(r) for r in suite.results if r.repeat is not None]
    text = (
        f"repeat total: {totals['results']} result(s) of {totals['runs']} run(s) each; "
        f"{totals['flipped']} flipped"
    )
    if totals["fail_under_rate"] is not None:
        text += (
            f"; {totals['below_rate']} below --fail-under-rate {totals['fail_under_rate']:g} "
            "(the Wilson 95% lower bound is compared)"
        )
    return [*out, text]


def junit_properties(r: CaseResult) -> list[tuple[str, str]]:
    """The JUnit ``<property>`` name/value pairs of a repeated result (none otherwise)."""
    info = r.repeat
    if info is None:
        return []
    pairs: list[tuple[str, object]] = [("repeat.runs", info["runs"])]
    pairs += [("repeat.passes", info["passes"])]
    pairs += [("repeat.rate", info["rate"]), ("repeat.flips", info["flips"])]
    if info["interval"] is not None:
        pairs += [("repeat.wilson95", f"{info['interval'][0]}-{info['interval'][1]}")]
    pairs += [("repeat.pass_all", info["pass_k"][-1] if info["pass_k"] else None)]
    return [(k, "null" if v is None else str(v)) for k, v in pairs]
