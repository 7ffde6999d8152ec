"""``save``: turn a recorded turn of a log into a case directory."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

from ..core.dialects import CANONICAL
from ..core.errors import CaseError
from ..core.strictjson import parse
from .agent_options import AgentOpt, AppDirOpt, agents_of
from .app import app, fail, note, print_json, print_refusal, render_error
from .params import FormatOpt, check_folder, check_out_folder, check_transcript, checked

if TYPE_CHECKING:
    from ..case.save import SaveResult

REDACTED_WARNING = (
    "warning: a case holds the raw inputs and outputs of the turn; credential-like values "
    "were redacted, but review it before you commit it"
)
RAW_DATA_WARNING = (
    "warning: a case holds the raw inputs and outputs of the turn, unredacted; "
    "review it before you commit it"
)


def _matchers(values: list[str], flag: str) -> list[dict[str, Any]]:
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
            help="The thread log (JSON Lines) holding the turn, or a transcript with --from.",
            callback=checked(check_transcript),
        ),
    ],
    name: Annotated[
        str,
        typer.Option(
            "--name",
            help="The case name (1-64 ASCII letters, digits, . _ -; not starting with . or -).",
        ),
    ],
    dir: Annotated[
        Path,
        typer.Option(
            "--dir",
            help="Folder the case directory is created in.",
            callback=checked(check_out_folder),
        ),
    ],
    must: Annotated[
        list[str] | None,
        typer.Option("--must", help="A matcher (JSON) some replayed event must match; repeatable."),
    ] = None,
    expect: Annotated[
        list[str] | None,
        typer.Option("--expect", help="A matcher (JSON) for the ordered expect list; repeatable."),
    ] = None,
    external_effects: Annotated[
        Literal["stub", "forbid"],
        typer.Option(
            "--external-effects", help="stub: record external results; forbid: refuse them."
        ),
    ] = "stub",
    artifacts: Annotated[
        Path | None,
        typer.Option(
            "--artifacts",
            help="Folder of artifact files named by sha256 hex (default: artifacts/ beside "
            "LOG, when there is one).",
            callback=checked(check_folder),
        ),
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
    fmt: FormatOpt = "pretty",
    as_json: Annotated[bool, typer.Option("--json", hidden=True, help="--format json.")] = False,
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
        Literal[
            "claude-code", "codex", "vcr", "swe-agent", "inspect-ai", "openhands", "threads", "auto"
        ]
        | None,
        typer.Option(
            "--from",
            help="LOG is a transcript in this format (claude-code, codex, vcr, swe-agent, "
            "inspect-ai, openhands, threads or auto): import it in memory first (inspect-ai: its "
            "first sample).",
        ),
    ] = None,
    draft: Annotated[
        bool,
        typer.Option(
            "--draft",
            help="Add the matchers `threads-cases draft` proposes to --must/--expect "
            "(the default when neither is given).",
        ),
    ] = False,
    no_draft: Annotated[
        bool,
        typer.Option(
            "--no-draft",
            help="Never draft matchers: without --must/--expect the case checks "
            "nothing (a warning).",
        ),
    ] = False,
    sandbox: Annotated[
        Path | None,
        typer.Option(
            "--sandbox",
            help="Folder holding the sandbox files the log knows only by sha256 (their bytes "
            "must match).",
        ),
    ] = None,
    no_verify: Annotated[
        bool,
        typer.Option(
            "--no-verify",
            help="Do not replay the case before writing it (keep a case that fails today).",
        ),
    ] = False,
    agent: AgentOpt = None,
    app_dir: AppDirOpt = None,
) -> None:
    """Save the turn after --at (or turn --turn N) in LOG as a case directory DIR/NAME
    (spec/case-format.md). With --from FORMAT, LOG is a Claude Code or Codex transcript, a
    VCR cassette, a SWE-agent trajectory, an inspect-ai log (its first sample) or an
    OpenHands trajectory (auto: detected), imported in memory. Without
    --must/--expect the matchers are drafted from the turn.
    The case is replayed before it is written (replay_failed when its first run would not
    pass) unless --no-verify, with the agent --agent names for threads-py when the turn
    uses custom sandbox tools (their handlers are code, not in the log).

    Exits 0 when saved, 2 on a refusal (one line {"code","message","hint"} with --format
    json), 1 when the --from transcript has a malformed line (import_invalid) or cannot be
    read (io_error).
    """
    as_json = as_json or fmt == "json"
    from ..save_log import save_log

    try:
        if draft and no_draft:
            raise CaseError("invalid_request", "--draft and --no-draft exclude each other")
        if redact and allow_secrets:
            raise CaseError("invalid_request", "--redact and --allow-secrets exclude each other")
        try:
            result = save_log(
                log,
                name=name,
                dir=dir,
                at=at,
                turn=turn,
                must=_matchers(must or [], "--must"),
                expect=_matchers(expect or [], "--expect"),
                draft=True if draft else False if no_draft else None,
                from_format=from_format,
                artifacts=artifacts,
                sandbox=sandbox,
                dialect=dialect,
                external_effects=external_effects,
                overwrite=overwrite,
                secrets="redact" if redact else "allow" if allow_secrets else "refuse",
                verify=not no_verify,
                agent=agents_of(agent, app_dir).get("threads-py"),
                hints="cli",  # its hints name --overwrite, never overwrite=True
            )
        except CaseError as err:
            if err.code in ("import_invalid", "io_error"):
                raise fail(err, "json" if as_json else None) from None
            raise
    except CaseError as err:
        from ..case.save import SaveError, SaveResult

        result = SaveResult(False, error=SaveError.of(err))
    _render(result, as_json=as_json, redact=redact)


def _render(result: SaveResult, *, as_json: bool, redact: bool) -> None:
    """Print a save's outcome (spec/case-format.md 7.4, 7.5); exit 2 on a refusal."""
    if not result.ok:
        assert result.error is not None
        err = result.error.error()  # the location leads the message, the hint follows
        if as_json:
            print_refusal(err)  # one line {"code","message","hint"}, as run's (reports.md 5.2)
        else:
            render_error(err)
        raise typer.Exit(2)
    assert result.value is not None
    for line in result.warnings:
        note(line)
    note(REDACTED_WARNING if redact else RAW_DATA_WARNING)
    v = result.value
    if as_json:
        print_json(
            {
                "path": str(v.path),
                "portable": v.portable,
                "fingerprint": v.fingerprint,
                "outcome": v.outcome,
                "verified": v.verified,
                "request_mismatches": list(v.request_mismatches),
            }
        )
    else:
        typer.echo(f"{v.outcome} {v.path}")
        typer.echo(f"portable: {str(v.portable).lower()}")
        typer.echo(f"fingerprint: {v.fingerprint}")
        typer.echo(f"verified: {'yes' if v.verified else 'no (--no-verify)'}")
        for m in v.request_mismatches:
            typer.echo(
                f"request mismatch: line {m['line']} ({m['event_id']}): recorded "
                f"{m['recorded'][:12]}..., built {m['computed'][:12]}..."
            )


@app.command()
def init(
    root: Annotated[
        Path | None,
        typer.Argument(
            help="The repository's top folder (default: the current folder).",
            callback=checked(check_folder),
        ),
    ] = None,
    cases: Annotated[
        str, typer.Option("--cases", help="The folder of cases, relative to ROOT.")
    ] = "cases",
) -> None:
    """Set a repository up for reviewing cases: .gitattributes maps case files to the
    threads-cases diff driver, .gitignore holds .threads-cases/, and git runs
    `threads-cases diff --git-driver` for them. Running it again changes nothing. Exit
    status: 0 set up (or already so); 1 a file cannot be written, or git cannot read the
    repository (nothing is written); 2 bad arguments.
    """
    from ..review.setup import init_project

    try:
        steps = init_project(root or Path("."), cases)
    except CaseError as err:
        raise fail(err) from None
    for step in steps:
        detail = f": {step.detail}" if step.detail else ""
        typer.echo(f"{step.status:<8} {step.item}{detail}")
