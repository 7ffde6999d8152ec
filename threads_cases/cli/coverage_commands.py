"""``coverage``: what a suite exercises per implementation, and what no case does
(spec/conformance.md section 8; library: harness/check/coverage.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..core.atomic import write_atomic
from ..core.errors import CaseError
from .agent_options import AgentOpt, AppDirOpt, agents_of
from .app import app, console, print_refusal, render_error
from .native import PathProblem
from .params import check_exists, check_out_file, checked
from .run_commands import IsolationOpt, TimeoutOpt, choose_isolation


def _limits(values: list[str] | None) -> list[str] | None:
    """Refuse a bad --fail-under before anything runs (a usage error, exit 2)."""
    from ..harness.check.coverage import fail_under_limits

    try:
        fail_under_limits(values or [])
    except CaseError as err:
        raise PathProblem(err.message, err.hint or "") from None
    return values


@app.command()
def coverage(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Case folders, or a conformance suite folder (default: current folder).",
            callback=checked(check_exists),
        ),
    ] = None,
    impl: Annotated[
        list[str] | None,
        typer.Option(
            "--impl",
            help="Implementation (repeatable; default: the impl setting, else every available).",
        ),
    ] = None,
    fmt: Annotated[
        str, typer.Option("--format", help="pretty, or json (sorted: meant to be committed).")
    ] = "pretty",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the JSON here.", callback=checked(check_out_file)
        ),
    ] = None,
    fail_under: Annotated[
        list[str] | None,
        typer.Option(
            "--fail-under",
            metavar="[CATEGORY=]PERCENT",
            callback=_limits,
            help="Exit 3 when an implementation covers less than PERCENT of every item the spec "
            "defines (the total, fail/drifted reason codes included), or with CATEGORY= of "
            "that category (event_types, tool_kinds, tool_effects, matcher_features, "
            "dialect_fields, reason_codes). Repeatable.",
        ),
    ] = None,
    timeout: TimeoutOpt = None,
    isolation: IsolationOpt = None,
    agent: AgentOpt = None,
    app_dir: AppDirOpt = None,
) -> None:
    """Run the cases under PATHS and report, per implementation, the event types, tool kinds
    and names, stop reasons, matcher features, dialect fields and reason codes they exercise,
    and what the spec defines that none of them does.

    Exit status: 0 reported; 3 below --fail-under; 2 bad arguments or nothing to measure
    (with --format json: {"code", "message"} on stdout); 1 operational error.
    """
    from ..harness.check.coverage import (
        below_limits,
        coverage_document,
        fail_under_limits,
        suite_coverage,
    )
    from ..harness.run.registry import (
        available_implementations,
        impl_setting,
        resolve_implementations,
    )

    if fmt not in ("pretty", "json"):
        render_error(CaseError("invalid_request", f"--format must be pretty or json, not {fmt!r}"))
        raise typer.Exit(2)
    try:
        agents = agents_of(agent, app_dir)
        named = impl or impl_setting()
        impls = resolve_implementations(
            named or available_implementations(),
            timeout=timeout,
            required=bool(named),
            isolation=choose_isolation(isolation),
        )
        cov = suite_coverage(paths or [Path(".")], impls, jobs=os.cpu_count() or 1, agents=agents)
    except CaseError as err:
        if err.code in ("invalid_request", "dialect_unknown"):
            if fmt == "json":  # {"code","message"} on stdout, as run --format json
                print_refusal(err)
            else:
                render_error(err)
            raise typer.Exit(2) from None
        raise
    data = coverage_document(cov)
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(output, data)  # a rewrite keeps the file's mode
    if fmt == "json" and output is None:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    elif fmt == "pretty":
        _print(cov)
    low = below_limits(cov, fail_under_limits(fail_under or []))
    for line in low:
        print(line, file=sys.stderr)
    if low:
        raise typer.Exit(3)


def _print(cov: object) -> None:
    from ..harness.check.coverage import TOTAL_COUNTS, Coverage
    from ..harness.report.terminal import print_table

    assert isinstance(cov, Coverage)
    names = list(cov.exercised)
    table = Table("category", *names, header_style="bold")
    per = {n: cov.categories(n) for n in names}
    for cat in next(iter(per.values()), {}):
        cells = []
        for n in names:
            c = per[n][cat]
            done = c["defined"] - len(c["missing"])
            style = "green" if not c["missing"] else "yellow"
            cells.append(Text(f"{done}/{c['defined']} ({c['percent']}%)", style=style))
        table.add_row(cat, *cells)
    table.add_row(Text("total", style="bold"), *(Text(f"{cov.percent(n)}%") for n in names))
    print_table(console("stdout"), table)
    console("stdout").print(TOTAL_COUNTS, markup=False)
    for n in names:
        ex = cov.exercised[n]
        console("stdout").print(
            f"{n}: {ex.cases} case(s), {ex.tests} data-only test(s)", markup=False
        )
        for cat, c in per[n].items():
            if c["missing"]:
                console("stdout").print(
                    f"  not exercised {cat}: {', '.join(c['missing'])}", markup=False
                )
        for key in ("tool_names", "stop_reasons"):
            seen = sorted(ex.seen.get(key, set()))
            console("stdout").print(f"  {key}: {', '.join(map(repr, seen)) or '-'}", markup=False)
