"""Output shared by the review commands (``show``, ``diff``, ``accept``, ``list``, ``stale``):
the width of piped output, a renderable fitted to it, a case diff's changes by file, and the
refusal (exit 2) of a bad argument."""

from __future__ import annotations

import os
import sys
from typing import Any

import typer
from rich.text import Text

from ..core.errors import CaseError
from ..review import Change, bookkeeping_line, split_bookkeeping
from ..review.added import plain_text
from .app import console, print_refusal, render_error

CASE_EXPECTED = "expected a case directory (a folder holding case.json)"


def refuse(err: CaseError, fmt: str | None = None) -> typer.Exit:
    """Exit 2 for ``err``: ``{"code","message"}`` on stdout when ``fmt`` is ``json``, else
    the error and its hint on stderr."""
    if fmt == "json":
        print_refusal(err)
    else:
        render_error(err)
    return typer.Exit(2)


def piped_width() -> int:
    """Columns for output that is not a terminal: $COLUMNS, else the width of the terminal
    stderr is on (``show | less``, git's pager), else 100."""
    try:
        return max(int(os.environ["COLUMNS"]), 40)
    except (KeyError, ValueError):
        pass
    try:
        return max(os.get_terminal_size(sys.stderr.fileno()).columns, 40)
    except (OSError, ValueError):
        return 100


def print_fitted(renderable: Any) -> None:
    """On a terminal: its width. Piped: :func:`piped_width` columns, no trailing spaces;
    each part of a group (a line, a table) widened, when it must be, to the narrowest width
    that breaks none of its words (a table: its longest word per column), so a narrow
    ``$COLUMNS`` wraps at spaces only (spec/reports.md 4)."""
    if console("stdout").is_terminal:
        console("stdout").print(renderable, soft_wrap=False)
        return
    from rich.console import Console, Group
    from rich.measure import Measurement

    wide = Console(width=1 << 16, color_system=None)
    width = piped_width()
    parts = renderable.renderables if isinstance(renderable, Group) else [renderable]
    for part in parts:
        least = Measurement.get(wide, wide.options, part).minimum
        sys.stdout.write(plain_text(part, max(width, least)))
    sys.stdout.flush()


def print_changes(
    changes: list[Change], label_a: str, label_b: str, *, every: bool = False
) -> None:
    """The changes by file; ids and timestamps in one line unless ``every`` (--all)."""
    if not changes:
        console("stdout").print(f"no difference between {label_a} and {label_b}")
        return
    typer.echo(f"--- {label_a}")
    typer.echo(f"+++ {label_b}")
    shown, hidden = (changes, []) if every else split_bookkeeping(changes)
    if hidden:
        typer.echo(bookkeeping_line(hidden, len(shown)))
    current = None
    for c in shown:
        if c.file != current:
            current = c.file
            typer.echo(c.file)
        style = {"added": "green", "removed": "red", "changed": "yellow"}[c.kind]
        console("stdout").print(Text("  " + c.render(), style=style))
    if not shown:
        return
    counts = {k: sum(1 for c in shown if c.kind == k) for k in ("added", "removed", "changed")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items() if v)
    typer.echo(f"{len(shown)} change(s): {summary}")
