"""``threads-cases diff`` of two thread logs or two run reports (spec/reports.md section 8):
the first divergence and a summary of the rest.

Two thread logs (each in any dialect: the first dialect that reads the whole log, canonical
first, unless one is given) are compared event by event as canonical envelopes; two JSON
Lines reports of ``run`` or ``conformance`` are compared result by result, keyed by
``(case folder name, implementation)``, on verdict and reasons. The answer is::

    {"kind": "logs" | "reports", "equal": bool,
     "first": {"index", "what", "pointer", "a"?, "b"?, "summary"} | null,
     "summary": {...counts...}}

``a``/``b`` are left out when absent on that side. Refusals: ``invalid_request`` (not a log
nor a report), ``log_invalid``/``json_invalid`` for a file that cannot be read.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..core.dialects import CANONICAL, dialect_names
from ..core.errors import CaseError
from ..core.log import read_log
from ..core.strictjson import iter_jsonl
from ..harness.check.divergence import ABSENT, first_difference, shorten
from ..harness.report.report_diff import compare_results, report_results


def is_report(path: Path) -> bool:
    """A file whose first line is a threads-cases report header."""
    try:
        with path.open("rb") as f:
            first = f.readline(1 << 20)
    except OSError as exc:
        raise CaseError("io_error", str(exc), file=str(path)) from None
    return b'"kind":"header"' in first.replace(b" ", b"") and b"threads-cases" in first


def read_any_log(path: Path, dialect: str | None = None) -> tuple[str, list[dict[str, Any]]]:
    """The canonical events of a log and its dialect (``dialect``, or the first that reads
    it, canonical first). Raises the first dialect's refusal when none reads it."""
    names = [dialect] if dialect else sorted(dialect_names(), key=lambda n: n != CANONICAL)
    first_error: CaseError | None = None
    for name in names:
        try:
            return name, list(read_log(path, dialect=name))
        except CaseError as err:
            first_error = first_error or err
    assert first_error is not None
    raise first_error


def _first(index: int, what: str, hit: tuple[str, Any, Any]) -> dict[str, Any]:
    pointer, a, b = hit
    out: dict[str, Any] = {"index": index, "what": what, "pointer": pointer}
    if a is not ABSENT:
        out["a"] = a
    if b is not ABSENT:
        out["b"] = b
    out["summary"] = f"{what} at {pointer or '/'}: A {shorten(a)} != B {shorten(b)}"
    return out


def diff_logs(
    a: Path, b: Path, dialects: tuple[str | None, str | None] = (None, None)
) -> dict[str, Any]:
    """Compare two thread logs (module docstring)."""
    da, ea = read_any_log(a, dialects[0])
    db, eb = read_any_log(b, dialects[1])
    first = None
    differ = 0
    for i, (x, y) in enumerate(zip(ea, eb, strict=False)):
        hit = first_difference(x, y)
        if hit is not None:
            differ += 1
            if first is None:
                first = _first(i, f"event {i} ({x['type']})", hit)
    n = min(len(ea), len(eb))
    if first is None and len(ea) != len(eb):
        longer = ea if len(ea) > n else eb
        side = (longer[n], ABSENT) if longer is ea else (ABSENT, longer[n])
        first = _first(n, f"event {n} ({longer[n]['type']})", ("", *side))
    summary = {
        "dialects": [da, db],
        "events": [len(ea), len(eb)],
        "differing": differ,
        "only_in_a": max(0, len(ea) - n),
        "only_in_b": max(0, len(eb) - n),
    }
    return {"kind": "logs", "equal": first is None, "first": first, "summary": summary}


def _results(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """The result lines of a report by (case folder name, implementation)."""
    return report_results(line for _, line in iter_jsonl(path, code="json_invalid"))


def diff_reports(a: Path, b: Path) -> dict[str, Any]:
    """Compare two run reports on each result's verdict and reasons (module docstring)."""
    ra, rb = _results(a), _results(b)
    changes = compare_results(ra, rb)
    first = None
    if changes:
        c = changes[0]
        first = _first(c.index, c.label, (c.pointer, *c.values()))
    summary = {
        "results": [len(ra), len(rb)],
        "changed": len([c for c in changes if c.pointer == "/verdict"]),
        "only_in_a": len([k for k in ra if k not in rb]),
        "only_in_b": len([k for k in rb if k not in ra]),
        "different": [c.label for c in changes],
    }
    rates = {c.label: c.rate for c in changes if c.rate is not None}
    if rates:  # repeated results: which changes are larger than their noise (replay.md 11.10)
        summary["rates"] = rates
        summary["significant"] = [k for k, v in rates.items() if v["significant"]]
    return {"kind": "reports", "equal": first is None, "first": first, "summary": summary}


def diff_files(
    a: Path, b: Path, dialects: tuple[str | None, str | None] = (None, None)
) -> dict[str, Any]:
    """Two reports, or two thread logs; a report against a log is ``invalid_request``."""
    ra, rb = is_report(a), is_report(b)
    if ra != rb:
        raise CaseError(
            "invalid_request",
            f"cannot compare a report with a thread log: {a if ra else b} is a report",
            hint="diff two thread logs, two reports, or two case directories",
        )
    return diff_reports(a, b) if ra else diff_logs(a, b, dialects)


def render(answer: dict[str, Any]) -> str:
    """The terminal text: the first divergence, then the summary."""
    s = answer["summary"]
    if answer["kind"] == "logs":
        tail = (
            f"{s['events'][0]} events in A ({s['dialects'][0]}), {s['events'][1]} in B "
            f"({s['dialects'][1]}); {s['differing']} differ; {s['only_in_a']} only in A, "
            f"{s['only_in_b']} only in B"
        )
    else:
        tail = (
            f"{s['results'][0]} results in A, {s['results'][1]} in B; {s['changed']} changed "
            f"verdict; {s['only_in_a']} only in A, {s['only_in_b']} only in B"
        )
    if answer["equal"]:
        return f"equal: {tail}\n"
    rates = "".join(_rate_line(k, v) for k, v in s.get("rates", {}).items())
    if rates:
        tail += f"; {len(s['significant'])} rate change(s) larger than the noise"
    return f"first divergence: {answer['first']['summary']}\n{rates}summary: {tail}\n"


def _rate_line(label: str, change: dict[str, Any]) -> str:
    from ..harness.run.noise import change_text

    return f"{label}: {change_text(change)}\n"
