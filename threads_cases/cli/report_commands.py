"""``report merge``: one report from the reports of a sharded run (spec/reports.md 1.6);
``report html``: the compliance page (spec/conformance.md section 7)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..core.canonical import canonical_line
from ..core.errors import CaseError
from .app import app, fail, render_error
from .params import check_file, check_folder_to_write, check_not_input, check_out_file, checked

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
    from ..harness.report.suite import write_jsonl
    from ..harness.run.merge import merge_reports

    check_not_input(output, reports, "report")
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


def _check_page_folder(path: Path) -> None:
    check_folder_to_write(path, "the folder to write index.html in")


@report_app.command()
def html(
    reports: Annotated[
        list[Path],
        typer.Argument(
            help="JSON Lines reports of `run` or `conformance` (e.g. the shards of one run).",
            callback=checked(check_file),
        ),
    ],
    output: Annotated[
        Path,
        typer.Option(
            "--output",
            "--out",
            "-o",
            help="The folder to write index.html in (created when missing).",
            callback=checked(_check_page_folder),
        ),
    ],
    compare: Annotated[
        Path | None,
        typer.Option(
            "--compare",
            help="An older report: the page also shows what changed since it.",
            callback=checked(check_file),
        ),
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="The page's title.")] = None,
) -> None:
    """Write the compliance page: one self-contained HTML file, DIR/index.html.

    The matrix of cases x implementations, filters by verdict and implementation, each
    failure's first divergence and failing checks, the baseline's expected failures and,
    with --compare, what changed since an older report. It makes no network request.
    Refuses (exit 2, invalid_request) a file that is not a report and a case reported twice;
    exit 1 for a report that is not strict JSON Lines or a page that cannot be written.
    """
    from ..harness.report.reporters import Html, ReportFiles

    inputs = [*reports, *([compare] if compare is not None else [])]
    check_not_input(output / "index.html", inputs, "report")
    try:
        Html(output, compare, title, wrote=print).report(ReportFiles(reports))
    except CaseError as err:
        raise fail(err) from None
