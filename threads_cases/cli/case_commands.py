"""``save``: turn a recorded turn of a log into a case directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..case import CaseExpectation
from ..dialects import CANONICAL
from ..errors import CaseError
from ..strictjson import parse
from ..thread import Thread
from .app import app, print_json

RAW_DATA_WARNING = (
    "warning: a case holds the raw inputs and outputs of the turn, unredacted; "
    "review it before you commit it"
)


def _matchers(values: list[str], flag: str) -> list[dict]:  # type: ignore[type-arg]
    out = []
    for i, text in enumerate(values):
        value = parse(text.encode("utf-8"), code="invalid_request", file=f"{flag} #{i + 1}")
        out.append(value)
    return out


@app.command()
def save(
    log: Annotated[Path, typer.Argument(help="The thread log (JSON Lines) holding the turn.")],
    at: Annotated[str, typer.Option("--at", help="The fork point: an event_id of LOG.")],
    name: Annotated[str, typer.Option("--name", help="The case name (letters, digits, . _ -).")],
    dir: Annotated[Path, typer.Option("--dir", help="Folder the case directory is created in.")],
    must: Annotated[list[str] | None, typer.Option(
        "--must", help="A matcher (JSON) some replayed event must match; repeatable.")] = None,
    expect: Annotated[list[str] | None, typer.Option(
        "--expect", help="A matcher (JSON) for the ordered expect list; repeatable.")] = None,
    external_effects: Annotated[str, typer.Option(
        "--external-effects", help="stub: record external results; forbid: refuse them.")] = "stub",
    artifacts: Annotated[Path | None, typer.Option(
        "--artifacts", help="Folder of artifact files named by sha256 hex.")] = None,
    dialect: Annotated[str, typer.Option("--dialect", help="LOG's dialect.")] = CANONICAL,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace a different case.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Save the turn after --at in LOG as a case directory DIR/NAME (spec/case-format.md).

    Exits 0 when saved, 2 on a refusal (printed as {"code","message"} with --json).
    """
    try:
        exp = CaseExpectation(_matchers(must or [], "--must"), _matchers(expect or [], "--expect"))
        thread = Thread.open(log, artifacts=artifacts, dialect=dialect)
        result = thread.save_case(name, expect=exp, at=at, dir=dir,
                                  external_effects=external_effects, overwrite=overwrite)
    except CaseError as err:
        from ..save import SaveError, SaveResult

        result = SaveResult(False, error=SaveError(err.code, str(err)))
    if not result.ok:
        assert result.error is not None
        if as_json:
            print_json({"code": result.error.code, "message": result.error.message})
        else:
            print(f"error[{result.error.code}]: {result.error.message}", file=sys.stderr)
        raise typer.Exit(2)
    assert result.value is not None
    print(RAW_DATA_WARNING, file=sys.stderr)
    v = result.value
    if as_json:
        print_json({"path": str(v.path), "portable": v.portable, "fingerprint": v.fingerprint,
                    "outcome": v.outcome})
    else:
        typer.echo(f"{v.outcome} {v.path}")
        typer.echo(f"portable: {str(v.portable).lower()}")
        typer.echo(f"fingerprint: {v.fingerprint}")
