"""``show``, ``fmt``, ``list`` and ``stale``: reviewing case directories (``diff`` is in
:mod:`.diff_commands`, the output they share in :mod:`.review_output`).

Exit statuses: ``show`` 0 (1 when the case cannot be read); ``fmt`` 0 (``--check``: 1 when a
file is not canonical or a fingerprint is stale), 1 when a file cannot be read, 2 for a
missing path; ``list`` 0 (1 when a case cannot be read); ``stale`` 0, 2 when the report is missing.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from ..core.errors import CaseError
from ..review import (
    VALUES_WARNING,
    case_dirs_for,
    case_summary,
    format_case,
    render_case,
    short_fingerprint,
    stale_entries,
    unchecked_cases,
    unfixable_problems,
    write_formatted,
)
from .app import app, console, fail, note, print_json, render_error
from .params import FormatOpt, check_case, check_exists, check_folder, checked
from .review_output import piped_width, print_fitted, refuse

__all__ = ["fmt", "list_cases", "piped_width", "show", "stale"]


@app.command()
def show(
    case: Annotated[Path, typer.Argument(help="A case directory.", callback=checked(check_case))],
    values: Annotated[
        bool,
        typer.Option(
            "--values",
            help="Also show text, tool inputs and results (raw, unredacted data).",
        ),
    ] = False,
    all_events: Annotated[
        bool, typer.Option("--all", help="Every event of the prefix, not only the last 20.")
    ] = False,
) -> None:
    """Render a case: fork point, the user's input, matchers, the prefix timeline, replies
    and stubs.

    Model text, tool inputs and results are shown only with --values. Piped, the case is
    printed without its box, as wide as the terminal, no line padded.
    """
    problems: list[Any] = []
    try:
        panel = render_case(
            case,
            values=values,
            all_events=all_events,
            boxed=console("stdout").is_terminal,
            problems=problems,
        )
    except CaseError as err:
        raise fail(err) from None
    if values:
        note(VALUES_WARNING)
    print_fitted(panel)
    from ..case.loader import first_blocking

    blocking = first_blocking(problems)
    if blocking is not None:  # shown inline, but `run` cannot load it: README's exit 1
        raise fail(blocking)


@app.command()
def fmt(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Cases, folders holding cases, or files of cases (default: current folder).",
            callback=checked(check_exists),
        ),
    ] = None,
    check: Annotated[
        bool,
        typer.Option(
            "--check", help="Write nothing; exit 1 naming every file that is not canonical."
        ),
    ] = False,
) -> None:
    """Rewrite every JSON/JSONL file of each case canonically and recompute its fingerprint.

    Artifacts are untouched. With --check nothing is written and the status is 1 when a file
    is not canonical or a fingerprint is stale.
    """
    cases, missing = case_dirs_for(paths or [Path(".")])
    if missing:
        raise fail(CaseError("invalid_request", f"no such file or folder: {missing[0]}"))
    if not cases and paths and all(p.is_file() for p in paths):
        note("no case files among the files given")  # pre-commit passes any file
        raise typer.Exit(0)
    if not cases:
        # a CI gate pointed at the wrong folder must not pass quietly
        raise fail(
            CaseError(
                "invalid_request",
                "no cases found",
                hint="pass case directories or folders holding them (each with a case.json)",
            )
        )
    unreadable = 0
    pending: list[str] = []
    written: list[str] = []
    for path in cases:
        result = format_case(path)
        problems = result.problems or unfixable_problems(path)
        if problems:
            unreadable += 1
            from .log_commands import print_problems  # validate's: its hints too

            print_problems(problems)
            typer.echo(
                f"not formatted: {path}: the case does not validate; fix the problems above, "
                "then run `threads-cases fmt` (it rewrites and re-fingerprints valid cases only)",
                err=True,
            )
            continue
        for rel in sorted(result.changed):
            what = result.reason(rel)
            (pending if check else written).append(f"{path / rel}: {what}")
        if not check and result.changed:
            write_formatted(result)
    if check:
        for line in pending:
            typer.echo(line)
        if pending:
            typer.echo(
                f"{len(pending)} file(s) to format in {len(cases)} case(s); run "
                "`threads-cases fmt`",
                err=True,
            )
        elif not unreadable:
            typer.echo(f"{len(cases)} case(s) canonical")
        if unreadable:
            typer.echo(f"{unreadable} of {len(cases)} case(s) refused (not checked)", err=True)
        raise typer.Exit(1 if pending or unreadable else 0)
    for line in written:
        typer.echo(f"formatted {line.split(': ')[0]}")
    refused = f", {unreadable} case(s) refused (not formatted)" if unreadable else ""
    typer.echo(f"{len(written)} file(s) formatted in {len(cases)} case(s){refused}")
    raise typer.Exit(1 if unreadable else 0)


@app.command(name="list")
def list_cases(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A folder holding cases (default: the current folder).",
            callback=checked(check_folder),
        ),
    ] = None,
    fmt: FormatOpt = "pretty",
) -> None:
    """List the cases found: name, dialects, portable, fingerprint, size in bytes.

    Each case is read as `run` reads it (every file, strictly): a case that `run` would
    refuse (a missing or broken file, a trailing comma, a number out of range) is listed
    too, with its error (``error[<code>]: ...`` and a hint) after the table, and the exit
    status is 1 (``json``: such a row's ``error`` is {"code", "message", "file", "line",
    "pointer", "hint"}, else null). A stale fingerprint is shown, not an error. Cases that
    share a name get a warning on stderr, as from `run` and `validate`. With --format json a
    refusal (no such folder, a bad option) is {"code", "message"} on stdout, exit 2."""
    from ..case.directory import shared_names
    from ..case.discovery import discover

    root = path or Path(".")
    if not root.exists():
        raise fail(CaseError("invalid_request", f"no such folder: {root}"), fmt)
    cases = discover([root])
    rows = [case_summary(p) for p in cases]
    for text in shared_names(cases):  # as run and validate warn: stderr, -q silences it
        note(text)
    unreadable = [r for r in rows if r["error"]]
    if fmt == "json":
        print_json({"cases": rows})
        raise typer.Exit(1 if unreadable else 0)
    if not rows:
        typer.echo(f"no cases under {root}")
        return
    table = Table(header_style="bold")
    for col in ("case", "dialects", "portable", "fingerprint", "size", "path"):
        table.add_column(col, justify="right" if col == "size" else "left")
    for r in rows:
        if r["error"]:
            unread = Text("unreadable (below)", style="red")
            table.add_row(Text(r["name"]), unread, "", "", str(r["size"]), Text(r["path"]))
            continue
        fp = Text(short_fingerprint(r["fingerprint"]))
        if not r["fingerprint_ok"]:
            fp.append(" stale", style="yellow")
        table.add_row(
            Text(r["name"]),
            ", ".join(r["dialects"]),
            str(r["portable"]).lower(),
            fp,
            str(r["size"]),
            Text(r["path"]),
        )
    from ..harness.report.terminal import print_table  # rich only

    print_table(console("stdout"), table)  # piped: at its natural width, never cut
    for r in unreadable:  # as `run` and `validate` print it
        e = r["error"]
        where = {k: e[k] for k in ("file", "line", "pointer")}
        render_error(CaseError(e["code"], e["message"], **where, hint=e["hint"]))
    summary = f"{len(rows)} case(s), {sum(r['size'] for r in rows)} bytes"
    if unreadable:
        summary += f"; {len(unreadable)} cannot be read (run threads-cases validate on them)"
    typer.echo(summary)
    raise typer.Exit(1 if unreadable else 0)


@app.command()
def stale(
    path: Annotated[
        Path | None,
        typer.Argument(help="Only cases under this folder.", callback=checked(check_folder)),
    ] = None,
    report: Annotated[
        Path | None,
        typer.Option(
            "--report",
            help="A JSON Lines report of `run` (default: .threads-cases/last-report.jsonl, "
            "kept outside any case).",
        ),
    ] = None,
    fmt: FormatOpt = "pretty",
) -> None:
    """List the cases whose recorded replies or stubs the last run never used
    (reply_unused, stub_unused), to trim them.

    With --format json a refusal is {"code", "message"} on stdout (same exit status)."""
    from ..core.statedir import state_path

    last = report is None
    if report is None:
        report = state_path("last-report.jsonl")
    if path is not None and not path.exists():
        raise refuse(CaseError("invalid_request", f"no such folder: {path}"), fmt)
    if not report.is_file():
        raise refuse(
            CaseError(
                "invalid_request",
                f"no report at {report}",
                hint="run `threads-cases run` first, or pass --report FILE",
            ),
            fmt,
        )
    try:
        results, bases = _read_stale_report(report, last)
        if not results:
            raise CaseError(
                "invalid_request",
                "the report holds no results (its run selected no case, e.g. an empty "
                "shard): it cannot tell which recordings went unused",
                file=str(report),
                hint="pass --report the report of a run that ran cases (merge shards with "
                "`threads-cases report merge`)",
            )
        entries = stale_entries(results, path, bases)
        unchecked = _unchecked(results, path, report, bases)
    except CaseError as err:
        raise refuse(err, fmt) if err.code == "invalid_request" else fail(err, fmt) from None
    if fmt == "json":
        print_json({"report": str(report), "stale": entries, "unchecked": unchecked})
        raise typer.Exit(1 if unchecked else 0)
    if unchecked:
        note(  # stderr, and -q silences it; the exit status still says 1
            f"warning: {len(unchecked)} case(s) under {path} have no checked result in "
            f"{report}, so their recordings were not looked at: {', '.join(unchecked[:5])}"
            + (" ..." if len(unchecked) > 5 else "")
            + f"; run `threads-cases run {path}` to check them"
        )
    if not entries:
        what = f"the cases {report} checked (see the warning)" if unchecked else report
        typer.echo(f"no case left a reply or stub unused in {what}")
        raise typer.Exit(1 if unchecked else 0)
    table = Table(header_style="bold")
    for col in ("case", "implementations", "unused", "path"):
        table.add_column(col)
    for e in entries:
        table.add_row(
            Text(e["case"]),
            Text(", ".join(e["implementations"])),
            Text("\n".join(e["details"])),
            Text(e["path"] + ("" if e["exists"] else " (gone)")),
        )
    from ..harness.report.terminal import print_table  # rich only

    print_table(console("stdout"), table)  # piped: at its natural width, never cut
    typer.echo(f"{len(entries)} case(s) with unused recordings")
    raise typer.Exit(1 if unchecked else 0)


def _read_stale_report(report: Path, last: bool) -> tuple[list[dict[str, Any]], tuple[Path, ...]]:
    """The results of ``report`` and the folders its paths are read from (spec/reports.md
    2.5); the last report (``last``: no --report) refused with :func:`damaged_report`."""
    from ..harness.report.folder import read_report_header, report_bases

    try:
        head, results = read_report_header(report)
        return results, report_bases(head, report, note)
    except CaseError as err:
        raise damaged_report(err, report) if last else err from None


def damaged_report(err: CaseError, report: Path) -> CaseError:
    """``err`` (the last report refused as unreadable or not a report) with a hint that says
    what to do about that file: write a new one, remove it, or name another."""
    return CaseError(
        err.code,
        err.message,
        file=str(report),
        line=err.location.line,
        hint=f"run `threads-cases run` to write a new report over it, remove {report}, "
        "or pass --report a JSON Lines report of `threads-cases run`",
    )


def _unchecked(
    results: list[dict[str, Any]], path: Path | None, report: Path, bases: Sequence[Path]
) -> list[str]:
    """The cases under ``path`` that ``report`` did not check (none without ``path``: the
    cases asked about are then the report's own). Raises ``invalid_request`` when there is
    no case under ``path``, or the report checked none of them: it cannot answer then."""
    if path is None:
        return []
    unchecked, done = unchecked_cases(results, path, bases)
    if not unchecked and not done:
        raise CaseError(
            "invalid_request",
            f"no cases under {path}",
            hint="pass a case directory or a folder holding cases (each with a case.json)",
        )
    if not done:
        raise CaseError(
            "invalid_request",
            f"{report} holds no checked result for the {len(unchecked)} case(s) under {path} "
            "(it reports on other cases, or only errors and skips for these): it cannot tell "
            "which of their replies or stubs are unused",
            hint=f"run `threads-cases run {path}` first, or pass --report a report of a run "
            "of these cases (its paths are as that run found them, from the folder it ran in)",
        )
    return unchecked
