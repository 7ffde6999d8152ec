"""``conformance`` and ``implementations``: the cross-language view (spec/conformance.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..core.errors import CaseError
from ..core.texts import shown_text
from .app import app, console, fail, note, print_json
from .params import check_file, check_folder, checked
from .run_commands import (
    FormatOpt,
    IsolatedOpt,
    JunitOpt,
    StrictOpt,
    TimeoutOpt,
    ValidateProtocolOpt,
    emit,
    refuse,
)


@app.command()
def conformance(
    path: Annotated[
        Path | None,
        typer.Argument(
            help="A conformance suite folder (default: the shipped suite).",
            callback=checked(check_folder),
        ),
    ] = None,
    impl: Annotated[
        list[str] | None,
        typer.Option("--impl", help="Implementation (repeatable; default: every available)."),
    ] = None,
    fmt: FormatOpt = "pretty",
    junit: JunitOpt = None,
    strict: StrictOpt = False,
    pattern: Annotated[
        str | None, typer.Option("-k", help="Only tests whose area/id contains this.")
    ] = None,
    area: Annotated[
        list[str] | None,
        typer.Option(
            "--area",
            help="Only this area (repeatable): reduce, match, canonical, driver-requests, "
            "replay, cases, case-errors, agent, provenance, save-errors, sandbox-bytes, "
            "secrets, live, thread-api or drafts.",
        ),
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="List every test, not only failures.")
    ] = False,
    timeout: TimeoutOpt = None,
    isolated: IsolatedOpt = False,
    validate_protocol: ValidateProtocolOpt = False,
    diff: Annotated[
        tuple[Path, Path] | None,
        typer.Option(
            "--diff",
            metavar="REPORT_A REPORT_B",
            help="Compare two JSON reports of `conformance --format json`.",
            callback=checked(check_file),
        ),
    ] = None,
) -> None:
    """Run the conformance suite against every implementation and print the matrix.

    Exit status as for `run`: 0 all passed, 3 a failure or error, 2 refused, 1 operational
    error. With --diff: 0 when no result changed, 1 when some did.
    """
    from ..harness.check.conformance import AREAS, diff_reports, run_conformance
    from ..harness.report.suite import read_report

    if diff is not None:
        try:
            changes = diff_reports(read_report(diff[0]), read_report(diff[1]))
        except CaseError as err:  # an unreadable report: refused in the output's format
            raise fail(err, fmt) from None
        if fmt == "json":
            print_json({"changes": changes})
        elif not changes:
            console("stdout").print("no result changed")
        else:
            table = Table("test", "implementation", "before", "after", header_style="bold")
            for c in changes:
                shown = [str(c[k]) if c[k] is not None else "(absent)" for k in ("before", "after")]
                table.add_row(c["case"], c["implementation"], *shown)
            console("stdout").print(table)
        raise typer.Exit(1 if changes else 0)
    from ..harness.run.registry import available_implementations, resolve_implementations

    try:
        areas = area or list(AREAS)
        for a in areas:
            if a not in AREAS:
                raise CaseError("invalid_request", f"unknown area {a!r}; areas: {', '.join(AREAS)}")
        impls = resolve_implementations(
            impl or available_implementations(),
            timeout=timeout,
            isolated=isolated,
            validate_protocol=validate_protocol,
            required=bool(impl),
        )
        suite = run_conformance(
            path, impls, areas=areas, pattern=pattern, strict=strict, jobs=os.cpu_count() or 1
        )
    except CaseError as err:
        if err.code in ("invalid_request", "dialect_unknown", "json_invalid", "baseline_invalid"):
            raise refuse(err, fmt) from None
        raise
    from ..harness.report.reporters import Terminal

    emit(
        suite,
        fmt,
        junit,
        "conformance",
        "test",
        terminal=Terminal(console("stdout"), AREAS, verbose),
    )
    raise typer.Exit(suite.exit_status)


@app.command()
def implementations() -> None:
    """List every implementation, the version its hello reports, its dialect, and the
    isolation `run` gives it by default (netns, guard or none)."""
    from ..harness.report.terminal import print_table
    from ..harness.run.isolation import default_isolation
    from ..harness.run.registry import available_implementations, open_implementation
    from ..harness.run.runner import isolation_of

    mode = default_isolation()
    table = Table(
        "implementation",
        "version",
        "language",
        "dialect",
        "isolation",
        "status",
        header_style="bold",
    )
    for column in table.columns:  # wrapped on a narrow terminal, never cut with "…"
        column.overflow = "fold"
    problems = []  # what to install or the command to rebuild: said in full below the table
    for name in available_implementations():
        impl = open_implementation(name, isolation=mode)
        iso = isolation_of(impl)
        try:
            info = impl.hello()["implementation"]
            table.add_row(  # Text: a driver's strings are neither markup nor raw controls
                name,
                *(Text(shown_text(str(info[k]))) for k in ("version", "language", "dialect")),
                iso,
                Text("ok", style="green"),
            )
        except CaseError as err:
            table.add_row(
                name,
                "-",
                "-",
                impl.dialect,
                iso,
                Text(err.code, style="yellow"),
            )
            problems.append(shown_text(f"{name}: {err.code}: {err.message}"))
        finally:
            impl.close()
    print_table(console("stdout"), table)
    for line in problems:  # printed whole, never cut to the table's width
        typer.echo(line)
    if not sys.stdout.isatty():
        return
    note("add your own under [tool.threads-cases.implementations.<name>] in pyproject.toml")
