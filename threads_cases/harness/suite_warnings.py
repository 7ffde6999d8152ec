"""The warnings a run gives after its report (cases that check nothing, cases edited since
they were saved): on standard error through the CLI's ``note``, silenced by -q, never in
the report's output (spec/reports.md)."""

from __future__ import annotations

from .runner import SuiteResult


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
    return [*out, *stale_lines(suite)]


def stale_lines(suite: SuiteResult) -> list[str]:
    """The warnings for the cases edited since they were saved (``fingerprint_stale``): the
    ones that load, to review and ``fmt``; the ones that do not (verdict ``error``: ``fmt``
    refuses a case that does not validate), to fix first."""
    stale: dict[str, bool] = {}
    for r in suite.results:
        if "fingerprint_stale" in r.warnings:
            stale[r.path] = stale.get(r.path, False) or r.verdict == "error"
    ok = sorted(p for p, broken in stale.items() if not broken)
    broken = sorted(p for p, b in stale.items() if b)

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
            f"(fingerprint_stale, verdict error): {some(broken)}; fix what their error says "
            "(`threads-cases validate` lists every problem): `fmt` refuses a case that does "
            "not validate"
        )
    return out
