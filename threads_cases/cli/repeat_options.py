"""The options of ``run --repeat N`` (spec/replay.md 11.9) and the :class:`Repeat` they make.
Kept apart from run_commands.py: the command only passes them through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from ..harness.run.repeat import Repeat

RepeatOpt = Annotated[
    int,
    typer.Option(
        "--repeat",
        min=1,
        help="With --live or --supply: run each case N times per implementation (within the "
        "live budget) and report its pass rate, Wilson 95% interval, pass^k and flips.",
    ),
]
FailUnderRateOpt = Annotated[
    float | None,
    typer.Option(
        "--fail-under-rate",
        min=0.0,
        max=1.0,
        help="With --repeat: fail a case whose pass rate's Wilson 95% lower bound is below P.",
    ),
]


def build_repeat(runs: int, fail_under_rate: float | None, live: Any, supply: Any) -> Repeat | None:
    """:func:`threads_cases.harness.run.repeat.repeat_for` (the refusals are the library's)."""
    from ..harness.run.repeat import repeat_for

    return repeat_for(runs, fail_under_rate, live, supply)
