"""The set-up of a suite run from the ``run`` command's options, before :func:`run_suite`:
which implementations run, which cases ``--last-failed`` keeps, the options that cannot go
together, and the reason codes the command refuses with (exit 2) instead of failing.

Light to import (the registry and the report reader load on first use), so the CLI's
start-up stays cheap (tests/test_fast_start.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.errors import CaseError

if TYPE_CHECKING:
    from ..protocol.client import Implementation

__all__ = ["REFUSALS", "check_live_accept", "last_failed_pairs", "suite_implementations"]

#: Reason codes ``run`` refuses with before any case starts (exit 2, spec/reason-codes.md).
REFUSALS = (
    "invalid_request",
    "dialect_unknown",
    "json_invalid",
    "live_unavailable",
    "baseline_invalid",
)


def check_live_accept(live: bool, accept: bool) -> None:
    """``invalid_request`` for ``--live`` with ``--accept``: a live run never writes a case."""
    if live and accept:
        raise CaseError(
            "invalid_request",
            "--live never writes to a case: --accept cannot go with it",
            hint="review the live run, then `threads-cases accept --from-live CASE`",
        )


def suite_implementations(
    impl: list[str] | None,
    *,
    timeout: float | None,
    isolated: bool,
    validate_protocol: bool,
    isolation: str | None,
) -> list[Implementation]:
    """The implementations a run uses: ``impl`` (``--impl``), else every available one; those
    named (with ``--impl``, or configured in pyproject.toml) must start. ``isolation`` is the
    asked mode, else netns where available, else guard. Raises ``CaseError``
    (``invalid_request``, ``dialect_unknown``...) before any starts."""
    from .isolation import check_mode, default_isolation
    from .registry import available_implementations, configured, resolve_implementations

    names = impl or available_implementations()
    return resolve_implementations(
        names,
        timeout=timeout,
        isolated=isolated,
        validate_protocol=validate_protocol,
        required=True if impl else set(configured()),
        isolation=check_mode(isolation) if isolation is not None else default_isolation(),
    )


def last_failed_pairs(report: Path) -> set[tuple[str, str]] | None:
    """(case path, implementation) pairs that failed, errored or passed against the baseline
    (xpass) in the JSON Lines ``report``; None when there is no report or nothing failed."""
    if not report.is_file():
        return None
    from .report import read_report

    rows: list[dict[str, Any]] = read_report(report)
    pairs = {
        (r["path"], r["implementation"])
        for r in rows
        if r.get("verdict") in ("fail", "error", "xpass")
    }
    return pairs or None
