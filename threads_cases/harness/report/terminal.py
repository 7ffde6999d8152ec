"""Printing for people (spec/reports.md 4): on a terminal at its width; piped (a file,
``| less``, a CI log) never breaking a word, however narrow ``$COLUMNS`` is. Tables are
printed at their natural width, panels wrapped at spaces and never narrower than their
longest word or their title. Used by the run, conformance, implementations, coverage,
list and stale outputs; only rich is imported, so a command that prints a table loads
nothing else."""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.measure import Measurement
from rich.panel import Panel
from rich.table import Table
from rich.text import Text


def print_table(console: Console, table: Table) -> None:
    """Print a table for people (spec/reports.md 4): on a terminal at the terminal's width
    (a cell wraps at spaces); piped (a file, ``| less``, CI logs) at the table's natural
    width, however narrow ``$COLUMNS`` is, so no cell is wrapped inside a word
    (``driver_unavai`` / ``lable``) or cut with ``…``."""
    _print_piped(console, table, natural=True)


def print_panel(console: Console, panel: RenderableType) -> None:
    """Print a failure panel: at the console's width, wrapped at spaces; piped, never
    narrower than its longest word, so no word is broken (spec/reports.md 4)."""
    _print_piped(console, panel, natural=False)


def _print_piped(console: Console, what: RenderableType, *, natural: bool) -> None:
    if console.is_terminal:
        console.print(what, soft_wrap=False)
        return
    wide = console.options.update(max_width=1 << 16)
    if natural:
        need = Measurement.get(console, wide, what).maximum
    else:  # a panel: its longest word, its borders and padding (1 column each side)
        inner = what.renderable if isinstance(what, Panel) else what
        need = Measurement.get(console, wide, inner).minimum + 4
        title = what.title if isinstance(what, Panel) else None
        if title:  # the title whole too: it names the case and its path
            need = max(need, (title if isinstance(title, Text) else Text(title)).cell_len + 6)
    width = console.width
    console.width = max(width, need)
    try:
        console.print(what, soft_wrap=False)
    finally:
        console.width = width
