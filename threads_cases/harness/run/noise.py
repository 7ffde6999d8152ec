"""Is a change between two repeated runs larger than their noise? (spec/replay.md 11.10)

A result of ``run --repeat N`` stores its pass ``rate`` over ``judged`` runs and its
``flip_rate`` (:mod:`.repeat`). For independent runs of pass chance p a flip happens with
chance 2p(1 - p), so the flip rate measures the variance of one run's outcome: the rate of
n runs then varies by about ``v / (2n)``, v = 2p(1 - p). The noise of a change from report A
to report B is ``z * sqrt(vA / (2 nA) + vB / (2 nB))`` at z = 2.575829 (99%), where each side's
v is the larger of its measured flip rate and 2r(1 - r) of its own rate r (the flip rate
alone underestimates it when runs come in streaks). A change is *larger than the noise*
when ``|rB - rA|`` exceeds it; with fewer than two judged runs on a side the noise is
unknown and nothing is called significant.
"""

from __future__ import annotations

import math
from typing import Any

#: the two-sided 99% normal quantile: a change is called larger than the noise only at 99%,
#: so that reruns of an unchanged case are seldom flagged (a 95% band flags about 1 in 15)
Z99 = 2.5758293035489004


def _side(info: Any) -> tuple[float, int, float] | None:
    """``(rate, judged, v)`` of a result's ``repeat``, or None when it cannot measure noise."""
    if not isinstance(info, dict):
        return None
    rate, n, flip = info.get("rate"), info.get("judged"), info.get("flip_rate")
    if not isinstance(n, int) or n < 2 or not isinstance(rate, (int, float)):
        return None
    if not isinstance(flip, (int, float)):
        return None
    return float(rate), n, max(float(flip), 2 * rate * (1 - rate))


def rate_change(a: Any, b: Any, z: float = Z99) -> dict[str, Any] | None:
    """The change of pass rate between two results' ``repeat`` objects: ``{"a", "b",
    "delta", "noise", "significant"}`` (rates and noise rounded to 6 decimals; ``noise`` and
    ``significant`` null when a side has fewer than two judged runs), or None when either
    result was not repeated."""
    if not (isinstance(a, dict) and isinstance(b, dict)):
        return None
    ra, rb = a.get("rate"), b.get("rate")
    if not isinstance(ra, (int, float)) or not isinstance(rb, (int, float)):
        return None
    delta = float(rb) - float(ra)
    sa, sb = _side(a), _side(b)
    noise = None
    if sa is not None and sb is not None:
        noise = z * math.sqrt(sa[2] / (2 * sa[1]) + sb[2] / (2 * sb[1]))
    return {
        "a": round(float(ra), 6),
        "b": round(float(rb), 6),
        "delta": round(delta, 6),
        "noise": None if noise is None else round(noise, 6),
        "significant": None if noise is None else abs(delta) > noise + 1e-12,
    }


def change_text(change: dict[str, Any]) -> str:
    """``rate 0.650 -> 0.700 (+0.050; noise ±0.290): within the noise`` (or ``larger than
    the noise``, or ``noise unknown``)."""
    head = f"rate {change['a']:.3f} -> {change['b']:.3f} ({change['delta']:+.3f}"
    if change["noise"] is None:
        return head + "): noise unknown (fewer than 2 judged runs)"
    word = "larger than the noise" if change["significant"] else "within the noise"
    return head + f"; noise ±{change['noise']:.3f}): {word}"
