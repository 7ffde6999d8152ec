"""Reports of a run: JSON Lines, JUnit XML and the terminal view (spec/reports.md).

The JSON Lines report (``schemas/report.schema.json``) is a header, one line per case and
implementation (:meth:`CaseResult.to_json`), and a footer::

    {"kind": "header", "tool": "threads-cases", "version", "command", "implementations",
     "started_at", "cwd"}
    {"kind": "result", "case", "path", "implementation", "verdict", "reasons", "warnings",
     "checks": [{id, result, detail, ...}], "stop", "message", "duration_ms"}
    {"kind": "footer", "counts": {pass, drifted, fail, error, skip, xfail, xpass}, "total",
     "duration_ms", "exit_status"}

A result line of verdict ``xfail`` or ``xpass`` also holds ``"baseline": {"reason",
"issue"?, "check"?}`` (spec/replay.md section 12).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, cast

from ..._version import __version__
from ...core.atomic import replacing
from ...core.canonical import canonical_line
from ...core.errors import CaseError
from ...core.shapes import (
    ReportFooter,
    ReportHeader,
    ReportResult,
    VerdictCounts,
)
from ...core.strictjson import iter_jsonl
from ..run.runner import CaseResult, SuiteResult


def header(
    implementations: list[str],
    started_at: str,
    command: str = "run",
    isolation: dict[str, str] | None = None,
    shard: tuple[int, int] | None = None,
    cwd: str | None = None,
) -> ReportHeader:
    """The header line; ``isolation`` maps each implementation to netns, guard or none;
    ``shard`` is ``(K, N)`` for shard K of N; ``cwd`` the absolute folder the run started
    from, which the result lines' relative paths are read from (spec/reports.md 1.2)."""
    iso = isolation or {}
    out: ReportHeader = {
        "kind": "header",
        "tool": "threads-cases",
        "version": __version__,
        "command": command,
        "implementations": implementations,
        "isolation": {name: iso.get(name, "none") for name in implementations},
        "started_at": started_at,
    }
    if shard is not None:
        out["shard"] = {"index": shard[0], "count": shard[1]}
    if cwd is not None:
        out["cwd"] = cwd
    return out


def footer(suite: SuiteResult) -> ReportFooter:
    out: ReportFooter = {
        "kind": "footer",
        "counts": cast(VerdictCounts, suite.counts),
        "total": len(suite.results),
        "duration_ms": round(suite.duration_ms, 3),
        "exit_status": suite.exit_status,
        "not_started": suite.not_started,
    }
    if suite.live is not None:
        out["live"] = suite.live
    from ..run.provenance import answer_totals
    from .repeat_view import repeat_totals

    totals = repeat_totals(suite.results)
    if totals is not None:
        out["repeat"] = totals
    answers = answer_totals(suite.results)
    if answers is not None:
        out["answers"] = answers
    if suite.levels is not None:
        out["levels"] = suite.levels
    return out


def report_lines(
    suite: SuiteResult, command: str = "run"
) -> Iterator[ReportHeader | ReportResult | ReportFooter]:
    yield header(
        suite.implementations,
        suite.started_at,
        command,
        suite.isolation,
        suite.shard,
        _current_folder(),
    )
    for r in suite.results:
        yield r.to_json()
    yield footer(suite)


def _current_folder() -> str | None:
    """The absolute current folder (the run's paths were found from it), or None when it
    cannot be known (removed under the run)."""
    try:
        return os.getcwd()
    except OSError:
        return None


def write_jsonl(lines: Iterable[Mapping[str, Any]], path: str | os.PathLike[str]) -> None:
    """Write report lines canonically, atomically (temp file then rename)."""
    write_encoded(((canonical_line(line) + b"\n") for line in lines), path)


def write_encoded(lines: Iterable[bytes], path: str | os.PathLike[str]) -> None:
    """:func:`write_jsonl` of lines already canonical (each with its LF): the run prints and
    keeps the same bytes, encoded once."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    with replacing(p) as fh:  # the umask's mode, or the report's own on a rewrite
        for line in lines:
            fh.write(line)


#: The hint of every refusal of a file that is not a report.
REPORT_HINT = "pass JSON Lines reports of `threads-cases run` or `conformance` (--format json)"


def not_a_report(path: str | os.PathLike[str]) -> CaseError:
    """The one refusal of a file that is not a report (exit 2, spec/reports.md 1.7)."""
    return CaseError(
        "invalid_request",
        "is not a threads-cases report (its first line is not a report header)",
        file=str(path),
        line=1,
        hint=REPORT_HINT,
    )


def iter_report(path: str | os.PathLike[str]) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` for each line of a JSON Lines report, the header first.

    A file whose first line is not a report header (empty, not JSON at all such as a Python
    file, JSON that is not the header object) is not a report: ``invalid_request``
    (:func:`not_a_report`). A report whose later line is not strict JSON (cut, damaged) is
    ``json_invalid`` with its line; a file that cannot be read, ``json_invalid`` too."""
    lines = iter_jsonl(path, code="json_invalid")
    try:
        first = next(lines, None)
    except CaseError as err:
        if err.location.line != 1:
            raise
        raise not_a_report(path) from None
    if first is None or not isinstance(first[1], dict) or first[1].get("kind") != "header":
        raise not_a_report(path)
    yield first
    yield from lines


