"""``reduce`` and ``validate``: commands over a single thread log."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.pretty import Pretty

from ..dialects import CANONICAL, get_dialect
from ..errors import CaseError
from ..log import reduce_log, validate_log
from .app import app, fail, print_json, stdout, wants_json

DialectOpt = Annotated[
    str, typer.Option("--dialect", help="The log's dialect: threads-py or threads-ts.")
]
FormatOpt = Annotated[
    str | None,
    typer.Option("--format", help="json or pretty (default: json when piped, pretty on a terminal)."),
]


@app.command()
def reduce(
    log: Annotated[Path, typer.Argument(help="A thread log (JSON Lines).")],
    dialect: DialectOpt = CANONICAL,
    fmt: FormatOpt = None,
) -> None:
    """Reduce LOG and print the state it reduces to, in the log's dialect (spec/reducer.md)."""
    if fmt not in (None, "json", "pretty"):
        raise fail(CaseError("invalid_request", f"--format must be json or pretty, not {fmt!r}"))
    try:
        d = get_dialect(dialect)
        state = d.encode_state(reduce_log(log, dialect=d))
    except CaseError as err:
        raise fail(err) from None
    if wants_json(fmt):
        print_json(state)
    else:
        stdout.print(Pretty(state, expand_all=True))


@app.command()
def validate(
    log: Annotated[Path, typer.Argument(help="A thread log (JSON Lines).")],
    dialect: DialectOpt = CANONICAL,
    fmt: FormatOpt = None,
) -> None:
    """Check LOG and report every problem found; exit 0 when valid, 1 otherwise."""
    try:
        d = get_dialect(dialect)
    except CaseError as err:
        raise fail(err) from None
    problems = validate_log(log, dialect=d)
    if fmt == "json":
        print_json({"file": str(log), "valid": not problems,
                    "problems": [p.to_json() for p in problems]})
    else:
        for p in problems:
            typer.echo(f"error[{p.code}]: {p.render()}", err=True)
        if problems:
            typer.echo(f"{log}: {len(problems)} problem(s)", err=True)
        else:
            typer.echo(f"{log}: valid")
    raise typer.Exit(1 if problems else 0)
