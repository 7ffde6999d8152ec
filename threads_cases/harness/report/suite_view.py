"""The suite rendered for a terminal with rich (spec/reports.md): the case table, the
conformance matrix by area, a failure's panel and the whole view ``--format pretty`` prints.

Only this module (and :mod:`.terminal`) import rich, and only a command that prints a
terminal view imports it: a run with ``--format json`` loads no rich (start-up, issue 37).
The text of the lines around the tables is :mod:`.suite`'s and :mod:`.matrix`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ...core.canonical import canonical_line, compact
from ...core.texts import shown_text
from ..check.levels import level_lines
from ..live.said import panel_lines
from ..run.runner import CaseResult, SuiteResult
from . import terminal
from .matrix import (
    NOT_RUN,
    TERMINAL_MARKS,
    area_rows,
    case_rows,
    counts_text,
    implementation_lines,
)
from .result_text import agent_line
from .suite import (
    baseline_lines,
    drift_note,
    is_unavailable,
    not_listed_lines,
    unavailable_lines,
    xpass_note,
)

MARKS = TERMINAL_MARKS


def terminal_cell(r: CaseResult | None) -> Text:
    """``✗ fail state_mismatch +1``: the mark, the verdict, the first reason and how many more."""
    if r is None:
        return Text(NOT_RUN, style="dim")
    mark, style = TERMINAL_MARKS[r.verdict]
    label = f"{mark} {r.verdict}"
    if r.reasons and r.verdict != "pass":
        label += f" {r.reasons[0]}"
        if len(r.reasons) > 1:
            label += f" +{len(r.reasons) - 1}"
    return Text(label, style=style)


def rich_table(suite: SuiteResult, title: str = "cases") -> Table:
    """Cases as rows, implementations as columns; each cell a mark and the reason code."""
    table = Table(title=None, show_lines=False, header_style="bold")
    table.add_column(title)
    for impl in suite.implementations:
        table.add_column(impl)
    for row in case_rows(suite):
        table.add_row(row.label, *(terminal_cell(r) for r in row.cells))
    return table


def rich_area_table(suite: SuiteResult, areas: Sequence[str], verbose: bool = False) -> Table:
    """The conformance matrix: a count per area and implementation, then the tests to look
    at (verdict and first reason per implementation)."""
    table = Table(header_style="bold")
    table.add_column("area / test")
    for impl in suite.implementations:
        table.add_column(impl)
    for area in area_rows(suite, areas, verbose):
        counts = []
        for ok, total, broken in zip(area.passed, area.total, area.broken, strict=True):
            style = "green" if ok == total else ("red" if broken else "yellow")
            counts.append(Text(f"{ok}/{total} passed", style=style))
        table.add_row(Text(area.area, style="bold"), *counts, end_section=False)
        for test in area.tests:
            table.add_row("  " + test.label, *(_verdict_text(r) for r in test.cells))
        table.add_section()
    return table


def _verdict_text(r: CaseResult | None) -> Text:
    if r is None:
        return Text(NOT_RUN, style="dim")
    reason = f" {r.reasons[0]}" if r.reasons and r.verdict != "pass" else ""
    return Text(r.verdict + reason, style=TERMINAL_MARKS[r.verdict][1])


def render_table(suite: SuiteResult, title: str = "cases") -> Table:
    """Cases as rows, implementations as columns; each cell a mark and the reason code."""
    return rich_table(suite, title)


def render_failure(r: CaseResult) -> Panel:
    """A panel for a failing case: reason, matcher beside the nearest event, differences."""
    parts: list[Any] = []
    if r.message:  # a driver's words may hold ESC or NUL: never printed raw
        parts.append(Text(shown_text(r.message), style="magenta"))
    if r.hint:
        parts.append(Text(f"  hint: {shown_text(r.hint)}"))
    agent = agent_line(r)
    if agent:
        parts.append(Text(shown_text(agent), style="bold"))
    if r.divergence:
        summary = shown_text(r.divergence["summary"])
        parts.append(Text("first divergence: ", style="bold").append(summary))
    parts.extend(Text(line, style="cyan") for line in panel_lines(r.live_replies))
    # after a stop, the matchers that missed are its consequences: list them, no event dumps
    stopped = any(c.id == "stop" and c.result == "fail" for c in r.checks)
    for c in r.checks:
        if c.result not in ("fail", "warn"):
            continue
        if stopped and c.id != "stop":
            parts.append(Text(f"{c.code or c.id}  ({c.id}), after the stop", style="dim"))
            continue
        parts.append(
            Text(
                f"{c.code or c.id}  ({c.id})",
                style="bold red" if c.result == "fail" else "bold yellow",
            )
        )
        parts.append(Text(shown_text(c.detail)))
        if c.matcher is not None:
            grid = Table.grid(padding=(0, 2))
            grid.add_column("matcher")
            grid.add_column("nearest event")
            diff_paths = {d.pointer for d in c.differences}
            grid.add_row(
                Text("matcher", style="bold"), Text("nearest replayed event", style="bold")
            )
            grid.add_row(
                _json_text(c.matcher, set()),
                _json_text(c.nearest_event, diff_paths) if c.nearest_event else Text("-"),
            )
            parts.append(grid)
        elif c.differences:
            for d in c.differences[:30]:
                parts.append(Text("  " + d.render(), style="red"))
            if len(c.differences) > 30:
                parts.append(Text(f"  ... {len(c.differences) - 30} more"))
    title = Text(f"{r.case} [{r.implementation}]: {r.verdict}  {r.path}")  # Text: no markup
    return Panel(Group(*parts), title=title, border_style=MARKS[r.verdict][1], expand=False)


def _json_text(value: Any, highlight: set[str], pointer: str = "", indent: int = 0) -> Text:
    """Indented JSON with the values at ``highlight`` pointers in red."""
    out = Text()
    pad = "  " * indent
    if isinstance(value, dict) and value:
        out.append("{\n")
        items = sorted(value.items())
        for n, (k, v) in enumerate(items):
            p = f"{pointer}/{k}"
            out.append(f"{pad}  {canonical_line(k).decode()}: ")
            child = _json_text(v, highlight, p, indent + 1)
            if p in highlight:
                child.stylize("bold red")
            out.append_text(child)
            out.append(",\n" if n < len(items) - 1 else "\n")
        out.append(pad + "}")
        return out
    return Text(compact(value, 120))


def print_suite(
    console: Console,
    suite: SuiteResult,
    title: str = "cases",
) -> None:
    """The terminal view: failure panels (one line per implementation that could not start,
    instead of a panel per case), the table, and the summary line, which counts drifted
    results apart with their reasons. The warnings about the cases (cases that check
    nothing, cases edited since they were saved: :mod:`threads_cases.review.suite_warnings`)
    are the caller's to give, never on ``console``, which is the report's output."""
    for r in suite.results:
        if r.verdict in ("fail", "error", "drifted", "xpass") and not is_unavailable(r):
            terminal.print_panel(console, render_failure(r))
    terminal.print_table(console, render_table(suite, title))
    for line in [*unavailable_lines(suite), *not_listed_lines(suite)]:
        console.print(Text(line, style="magenta"))
    for line in baseline_lines(suite):
        console.print(Text(line, style="cyan"))
    line = f"{counts_text(suite)} in {suite.duration_ms / 1000:.2f}s"
    note = drift_note(suite)
    if note:
        line += f"; {note}"
    note = xpass_note(suite)
    if note:
        line += f"; {note}"
    if suite.not_started:
        line += f"; stopped early (--max-fail): {suite.not_started} run(s) not started"
    from ..live.view import live_lines
    from ..run.provenance import answer_lines
    from .repeat_view import repeat_lines

    for text in [*repeat_lines(suite), *live_lines(suite), *answer_lines(suite.results)]:
        console.print(text, soft_wrap=True)
    console.print(line)


def print_conformance(
    console: Console, suite: SuiteResult, areas: Sequence[str], verbose: bool = False
) -> None:
    """The terminal view of ``conformance``: a panel per failing, erroring or stale (xpass)
    test, the matrix by area, one line per known failure, and one summary line per
    implementation."""
    for r in suite.results:
        if r.verdict in ("fail", "error", "xpass"):
            terminal.print_panel(console, render_failure(r))
    terminal.print_table(console, rich_area_table(suite, areas, verbose))
    for line in unavailable_lines(suite):
        console.print(Text(line, style="magenta"))
    for line in baseline_lines(suite):
        console.print(Text(line, style="cyan"))
    for line in implementation_lines(suite):
        console.print(line)
    for line in level_lines(suite.levels or {}):
        console.print(Text(line, style="bold"))
