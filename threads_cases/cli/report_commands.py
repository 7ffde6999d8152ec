"""``report merge``: one report from the reports of a sharded run (spec/reports.md 1.6)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..core.errors import CaseError
from ..core.strictjson import canonical_line
from .app import app, render_error
from .params import check_file, check_out_file, checked

report_app = typer.Typer(name="report", help="Work with JSON Lines reports.", no_args_is_help=True)
app.add_typer(report_app)


@report_app.command()
def merge(
    reports: Annotated[
        list[Path],
        typer.Argument(help="The shards' JSON Lines reports.", callback=checked(check_file)),
    ],
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write here instead of stdout.", callback=checked(check_out_file)
        ),
    ] = None,
) -> None:
    """Merge the reports of `run --shard K/N` into the report of one serial run.

    Refuses (exit 2, invalid_request) a missing or repeated shard, reports of different
    runs, and a case reported by two shards.
    """
    from ..harness.merge import merge_reports
    from ..harness.report import write_jsonl

    try:
        lines = merge_reports(reports)
    except CaseError as err:
        render_error(err)
        raise typer.Exit(2) from None
    if output is not None:
        write_jsonl(lines, output)
        return
    for line in lines:
        sys.stdout.buffer.write(canonical_line(line) + b"\n")
    sys.stdout.flush()
