"""The options of ``run --repeat N`` (spec/replay.md 11.9) and the :class:`Repeat` they make.
Kept apart from run_commands.py: the command only passes them through."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..core.errors import CaseError

if TYPE_CHECKING:
    from ..harness.repeat import Repeat

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
    """The run's :class:`Repeat`, or None for one run. Raises ``CaseError("invalid_request")``
    for ``--repeat`` above 1 without ``--live`` or ``--supply`` (a replay answers every call
    from the recording: its runs cannot differ), and for ``--fail-under-rate`` without
    ``--repeat`` of 2 or more."""
    from ..harness.repeat import Repeat

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
