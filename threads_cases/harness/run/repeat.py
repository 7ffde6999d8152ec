"""Repeated runs of a case (spec/replay.md 11.9): ``run --repeat N`` with ``--live`` or
``--supply`` runs each case N times per implementation and reports one result per case and
implementation carrying what the N runs showed.

Statistics over the *judged* runs (those not stopped by ``live_budget_exceeded`` and not
``skip``: a run the budget cut, or one that did not run, is no sample of the model), with
``c`` of them passing out of ``n``:

* ``rate`` = c / n, and ``interval``, its Wilson score interval at 95% (z = 1.959964);
* ``pass_k`` = [pass^1, ..., pass^n], pass^k = C(c, k) / C(n, k): the chance that k runs
  drawn from these all pass (pass^1 is the rate; pass^n is 1 only when every run passed);
* ``flips``: how many times a run's outcome (passing or not) differs from the run before
  it, and ``flip_rate`` = flips / (n - 1): for independent runs of pass chance p it
  estimates 2p(1 - p), the noise floor :mod:`.noise` compares changes against.

The verdict: when a run was cut by the budget, ``fail`` (``live_budget_exceeded``: the N runs
asked for did not fit the budget); with ``fail_under_rate`` P, ``pass`` when the interval's
*lower bound* is at least P, else ``fail`` (``pass_rate_below``); without it, the verdict of
the first run that did not pass (its reasons, checks and stop), else the last run's. When
every run ended ``error`` (or every run ``skip``), that verdict stands.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from ...core.errors import CaseError
from ...core.shapes import RepeatSummary

T = TypeVar("T")
#: the two-sided 95% normal quantile of the Wilson interval
Z95 = 1.959963984540054


@dataclass(frozen=True)
class Repeat:
    """``runs`` per case and implementation (``--repeat N``, N >= 1) and the rate a result's
    Wilson lower bound must reach (``--fail-under-rate P``, 0 <= P <= 1, or None)."""

    runs: int
    fail_under_rate: float | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.runs, int) or isinstance(self.runs, bool) or self.runs < 1:
            raise CaseError("invalid_request", f"--repeat must be 1 or more, not {self.runs!r}")
        p = self.fail_under_rate
        if p is not None and not (isinstance(p, (int, float)) and 0 <= p <= 1):
            raise CaseError("invalid_request", f"--fail-under-rate must be from 0 to 1, not {p!r}")


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval ``(low, high)`` of ``passes`` out of ``n`` (n >= 1)."""
    p = passes / n
    denom = 1 + z * z / n
    center = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if passes == 0 else max(0.0, center - half)  # exact at the ends
    high = 1.0 if passes == n else min(1.0, center + half)
    return low, high


def pass_hat(passes: int, n: int, k: int) -> float:
    """pass^k: C(passes, k) / C(n, k) (0 when fewer than k runs passed)."""
    return math.comb(passes, k) / math.comb(n, k)


def flips_of(outcomes: Sequence[bool]) -> int:
    """How many times an outcome differs from the one before it."""
    return sum(1 for a, b in itertools.pairwise(outcomes) if a != b)


def _r6(x: float) -> float:
    return round(x, 6)


def summary(results: Sequence[Any], repeat: Repeat, strict: bool) -> RepeatSummary:
    """The ``repeat`` object of a result (spec/reports.md 1.3) for the N runs ``results``."""
    judged = [r for r in results if not _cut(r) and r.verdict != "skip"]
    outcomes = [r.passed(strict) for r in judged]
    n, c = len(judged), sum(outcomes)
    flips = flips_of(outcomes)
    low_high = wilson(c, n) if n else None
    return {
        "runs": len(results),
        "judged": n,
        "passes": c,
        "rate": _r6(c / n) if n else None,
        "interval": None if low_high is None else [_r6(low_high[0]), _r6(low_high[1])],
        "pass_k": [_r6(pass_hat(c, n, k)) for k in range(1, n + 1)],
        "verdicts": [r.verdict for r in results],
        "flips": flips,
        "flip_rate": _r6(flips / (n - 1)) if n > 1 else None,
        "fail_under_rate": repeat.fail_under_rate,
    }


