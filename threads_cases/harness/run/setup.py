"""The set-up of a suite run from the ``run`` command's options, before :func:`run_suite`:
which implementations run, which cases ``--last-failed`` keeps, the options that cannot go
together, and the reason codes the command refuses with (exit 2) instead of failing.

Light to import (the registry and the report reader load on first use), so the CLI's
start-up stays cheap (tests/test_fast_start.py).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ...core.errors import CaseError

if TYPE_CHECKING:
    from ...protocol.client import Implementation

__all__ = [
    "REFUSALS",
    "check_live_accept",
    "check_named_dialects",
    "check_named_runs",
    "keep_only",
    "last_failed_pairs",
    "suite_implementations",
]

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
    """The implementations a run uses: ``impl`` (``--impl``), else the ``impl`` setting, else
    every available one; those named (with ``--impl`` or the setting, or configured in
    pyproject.toml) must start. ``isolation`` is the
    asked mode, else netns where available, else guard. Raises ``CaseError``
    (``invalid_request``, ``dialect_unknown``...) before any starts."""
    from .isolation import check_mode, default_isolation
    from .registry import (
        available_implementations,
        configured,
        impl_setting,
        resolve_implementations,
    )

    named = impl or impl_setting()
    return resolve_implementations(
        named or available_implementations(),
        timeout=timeout,
        isolated=isolated,
        validate_protocol=validate_protocol,
        required=True if named else set(configured()),
        isolation=check_mode(isolation) if isolation is not None else default_isolation(),
    )


def last_failed_pairs(
    report: Path, on_note: Callable[[str], None] | None = None
) -> set[tuple[str, str]] | None:
    """(case path, implementation) pairs that failed, errored or passed against the baseline
    (xpass) in the JSON Lines ``report``; None when there is no report or nothing failed.
    Each path is resolved, so that ``cases/x``, ``./cases/x`` and ``$PWD/cases/x`` are one
    case (spec/reports.md 3.2), from each folder of
    :func:`~.folder.report_bases` (the run's folder, or the current and the project's
    folder: the rule ``stale`` shares, spec/reports.md 2.5; ``on_note`` says when the run's
    folder is not here). A report that cannot be read is refused with a hint to run without
    ``--last-failed`` or remove it (:func:`damaged_last_report`)."""
    if not report.is_file():
        return None
    from ..report.folder import read_report_header, report_bases

    try:
        head, rows = read_report_header(report)
        bases = report_bases(head, report, on_note)
    except CaseError as err:
        raise damaged_last_report(err, report) from None
    pairs = {
        (_resolved(base / r["path"]), r["implementation"])
        for r in rows
        if r.get("verdict") in ("fail", "error", "xpass")
        and isinstance(r.get("path"), str)
        and isinstance(r.get("implementation"), str)
        for base in bases
    }
    return pairs or None


def damaged_last_report(err: CaseError, report: Path) -> CaseError:
    """``err`` (a refusal of the last report as unreadable or not a report) with a hint that
    helps ``--last-failed``, which takes no report option: write a new one, or remove it."""
    return CaseError(
        err.code,
        err.message,
        file=str(report),
        line=err.location.line,
        hint=f"run without --last-failed to write a new report over it, or remove {report}",
    )


def _resolved(path: str | os.PathLike[str]) -> str:
    return str(Path(os.path.abspath(path)).resolve())


def keep_only(
    work: list[tuple[Path, Implementation]],
    only: set[tuple[str, str]] | None,
    on_note: Callable[[str], None] | None = None,
) -> list[tuple[Path, Implementation]]:
    """The runs of ``work`` whose (resolved case path, implementation name) is in ``only``
    (``--last-failed``, :func:`last_failed_pairs`); all of ``work`` when ``only`` is None.
    When ``only`` keeps none of them, a run of nothing would be a silent green that also
    overwrote the report it read: every run is kept instead and ``on_note`` says so."""
    if only is None:
        return work
    kept = [(c, i) for c, i in work if (_resolved(c), i.name) in only]
    if work and not kept:
        if on_note is not None:
            on_note(
                "none of the last report's failures is among the selected cases: running everything"
            )
        return work
    return kept


def check_named_runs(work: Sequence[tuple[Path, Implementation]]) -> None:
    """Refuse a run in which an implementation the user named (``required``: ``--impl``, or
    configured in pyproject.toml) has cases to run but none of them lists its dialect in
    case.json ``dialects``: every result would be ``skip`` (``not_listed``), a green run that
    ran nothing on it (spec/reports.md 3.2). See :func:`check_named_dialects`."""
    check_named_dialects(
        [(case, impl.name, impl.dialect) for case, impl in work if getattr(impl, "required", False)]
    )


def check_named_dialects(work: Sequence[tuple[Path, str, str]]) -> None:
    """:func:`check_named_runs` on (case folder, implementation name, its dialect) for the
    runs of named implementations only: the pytest plugin checks its items with it before
    any implementation starts. Raises ``CaseError("invalid_request")`` naming the
    implementation, its dialect and the cases' dialects. A case whose case.json cannot be
    read counts as listing it (its run is an ``error`` that says why)."""
    from ...case.directory import peek_case_dialects

    named: dict[str, tuple[str, list[Path]]] = {}
    for case, name, dialect in work:
        named.setdefault(name, (dialect, []))[1].append(case)
    seen: dict[Path, list[str] | None] = {}
    for name, (dialect, cases) in named.items():
        listed = []
        for case in cases:
            if case not in seen:
                seen[case] = peek_case_dialects(case)
            dialects = seen[case]
            if dialects is None or dialect in dialects:
                break
            listed.append(f"{case.name}: {', '.join(dialects)}")
        else:
            more = f" and {len(listed) - 3} more" if len(listed) > 3 else ""
            raise CaseError(
                "invalid_request",
                f"{name} would run none of the {len(cases)} selected case(s): their case.json "
                f"dialects do not list its dialect {dialect} "
                f"({'; '.join(listed[:3])}{more}), so every one would be skip not_listed",
                hint=f"select cases that list {dialect} (PATHS, -k), or run these on an "
                "implementation whose dialect they list (--impl)",
            )
