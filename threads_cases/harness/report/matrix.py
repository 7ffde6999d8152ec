"""The results matrix of a run, for people: cases as rows, implementations as columns, one
cell per run, and the counts. One model, rendered for the terminal (rich tables:
:mod:`~threads_cases.harness.report.suite_view`, which alone imports rich) and for GitHub (a
Markdown table in the job summary, :mod:`~threads_cases.harness.report.github`).

The conformance view groups rows by area (``reduce``, ``match``, ``canonical``, ``cases``):
an area row counts the passing tests per implementation; the tests that did not pass
everywhere (every test with ``verbose``) are listed under it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..check.conformance import area_of
from ..run.runner import VERDICTS, CaseResult, SuiteResult

#: a cell with no result: its run never started (``--max-fail`` stopped the suite first),
#: or the results (a merged report, a conformance area) hold none for that implementation
NOT_RUN = "- not run"
#: verdict -> (terminal mark, rich style)
TERMINAL_MARKS = {
    "pass": ("✓", "green"),
    "drifted": ("~", "yellow"),
    "fail": ("✗", "red"),
    "error": ("!", "magenta"),
    "skip": ("-", "dim"),
    "xfail": ("x", "cyan"),
    "xpass": ("!", "bold red"),
}
#: verdict -> the mark of a Markdown cell
EMOJI_MARKS = {
    "pass": "✅",
    "drifted": "⚠️",
    "fail": "❌",
    "error": "❗",
    "skip": "⏭️",
    "xfail": "🔷",
    "xpass": "🚨",
}


@dataclass(frozen=True)
class Row:
    """One row: its label and one result per implementation (``None``: not run)."""

    label: str
    cells: tuple[CaseResult | None, ...]


@dataclass(frozen=True)
class AreaRow:
    """A conformance area: per implementation the number of tests that passed (drifted
    counts) and run, whether any failed or errored, and the rows of its tests to list."""

    area: str
    passed: tuple[int, ...]
    total: tuple[int, ...]
    broken: tuple[bool, ...]
    tests: tuple[Row, ...]


def case_rows(suite: SuiteResult) -> list[Row]:
    """One row per case (by path, in result order), labelled with the case's name (and its
    path when two cases share the name)."""
    rows: dict[str, dict[str, CaseResult]] = {}
    for r in suite.results:
        rows.setdefault(r.path, {})[r.implementation] = r
    names = [next(iter(by_impl.values())).case for by_impl in rows.values()]
    out = []
    for (path, by_impl), name in zip(rows.items(), names, strict=True):
        label = name if names.count(name) == 1 else f"{name} ({path})"
        out.append(Row(label, tuple(by_impl.get(i) for i in suite.implementations)))
    return out


def area_rows(suite: SuiteResult, areas: Sequence[str], verbose: bool = False) -> list[AreaRow]:
    """Conformance rows grouped by area (in ``areas`` order; areas without results left
    out). A test's area is the part of its name before ``/`` (``cases`` without one)."""
    impls = suite.implementations
    by_case: dict[str, dict[str, CaseResult]] = {}
    for r in suite.results:
        by_case.setdefault(r.case, {})[r.implementation] = r
    out = []
    for area in areas:
        in_area = [r for r in suite.results if area_of(r) == area]
        if not in_area:
            continue
        tests = [
            Row(case.split("/", 1)[1], tuple(by_impl.get(i) for i in impls))
            for case, by_impl in by_case.items()
            if case.startswith(area + "/")
            and (verbose or not all(r.verdict == "pass" for r in by_impl.values()))
        ]
        mine = [[r for r in in_area if r.implementation == i] for i in impls]
        out.append(
            AreaRow(
                area,
                tuple(sum(r.verdict in ("pass", "drifted") for r in rs) for rs in mine),
                tuple(len(rs) for rs in mine),
                tuple(any(r.verdict in ("fail", "error", "xpass") for r in rs) for rs in mine),
                tuple(tests),
            )
        )
    return out


def _many(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def counts_text(suite: SuiteResult) -> str:
    """``2 cases on 2 implementations, 4 results: 3 pass, 1 fail``: the cases (by path) and
    the results (one per case and implementation) named apart, then the results by verdict
    (zero counts left out; spec/reports.md 4); ``nothing run`` without results."""
    c = suite.counts
    verdicts = ", ".join(f"{c[v]} {v}" for v in VERDICTS if c[v])
    return f"{tally_text(suite)}: {verdicts}" if verdicts else "nothing run"


def tally_text(suite: SuiteResult) -> str:
    """``2 cases on 2 implementations, 4 results``: what the verdict counts count."""
    cases = _many(len({r.path for r in suite.results}), "case")
    impls = _many(len({r.implementation for r in suite.results}), "implementation")
    return f"{cases} on {impls}, {_many(len(suite.results), 'result')}"


def implementation_lines(suite: SuiteResult) -> list[str]:
    """Per implementation: ``threads-py: 9 passed, 1 failed, 0 errored, 0 skipped`` (and
    ``, 2 expected failure(s), 1 stale`` when the baseline gave xfail or xpass)."""
    out = []
    for impl in suite.implementations:
        c = dict.fromkeys(VERDICTS, 0)
        for r in suite.results:
            if r.implementation == impl:
                c[r.verdict] += 1
        line = (
            f"{impl}: {c['pass'] + c['drifted']} passed, {c['fail']} failed, "
            f"{c['error']} errored, {c['skip']} skipped"
        )
        if c["xfail"] or c["xpass"]:
            line += f", {c['xfail']} expected failure(s), {c['xpass']} stale"
        out.append(line)
    return out


# --------------------------------------------------------------------------- markdown


def _md(text: str) -> str:
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ")


def markdown_cell(r: CaseResult | None) -> str:
    """``❌ fail `state_mismatch` ``: the mark, the verdict and every reason."""
    if r is None:
        return NOT_RUN
    cell = f"{EMOJI_MARKS[r.verdict]} {r.verdict}"
    if r.reasons and r.verdict != "pass":
        cell += " " + ", ".join(f"`{x}`" for x in r.reasons)
    return _md(cell)


def markdown_table(suite: SuiteResult, title: str = "case") -> list[str]:
    """The matrix as GitHub Markdown table lines."""
    lines = ["| " + " | ".join([_md(title), *map(_md, suite.implementations)]) + " |"]
    lines.append("|" + "---|" * (len(suite.implementations) + 1))
    for row in case_rows(suite):
        lines.append("| " + " | ".join([_md(row.label), *map(markdown_cell, row.cells)]) + " |")
    return lines