def _cut(r: Any) -> bool:
    return r.stop is not None and r.stop.get("code") == "live_budget_exceeded"


def _live_sum(results: Sequence[Any]) -> dict[str, Any] | None:
    lives = [r.live for r in results if r.live is not None]
    if not lives:
        return None
    costs = [x["cost_usd"] for x in lives]
    return {
        "provenance": {
            k: sum(x["provenance"][k] for x in lives) for k in ("reused", "supplied", "live")
        },
        "calls": sum(x["calls"] for x in lives),
        "cost_usd": None if any(v is None for v in costs) else round(sum(costs), 6),
    }


def combine(results: Sequence[Any], repeat: Repeat, strict: bool) -> Any:
    """One result for the N runs of a case on an implementation (module docstring): the
    representative run's result with the verdict, ``repeat``, the summed duration and
    live counts."""
    info = summary(results, repeat, strict)
    failing = [r for r in results if not r.passed(strict)]
    cut = [r for r in results if _cut(r)]
    rep = cut[0] if cut else failing[0] if failing else results[-1]
    verdict, reasons, message = rep.verdict, list(rep.reasons), rep.message
    same = {r.verdict for r in results}
    if cut or (len(same) == 1 and same <= {"error", "skip"}):
        pass
    elif repeat.fail_under_rate is not None:
        assert info["interval"] is not None  # some run was judged (n > 0)
        low = info["interval"][0]
        if low >= repeat.fail_under_rate:  # shown by its last passing run
            rep = [r for r in results if r.passed(strict)][-1]
            verdict, reasons, message = rep.verdict, list(rep.reasons), rep.message
        else:
            verdict, reasons = "fail", ["pass_rate_below"]
            message = (
                f"pass rate {info['passes']}/{info['judged']} = {info['rate']:.3f}: its 95% "
                f"Wilson lower bound {low:.3f} is below --fail-under-rate "
                f"{repeat.fail_under_rate:g}"
            )
    return dataclasses.replace(
        rep,
        verdict=verdict,
        reasons=reasons,
        message=message,
        duration_ms=sum(r.duration_ms for r in results),
        live=_live_sum(results),
        answers=_answers_sum(results),
        repeat=info,
    )


def _answers_sum(results: Sequence[Any]) -> dict[str, list[str]] | None:
    """Every run's answers, run after run (spec/replay.md 11.11), or None."""
    carried = [r.answers for r in results if r.answers is not None]
    if not carried:
        return None
    return {part: [v for a in carried for v in a[part]] for part in ("model", "tools")}


def repeat_runs(run: Callable[[], T], repeat: Repeat | None, strict: bool) -> T:
    """``run()`` once without ``repeat``, else ``repeat.runs`` times, combined."""
    if repeat is None:
        return run()
    return cast(T, combine([run() for _ in range(repeat.runs)], repeat, strict))


def repeat_for(runs: int, fail_under_rate: float | None, live: Any, supply: Any) -> Repeat | None:
    """The run's :class:`Repeat`, or None for one run. Raises ``CaseError("invalid_request")``
    for ``--repeat`` above 1 without ``--live`` or ``--supply`` (a replay answers every call
    from the recording: its runs cannot differ), and for ``--fail-under-rate`` without
    ``--repeat`` of 2 or more."""
    if fail_under_rate is not None and runs < 2:
        raise CaseError(
            "invalid_request",
            "--fail-under-rate needs --repeat N with N of 2 or more",
            hint="for example --repeat 20 --fail-under-rate 0.8",
        )
    if runs > 1 and live is None and supply is None:
        raise CaseError(
            "invalid_request",
            "--repeat applies to --live and --supply runs: a replay answers every call from "
            "the recording, so its runs cannot differ",
            hint="add --live (or --supply FILE), or leave --repeat out",
        )
    return None if runs == 1 else Repeat(runs, fail_under_rate)
