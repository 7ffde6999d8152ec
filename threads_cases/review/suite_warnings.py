"""The warnings a run gives after its report (cases that check nothing, cases edited since
they were saved): on standard error through the CLI's ``note``, silenced by -q, never in
the report's output (spec/reports.md)."""

from __future__ import annotations

from ..harness.run.runner import SuiteResult


def suite_warnings(suite: SuiteResult) -> list[str]:
    """Every warning line about ``suite``'s cases, in order."""
    out = []
    empty = sorted({r.path for r in suite.results if "no_expectations" in r.warnings})
    if empty:
        out.append(
            f"warning: {len(empty)} case(s) check nothing about their turn (no_expectations): "
            + ", ".join(empty[:5])
            + (" ..." if len(empty) > 5 else "")
            + "; add matchers (`threads-cases draft`) or accept that only the state is checked"
        )
    return [*nothing_checked(suite), *out, *stale_lines(suite)]


def nothing_checked(suite: SuiteResult) -> list[str]:
    """One warning when every result of a run is a ``skip`` (spec/reports.md 5.2: the exit
    status is 0 then): the run checked nothing, and says so, with the skips' reasons."""
    if not suite.results or any(r.verdict != "skip" for r in suite.results):
        return []
    reasons = sorted({reason for r in suite.results for reason in r.reasons})
    return [
        f"warning: nothing was checked: all {len(suite.results)} result(s) are skips "
        f"({', '.join(reasons) or 'no reason given'}); make the implementations run (the lines "
        "above say why each did not), or name one with --impl to make its skips errors"
    ]


def stale_lines(suite: SuiteResult) -> list[str]:
    """The warnings for the cases edited since they were saved (``fingerprint_stale``): the
    ones ``fmt`` would re-fingerprint, to review and ``fmt``; the others, to fix first:
    ``fmt`` refuses a case with any problem ``validate`` reports besides the stale
    fingerprint and non-canonical files (:func:`threads_cases.review.fmt.unfixable_problems`,
    the same rule): one that does not load (verdict ``error``), and one that loads but does
    not validate, such as an expected state its log does not reduce to (``state_mismatch``)."""
    from pathlib import Path

    from .fmt import unfixable_problems

    stale: dict[str, bool] = {}
    for r in suite.results:
        if "fingerprint_stale" in r.warnings:
            stale[r.path] = stale.get(r.path, False) or r.verdict == "error"
    for path, refused in stale.items():
        if not refused:  # it loads: does fmt take it?
            stale[path] = bool(unfixable_problems(Path(path)))
    ok = sorted(p for p, refused in stale.items() if not refused)
    broken = sorted(p for p, refused in stale.items() if refused)

    def some(paths: list[str]) -> str:
        return ", ".join(paths[:5]) + (" ..." if len(paths) > 5 else "")

    out = []
    if ok:
        out.append(
            f"warning: {len(ok)} case(s) changed since they were saved (fingerprint_stale): "
            f"{some(ok)}; review them, then `threads-cases fmt` records the new fingerprint"
        )
    if broken:
        out.append(
            f"warning: {len(broken)} case(s) changed since they were saved and no longer load "
            f"or validate (fingerprint_stale): {some(broken)}; fix what their error says "
            "(`threads-cases validate` lists every problem): `fmt` refuses a case that does "
            "not validate"
        )
    return out