def read_report(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The result lines of a JSON Lines report (refusals: :func:`iter_report`)."""
    return [v for _, v in iter_report(path) if isinstance(v, dict) and v.get("kind") == "result"]


def unavailable_lines(suite: SuiteResult) -> list[str]:
    """One line per implementation that could not start for any of its cases (its results
    are ``error driver_unavailable`` with the same message): ``error[driver_unavailable]:
    <impl> could not start (<n> case(s)): <reason>`` and the hint (how to build or install);
    when nobody named it, so that its cases were skipped, ``skip[driver_unavailable]: <impl>
    could not start (<n> case(s) skipped; ...)``: a skip says why too (spec/reports.md 4)."""
    out = []
    for impl in suite.implementations:
        for verdict in ("error", "skip"):
            down = [
                r
                for r in suite.results
                if r.implementation == impl
                and r.verdict == verdict
                and r.reasons == ["driver_unavailable"]
            ]
            if not down:
                continue
            reason = down[0].message.removeprefix("error[driver_unavailable]: ")
            head, _, hint = reason.partition("\n")
            n = f"{len(down)} case(s)"
            if verdict == "skip":
                n += f" skipped; `--impl {impl}` makes this an error"
            line = f"{verdict}[driver_unavailable]: {impl} could not start ({n}): "
            out.append(line + head + (f"; {hint.strip()}" if hint.strip() else ""))
    return out


def not_listed_lines(suite: SuiteResult) -> list[str]:
    """Why cases were skipped for their dialects, one line per implementation:
    ``skip[not_listed]: <impl> skipped <n> case(s) (<cases>): the case does not list
    <impl>'s dialect <dialect> (case.json dialects: ...)`` (the first one's message)."""
    out = []
    for impl in suite.implementations:
        skipped = [
            r
            for r in suite.results
            if r.implementation == impl and r.verdict == "skip" and r.reasons == ["not_listed"]
        ]
        if skipped:
            names = ", ".join(r.case for r in skipped[:5]) + (" ..." if len(skipped) > 5 else "")
            out.append(
                f"skip[not_listed]: {impl} skipped {len(skipped)} case(s) ({names}): "
                + skipped[0].message
            )
    return out


def is_unavailable(r: CaseResult) -> bool:
    return r.verdict == "error" and r.reasons == ["driver_unavailable"]


def baseline_lines(suite: SuiteResult) -> list[str]:
    """One line per xfail: ``xfail: case [impl] check: reason (issue)`` (an xpass has its
    panel, naming the stale entry and the command that removes it)."""
    out = []
    for r in suite.results:
        if r.verdict == "xfail":
            b = r.baseline or {"reason": ""}
            check = f" {b['check']}" if "check" in b else ""
            issue = f" ({b['issue']})" if "issue" in b else ""
            out.append(f"xfail: {r.case} [{r.implementation}]{check}: {b['reason']}{issue}")
    return out


def xpass_note(suite: SuiteResult) -> str:
    """``xpass: 1 stale baseline entry (no longer failing) fails the run; remove ...``, or
    ``""``."""
    n = suite.counts["xpass"]
    if not n:
        return ""
    return (
        f"xpass: {n} stale baseline entr{'y' if n == 1 else 'ies'} (no longer failing) fail "
        "the run; remove with `threads-cases baseline prune`"
    )


def drift_note(suite: SuiteResult) -> str:
    """Why cases drifted, counted by reason: ``drifted: 2 request_diverged, 1 stub_unused
    (passing; --strict fails them)``, or ``""`` when none did."""
    reasons = Counter(code for r in suite.results if r.verdict == "drifted" for code in r.reasons)
    if not reasons:
        return ""
    named = ", ".join(f"{n} {code}" for code, n in sorted(reasons.items(), key=lambda i: -i[1]))
    how = "failing under --strict" if suite.strict else "passing; --strict fails them"
    return f"drifted: {named} ({how})"
