"""``save``: turn a recorded turn of a log into a case directory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..case.directory import CaseExpectation
from ..core.dialects import CANONICAL
from ..core.errors import CaseError
from ..core.strictjson import parse
from ..reference.thread import Thread
from .app import app, fail, print_json

REDACTED_WARNING = (
    "warning: a case holds the raw inputs and outputs of the turn; credential-like values "
    "were redacted, but review it before you commit it"
)
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
    log: Annotated[
        Path,
        typer.Argument(
            help="The thread log (JSON Lines) holding the turn, or a transcript with --from."
        ),
    ],
    name: Annotated[str, typer.Option("--name", help="The case name (letters, digits, . _ -).")],
    dir: Annotated[Path, typer.Option("--dir", help="Folder the case directory is created in.")],
    must: Annotated[
        list[str] | None,
        typer.Option("--must", help="A matcher (JSON) some replayed event must match; repeatable."),
    ] = None,
    expect: Annotated[
        list[str] | None,
        typer.Option("--expect", help="A matcher (JSON) for the ordered expect list; repeatable."),
    ] = None,
    external_effects: Annotated[
        str,
        typer.Option(
            "--external-effects", help="stub: record external results; forbid: refuse them."
        ),
    ] = "stub",
    artifacts: Annotated[
        Path | None,
        typer.Option("--artifacts", help="Folder of artifact files named by sha256 hex."),
    ] = None,
    dialect: Annotated[str, typer.Option("--dialect", help="LOG's dialect.")] = CANONICAL,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace a different case.")
    ] = False,
    redact: Annotated[
        bool,
        typer.Option("--redact", help="Replace credential-like values with [REDACTED:kind:hash]."),
    ] = False,
    allow_secrets: Annotated[
        bool, typer.Option("--allow-secrets", help="Save credential-like values knowingly.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
    at: Annotated[
        str | None, typer.Option("--at", help="The fork point: an event_id of LOG (or use --turn).")
    ] = None,
    turn: Annotated[
        int | None,
        typer.Option(
            "--turn", min=1, help="Save turn N (see `threads-cases turns`) instead of --at."
        ),
    ] = None,
    from_format: Annotated[
        str | None,
        typer.Option(
            "--from",
            help="LOG is a transcript in this format (claude-code or codex): import it "
            "in memory first.",
        ),
    ] = None,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Use the matchers `threads-cases draft` proposes (plus any --must/--expect).",
        ),
    ] = False,
) -> None:
    """Save the turn after --at (or turn --turn N) in LOG as a case directory DIR/NAME
    (spec/case-format.md). With --from FORMAT, LOG is a Claude Code or Codex transcript,
    imported in memory.

    Exits 0 when saved, 2 on a refusal (printed as {"code","message"} with --json), 1 when
    the transcript has a malformed line (import_invalid).
    """
    try:
        if (at is None) == (turn is None):
            raise CaseError("invalid_request", "give exactly one of --at EVENT_ID and --turn N")
        musts = _matchers(must or [], "--must")
        expects = _matchers(expect or [], "--expect")
        if from_format is not None:
            from ..importers import import_events

            try:
                source: Any = import_events(from_format, log)
            except CaseError as err:
                if err.code in ("import_invalid", "io_error"):
                    raise fail(err) from None
                raise
        else:
            source = log
        thread = Thread.open(
            source, artifacts=artifacts, dialect=CANONICAL if from_format is not None else dialect
        )
        if turn is not None or draft:
            from ..case.turns import draft_matchers, fork_point, list_turns

            events = thread.events
            if turn is None:
                n = next((t["index"] for t in list_turns(events) if t["fork_point"] == at), None)
                if n is None:
                    raise CaseError("invalid_request", f"no turn's user input follows {at!r}")
            else:
                n = turn
                at = fork_point(events, n)
            listed = list_turns(events)
            imported = (
                bool(events)
                and events[0]["type"] == "thread_started"
                and events[0]["data"]["metadata"].get("source") in ("claude-code", "codex")
            )
            if imported and n <= len(listed) and listed[n - 1]["status"] == "failed":
                print(
                    f"warning: imported turn {n} was interrupted or failed; its replay will "
                    "stop where the recording ends (model_exhausted)",
                    file=sys.stderr,
                )
            if draft:
                proposed = draft_matchers(events, n)
                musts = proposed["must"] + musts
                expects = proposed["expect"] + expects
        assert at is not None
        exp = CaseExpectation(musts, expects)
        if redact and allow_secrets:
            raise CaseError("invalid_request", "--redact and --allow-secrets exclude each other")
        result = thread.save_case(
            name,
            expect=exp,
            at=at,
            dir=dir,
            external_effects=external_effects,
            overwrite=overwrite,
            secrets="redact" if redact else "allow" if allow_secrets else "refuse",
        )
    except CaseError as err:
        from ..case.save import SaveError, SaveResult

        result = SaveResult(False, error=SaveError(err.code, str(err), err.hint))
    if not result.ok:
        assert result.error is not None
        if as_json:
            print_json({"code": result.error.code, "message": result.error.message})
        else:
            print(f"error[{result.error.code}]: {result.error.message}", file=sys.stderr)
            if result.error.hint:
                print(f"  hint: {result.error.hint}", file=sys.stderr)
        raise typer.Exit(2)
    assert result.value is not None
    print(REDACTED_WARNING if redact else RAW_DATA_WARNING, file=sys.stderr)
    v = result.value
    if as_json:
        print_json(
            {
                "path": str(v.path),
                "portable": v.portable,
                "fingerprint": v.fingerprint,
                "outcome": v.outcome,
            }
        )
    else:
        typer.echo(f"{v.outcome} {v.path}")
        typer.echo(f"portable: {str(v.portable).lower()}")
        typer.echo(f"fingerprint: {v.fingerprint}")
